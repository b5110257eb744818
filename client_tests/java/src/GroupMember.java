import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * One group member of Kafka's 4.x consumer, with either group protocol, for the online
 * migration tests: "classic" (JoinGroup/SyncGroup, the cooperative-sticky assignor, so its
 * subscriptions carry owned partitions) or "consumer" (KIP-848). Prints
 * "R <partition> <offset> <value>" per record, "P <partitions...>" after every assignment
 * change, commits synchronously after every poll with records and before giving partitions
 * up ("C", or "CF <exception>" when the commit failed), and leaves the group when a line "quit" arrives on stdin ("CLOSED").
 * Usage: GroupMember BOOTSTRAP GROUP TOPIC classic|consumer
 */
public final class GroupMember {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("group.id", args[1]);
        props.put("group.protocol", args[3]);
        props.put("client.id", "java-" + args[3]);
        props.put("auto.offset.reset", "earliest");
        props.put("enable.auto.commit", "false");
        if (args[3].equals("classic")) {
            props.put("partition.assignment.strategy",
                "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
            props.put("session.timeout.ms", "6000");
            props.put("heartbeat.interval.ms", "500");
        }
        props.put("key.deserializer", StringDeserializer.class.getName());
        props.put("value.deserializer", StringDeserializer.class.getName());
        AtomicBoolean stop = new AtomicBoolean(false);
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in))) {
                String line;
                while ((line = in.readLine()) != null && !line.equals("quit")) {
                    // only "quit" means anything
                }
            } catch (Exception e) {
                // stdin closed: stop as well
            }
            stop.set(true);
        });
        stdin.setDaemon(true);
        stdin.start();
        TreeSet<Integer> owned = new TreeSet<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.subscribe(List.of(args[2]), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> parts) {
                    commit(consumer);
                    parts.forEach(tp -> owned.remove(tp.partition()));
                    report(owned);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> parts) {
                    parts.forEach(tp -> owned.add(tp.partition()));
                    report(owned);
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> parts) {
                    parts.forEach(tp -> owned.remove(tp.partition()));
                    report(owned);
                }
            });
            while (!stop.get()) {
                boolean any = false;
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    System.out.println("R " + r.partition() + " " + r.offset() + " " + r.value());
                    any = true;
                }
                System.out.flush();
                if (any) {
                    commit(consumer);
                }
            }
        }
        System.out.println("CLOSED");
        System.out.flush();
    }

    private static void commit(KafkaConsumer<String, String> consumer) {
        try {
            consumer.commitSync();
            System.out.println("C");
        } catch (RuntimeException e) {
            System.out.println("CF " + e.getClass().getSimpleName());
        }
        System.out.flush();
    }

    private static void report(TreeSet<Integer> owned) {
        StringBuilder b = new StringBuilder("P");
        owned.forEach(p -> b.append(' ').append(p));
        System.out.println(b);
        System.out.flush();
    }
}
