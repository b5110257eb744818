// A Kafka Streams word count with a KTable and exactly_once_v2, for
// client_tests/test_data_dir.py: words from IN are counted per word (the count store's
// changelog is a compacted topic) and every new count goes to OUT (String -> Long).
// Runs until its stdin closes, then closes cleanly; prints "STATE <state>" on every
// state change.
//
//   java -cp 'client_tests/java/.tools-jars/*:client_tests/java/.classes-streams' \
//       WordCount BOOTSTRAP APP_ID STATE_DIR IN OUT
import java.time.Duration;
import java.util.Arrays;
import java.util.Properties;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

public class WordCount {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        p.put(StreamsConfig.STATE_DIR_CONFIG, args[2]);
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 3);
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put("consumer.session.timeout.ms", 10000);
        StreamsBuilder b = new StreamsBuilder();
        KTable<String, Long> counts = b.<String, String>stream(args[3])
            .flatMapValues(v -> Arrays.asList(v.toLowerCase().split("\\W+")))
            .filter((k, w) -> !w.isEmpty())
            .groupBy((k, w) -> w)
            .count(Materialized.as("counts-store"));
        counts.toStream().to(args[4], Produced.with(Serdes.String(), Serdes.Long()));
        KafkaStreams streams = new KafkaStreams(b.build(), p);
        streams.setStateListener((now, before) -> {
            System.out.println("STATE " + now);
            System.out.flush();
        });
        streams.setUncaughtExceptionHandler(e -> {
            System.out.println("ERROR " + e);
            System.out.flush();
            return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler
                .StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        streams.start();
        while (System.in.read() >= 0) {
            // until stdin closes
        }
        streams.close(Duration.ofSeconds(30));
        System.out.println("CLOSED");
    }
}
