package io.github.kafkaemulator.testcontainers;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What {@code --fidelity adversarial} injected so far ({@code GET /adversary}), in order: each
 * fault is decided from the seed and the request, so a failing run replays under its seed.
 */
public record AdversaryRecord(long seed, boolean enabled, List<Injection> injected,
                              List<Object> violations) {

    /** One injected fault: which broker, client and API, the fault's kind and what it did. */
    public record Injection(long seq, int broker, String clientId, String api, String kind,
                            String detail) {}

    static AdversaryRecord from(Object json) {
        Map<String, Object> m = Values.map(json);
        List<Injection> out = new ArrayList<>();
        for (Object o : Values.list(m.get("injected"))) {
            Map<String, Object> e = Values.map(o);
            out.add(new Injection(Values.l(e.get("seq")), Values.i(e.get("broker")),
                Values.str(e.get("client_id")), Values.str(e.get("api")), Values.str(e.get("kind")),
                Values.str(e.get("detail"))));
        }
        return new AdversaryRecord(Values.l(m.get("seed")), Values.bool(m.get("enabled")),
            List.copyOf(out), List.copyOf(Values.list(m.get("violations"))));
    }
}
