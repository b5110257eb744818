package io.github.kafkaemulator.testcontainers;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One fault operation of the emulator's vocabulary (docs/faults.md), built fluently and
 * applied with {@link KafkaEmulatorContainer#fault(Fault...)}:
 *
 * <pre>{@code
 * kafka.fault(Fault.injectError("OffsetCommit", "NOT_COORDINATOR").count(2).clientId("billing"));
 * kafka.fault(Fault.pauseFollower(3).topic("orders").partition(0));
 * }</pre>
 *
 * <p>APIs are Kafka's names ({@code "Produce"}, {@code "OffsetCommit"}) or keys; errors are
 * Kafka's error names ({@code "NOT_LEADER_OR_FOLLOWER"}) or codes. The control plane
 * validates every field and answers a bad one with a 4xx naming it
 * ({@link ControlPlaneException}).
 */
public final class Fault {
    private final Map<String, Object> fields = new LinkedHashMap<>();

    private Fault(String op) {
        fields.put("op", op);
    }

    /** Any operation by its name, for one this class has no factory for yet. */
    public static Fault of(String op) {
        return new Fault(op);
    }

    /** Answer the next requests of an API with an error code (once; see {@link #count}). */
    public static Fault injectError(String api, String error) {
        return new Fault("inject_error").with("api", api).with("error", error);
    }

    /** Delay every request of an API by this much (zero removes the delay). */
    public static Fault addLatency(String api, Duration delay) {
        return new Fault("add_latency").with("api", api).with("ms", delay.toMillis());
    }

    /**
     * A rule that only counts the requests it matches and never fails one: narrow it with
     * {@link #group}, {@link #match} etc., then {@code waitForRule(id, n, timeout)}.
     */
    public static Fault observe() {
        return new Fault("observe");
    }

    /** An observing rule on one API. */
    public static Fault observe(String api) {
        return observe().with("api", api);
    }

    /** Apply the next requests of an API but drop their responses. */
    public static Fault dropResponse(String api) {
        return new Fault("drop_response").with("api", api);
    }

    /** Stop a broker's replica fetchers (its replicas fall out of the ISR). */
    public static Fault pauseFollower(int broker) {
        return new Fault("pause_follower").with("broker", broker);
    }

    /** Let a broker's replica fetchers fetch only once per {@code every}. */
    public static Fault slowFollower(int broker, Duration every) {
        return new Fault("slow_follower").with("broker", broker).with("delay_ms", every.toMillis());
    }

    /** Undo pauseFollower and slowFollower. */
    public static Fault resumeFollower(int broker) {
        return new Fault("resume_follower").with("broker", broker);
    }

    /** Cut the network between two brokers (replication and controller traffic). */
    public static Fault cutBrokers(int a, int b) {
        return new Fault("cut_brokers").with("brokers", List.of(a, b));
    }

    /** Restore the network between two brokers. */
    public static Fault healBrokers(int a, int b) {
        return new Fault("heal_brokers").with("brokers", List.of(a, b));
    }

    /** Cut clients off a broker (all of them; {@link #host} for one address). */
    public static Fault cutClients(int broker) {
        return new Fault("cut_clients").with("broker", broker);
    }

    /** Let clients reach a broker again. */
    public static Fault healClients(int broker) {
        return new Fault("heal_clients").with("broker", broker);
    }

    /** Move a partition's leader to another in-sync replica (the preferred one by default). */
    public static Fault moveLeader(String topic, int partition) {
        return new Fault("move_leader").with("topic", topic).with("partition", partition);
    }

    /** A broker's log dir is full: its next write fails and the dir goes offline. */
    public static Fault diskFull(int broker) {
        return new Fault("disk_full").with("broker", broker);
    }

    /** Writes to a broker's log dir fail (EIO). */
    public static Fault failWrites(int broker) {
        return new Fault("fail_writes").with("broker", broker);
    }

    /** Fsyncs of a broker's log dir fail (EIO). */
    public static Fault failFsyncs(int broker) {
        return new Fault("fail_fsyncs").with("broker", broker);
    }

    /** Each write to a broker's log dir takes this long (zero removes). */
    public static Fault slowWrites(int broker, Duration delay) {
        return new Fault("slow_writes").with("broker", broker).with("delay_ms", delay.toMillis());
    }

    /** End a broker's storage faults. */
    public static Fault healStorage(int broker) {
        return new Fault("heal_storage").with("broker", broker);
    }

    /** How many requests the fault hits (injectError, dropResponse; default 1). */
    public Fault count(int n) {
        return with("count", n);
    }

    /** Only requests to this broker (or, for moveLeader, the new leader). */
    public Fault broker(int id) {
        return with("broker", id);
    }

    /** Only requests naming this topic (only its items get the error). */
    public Fault topic(String topic) {
        return with("topic", topic);
    }

    /** Only this partition of {@link #topic}. */
    public Fault partition(int partition) {
        return with("partition", partition);
    }

    /** Only requests of clients with this {@code client.id}. */
    public Fault clientId(String clientId) {
        return with("client_id", clientId);
    }

    /** The rule's name (default: assigned, r1, r2...), for rule(), waitForRule(), removeRule(). */
    public Fault id(String id) {
        return with("id", id);
    }

    /**
     * Only requests naming this group id (JoinGroup, OffsetCommit, Heartbeat...); unless
     * {@link #broker} names one, only on the group's coordinator.
     */
    public Fault group(String group) {
        return with("group", group);
    }

    /** Only requests naming this transactional id (on its transaction coordinator). */
    public Fault transactionalId(String transactionalId) {
        return with("transactional_id", transactionalId);
    }

    /**
     * Only requests this predicate holds for, in the emulator's match language over the
     * decoded request: {@code "generation_id >= 2 and client_id in ['a', 'b']"}.
     */
    public Fault match(String expression) {
        return with("match", expression);
    }

    /** Let this many matching requests through first ({@code after(2)} fails the third). */
    public Fault after(int n) {
        return with("after", n);
    }

    /** cutClients: only the clients connecting from this address. */
    public Fault host(String address) {
        return with("host", address);
    }

    /** A field by its wire name, for fields this class has no method for yet. */
    public Fault with(String field, Object value) {
        fields.put(field, value);
        return this;
    }

    /** The operation as the control plane takes it ({@code {"op": ..., fields...}}). */
    public Map<String, Object> toMap() {
        return Map.copyOf(fields);
    }

    Map<String, Object> body() {
        return fields;
    }

    @Override
    public String toString() {
        return Json.write(fields);
    }
}
