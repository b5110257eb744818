// Package kafkaemulator is a testcontainers-go module for the kafka-emulator image: a Kafka
// cluster of several brokers in one container, with the emulator's control plane as typed
// methods (crash and start brokers, faults and fault rules, reassignments, the adversary's
// record, consumer groups, the request journal and barriers).
//
//	kafka, err := kafkaemulator.Run(ctx, "kafka-emulator:latest", kafkaemulator.WithBrokers(3))
//	defer testcontainers.TerminateContainer(kafka)
//	brokers, _ := kafka.Brokers(ctx)              // every broker's host:port
//	kafka.StopBroker(ctx, 2)                       // a crash, mid-test
//	kafka.Fault(ctx, kafkaemulator.InjectError("OffsetCommit", "NOT_COORDINATOR").Group("billing"))
//
// How several brokers work behind port mapping: clients connect to the addresses the brokers
// advertise, so each broker listens inside the container on the port the host publishes for
// it. Run takes a block of consecutive free host ports (WithBasePort fixes it) and binds them
// one to one. The control plane is port 8080 of the container, mapped, behind a bearer token
// of this container.
package kafkaemulator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/go-connections/nat"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// DefaultImage is the image the repository's scripts/setup.d/50-docker.sh builds.
const DefaultImage = "kafka-emulator:latest"

const (
	controlPort = "8080/tcp"
	readyLine   = "kafka-emulator ready"
	firstPort   = 20000
	lastPort    = 32000
)

// Container is a running kafka-emulator cluster.
type Container struct {
	*testcontainers.DockerContainer
	brokers    int
	basePort   int
	host       string
	token      string
	controlURL string
	http       *http.Client
}

type options struct {
	brokers  int
	basePort int
	fidelity string
	seed     *int64
	config   map[string]string
}

// Option configures the cluster; pass it to Run beside any testcontainers option.
type Option func(*options)

// Customize makes an Option a testcontainers.ContainerCustomizer (Run reads it itself).
func (o Option) Customize(*testcontainers.GenericContainerRequest) error { return nil }

// WithBrokers sets how many brokers the cluster has (default 3), ids 1..n.
func WithBrokers(n int) Option { return func(o *options) { o.brokers = n } }

// WithBasePort fixes the first broker's host port (the others follow it).
func WithBasePort(port int) Option { return func(o *options) { o.basePort = port } }

// WithFidelity sets the fidelity mode: "fast" (default), "kafka" (Kafka's timing) or
// "adversarial" (seeded races a real cluster can show; read them with Adversary).
func WithFidelity(mode string) Option { return func(o *options) { o.fidelity = mode } }

// WithSeed sets the seed of the cluster's randomness and of the adversary's faults.
func WithSeed(seed int64) Option { return func(o *options) { o.seed = &seed } }

// WithBrokerConfig sets a broker config by Kafka's name ("num.partitions"); the module sets
// group.initial.rebalance.delay.ms to 0, as Testcontainers' Kafka modules do.
func WithBrokerConfig(key, value string) Option {
	return func(o *options) {
		if o.config == nil {
			o.config = map[string]string{}
		}
		o.config[key] = value
	}
}

// Run starts a kafka-emulator cluster from img and waits until every broker is ready.
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	// As Testcontainers' Kafka modules: a group's first rebalance does not wait 3 s.
	o := options{brokers: 3, config: map[string]string{"group.initial.rebalance.delay.ms": "0"}}
	var rest []testcontainers.ContainerCustomizer
	for _, opt := range opts {
		if own, ok := opt.(Option); ok {
			own(&o)
		} else {
			rest = append(rest, opt)
		}
	}
	if o.brokers < 1 {
		return nil, fmt.Errorf("kafkaemulator: a cluster needs at least one broker, got %d", o.brokers)
	}
	provider, err := testcontainers.NewDockerProvider()
	if err != nil {
		return nil, fmt.Errorf("kafkaemulator: docker provider: %w", err)
	}
	defer provider.Close()
	host, err := provider.DaemonHost(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafkaemulator: docker host: %w", err)
	}
	token, err := randomToken()
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		base := o.basePort
		if base == 0 {
			if base, err = freePortBlock(o.brokers); err != nil {
				return nil, err
			}
		}
		ctr, err := testcontainers.Run(ctx, img, append(request(o, host, base, token), rest...)...)
		if err == nil {
			return newContainer(ctx, ctr, o.brokers, base, host, token)
		}
		if ctr != nil {
			_ = ctr.Terminate(context.Background())
		}
		taken := strings.Contains(err.Error(), "port is already allocated") ||
			strings.Contains(err.Error(), "address already in use")
		if !taken || o.basePort != 0 || attempt == 2 {
			return nil, fmt.Errorf("kafkaemulator: %w", err)
		}
	}
}

