package io.github.kafkaemulator.testcontainers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Future;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.testcontainers.kafka.KafkaContainer;

/**
 * KafkaEmulatorContainer against the image (system property {@code image}, default
 * kafka-emulator:latest): a broker crash in the middle of a stream, an error on one group's
 * commits, and the request journal that shows both.
 */
class KafkaEmulatorContainerTest {
    static KafkaEmulatorContainer kafka;

    @BeforeAll
    static void start() {
        kafka = new KafkaEmulatorContainer(System.getProperty("image", KafkaEmulatorContainer.DEFAULT_IMAGE))
            .withBrokers(3).withSeed(11);
        long t0 = System.nanoTime();
        kafka.start();
        System.out.println("started in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        Instant dockerStart = Instant.parse(kafka.getContainerInfo().getState().getStartedAt());
        System.out.println("ready " + Duration.between(dockerStart, Instant.now()).toMillis()
            + " ms after docker start");
        kafka.enableJournal();
    }

    @AfterAll
    static void stop() {
        if (kafka != null) {
            kafka.stop();
        }
    }

    @Test
    void isAKafkaContainerOfThreeBrokers() {
        KafkaContainer plain = kafka;  // what @ServiceConnection and existing code take
        assertEquals(3, plain.getBootstrapServers().split(",").length);
        assertEquals(List.of(1, 2, 3), kafka.cluster().brokers().stream()
            .map(ClusterView.Broker::id).toList());
        assertEquals(11, kafka.seed());
        assertEquals("fast", kafka.fidelity());
        assertEquals("3.1.0", kafka.openApi().get("openapi"));
        Map<String, Object> run = kafka.runSchedule(Map.of("seed", 5, "faults", List.of(
            Map.of("at_ms", 0, "op", "add_latency", "api", "Metadata", "ms", 0))));
        assertEquals(1L, run.get("steps"));
        assertEquals(5L, kafka.scheduleStatus().get("seed"));
    }

    @Test
    void producingContinuesThroughABrokerCrash() throws Exception {
        createTopic("orders", 3);
        int leader = kafka.cluster().partition("orders", 0).leader();
        List<Future<RecordMetadata>> acked = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps())) {
            for (int i = 0; i < 300; i++) {
                if (i == 100) {
                    acked.forEach(KafkaEmulatorContainerTest::get);  // the first third is in
                    kafka.stopBroker(leader);
                    assertFalse(kafka.cluster().broker(leader).up());
                }
                Future<RecordMetadata> f = producer.send(new ProducerRecord<>("orders", "k" + i, "v" + i));
                acked.add(f);
                if (i >= 100 && i < 200) {
                    get(f);  // each acknowledged while the broker is down
                }
                if (i == 200) {
                    kafka.startBroker(leader);
                }
            }
            producer.flush();
        }
        acked.forEach(KafkaEmulatorContainerTest::get);
        Set<String> read = new HashSet<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps("reader", "reader"))) {
            List<TopicPartition> parts = List.of(new TopicPartition("orders", 0),
                new TopicPartition("orders", 1), new TopicPartition("orders", 2));
            consumer.assign(parts);
            consumer.seekToBeginning(parts);
            long deadline = System.currentTimeMillis() + 30_000;
            while (read.size() < 300 && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    read.add(r.value());
                }
            }
        }
        for (int i = 0; i < 300; i++) {
            assertTrue(read.contains("v" + i), "acknowledged record v" + i + " lost");
        }
        // The journal saw the stream move: Produce answered by the crashed leader before the
        // crash, and by the other brokers while it was down.
        Journal produce = kafka.journal(JournalQuery.api("Produce").topic("orders").error("NONE"));
        Set<Integer> brokers = new HashSet<>();
        produce.entries().forEach(e -> brokers.add(e.broker()));
        assertTrue(brokers.contains(leader) && brokers.size() >= 2, "Produce answered by " + brokers);
    }

    @Test
    void anErrorOnOneGroupsCommitsOnly() {
        createTopic("payments", 1);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps())) {
            for (int i = 0; i < 10; i++) {
                get(producer.send(new ProducerRecord<>("payments", "k" + i, "v" + i)));
            }
        }
        kafka.fault(Fault.injectError("OffsetCommit", "GROUP_AUTHORIZATION_FAILED")
            .group("billing").id("billing-commit"));
        try (KafkaConsumer<String, String> billing = new KafkaConsumer<>(consumerProps("billing", "billing-1"));
             KafkaConsumer<String, String> audit = new KafkaConsumer<>(consumerProps("audit", "audit-1"))) {
            pollAll(billing);
            pollAll(audit);
            GroupView group = kafka.waitForGroup("billing", "Stable", 1, Duration.ofSeconds(10));
            assertEquals("billing-1", group.members().get(0).clientId());
            audit.commitSync();
            assertThrows(GroupAuthorizationException.class, billing::commitSync);
            billing.commitSync();  // the rule failed one commit: the next goes through
        }
        FaultRule rule = kafka.waitForRule("billing-commit", 1, Duration.ofSeconds(10));
        assertEquals(1, rule.hits());
        assertFalse(rule.active());
        List<JournalEntry> billing = kafka.journal(JournalQuery.api("OffsetCommit").group("billing")).entries();
        assertEquals(List.of(List.of("GROUP_AUTHORIZATION_FAILED"), List.of()),
            billing.stream().map(JournalEntry::errors).toList());
        assertEquals("billing-commit", billing.get(0).injected());
        List<JournalEntry> audit = kafka.journal(JournalQuery.api("OffsetCommit").group("audit")).entries();
        assertFalse(audit.isEmpty());
        assertTrue(audit.stream().allMatch(JournalEntry::succeeded), audit.toString());
    }

    @Test
    void aBarrierHoldsOneClientsProduceUntilReleased() throws Exception {
        createTopic("held", 1);
        kafka.fault(Fault.observe("Produce").clientId("held-producer").id("watch"));
        kafka.addBarrier(Barrier.api("Produce").clientId("held-producer").id("hold"));
        Properties props = producerProps();
        props.put("client.id", "held-producer");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            Future<RecordMetadata> sent = producer.send(new ProducerRecord<>("held", "k", "v"));
            assertEquals(1, kafka.waitForBarrier("hold", 1, Duration.ofSeconds(10)).held());
            assertFalse(sent.isDone());
            BarrierView released = kafka.releaseBarrier("hold");
            assertEquals(1, released.caught());
            assertEquals(1, released.released());
            assertEquals(0, released.held());
            assertEquals(0, get(sent).offset());
        } finally {
            kafka.removeBarrier("hold");
        }
        assertEquals(1, kafka.waitForRule("watch", 1, Duration.ofSeconds(10)).matched());
        List<JournalEntry> held = kafka.journal(JournalQuery.api("Produce").clientId("held-producer"))
            .entries();
        assertEquals(1, held.size());
        assertTrue(held.get(0).succeeded(), held.toString());
    }

    private static void createTopic(String name, int partitions) {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", kafka.getBootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 3)
                .configs(Map.of("min.insync.replicas", "2")))).all().get();
        } catch (Exception e) {
            throw new AssertionError("create topic " + name, e);
        }
    }

    private static void pollAll(KafkaConsumer<String, String> consumer) {
        consumer.subscribe(List.of("payments"));
        int seen = 0;
        long deadline = System.currentTimeMillis() + 30_000;
        while (seen < 10 && System.currentTimeMillis() < deadline) {
            seen += consumer.poll(Duration.ofMillis(200)).count();
        }
        assertEquals(10, seen);
    }

    private static RecordMetadata get(Future<RecordMetadata> f) {
        try {
            return f.get();
        } catch (Exception e) {
            throw new AssertionError("a send was not acknowledged", e);
        }
    }

    private static Properties producerProps() {
        Properties p = new Properties();
        p.put("bootstrap.servers", kafka.getBootstrapServers());
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("acks", "all");
        p.put("enable.idempotence", "true");
        return p;
    }

    private static Properties consumerProps(String group, String clientId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", kafka.getBootstrapServers());
        p.put("group.id", group);
        p.put("client.id", clientId);
        p.put("auto.offset.reset", "earliest");
        p.put("enable.auto.commit", "false");
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        return p;
    }
}
