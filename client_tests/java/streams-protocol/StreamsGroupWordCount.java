// A Kafka Streams word count (exactly_once_v2) on the streams group protocol (KIP-1071,
// group.protocol=streams), for client_tests/test_streams_groups_java.py. Words from IN
// are counted per word into a KTable (repartition + changelog topics, which the broker
// creates) and every new count goes to OUT (String -> Long). Prints "STATE <state>" on
// every state change and "TASKS <active task ids>" whenever this instance's active
// tasks change; runs until its stdin closes, then closes (leaving the group) and prints
// "CLOSED".
//
//   java -cp 'client_tests/java/.tools-jars/*:client_tests/java/.classes-streams-protocol' \
//       StreamsGroupWordCount BOOTSTRAP APP_ID STATE_DIR IN OUT ENDPOINT_PORT
import java.time.Duration;
import java.util.Arrays;
import java.util.Properties;
import java.util.TreeSet;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

public class StreamsGroupWordCount {
    public static void main(String[] args) throws Exception {
        Properties p = new Properties();
        p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        p.put(StreamsConfig.STATE_DIR_CONFIG, args[2]);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 3);
        p.put(StreamsConfig.APPLICATION_SERVER_CONFIG, "localhost:" + args[5]);
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
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
        Thread watcher = new Thread(() -> {
            String last = null;
            while (true) {
                TreeSet<String> tasks = new TreeSet<>();
                try {
                    for (ThreadMetadata t : streams.metadataForLocalThreads()) {
                        for (TaskMetadata task : t.activeTasks()) {
                            tasks.add(task.taskId().toString());
                        }
                    }
                } catch (RuntimeException e) {
                    // not running (yet): no tasks
                }
                String now = String.join(",", tasks);
                if (!now.equals(last)) {
                    System.out.println("TASKS " + now);
                    System.out.flush();
                    last = now;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        watcher.setDaemon(true);
        watcher.start();
        while (System.in.read() >= 0) {
            // until stdin closes
        }
        streams.close(Duration.ofSeconds(30));
        System.out.println("CLOSED");
        System.out.flush();
    }
}
