import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka's transactional producer for the transactions-v2 test (KIP-890 part 2: with the
 * transaction.version feature at 2 the 4.x producer adds partitions implicitly and the
 * coordinator bumps its epoch at every EndTxn). Runs the transactions named on the
 * command line in order, each "commit:N" or "abort:N" (N records, values "<i>-<j>"),
 * the first also sending offset 42 of partition 0 for group GROUP with the transaction,
 * and prints "ok <i> <result>" after each, then "done".
 * Usage: TxnClient BOOTSTRAP TRANSACTIONAL_ID TOPIC GROUP TXN...
 */
public final class TxnClient {
    public static void main(String[] args) {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("transactional.id", args[1]);
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        props.put("enable.idempotence", "true");
        String topic = args[2];
        String group = args[3];
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            producer.initTransactions();
            for (int i = 4; i < args.length; i++) {
                String[] spec = args[i].split(":");
                int n = Integer.parseInt(spec[1]);
                producer.beginTransaction();
                for (int j = 0; j < n; j++) {
                    producer.send(new ProducerRecord<>(topic, j % 2, "k", (i - 4) + "-" + j));
                }
                if (i == 4) {
                    producer.sendOffsetsToTransaction(
                        Map.of(new TopicPartition(topic, 0), new OffsetAndMetadata(42)),
                        new ConsumerGroupMetadata(group));
                }
                if (spec[0].equals("commit")) {
                    producer.commitTransaction();
                } else {
                    producer.flush();
                    producer.abortTransaction();
                }
                System.out.println("ok " + (i - 4) + " " + spec[0]);
                System.out.flush();
            }
        }
        System.out.println("done");
    }
}
