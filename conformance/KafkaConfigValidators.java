// The validators of Kafka's broker configs, read from the broker's own ConfigDef by
// reflection: one line per key, tab-separated, for conformance/gen_kafka_validators.py.
// Run from source over the broker's jars (java -cp '<jars>/*' KafkaConfigValidators.java).
//   range     NAME  AT_LEAST|-  AT_MOST|-          (the bounds as Kafka prints them)
//   one_of    NAME  CASE_SENSITIVE(1|0)  V1,V2,...
//   list      NAME  EMPTY_ALLOWED(1|0)  V1,V2,...  (no values: any item)
//   non_empty NAME
//   other     NAME  DESCRIPTION                    (a validator of its own)
// With the argument "check": reads NAME<TAB>VALUE lines and answers each with Kafka's
// verdict on that value at start (parsed as the key's type, then its validator): "OK",
// "UNKNOWN" (no such key) or the ConfigException's message (tests/test_kafka_validators_oracle.py).

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.server.config.AbstractKafkaConfig;

public class KafkaConfigValidators {
    static Object field(Object o, String name) throws Exception {
        Field f = o.getClass().getDeclaredField(name);
        f.setAccessible(true);
        return f.get(o);
    }

    static String joined(Object values) {
        return values == null ? "" : String.join(",", ((Collection<?>) values).stream()
                .map(String::valueOf).toList());
    }

    static String orDash(Object o) {
        return o == null ? "-" : o.toString();
    }

    static void check() throws Exception {
        Map<String, ConfigDef.ConfigKey> keys = AbstractKafkaConfig.CONFIG_DEF.configKeys();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null; ) {
            String[] kv = line.split("\t", 2);
            ConfigDef.ConfigKey k = keys.get(kv[0]);
            if (k == null) {
                System.out.println("UNKNOWN");
                continue;
            }
            try {
                Object value = ConfigDef.parseType(k.name, kv[1], k.type);
                if (k.validator != null) k.validator.ensureValid(k.name, value);
                System.out.println("OK");
            } catch (ConfigException e) {
                System.out.println(e.getMessage());
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("check")) {
            check();
            return;
        }
        Map<String, ConfigDef.ConfigKey> keys = new TreeMap<>(AbstractKafkaConfig.CONFIG_DEF.configKeys());
        for (ConfigDef.ConfigKey k : keys.values()) {
            ConfigDef.Validator v = k.validator;
            if (v == null) continue;
            String line;
            if (v instanceof ConfigDef.Range) {
                line = "range\t" + k.name + "\t" + orDash(field(v, "min")) + "\t" + orDash(field(v, "max"));
            } else if (v instanceof ConfigDef.ValidString) {
                line = "one_of\t" + k.name + "\t1\t" + joined(field(v, "validStrings"));
            } else if (v instanceof ConfigDef.CaseInsensitiveValidString) {
                line = "one_of\t" + k.name + "\t0\t" + joined(field(v, "validStrings"));
            } else if (v instanceof ConfigDef.ValidList) {
                Object valid = field(v, "validString");
                line = "list\t" + k.name + "\t" + ((Boolean) field(v, "isEmptyAllowed") ? "1" : "0")
                        + "\t" + (valid == null ? "" : joined(field(valid, "validStrings")));
            } else if (v instanceof ConfigDef.NonEmptyString) {
                line = "non_empty\t" + k.name;
            } else {
                line = "other\t" + k.name + "\t" + v;
            }
            System.out.println(line);
        }
    }
}
