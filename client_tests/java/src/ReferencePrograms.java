import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.OutOfOrderSequenceException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The reference programs with Kafka's Java client (client_tests/reference_programs/):
 * an idempotent acks=all producer, a group consumer (cooperative-sticky, or the KIP-848
 * consumer protocol with REFERENCE_GROUP_PROTOCOL=consumer) that commits after processing, and an exactly-once consume-transform-produce
 * (read_committed, offsets in the transaction with the consumer's group metadata, abort
 * and rewind on an abortable error, a new producer on a fatal one). Each prints what it
 * did as lines for client_tests/reference_programs/log.py's parse_java:
 *   producer BOOTSTRAP TOPIC N PARTITIONS PREFIX
 *   consumer BOOTSTRAP TOPIC GROUP EXPECTED MEMBERS
 *   ctp BOOTSTRAP SRC DST GROUP EXPECTED OUT_PARTITIONS INSTANCES
 */
public final class ReferencePrograms {
    private static final long T0 = System.nanoTime();
    private static final Object OUT = new Object();

    private static void emit(String line) {
        synchronized (OUT) {
            System.out.println(line);
            System.out.flush();
        }
    }

    private static long now() {
        return (System.nanoTime() - T0) / 1_000_000L;
    }

    private static Properties common(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("reconnect.backoff.ms", "50");
        p.put("reconnect.backoff.max.ms", "500");
        p.put("retry.backoff.ms", "50");
        p.put("retry.backoff.max.ms", "500");
        return p;
    }

    private static Properties producerProps(String bootstrap) {
        Properties p = common(bootstrap);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        p.put("linger.ms", "5");
        return p;
    }

