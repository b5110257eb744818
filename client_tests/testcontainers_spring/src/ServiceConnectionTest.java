import static org.junit.jupiter.api.Assertions.assertEquals;

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
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * A Spring Boot test as its users write one: Testcontainers' KafkaContainer as a
 * {@code @ServiceConnection}, Spring Boot's auto-configured KafkaTemplate and consumer
 * factory pointed at it, on the image named by the system property {@code image}.
 */
@SpringBootTest(properties = {
    "spring.kafka.consumer.auto-offset-reset=earliest",
    "spring.kafka.consumer.group-id=spring-group"})
@Testcontainers
class ServiceConnectionTest {
    static final int RECORDS = 50;

    @Container
    @ServiceConnection
    static KafkaContainer kafka = new KafkaContainer(
        DockerImageName.parse(System.getProperty("image", "kafka-emulator:latest"))
            .asCompatibleSubstituteFor("apache/kafka"));

    @Autowired KafkaConnectionDetails connection;
    @Autowired KafkaTemplate<String, String> template;
    @Autowired ConsumerFactory<String, String> consumers;

    @Test
    void producesAndConsumesThroughTheServiceConnection() throws Exception {
        assertEquals(List.of(kafka.getBootstrapServers()), connection.getBootstrapServers());
        for (int i = 0; i < RECORDS; i++) {
            template.send("spring-events", "k" + i, "v" + i).get(30, TimeUnit.SECONDS);
        }
        List<String> seen = new ArrayList<>();
        try (Consumer<String, String> consumer = consumers.createConsumer()) {
            consumer.subscribe(List.of("spring-events"));
            long deadline = System.currentTimeMillis() + 60_000;
            while (seen.size() < RECORDS && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                    seen.add(r.value());
                }
            }
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            expected.add("v" + i);
        }
        assertEquals(expected, seen);
        System.out.println("ok: produced " + RECORDS + " consumed " + seen.size());
    }

    /** The application: Spring Boot's Kafka auto-configuration, nothing else. */
    @SpringBootConfiguration
    @ImportAutoConfiguration(KafkaAutoConfiguration.class)
    static class App {
    }
}
