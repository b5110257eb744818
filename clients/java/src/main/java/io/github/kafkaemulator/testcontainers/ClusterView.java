package io.github.kafkaemulator.testcontainers;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The cluster as the control plane describes it ({@code GET /cluster}): the controller,
 * each broker and whether it is up, and every topic's partitions with their leader,
 * replicas, in-sync replicas and high watermark.
 */
public record ClusterView(
        String clusterId,
        int controller,
        String fidelity,
        long seed,
        List<Broker> brokers,
        Map<String, List<Partition>> topics) {

    /**
     * One broker: {@code crashed} while its process is down but the controller has not fenced
     * it yet (Kafka's session timeout), {@code alive} false once fenced.
     */
    public record Broker(int id, String host, int port, boolean alive, boolean crashed) {
        /** Up and serving: alive and not crashed. */
        public boolean up() {
            return alive && !crashed;
        }
    }

    /** One partition's replica state. */
    public record Partition(
            int partition,
            int leader,
            int leaderEpoch,
            List<Integer> replicas,
            List<Integer> isr,
            List<Integer> addingReplicas,
            List<Integer> removingReplicas,
            long highWatermark) {}

    /** The broker of this id (IllegalArgumentException when there is none). */
    public Broker broker(int id) {
        return brokers.stream().filter(b -> b.id() == id).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("no broker " + id + " in " + brokers));
    }

    /** A partition of a topic (IllegalArgumentException when there is none). */
    public Partition partition(String topic, int partition) {
        List<Partition> parts = topics.get(topic);
        if (parts == null) {
            throw new IllegalArgumentException("no topic " + topic + " in " + topics.keySet());
        }
        return parts.stream().filter(p -> p.partition() == partition).findFirst()
            .orElseThrow(() -> new IllegalArgumentException("no partition " + topic + "-" + partition));
    }

    static ClusterView from(Object json) {
        Map<String, Object> m = Values.map(json);
        Map<String, Object> fid = Values.map(m.getOrDefault("fidelity", Map.of()));
        List<Broker> brokers = new ArrayList<>();
        for (Object b : Values.list(m.get("brokers"))) {
            Map<String, Object> bm = Values.map(b);
            brokers.add(new Broker(Values.i(bm.get("id")), (String) bm.get("host"),
                Values.i(bm.get("port")), Values.bool(bm.get("alive")),
                Values.bool(bm.get("crashed"))));
        }
        Map<String, List<Partition>> topics = new LinkedHashMap<>();
        for (Map.Entry<String, Object> t : Values.map(m.get("topics")).entrySet()) {
            topics.put(t.getKey(), partitions(Values.map(t.getValue()).get("partitions")));
        }
        return new ClusterView((String) m.get("cluster_id"), Values.i(m.get("controller")),
            (String) fid.getOrDefault("mode", "fast"), Values.l(fid.getOrDefault("seed", 0L)),
            List.copyOf(brokers), topics);
    }

    static List<Partition> partitions(Object json) {
        List<Partition> out = new ArrayList<>();
        for (Object p : Values.list(json)) {
            Map<String, Object> pm = Values.map(p);
            out.add(new Partition(Values.i(pm.get("partition")), Values.i(pm.get("leader")),
                Values.i(pm.get("leader_epoch")), Values.ints(pm.get("replicas")),
                Values.ints(pm.get("isr")), Values.ints(pm.get("adding_replicas")),
                Values.ints(pm.get("removing_replicas")), Values.l(pm.get("high_watermark"))));
        }
        return List.copyOf(out);
    }
}
