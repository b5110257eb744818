package io.github.kafkaemulator.testcontainers;

import java.util.Map;

/** A barrier in force: how many requests it holds now, ever caught, and released. */
public record BarrierView(String id, int held, long caught, long released, boolean active) {

    static BarrierView from(Object json) {
        Map<String, Object> m = Values.map(json);
        return new BarrierView(Values.str(m.get("id")), Values.i(m.get("held")),
            Values.l(m.get("caught")), Values.l(m.get("released")), Values.bool(m.get("active")));
    }
}
