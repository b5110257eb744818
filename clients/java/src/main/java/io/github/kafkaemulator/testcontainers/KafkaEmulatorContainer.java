package io.github.kafkaemulator.testcontainers;

import com.github.dockerjava.api.command.InspectContainerResponse;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.testcontainers.containers.ContainerLaunchException;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The kafka-emulator image as a Testcontainers {@link KafkaContainer}: a cluster of several
 * brokers in one container that Kafka clients, Spring Boot's {@code @ServiceConnection} and any
 * code written for {@code KafkaContainer} use unchanged, plus the emulator's control plane as
 * typed methods: crash and start brokers, inject faults, move partitions, read the adversary's
 * record.
 *
 * <pre>{@code
 * try (var kafka = new KafkaEmulatorContainer("kafka-emulator:latest").withBrokers(3)) {
 *     kafka.start();
 *     String bootstrap = kafka.getBootstrapServers();   // every broker, host ports
 *     kafka.stopBroker(2);                                // a crash, mid-test
 *     kafka.fault(Fault.injectError("OffsetCommit", "NOT_COORDINATOR").count(2));
 *     kafka.startBroker(2);
 * }
 * }</pre>
 *
 * <p>How several brokers work behind port mapping: clients connect to the addresses the brokers
 * advertise, so each broker listens inside the container on the same port the host publishes
 * for it. The container takes a block of consecutive free host ports at start ({@link
 * #withBasePort} fixes it) and binds them one to one. The {@code BROKER} listener (other
 * containers of the network, {@code hostname:9093} and up) and any {@link #withListener}
 * listener likewise get one port per broker, counting up. The control plane is port 8080 of
 * the container, mapped, behind a bearer token of this container.
 */
public class KafkaEmulatorContainer extends KafkaContainer {
    /** The image scripts/setup.d/50-docker.sh builds. */
    public static final String DEFAULT_IMAGE = "kafka-emulator:latest";
    /** The control plane's port inside the container. */
    public static final int CONTROL_PORT = 8080;
    /** The first broker's port of the BROKER listener (other containers of the network). */
    public static final int BROKER_PORT = 9093;
    private static final int CONTROLLER_PORT = 9193;
    private static final String STARTER_SCRIPT = "/tmp/testcontainers_start.sh";
    private static final int FIRST_PORT = 20000;
    private static final int LAST_PORT = 32000;

    private int brokers = 3;
    private Integer fixedBasePort;
    private int basePort = -1;
    private final String token;
    private final Map<String, Supplier<String>> extraListeners = new LinkedHashMap<>();
    private final HttpClient http = HttpClient.newBuilder()
        .connectTimeout(Duration.ofSeconds(10)).build();

    public KafkaEmulatorContainer() {
        this(DEFAULT_IMAGE);
    }

    public KafkaEmulatorContainer(String image) {
        this(DockerImageName.parse(image));
    }

    public KafkaEmulatorContainer(DockerImageName image) {
        super(image.asCompatibleSubstituteFor("apache/kafka"));
        byte[] secret = new byte[24];
        new SecureRandom().nextBytes(secret);
        token = HexFormat.of().formatHex(secret);
        withEnv("KAFKA_EMULATOR_CONTROL_PORT", Integer.toString(CONTROL_PORT));
        withEnv("KAFKA_EMULATOR_CONTROL_HOST", "0.0.0.0");
        withEnv("KAFKA_EMULATOR_CONTROL_TOKEN", token);
    }

    // ---- configuration (chainable, before start) ------------------------------------------

    /** How many brokers (default 3), ids 1..n. */
    public KafkaEmulatorContainer withBrokers(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("a cluster needs at least one broker");
        }
        brokers = count;
        return this;
    }

    /** The first broker's host port (the others follow it) instead of a free block. */
    public KafkaEmulatorContainer withBasePort(int port) {
        fixedBasePort = port;
        return this;
    }

    /**
     * The fidelity mode: {@code "fast"} (default), {@code "kafka"} (Kafka's timing: late
     * metadata, rebalance delays) or {@code "adversarial"} (seeded races a real cluster can
     * show: leader moves, stale metadata, retriable errors; read them with {@link #adversary()}).
     */
    public KafkaEmulatorContainer withFidelity(String mode) {
        withEnv("KAFKA_EMULATOR_FIDELITY", mode);
        return this;
    }

    /** A fidelity mode and the seed its faults are decided from (a failing run replays by it). */
    public KafkaEmulatorContainer withFidelity(String mode, long seed) {
        return withFidelity(mode).withSeed(seed);
    }

    /** The seed of the cluster's randomness and of the adversary's faults (default 0). */
    public KafkaEmulatorContainer withSeed(long seed) {
        withEnv("KAFKA_EMULATOR_SEED", Long.toString(seed));
        return this;
    }

    /** A broker config, by Kafka's name ({@code "num.partitions"}), as a KAFKA_ variable. */
    public KafkaEmulatorContainer withBrokerConfig(String property, String value) {
        withEnv(envName(property), value);
        return this;
    }

    @Override
    public KafkaEmulatorContainer withListener(String listener) {
        extraListeners.put(listener, () -> listener);
        return this;
    }

    @Override
    public KafkaEmulatorContainer withListener(String listener, Supplier<String> advertised) {
        extraListeners.put(listener, advertised);
        return this;
    }

    /** Kafka's rule from a property to its variable: '-' is '___', '_' is '__', '.' is '_'. */
    static String envName(String property) {
        return "KAFKA_" + property.replace("-", "___").replace("_", "__").replace(".", "_")
            .toUpperCase(Locale.ROOT);
    }

    @Override
    protected void configure() {
        basePort = fixedBasePort != null ? fixedBasePort : freePortBlock(brokers);
        List<String> listeners = new ArrayList<>(List.of(
            "PLAINTEXT://0.0.0.0:" + basePort, "BROKER://0.0.0.0:" + BROKER_PORT,
            "CONTROLLER://0.0.0.0:" + CONTROLLER_PORT));
        List<String> protocols = new ArrayList<>(List.of(
            "PLAINTEXT:PLAINTEXT", "BROKER:PLAINTEXT", "CONTROLLER:PLAINTEXT"));
        int i = 0;
        for (String listener : extraListeners.keySet()) {
            String name = "TC-" + i++;
            listeners.add(name + "://" + listener);
            protocols.add(name + ":PLAINTEXT");
            withNetworkAliases(listener.split(":")[0]);
        }
        withEnv("KAFKA_LISTENERS", String.join(",", listeners));
        withEnv("KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", String.join(",", protocols));
        withEnv("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@localhost:" + CONTROLLER_PORT);
        withEnv("KAFKA_EMULATOR_BROKERS_PER_NODE", Integer.toString(brokers));
        // KafkaContainer's internal topics have one replica (its one broker); with more
        // brokers, three, so that a broker crash does not take the group coordinator along.
        String rf = Integer.toString(Math.min(3, brokers));
        for (String key : List.of("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR",
                                  "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR")) {
            if ("1".equals(getEnvMap().get(key))) {
                withEnv(key, rf);
            }
        }
        setExposedPorts(new ArrayList<>(List.of(CONTROL_PORT)));
        setPortBindings(new ArrayList<>());
        for (int n = 0; n < brokers; n++) {
            addFixedExposedPort(basePort + n, basePort + n);
        }
    }

    @Override
    protected void containerIsStarting(InspectContainerResponse containerInfo) {
        List<String> advertised = new ArrayList<>();
        advertised.add("PLAINTEXT://" + getHost() + ":" + basePort);
        advertised.add("BROKER://" + containerInfo.getConfig().getHostName() + ":" + BROKER_PORT);
        int i = 0;
        for (Supplier<String> listener : extraListeners.values()) {
            advertised.add("TC-" + i++ + "://" + listener.get());
        }
        String script = "#!/bin/bash\n"
            + "export KAFKA_ADVERTISED_LISTENERS=" + String.join(",", advertised) + "\n"
            + "/etc/kafka/docker/run\n";
        copyFileToContainer(Transferable.of(script, 0777), STARTER_SCRIPT);
    }

    @Override
    public void start() {
        // The free ports were free when configure() looked; another process may take one
        // before Docker binds it: then try another block.
        for (int attempt = 0; ; attempt++) {
            try {
                super.start();
                return;
            } catch (ContainerLaunchException e) {
                StringBuilder why = new StringBuilder();
                for (Throwable t = e; t != null; t = t.getCause()) {
                    why.append(t.getMessage()).append('\n');
                }
                boolean taken = why.indexOf("port is already allocated") >= 0
                    || why.indexOf("address already in use") >= 0;
                if (!taken || fixedBasePort != null || attempt == 2) {
                    throw e;
                }
            }
        }
    }

    private static int freePortBlock(int count) {
        Random rng = new Random();
        for (int tries = 0; tries < 200; tries++) {
            int base = FIRST_PORT + rng.nextInt(LAST_PORT - FIRST_PORT - count);
            if (IntStream.range(base, base + count).allMatch(KafkaEmulatorContainer::isFree)) {
                return base;
            }
        }
        throw new IllegalStateException("no " + count + " consecutive free ports");
    }

    private static boolean isFree(int port) {
        try (ServerSocket s = new ServerSocket(port)) {
            s.setReuseAddress(true);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    // ---- addresses ---------------------------------------------------------------------

    /** Every broker's {@code host:port}, comma-separated: what clients bootstrap from. */
    @Override
    public String getBootstrapServers() {
        if (basePort < 0) {
            throw new IllegalStateException("the container is not started");
        }
        return IntStream.range(0, brokers).mapToObj(n -> getHost() + ":" + (basePort + n))
            .collect(Collectors.joining(","));
    }

    /** The brokers' ids, 1..n. */
    public List<Integer> getBrokerIds() {
        return IntStream.rangeClosed(1, brokers).boxed().toList();
    }

    /** The control plane's base URL on the host, e.g. {@code http://localhost:32771}. */
    public String getControlUrl() {
        return "http://" + getHost() + ":" + getMappedPort(CONTROL_PORT);
    }

    /** The bearer token the control plane of this container wants. */
    public String getControlToken() {
        return token;
    }

    // ---- the control plane ---------------------------------------------------------------

    /**
     * One JSON call to the control plane ({@code control("GET", "/cluster", null)}): the parsed
     * answer (Map, List, String, Long, Double, Boolean), or the text of a non-JSON one.
     */
    public Object control(String method, String path, Object body) {
        HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(getControlUrl() + path))
            .timeout(Duration.ofSeconds(60))
            .header("Authorization", "Bearer " + token)
            .header("Content-Type", "application/json")
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(Json.write(body)));
        HttpResponse<String> resp;
        try {
            resp = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new ControlPlaneException(-1, method + " " + path + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ControlPlaneException(-1, method + " " + path + ": interrupted");
        }
        boolean json = resp.headers().firstValue("Content-Type").orElse("")
            .startsWith("application/json");
        Object parsed = json && !resp.body().isBlank() ? Json.parse(resp.body()) : resp.body();
        if (resp.statusCode() >= 300) {
            Object error = parsed instanceof Map<?, ?> m ? m.get("error") : parsed;
            throw new ControlPlaneException(resp.statusCode(), method + " " + path + ": " + error);
        }
        return parsed;
    }

    /** The cluster now: controller, brokers (up or crashed), topics and their partitions. */
    public ClusterView cluster() {
        return ClusterView.from(control("GET", "/cluster", null));
    }

    /** One topic's partitions (ControlPlaneException 404 when it does not exist). */
    public List<ClusterView.Partition> partitions(String topic) {
        Object json = control("GET", "/topics/" + topic, null);
        return ClusterView.partitions(Values.map(json).get("partitions"));
    }

    /** The fidelity mode the cluster runs in ("fast", "kafka" or "adversarial"). */
    public String fidelity() {
        return cluster().fidelity();
    }

    /** The seed the cluster runs with. */
    public long seed() {
        return cluster().seed();
    }

    /** Crash a broker: its connections drop, the controller fences it and moves leaders. */
    public void stopBroker(int id) {
        control("POST", "/brokers/" + id + "/stop", Map.of());
    }

    /** Crash a broker, fenced only after {@code fenceAfter} (Kafka's session timeout). */
    public void stopBroker(int id, Duration fenceAfter) {
        control("POST", "/brokers/" + id + "/stop", Map.of("fence_after_ms", fenceAfter.toMillis()));
    }

    /** Stop a broker cleanly: a controlled shutdown moves its leaders first. */
    public void controlledShutdown(int id) {
        control("POST", "/brokers/" + id + "/controlled-shutdown", Map.of());
    }

    /** Start a stopped broker again; it catches up and rejoins the ISR. */
    public void startBroker(int id) {
        control("POST", "/brokers/" + id + "/start", Map.of());
    }

    /** Apply fault operations, all validated before any is applied. */
    public void fault(Fault... faults) {
        List<Object> ops = new ArrayList<>();
        for (Fault f : faults) {
            ops.add(f.body());
        }
        control("POST", "/faults", ops);
    }

    /** Answer the next {@code count} requests of an API with an error. */
    public void injectError(String api, String error, int count) {
        fault(Fault.injectError(api, error).count(count));
    }

    /** Stop a broker's replica fetchers. */
    public void pauseFollower(int broker) {
        fault(Fault.pauseFollower(broker));
    }

    /** Restart a broker's replica fetchers. */
    public void resumeFollower(int broker) {
        fault(Fault.resumeFollower(broker));
    }

    /** Cut the network between two brokers. */
    public void cutBrokers(int a, int b) {
        fault(Fault.cutBrokers(a, b));
    }

    /** Restore the network between two brokers. */
    public void healBrokers(int a, int b) {
        fault(Fault.healBrokers(a, b));
    }

    /** Move a partition's leader to another in-sync replica. */
    public void moveLeader(String topic, int partition) {
        fault(Fault.moveLeader(topic, partition));
    }

    /** The faults in force, as the control plane lists them. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> faults() {
        return (Map<String, Object>) control("GET", "/faults", null);
    }

    /** Clear every fault. */
    public void clearFaults() {
        control("DELETE", "/faults", Map.of());
    }

    /**
     * Run a fault schedule ({@code {"seed": N, "faults": [{"at_ms": 0, "op": ...}, ...]}},
     * docs/faults.md), validated whole first: its seed and number of steps.
     */
    @SuppressWarnings("unchecked")
    public Map<String, Object> runSchedule(Map<String, Object> schedule) {
        return (Map<String, Object>) control("POST", "/faults/schedule", schedule);
    }

    /** The progress of the last fault schedule. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> scheduleStatus() {
        return (Map<String, Object>) control("GET", "/faults/schedule", null);
    }

    /** The control plane described: its OpenAPI 3.1 document. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> openApi() {
        return (Map<String, Object>) control("GET", "/openapi.json", null);
    }

    /** Start moving a partition to these replicas (AlterPartitionReassignments). */
    public Reassignment reassign(String topic, int partition, List<Integer> replicas) {
        return Reassignment.from(control("POST", "/reassignments",
            Map.of("topic", topic, "partition", partition, "replicas", replicas)));
    }

    /** Cancel a partition's reassignment: its replicas go back to the original set. */
    public Reassignment cancelReassignment(String topic, int partition) {
        return Reassignment.from(control("DELETE", "/reassignments",
            Map.of("topic", topic, "partition", partition)));
    }

    /** Elect the preferred leaders of every partition; the partitions whose leader moved. */
    public List<Map<String, Object>> electPreferredLeaders() {
        return results(control("POST", "/elections/preferred", Map.of()));
    }

    /** Elect the preferred leaders of these partitions of a topic. */
    public List<Map<String, Object>> electPreferredLeaders(String topic, List<Integer> partitions) {
        return results(control("POST", "/elections/preferred",
            Map.of("topic", topic, "partitions", partitions)));
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> results(Object json) {
        return (List<Map<String, Object>>) (Object) Values.list(Values.map(json).get("results"));
    }

    /** What {@code --fidelity adversarial} injected so far, in order. */
    public AdversaryRecord adversary() {
        return AdversaryRecord.from(control("GET", "/adversary", null));
    }

    /** Turn the adversary's faults off (a test's setup) or on again. */
    public AdversaryRecord adversaryEnabled(boolean enabled) {
        return AdversaryRecord.from(control("POST", "/adversary",
            Map.of(enabled ? "on" : "off", true)));
    }

    /** Scale the adversary's rates: {@code "all=0.5,leader_move=2"}. */
    public AdversaryRecord scaleAdversary(String scale) {
        return AdversaryRecord.from(control("POST", "/adversary", Map.of("scale", scale)));
    }

    /** The Prometheus metrics, Kafka's metric names. */
    public String metrics() {
        return String.valueOf(control("GET", "/metrics", null));
    }

    // ---- fault rules, groups ---------------------------------------------------------------

    /** Every fault rule (inject_error, drop_response, observe), active or exhausted. */
    public List<FaultRule> rules() {
        List<FaultRule> out = new ArrayList<>();
        for (Object r : Values.list(Values.map(control("GET", "/rules", null)).get("rules"))) {
            out.add(FaultRule.from(r));
        }
        return out;
    }

    /** One rule by its id. */
    public FaultRule rule(String id) {
        return FaultRule.from(control("GET", "/rules/" + encode(id), null));
    }

    /** Remove a rule. */
    public void removeRule(String id) {
        control("DELETE", "/rules/" + encode(id), null);
    }

    /**
     * Wait until a rule has fired (observe: matched) {@code hits} times; the rule then. Throws
     * IllegalStateException, with the rule as it stands, when it has not within the timeout.
     */
    public FaultRule waitForRule(String id, int hits, Duration timeout) {
        Map<String, Object> answer = Values.map(control("POST", "/rules/" + encode(id) + "/wait",
            Map.of("hits", hits, "timeout_ms", timeout.toMillis())));
        FaultRule rule = FaultRule.from(answer.get("rule"));
        if (!Values.bool(answer.get("reached"))) {
            throw new IllegalStateException("rule " + id + " fired " + rule.hits() + " of " + hits
                + " times within " + timeout + ": " + rule);
        }
        return rule;
    }

    /** A group as its coordinator holds it (ControlPlaneException 404 when unknown). */
    public GroupView group(String group) {
        return GroupView.from(control("GET", "/groups/" + encode(group), null));
    }

    /**
     * Wait until a group is in this state ({@code "Stable"}) with this many members (0: any);
     * throws IllegalStateException naming the group's state when it is not within the timeout.
     */
    public GroupView waitForGroup(String group, String state, int members, Duration timeout) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("state", state);
        if (members > 0) {
            body.put("members", members);
        }
        body.put("timeout_ms", timeout.toMillis());
        Map<String, Object> answer = Values.map(control("POST", "/groups/" + encode(group)
            + "/wait", body));
        Object seen = answer.get("group");
        if (!Values.bool(answer.get("reached"))) {
            throw new IllegalStateException("group " + group + " not " + state
                + (members > 0 ? " with " + members + " members" : "") + " within " + timeout
                + ": " + (seen == null ? "no such group" : GroupView.from(seen)));
        }
        return GroupView.from(seen);
    }

    // ---- the request journal ------------------------------------------------------------------

    /** Start recording every request (bounded: the oldest entries go first). */
    public Journal enableJournal() {
        return Journal.from(control("POST", "/journal", Map.of()));
    }

    /** Start recording, keeping the last {@code capacity} entries (or resize). */
    public Journal enableJournal(int capacity) {
        return Journal.from(control("POST", "/journal", Map.of("capacity", capacity)));
    }

    /** Forget the entries recorded so far; recording goes on. */
    public Journal clearJournal() {
        return Journal.from(control("POST", "/journal", Map.of("clear", true)));
    }

    /** Stop recording and drop the entries. */
    public Journal disableJournal() {
        return Journal.from(control("DELETE", "/journal", null));
    }

    /** Every entry recorded. */
    public Journal journal() {
        return journal(JournalQuery.all());
    }

    /** The entries a query selects: {@code journal(JournalQuery.api("OffsetCommit").group("g"))}. */
    public Journal journal(JournalQuery query) {
        return Journal.from(control("GET", "/journal" + query.toQueryString(), null));
    }

    // ---- barriers --------------------------------------------------------------------------------

    /** Hold the requests a barrier matches until released. */
    public BarrierView addBarrier(Barrier barrier) {
        return BarrierView.from(control("POST", "/barriers", barrier.body()));
    }

    /** Every barrier. */
    public List<BarrierView> barriers() {
        List<BarrierView> out = new ArrayList<>();
        for (Object b : Values.list(Values.map(control("GET", "/barriers", null)).get("barriers"))) {
            out.add(BarrierView.from(b));
        }
        return out;
    }

    /** One barrier by its id. */
    public BarrierView barrier(String id) {
        return BarrierView.from(control("GET", "/barriers/" + encode(id), null));
    }

    /** Wait until a barrier holds {@code held} requests; throws IllegalStateException if not. */
    public BarrierView waitForBarrier(String id, int held, Duration timeout) {
        Map<String, Object> answer = Values.map(control("POST", "/barriers/" + encode(id)
            + "/wait", Map.of("held", held, "timeout_ms", timeout.toMillis())));
        BarrierView b = BarrierView.from(answer.get("barrier"));
        if (!Values.bool(answer.get("reached"))) {
            throw new IllegalStateException("barrier " + id + " holds " + b.held() + " of " + held
                + " requests after " + timeout);
        }
        return b;
    }

    /** Let every held request go (the barrier keeps holding new ones). */
    public BarrierView releaseBarrier(String id) {
        return BarrierView.from(control("POST", "/barriers/" + encode(id) + "/release", Map.of()));
    }

    /** Let the oldest {@code count} held requests go. */
    public BarrierView releaseBarrier(String id, int count) {
        return BarrierView.from(control("POST", "/barriers/" + encode(id) + "/release",
            Map.of("count", count)));
    }

    /** Release everything held and remove the barrier. */
    public void removeBarrier(String id) {
        control("DELETE", "/barriers/" + encode(id), null);
    }

    private static String encode(String segment) {
        return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
