import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.kafka.ConfluentKafkaContainer;
import org.testcontainers.kafka.KafkaContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * Testcontainers for Java's own Kafka modules started on another image, as their users
 * switch images: {@code DockerImageName.parse(IMAGE).asCompatibleSubstituteFor(...)}.
 *
 * <p>Arguments: {@code apache|confluent IMAGE RECORDS}. Starts the module's container,
 * produces RECORDS records through getBootstrapServers() and consumes them back, and
 * prints "started in N ms" and "ok: produced N consumed N" (client_tests/
 * test_official_image.py reads them). Run with TESTCONTAINERS_RYUK_DISABLED=true where
 * no registry can be reached (Ryuk is an image pulled from Docker Hub).
 */
public final class TestcontainersKafka {
    public static void main(String[] args) throws Exception {
        String kind = args[0];
        String image = args[1];
        int records = Integer.parseInt(args[2]);
        GenericContainer<?> container;
        if (kind.equals("apache")) {
            container = new KafkaContainer(
                DockerImageName.parse(image).asCompatibleSubstituteFor("apache/kafka"));
        } else {
            container = new ConfluentKafkaContainer(
                DockerImageName.parse(image).asCompatibleSubstituteFor("confluentinc/cp-kafka"));
        }
        long t0 = System.nanoTime();
        container.start();
        try {
            System.out.println("started in " + (System.nanoTime() - t0) / 1_000_000 + " ms");
            String bootstrap = container instanceof KafkaContainer k
                ? k.getBootstrapServers() : ((ConfluentKafkaContainer) container).getBootstrapServers();
            System.out.println("bootstrap " + bootstrap);
            String topic = "tc-" + kind;
            Properties pp = new Properties();
            pp.put("bootstrap.servers", bootstrap);
            pp.put("key.serializer", StringSerializer.class.getName());
            pp.put("value.serializer", StringSerializer.class.getName());
            pp.put("acks", "all");
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
                for (int i = 0; i < records; i++) {
                    producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i)).get();
                }
            }
            Properties cp = new Properties();
            cp.put("bootstrap.servers", bootstrap);
            cp.put("group.id", "tc-group-" + kind);
            cp.put("auto.offset.reset", "earliest");
            cp.put("key.deserializer", StringDeserializer.class.getName());
            cp.put("value.deserializer", StringDeserializer.class.getName());
            List<String> seen = new ArrayList<>();
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(cp)) {
                consumer.subscribe(List.of(topic));
                long deadline = System.currentTimeMillis() + 60_000;
                while (seen.size() < records && System.currentTimeMillis() < deadline) {
                    for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(500))) {
                        seen.add(r.value());
                    }
                }
                consumer.commitSync();
            }
            for (int i = 0; i < records; i++) {
                if (!seen.get(i).equals("v" + i)) {
                    throw new AssertionError("record " + i + " is " + seen.get(i));
                }
            }
            System.out.println("ok: produced " + records + " consumed " + seen.size());
        } finally {
            container.stop();
        }
    }
}
