package io.github.kafkaemulator.testcontainers;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Which journal entries to read, every condition optional:
 * {@code JournalQuery.api("OffsetCommit").group("billing").error("NONE")}.
 */
public final class JournalQuery {
    private final Map<String, String> params = new LinkedHashMap<>();

    private JournalQuery() {}

    /** Every entry. */
    public static JournalQuery all() {
        return new JournalQuery();
    }

    /** Only requests of this API (Kafka's name, e.g. "Produce"). */
    public static JournalQuery api(String api) {
        return all().with("api", api);
    }

    /** Only requests to this broker. */
    public JournalQuery broker(int id) {
        return with("broker", Integer.toString(id));
    }

    /** Only requests of clients with this client.id. */
    public JournalQuery clientId(String clientId) {
        return with("client_id", clientId);
    }

    /** Only requests naming this group. */
    public JournalQuery group(String group) {
        return with("group", group);
    }

    /** Only requests naming this transactional id. */
    public JournalQuery transactionalId(String transactionalId) {
        return with("transactional_id", transactionalId);
    }

    /** Only requests naming this topic. */
    public JournalQuery topic(String topic) {
        return with("topic", topic);
    }

    /** Only requests answered with this error (by name; "NONE": answered without error). */
    public JournalQuery error(String error) {
        return with("error", error);
    }

    /** Only entries this match-language predicate holds for. */
    public JournalQuery match(String expression) {
        return with("match", expression);
    }

    /** Only entries from this sequence number on (a previous answer's nextSeq). */
    public JournalQuery since(long seq) {
        return with("since", Long.toString(seq));
    }

    /** At most this many entries. */
    public JournalQuery limit(int n) {
        return with("limit", Integer.toString(n));
    }

    private JournalQuery with(String key, String value) {
        params.put(key, value);
        return this;
    }

    String toQueryString() {
        if (params.isEmpty()) {
            return "";
        }
        return "?" + params.entrySet().stream()
            .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
            .collect(Collectors.joining("&"));
    }
}
