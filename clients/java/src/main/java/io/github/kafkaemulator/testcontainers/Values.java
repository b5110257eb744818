package io.github.kafkaemulator.testcontainers;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Typed reads of parsed JSON values (Json), for the views' factories. */
final class Values {
    private Values() {}

    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object v) {
        if (v == null) {
            return Map.of();
        }
        if (!(v instanceof Map)) {
            throw new IllegalStateException("expected a JSON object, got " + v);
        }
        return (Map<String, Object>) v;
    }

    @SuppressWarnings("unchecked")
    static List<Object> list(Object v) {
        if (v == null) {
            return List.of();
        }
        if (!(v instanceof List)) {
            throw new IllegalStateException("expected a JSON array, got " + v);
        }
        return (List<Object>) v;
    }

    static int i(Object v) {
        return v == null ? -1 : ((Number) v).intValue();
    }

    static long l(Object v) {
        return v == null ? -1 : ((Number) v).longValue();
    }

    static boolean bool(Object v) {
        return Boolean.TRUE.equals(v);
    }

    static String str(Object v) {
        return v == null ? null : v.toString();
    }

    static List<Integer> ints(Object v) {
        List<Integer> out = new ArrayList<>();
        for (Object x : list(v)) {
            out.add(i(x));
        }
        return List.copyOf(out);
    }
}