func request(o options, host string, base int, token string) []testcontainers.ContainerCustomizer {
	env := map[string]string{
		"KAFKA_EMULATOR_BROKERS":              strconv.Itoa(o.brokers),
		"KAFKA_EMULATOR_HOST":                 "0.0.0.0",
		"KAFKA_EMULATOR_PORT":                 strconv.Itoa(base),
		"KAFKA_EMULATOR_ADVERTISED_HOST":      host,
		"KAFKA_EMULATOR_CONTROL_PORT":         "8080",
		"KAFKA_EMULATOR_CONTROL_HOST":         "0.0.0.0",
		"KAFKA_EMULATOR_CONTROL_TOKEN":        token,
		"KAFKA_EMULATOR_SCHEMA_REGISTRY_PORT": "",
	}
	if o.fidelity != "" {
		env["KAFKA_EMULATOR_FIDELITY"] = o.fidelity
	}
	if o.seed != nil {
		env["KAFKA_EMULATOR_SEED"] = strconv.FormatInt(*o.seed, 10)
	}
	if len(o.config) > 0 {
		keys := make([]string, 0, len(o.config))
		for k := range o.config {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		pairs := make([]string, 0, len(keys))
		for _, k := range keys {
			pairs = append(pairs, k+"="+o.config[k])
		}
		env["KAFKA_EMULATOR_CONFIG"] = strings.Join(pairs, ",")
	}
	ports := []string{controlPort}
	bindings := nat.PortMap{}
	for n := 0; n < o.brokers; n++ {
		p := strconv.Itoa(base+n) + "/tcp"
		ports = append(ports, p)
		bindings[nat.Port(p)] = []nat.PortBinding{{HostPort: strconv.Itoa(base + n)}}
	}
	return []testcontainers.ContainerCustomizer{
		testcontainers.WithEnv(env),
		testcontainers.WithExposedPorts(ports...),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			if hc.PortBindings == nil {
				hc.PortBindings = nat.PortMap{}
			}
			for p, b := range bindings {
				hc.PortBindings[p] = b
			}
		}),
		testcontainers.WithWaitStrategyAndDeadline(60*time.Second, wait.ForLog(readyLine)),
	}
}

func newContainer(ctx context.Context, ctr *testcontainers.DockerContainer, brokers, base int,
	host, token string) (*Container, error) {
	mapped, err := ctr.MappedPort(ctx, controlPort)
	if err != nil {
		return nil, fmt.Errorf("kafkaemulator: control port: %w", err)
	}
	chost, err := ctr.Host(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafkaemulator: host: %w", err)
	}
	return &Container{
		DockerContainer: ctr, brokers: brokers, basePort: base, host: host, token: token,
		controlURL: "http://" + net.JoinHostPort(chost, mapped.Port()),
		http:       &http.Client{Timeout: 6 * time.Minute},
	}, nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("kafkaemulator: token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// freePortBlock finds count consecutive host ports that are free now.
func freePortBlock(count int) (int, error) {
	for tries := 0; tries < 200; tries++ {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(lastPort-firstPort-count)))
		if err != nil {
			return 0, err
		}
		base := firstPort + int(n.Int64())
		free := true
		for p := base; p < base+count && free; p++ {
			l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
			if err != nil {
				free = false
				break
			}
			_ = l.Close()
		}
		if free {
			return base, nil
		}
	}
	return 0, fmt.Errorf("kafkaemulator: no %d consecutive free ports", count)
}

// Brokers returns every broker's host:port, what clients bootstrap from (the signature of
// testcontainers-go's kafka module).
func (c *Container) Brokers(context.Context) ([]string, error) {
	out := make([]string, c.brokers)
	for n := range out {
		out[n] = net.JoinHostPort(c.host, strconv.Itoa(c.basePort+n))
	}
	return out, nil
}

// BrokerIDs returns the brokers' ids, 1..n.
func (c *Container) BrokerIDs() []int {
	out := make([]int, c.brokers)
	for n := range out {
		out[n] = n + 1
	}
	return out
}

// ControlURL is the control plane's base URL on the host.
func (c *Container) ControlURL() string { return c.controlURL }

// ControlToken is the bearer token the control plane of this container wants.
func (c *Container) ControlToken() string { return c.token }
