package io.github.kafkaemulator.testcontainers;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A barrier to add: it holds the requests it matches until the test releases them, so a test
 * can force an interleaving ({@code Barrier.api("JoinGroup").clientId("consumer-b")}: B's
 * join waits until A has committed).
 */
public final class Barrier {
    private final Map<String, Object> fields = new LinkedHashMap<>();

    private Barrier() {}

    /** A barrier on every request its conditions below select. */
    public static Barrier matching() {
        return new Barrier();
    }

    /** A barrier on one API's requests. */
    public static Barrier api(String api) {
        return matching().with("api", api);
    }

    /** Its name (default assigned). */
    public Barrier id(String id) {
        return with("id", id);
    }

    /** Only requests of clients with this client.id. */
    public Barrier clientId(String clientId) {
        return with("client_id", clientId);
    }

    /** Only requests naming this group. */
    public Barrier group(String group) {
        return with("group", group);
    }

    /** Only requests naming this transactional id. */
    public Barrier transactionalId(String transactionalId) {
        return with("transactional_id", transactionalId);
    }

    /** Only requests naming this topic. */
    public Barrier topic(String topic) {
        return with("topic", topic);
    }

    /** Only requests to this broker. */
    public Barrier broker(int id) {
        return with("broker", id);
    }

    /** Only requests this match-language predicate holds for. */
    public Barrier match(String expression) {
        return with("match", expression);
    }

    /** Hold only the first n matching requests (default: every one until removed). */
    public Barrier count(int n) {
        return with("count", n);
    }

    /** A field by its wire name. */
    public Barrier with(String field, Object value) {
        fields.put(field, value);
        return this;
    }

    Map<String, Object> body() {
        return fields;
    }
}