    private static Properties consumerProps(String bootstrap, String group, String clientId) {
        Properties p = common(bootstrap);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("group.id", group);
        p.put("client.id", clientId);
        // the classic protocol with the cooperative-sticky assignor, or the KIP-848
        // consumer protocol when REFERENCE_GROUP_PROTOCOL says "consumer" (under the
        // adversary of 2026-12-06 its groups starved: docs/fidelity-wrong-clients.md)
        String protocol = System.getenv().getOrDefault("REFERENCE_GROUP_PROTOCOL", "classic");
        p.put("group.protocol", protocol);
        if (protocol.equals("classic")) {
            p.put("partition.assignment.strategy",
                  "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");
            p.put("session.timeout.ms", "3000");
            p.put("heartbeat.interval.ms", "300");
        }
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("max.poll.records", "20");
        return p;
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "producer" -> producer(args[1], args[2], Integer.parseInt(args[3]),
                Integer.parseInt(args[4]), args[5]);
            case "consumer" -> consumer(args[1], args[2], args[3], Integer.parseInt(args[4]),
                Integer.parseInt(args[5]));
            case "ctp" -> ctp(args[1], args[2], args[3], args[4], Integer.parseInt(args[5]),
                Integer.parseInt(args[6]), Integer.parseInt(args[7]));
            default -> throw new IllegalArgumentException(args[0]);
        }
        emit("done");
        System.exit(0);
    }

    static void producer(String bootstrap, String topic, int n, int partitions, String prefix) {
        int step = Math.max(1, n / 10);
        try (KafkaProducer<String, String> p = new KafkaProducer<>(producerProps(bootstrap))) {
            for (int start = 0; start < n; start += step) {
                for (int i = start; i < Math.min(n, start + step); i++) {
                    String v = String.format("%s%05d", prefix, i);
                    p.send(new ProducerRecord<>(topic, i % partitions, null, v), (md, e) -> {
                        if (e == null) {
                            emit("acked " + v + " " + md.partition() + " " + md.offset());
                        } else {
                            emit("failed " + v + " " + e);
                        }
                    });
                }
                p.flush();
            }
        }
    }

    static void consumer(String bootstrap, String topic, String group, int expected,
                         int members) throws InterruptedException {
        Set<String> seen = Collections.synchronizedSet(new HashSet<>());
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < members; i++) {
            String name = "m" + i;
            Thread t = new Thread(() -> {
                try (KafkaConsumer<String, String> c =
                         new KafkaConsumer<>(consumerProps(bootstrap, group, group + "-" + name))) {
                    c.subscribe(List.of(topic));
                    long idleSince = System.nanoTime();
                    while (!stop.get() && System.nanoTime() - idleSince < 60_000_000_000L) {
                        ConsumerRecords<String, String> got = c.poll(Duration.ofMillis(100));
                        if (got.isEmpty()) {
                            continue;
                        }
                        idleSince = System.nanoTime();
                        Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                        for (ConsumerRecord<String, String> m : got) {
                            emit("p " + name + " " + m.partition() + " " + m.offset() + " " + m.value());
                            seen.add(m.value());
                            next.put(new TopicPartition(topic, m.partition()),
                                     new OffsetAndMetadata(m.offset() + 1));
                        }
                        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : next.entrySet()) {
                            emit("c " + name + " " + e.getKey().partition() + " " + e.getValue().offset());
                        }
                        try {
                            c.commitSync(next);
                        } catch (KafkaException e) {
                            emit("note " + name + " commit failed: " + e);
                        }
                        if (seen.size() >= expected) {
                            stop.set(true);
                        }
                    }
                }
            });
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(120_000);
        }
        stop.set(true);
    }

    static void ctp(String bootstrap, String src, String dst, String group, int expected,
                    int outPartitions, int instances) throws InterruptedException {
        Set<String> done = Collections.synchronizedSet(new HashSet<>());
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            String name = "x" + i;
            String tid = group + "-" + name;
            Thread t = new Thread(() -> instance(bootstrap, src, dst, group, expected,
                outPartitions, name, tid, done, stop));
            threads.add(t);
            t.start();
        }
        for (Thread t : threads) {
            t.join(120_000);
        }
        stop.set(true);
    }

    private static KafkaProducer<String, String> txnProducer(String bootstrap, String tid) {
        Properties pp = producerProps(bootstrap);
        pp.put("transactional.id", tid);
        KafkaProducer<String, String> p = new KafkaProducer<>(pp);
        p.initTransactions();
        return p;
    }

    static void instance(String bootstrap, String src, String dst, String group, int expected,
                         int outPartitions, String name, String tid, Set<String> done,
                         AtomicBoolean stop) {
        Properties cp = consumerProps(bootstrap, group, tid);
        cp.put("isolation.level", "read_committed");
        KafkaProducer<String, String> p = txnProducer(bootstrap, tid);
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp)) {
            c.subscribe(List.of(src));
            int n = 0;
            long idleSince = System.nanoTime();
            while (!stop.get() && System.nanoTime() - idleSince < 60_000_000_000L) {
                ConsumerRecords<String, String> got = c.poll(Duration.ofMillis(100));
                if (got.isEmpty()) {
                    continue;
                }
                idleSince = System.nanoTime();
                n++;
                String aid = name + "." + n;
                long start = now();
                List<String> ids = new ArrayList<>();
                Map<TopicPartition, OffsetAndMetadata> next = new HashMap<>();
                for (ConsumerRecord<String, String> m : got) {
                    ids.add(m.value());
                    next.put(new TopicPartition(src, m.partition()),
                             new OffsetAndMetadata(m.offset() + 1));
                }
                String outcome = "unknown";
                String note = "";
                try {
                    p.beginTransaction();
                    for (ConsumerRecord<String, String> m : got) {
                        p.send(new ProducerRecord<>(dst, m.partition() % outPartitions, null,
                                                    m.value() + "|" + aid));
                    }
                    p.sendOffsetsToTransaction(next, c.groupMetadata());
                    p.commitTransaction();
                    outcome = "committed";
                } catch (ProducerFencedException | OutOfOrderSequenceException
                         | UnsupportedVersionException | AuthorizationException e) {
                    note = e.toString();  // fatal: a new producer fences this one
                    p.close(Duration.ofSeconds(1));
                    p = txnProducer(bootstrap, tid);
                    rewind(c);
                } catch (KafkaException e) {
                    note = e.toString();
                    try {
                        p.abortTransaction();
                        outcome = "aborted";
                    } catch (KafkaException e2) {
                        note += "; abort failed: " + e2;
                        p.close(Duration.ofSeconds(1));
                        p = txnProducer(bootstrap, tid);
                    }
                    rewind(c);
                }
                emit("attempt " + aid + " " + outcome + " " + start + " " + now() + " "
                     + String.join(",", ids) + " " + note.replace('\n', ' '));
                if (outcome.equals("committed")) {
                    done.addAll(ids);
                    if (done.size() >= expected) {
                        stop.set(true);
                    }
                }
            }
        } finally {
            p.close(Duration.ofSeconds(10));
        }
    }

    private static void rewind(KafkaConsumer<String, String> c) {
        Set<TopicPartition> assignment = c.assignment();
        if (assignment.isEmpty()) {
            return;
        }
        Map<TopicPartition, OffsetAndMetadata> committed = c.committed(assignment);
        for (TopicPartition tp : assignment) {
            OffsetAndMetadata at = committed.get(tp);
            if (at == null) {
                c.seekToBeginning(List.of(tp));
            } else {
                c.seek(tp, at.offset());
            }
        }
    }
}
