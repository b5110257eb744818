import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * One KafkaShareConsumer (KIP-932) for the share-group tests: subscribes to a topic in a
 * share group and prints "R <partition> <offset> <deliveryCount> <value>" for every record
 * it is given, then acts on it by mode:
 *   accept       implicit acknowledgement (every delivered record is accepted)
 *   release      explicit: RELEASE a record on its first delivery, ACCEPT it later
 *   reject       explicit: REJECT every record
 *   crash:N      implicit, but once N records arrived it halts the JVM without
 *                acknowledging or leaving: a crashed consumer
 *   renew:MS     explicit: RENEW each record (KIP-1222; the client hands renewed
 *                records back on the next poll) until it has held it MS milliseconds,
 *                then ACCEPT it ("A <offset>")
 * It runs until stdin says "quit" (or closes), then closes the consumer cleanly.
 * Usage: ShareClient BOOTSTRAP GROUP TOPIC MODE
 */
public final class ShareClient {
    public static void main(String[] args) throws Exception {
        String mode = args[3];
        long holdMs = mode.startsWith("renew:") ? Long.parseLong(mode.substring(6)) : -1;
        boolean explicit = mode.equals("release") || mode.equals("reject") || holdMs >= 0;
        java.util.Map<Long, Long> firstSeen = new java.util.HashMap<>();
        int crashAfter = mode.startsWith("crash:") ? Integer.parseInt(mode.substring(6)) : -1;
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[1]);
        props.put("client.id", "share-" + mode);
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        props.put("share.acknowledgement.mode", explicit ? "explicit" : "implicit");
        AtomicBoolean stop = new AtomicBoolean(false);
        Thread stdin = new Thread(() -> {
            try {
                java.io.BufferedReader in = new java.io.BufferedReader(
                    new java.io.InputStreamReader(System.in));
                String line;
                while ((line = in.readLine()) != null && !line.trim().equals("quit")) { }
            } catch (java.io.IOException e) {
                // stdin gone: stop as well
            }
            stop.set(true);
        });
        stdin.setDaemon(true);
        stdin.start();
        int seen = 0;
        try (KafkaShareConsumer<String, String> consumer = new KafkaShareConsumer<>(props)) {
            consumer.subscribe(List.of(args[2]));
            System.out.println("SUBSCRIBED");
            System.out.flush();
            while (!stop.get()) {
                ConsumerRecords<String, String> records = consumer.poll(Duration.ofMillis(200));
                for (ConsumerRecord<String, String> r : records) {
                    short count = r.deliveryCount().orElse((short) -1);
                    System.out.println("R " + r.partition() + " " + r.offset() + " " + count + " "
                        + r.value());
                    if (mode.equals("release")) {
                        consumer.acknowledge(r, count <= 1 ? AcknowledgeType.RELEASE
                                                           : AcknowledgeType.ACCEPT);
                    } else if (mode.equals("reject")) {
                        consumer.acknowledge(r, AcknowledgeType.REJECT);
                    } else if (holdMs >= 0) {
                        long now = System.currentTimeMillis();
                        long since = now - firstSeen.computeIfAbsent(r.offset(), o -> now);
                        if (since < holdMs) {
                            consumer.acknowledge(r, AcknowledgeType.RENEW);
                        } else {
                            consumer.acknowledge(r, AcknowledgeType.ACCEPT);
                            System.out.println("A " + r.offset());
                        }
                    }
                    seen++;
                }
                System.out.flush();
                if (crashAfter > 0 && seen >= crashAfter) {
                    System.out.println("CRASH");
                    System.out.flush();
                    Runtime.getRuntime().halt(3);
                }
                if (explicit && !records.isEmpty()) {
                    consumer.commitSync();
                }
            }
        }
        System.out.println("CLOSED");
        System.out.flush();
    }
}
