package io.github.kafkaemulator.testcontainers;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One request the cluster received, as its journal recorded it: which broker, client, API and
 * version, the topics, partitions, groups and transactional ids it named, the error names of
 * its answer (empty: success), the fault rule that answered it, if one did, and how long a
 * barrier held it.
 */
public record JournalEntry(
        long seq,
        long timeMs,
        int broker,
        String clientId,
        String api,
        int apiKey,
        int version,
        int correlationId,
        List<String> topics,
        List<TopicPartition> partitions,
        List<String> groups,
        List<String> transactionalIds,
        List<String> errors,
        String injected,
        long heldMs,
        String outcome) {

    /** A partition a request named. */
    public record TopicPartition(String topic, int partition) {}

    /** True when the answer carried no error code. */
    public boolean succeeded() {
        return errors.isEmpty() && "answered".equals(outcome);
    }

    static JournalEntry from(Object json) {
        Map<String, Object> m = Values.map(json);
        List<TopicPartition> parts = new ArrayList<>();
        for (Object o : Values.list(m.get("partitions"))) {
            Map<String, Object> pm = Values.map(o);
            parts.add(new TopicPartition(Values.str(pm.get("topic")), Values.i(pm.get("partition"))));
        }
        return new JournalEntry(Values.l(m.get("seq")), Values.l(m.get("time_ms")),
            Values.i(m.get("broker")), Values.str(m.get("client_id")), Values.str(m.get("api")),
            Values.i(m.get("api_key")), Values.i(m.get("version")),
            Values.i(m.get("correlation_id")), strings(m.get("topics")), List.copyOf(parts),
            strings(m.get("groups")), strings(m.get("transactional_ids")),
            strings(m.get("errors")), Values.str(m.get("injected")), Values.l(m.get("held_ms")),
            Values.str(m.get("outcome")));
    }

    static List<String> strings(Object v) {
        List<String> out = new ArrayList<>();
        for (Object o : Values.list(v)) {
            out.add(Values.str(o));
        }
        return List.copyOf(out);
    }
}
