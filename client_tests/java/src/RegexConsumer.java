import java.time.Duration;
import java.util.HashSet;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.SubscriptionPattern;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Kafka's 4.x consumer with group.protocol=consumer (KIP-848) and a broker-side regex
 * subscription (SubscriptionPattern, RE2/J syntax, evaluated by the group coordinator).
 * Polls until it has COUNT records or 60 s passed, printing "R <topic> <partition>
 * <value>" per record, then "A <topic-partition>..." with its assignment and "done".
 * Usage: RegexConsumer BOOTSTRAP GROUP PATTERN COUNT
 */
public final class RegexConsumer {
    public static void main(String[] args) {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[1]);
        props.put("group.protocol", "consumer");
        props.put("auto.offset.reset", "earliest");
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        int want = Integer.parseInt(args[3]);
        Set<String> seen = new HashSet<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(new SubscriptionPattern(args[2]));
            long deadline = System.currentTimeMillis() + 60_000;
            while (seen.size() < want && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    if (seen.add(r.topic() + "/" + r.partition() + "/" + r.offset())) {
                        System.out.println("R " + r.topic() + " " + r.partition() + " " + r.value());
                    }
                }
            }
            StringBuilder a = new StringBuilder("A");
            consumer.assignment().stream().map(Object::toString).sorted()
                .forEach(tp -> a.append(' ').append(tp));
            System.out.println(a);
        }
        System.out.println("done");
        System.out.flush();
    }
}
