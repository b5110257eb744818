package io.github.kafkaemulator.testcontainers;

import java.util.Map;

/**
 * A fault rule in force (an {@code inject_error}, {@code drop_response} or {@code observe}
 * operation): what it matches, how often it matched ({@code matched}) and fired ({@code hits}),
 * how many failures it has left. An exhausted rule stays listed (inactive) until removed.
 */
public record FaultRule(
        String id,
        String op,
        String api,
        String error,
        String group,
        String transactionalId,
        String topic,
        Integer partition,
        String clientId,
        Integer broker,
        String match,
        int after,
        Integer count,
        Integer remaining,
        long matched,
        long hits,
        boolean active) {

    static FaultRule from(Object json) {
        Map<String, Object> m = Values.map(json);
        return new FaultRule(Values.str(m.get("id")), Values.str(m.get("op")),
            Values.str(m.get("api_name")), Values.str(m.get("error_name")),
            Values.str(m.get("group")), Values.str(m.get("transactional_id")),
            Values.str(m.get("topic")), boxed(m.get("partition")), Values.str(m.get("client_id")),
            boxed(m.get("broker")), Values.str(m.get("match")),
            m.get("after") == null ? 0 : Values.i(m.get("after")), boxed(m.get("count")),
            boxed(m.get("remaining")), Values.l(m.get("matched")), Values.l(m.get("hits")),
            Values.bool(m.get("active")));
    }

    private static Integer boxed(Object v) {
        return v instanceof Number n ? n.intValue() : null;
    }
}
