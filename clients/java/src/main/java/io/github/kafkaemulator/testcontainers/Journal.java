package io.github.kafkaemulator.testcontainers;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * An answer of the request journal: whether it records, its bounds ({@code capacity}, how many
 * entries it {@code dropped} when full), the sequence number the next entry gets (poll with
 * {@link JournalQuery#since}) and the entries the query selected, oldest first.
 */
public record Journal(boolean enabled, int capacity, int size, long dropped, long nextSeq,
                      List<JournalEntry> entries) {

    /** The entries this predicate holds for. */
    public List<JournalEntry> filter(Predicate<JournalEntry> p) {
        return entries.stream().filter(p).toList();
    }

    static Journal from(Object json) {
        Map<String, Object> m = Values.map(json);
        List<JournalEntry> entries = new ArrayList<>();
        for (Object o : Values.list(m.get("entries"))) {
            entries.add(JournalEntry.from(o));
        }
        return new Journal(Values.bool(m.get("enabled")), Values.i(m.get("capacity")),
            Values.i(m.get("size")), Values.l(m.get("dropped")), Values.l(m.get("next_seq")),
            List.copyOf(entries));
    }
}
