package io.github.kafkaemulator.testcontainers;

import java.util.List;
import java.util.Map;

/** A partition's replica sets right after a reassignment was started or cancelled. */
public record Reassignment(String topic, int partition, List<Integer> replicas,
                           List<Integer> adding, List<Integer> removing, List<Integer> isr,
                           int leader) {

    static Reassignment from(Object json) {
        Map<String, Object> m = Values.map(json);
        return new Reassignment(Values.str(m.get("topic")), Values.i(m.get("partition")),
            Values.ints(m.get("replicas")), Values.ints(m.get("adding")),
            Values.ints(m.get("removing")), Values.ints(m.get("isr")), Values.i(m.get("leader")));
    }
}
