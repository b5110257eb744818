package io.github.kafkaemulator.testcontainers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.kafka.KafkaAutoConfiguration;
import org.springframework.boot.autoconfigure.kafka.KafkaConnectionDetails;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.kafka.core.ConsumerFactory;
import org.springframework.kafka.core.KafkaTemplate;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * KafkaEmulatorContainer as a Spring Boot {@code @ServiceConnection}, declared as Spring's
 * users declare KafkaContainer: the auto-configured KafkaTemplate and consumer factory reach
 * every broker, and the control plane's journal sees the template's requests.
 */
@SpringBootTest(properties = {
    "spring.kafka.consumer.auto-offset-reset=earliest",
    "spring.kafka.consumer.group-id=spring-emulator"})
@Testcontainers
class SpringServiceConnectionTest {
    static final int RECORDS = 20;

    @Container
    @ServiceConnection
    static KafkaEmulatorContainer kafka = new KafkaEmulatorContainer(
        System.getProperty("image", KafkaEmulatorContainer.DEFAULT_IMAGE)).withBrokers(3);

    @Autowired KafkaConnectionDetails connection;
    @Autowired KafkaTemplate<String, String> template;
    @Autowired ConsumerFactory<String, String> consumers;

    @Test
    void theAutoConfiguredClientsReachTheCluster() throws Exception {
        assertEquals(List.of(kafka.getBootstrapServers()), connection.getBootstrapServers());
        assertEquals(3, kafka.getBootstrapServers().split(",").length);
        kafka.enableJournal();
        for (int i = 0; i < RECORDS; i++) {
            template.send("spring-events", "k" + i, "v" + i).get(30, TimeUnit.SECONDS);
        }
        List<String> seen = new ArrayList<>();
        try (Consumer<String, String> consumer = consumers.createConsumer()) {
            consumer.subscribe(List.of("spring-events"));
            long deadline = System.currentTimeMillis() + 30_000;
            while (seen.size() < RECORDS && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                    seen.add(r.value());
                }
            }
        }
        assertEquals(RECORDS, seen.size());
        Journal produce = kafka.journal(JournalQuery.api("Produce").topic("spring-events"));
        assertFalse(produce.entries().isEmpty());
        System.out.println("ok: spring produced " + RECORDS + " consumed " + seen.size());
    }

    /** The application: Spring Boot's Kafka auto-configuration, nothing else. */
    @SpringBootConfiguration
    @ImportAutoConfiguration(KafkaAutoConfiguration.class)
    static class App {
    }
}
