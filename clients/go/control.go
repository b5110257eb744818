package kafkaemulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// ControlError is a request the control plane refused: its HTTP status and reason.
type ControlError struct {
	Status  int
	Method  string
	Path    string
	Message string
}

func (e *ControlError) Error() string {
	return fmt.Sprintf("kafkaemulator: control plane answered %d to %s %s: %s", e.Status,
		e.Method, e.Path, e.Message)
}

// Control sends one JSON request to the control plane and decodes the answer into out
// (nil: ignored). A 4xx or 5xx answer is a *ControlError.
func (c *Container) Control(ctx context.Context, method, path string, body, out any) error {
	var reader io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("kafkaemulator: %s %s: %w", method, path, err)
		}
		reader = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.controlURL+path, reader)
	if err != nil {
		return fmt.Errorf("kafkaemulator: %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("kafkaemulator: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("kafkaemulator: %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		return &ControlError{Status: resp.StatusCode, Method: method, Path: path, Message: msg}
	}
	if out == nil {
		return nil
	}
	if s, ok := out.(*string); ok {
		*s = string(data)
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("kafkaemulator: %s %s: decoding %q: %w", method, path, data, err)
	}
	return nil
}

// ---- the cluster ---------------------------------------------------------------------

// Broker is one broker: Crashed while its process is down and the controller has not fenced
// it yet, Alive false once fenced.
type Broker struct {
	ID      int    `json:"id"`
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Alive   bool   `json:"alive"`
	Crashed bool   `json:"crashed"`
}

// Up reports whether the broker is serving: alive and not crashed.
func (b Broker) Up() bool { return b.Alive && !b.Crashed }

// Partition is one partition's replica state.
type Partition struct {
	Partition        int   `json:"partition"`
	Leader           int   `json:"leader"`
	LeaderEpoch      int   `json:"leader_epoch"`
	Replicas         []int `json:"replicas"`
	ISR              []int `json:"isr"`
	AddingReplicas   []int `json:"adding_replicas"`
	RemovingReplicas []int `json:"removing_replicas"`
	HighWatermark    int64 `json:"high_watermark"`
}

// ClusterView is the cluster as the control plane describes it (GET /cluster).
type ClusterView struct {
	ClusterID  string `json:"cluster_id"`
	Controller int    `json:"controller"`
	Fidelity   struct {
		Mode string `json:"mode"`
		Seed int64  `json:"seed"`
	} `json:"fidelity"`
	Brokers []Broker `json:"brokers"`
	Topics  map[string]struct {
		Partitions []Partition `json:"partitions"`
	} `json:"topics"`
}

// Broker returns the broker of this id (ok false when there is none).
func (v *ClusterView) Broker(id int) (Broker, bool) {
	for _, b := range v.Brokers {
		if b.ID == id {
			return b, true
		}
	}
	return Broker{}, false
}

// Partition returns a topic's partition (ok false when there is none).
func (v *ClusterView) Partition(topic string, partition int) (Partition, bool) {
	for _, p := range v.Topics[topic].Partitions {
		if p.Partition == partition {
			return p, true
		}
	}
	return Partition{}, false
}

// Cluster returns the controller, the brokers (up or crashed) and every topic's partitions.
func (c *Container) Cluster(ctx context.Context) (*ClusterView, error) {
	var v ClusterView
	if err := c.Control(ctx, "GET", "/cluster", nil, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// Partitions returns one topic's partitions (a *ControlError 404 when it does not exist).
func (c *Container) Partitions(ctx context.Context, topic string) ([]Partition, error) {
	var v struct {
		Partitions []Partition `json:"partitions"`
	}
	if err := c.Control(ctx, "GET", "/topics/"+url.PathEscape(topic), nil, &v); err != nil {
		return nil, err
	}
	return v.Partitions, nil
}

// Metrics returns the Prometheus metrics (Kafka's metric names).
func (c *Container) Metrics(ctx context.Context) (string, error) {
	var s string
	err := c.Control(ctx, "GET", "/metrics", nil, &s)
	return s, err
}

// ---- brokers -------------------------------------------------------------------------

// StopOption tunes StopBroker.
type StopOption func(map[string]any)

// FenceAfter has the controller fence the crashed broker only after d (Kafka's broker
// session timeout), instead of at once.
func FenceAfter(d time.Duration) StopOption {
	return func(m map[string]any) { m["fence_after_ms"] = d.Milliseconds() }
}

// Controlled makes the stop a controlled shutdown (leaders moved off first).
func Controlled() StopOption { return func(m map[string]any) { m["controlled"] = true } }

// StopBroker crashes a broker: its connections drop, the controller moves its leaders.
func (c *Container) StopBroker(ctx context.Context, id int, opts ...StopOption) error {
	body := map[string]any{}
	for _, o := range opts {
		o(body)
	}
	return c.Control(ctx, "POST", "/brokers/"+strconv.Itoa(id)+"/stop", body, nil)
}

// StartBroker starts a stopped broker again; it catches up and rejoins the ISR.
func (c *Container) StartBroker(ctx context.Context, id int) error {
	return c.Control(ctx, "POST", "/brokers/"+strconv.Itoa(id)+"/start", map[string]any{}, nil)
}

// ControlledShutdown moves a broker's leaders off it, then stops it.
func (c *Container) ControlledShutdown(ctx context.Context, id int) error {
	return c.Control(ctx, "POST", "/brokers/"+strconv.Itoa(id)+"/controlled-shutdown",
		map[string]any{}, nil)
}

// ---- faults --------------------------------------------------------------------------

// Fault applies fault operations, all validated before any is applied.
func (c *Container) Fault(ctx context.Context, faults ...Fault) error {
	ops := make([]map[string]any, len(faults))
	for i, f := range faults {
		ops[i] = f.fields
	}
	return c.Control(ctx, "POST", "/faults", ops, nil)
}

// InjectError answers the next count requests of an API with an error.
func (c *Container) InjectError(ctx context.Context, api, errorName string, count int) error {
	return c.Fault(ctx, InjectError(api, errorName).Count(count))
}

// Faults returns the faults in force, as the control plane lists them.
func (c *Container) Faults(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	err := c.Control(ctx, "GET", "/faults", nil, &out)
	return out, err
}

// ClearFaults clears every fault and fault rule.
func (c *Container) ClearFaults(ctx context.Context) error {
	return c.Control(ctx, "DELETE", "/faults", map[string]any{}, nil)
}

// RunSchedule runs a fault schedule ({"seed": N, "faults": [...]}, docs/faults.md),
// validated whole first; the answer names its seed and number of steps.
func (c *Container) RunSchedule(ctx context.Context, schedule any) (map[string]any, error) {
	var out map[string]any
	err := c.Control(ctx, "POST", "/faults/schedule", schedule, &out)
	return out, err
}

// ScheduleStatus returns the progress of the last fault schedule.
func (c *Container) ScheduleStatus(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	err := c.Control(ctx, "GET", "/faults/schedule", nil, &out)
	return out, err
}

// OpenAPI returns the control plane's OpenAPI 3.1 document.
func (c *Container) OpenAPI(ctx context.Context) (map[string]any, error) {
	var out map[string]any
	err := c.Control(ctx, "GET", "/openapi.json", nil, &out)
	return out, err
}

// ---- reassignments, elections ----------------------------------------------------------

// Reassignment is a partition's replica sets right after a reassignment started or stopped.
type Reassignment struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Replicas  []int  `json:"replicas"`
	Adding    []int  `json:"adding"`
	Removing  []int  `json:"removing"`
	ISR       []int  `json:"isr"`
	Leader    int    `json:"leader"`
}

// Reassign starts moving a partition to these replicas (AlterPartitionReassignments).
func (c *Container) Reassign(ctx context.Context, topic string, partition int, replicas []int) (*Reassignment, error) {
	var r Reassignment
	err := c.Control(ctx, "POST", "/reassignments",
		map[string]any{"topic": topic, "partition": partition, "replicas": replicas}, &r)
	return &r, err
}

// CancelReassignment cancels a partition's reassignment.
func (c *Container) CancelReassignment(ctx context.Context, topic string, partition int) (*Reassignment, error) {
	var r Reassignment
	err := c.Control(ctx, "DELETE", "/reassignments",
		map[string]any{"topic": topic, "partition": partition}, &r)
	return &r, err
}

// ElectionResult is one partition of a preferred-leader election.
type ElectionResult struct {
	Topic        string  `json:"topic"`
	Partition    int     `json:"partition"`
	ErrorCode    int     `json:"error_code"`
	ErrorMessage *string `json:"error_message"`
}

// ElectPreferredLeaders elects the preferred leaders of a topic's partitions (topic "":
// of every partition; no partitions: all of the topic's).
func (c *Container) ElectPreferredLeaders(ctx context.Context, topic string, partitions ...int) ([]ElectionResult, error) {
	body := map[string]any{}
	if topic != "" {
		body["topic"] = topic
		if len(partitions) > 0 {
			body["partitions"] = partitions
		}
	}
	var out struct {
		Results []ElectionResult `json:"results"`
	}
	err := c.Control(ctx, "POST", "/elections/preferred", body, &out)
	return out.Results, err
}

// ---- the adversary ---------------------------------------------------------------------

// Injection is one fault --fidelity adversarial injected.
type Injection struct {
	Seq      int64  `json:"seq"`
	Broker   int    `json:"broker"`
	ClientID string `json:"client_id"`
	API      string `json:"api"`
	Kind     string `json:"kind"`
	Detail   string `json:"detail"`
}

// AdversaryRecord is what --fidelity adversarial injected so far, in order (each fault is
// decided from the seed and the request: a failing run replays under its seed).
type AdversaryRecord struct {
	Seed       int64            `json:"seed"`
	Enabled    bool             `json:"enabled"`
	Injected   []Injection      `json:"injected"`
	Violations []map[string]any `json:"violations"`
}

// Adversary returns the adversary's record.
func (c *Container) Adversary(ctx context.Context) (*AdversaryRecord, error) {
	var r AdversaryRecord
	err := c.Control(ctx, "GET", "/adversary", nil, &r)
	return &r, err
}

// SetAdversaryEnabled turns the adversary's faults off (a test's setup) or on again.
func (c *Container) SetAdversaryEnabled(ctx context.Context, enabled bool) error {
	key := "off"
	if enabled {
		key = "on"
	}
	return c.Control(ctx, "POST", "/adversary", map[string]any{key: true}, nil)
}

// ScaleAdversary multiplies the adversary's rates: "all=0.5,leader_move=2".
func (c *Container) ScaleAdversary(ctx context.Context, scale string) error {
	return c.Control(ctx, "POST", "/adversary", map[string]any{"scale": scale}, nil)
}
