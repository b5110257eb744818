import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterPartitionReassignmentsOptions;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.PartitionReassignment;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

/**
 * Kafka's Java Admin client, driven line by line from stdin by
 * client_tests/test_reassign_java.py (one JVM for a whole test):
 *
 *   alter [--no-rf-change] TOPIC:P=1,2,3 TOPIC:P=cancel TOPIC:P=
 *   list [TOPIC:P ...]
 *   elect preferred|unclean TOPIC:P ...
 *   describe TOPIC
 *
 * Each command answers with lines, then "END":
 *   RESULT topic partition OK | RESULT topic partition ERROR ExceptionName message
 *   LIST topic partition replicas=.. adding=.. removing=..
 *   DESCRIBE topic partition leader=.. replicas=.. isr=..
 */
public class ReassignClient {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "15000");
        try (Admin admin = Admin.create(props)) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
            System.out.println("READY");
            System.out.flush();
            String line;
            while ((line = in.readLine()) != null) {
                line = line.trim();
                if (line.isEmpty()) continue;
                if (line.equals("quit")) break;
                try {
                    run(admin, line.split("\\s+"));
                } catch (Exception e) {
                    Throwable c = e instanceof ExecutionException ? e.getCause() : e;
                    System.out.println("FAILED " + c.getClass().getSimpleName() + " " + c.getMessage());
                }
                System.out.println("END");
                System.out.flush();
            }
        }
    }

    static TopicPartition tp(String s) {
        String t = s.contains("=") ? s.substring(0, s.indexOf('=')) : s;
        int i = t.lastIndexOf(':');
        return new TopicPartition(t.substring(0, i), Integer.parseInt(t.substring(i + 1)));
    }

    static String join(List<Integer> xs) {
        return xs.stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    static void result(TopicPartition p, KafkaFuture<?> f) throws InterruptedException {
        try {
            f.get();
            System.out.println("RESULT " + p.topic() + " " + p.partition() + " OK");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            System.out.println("RESULT " + p.topic() + " " + p.partition() + " ERROR "
                + c.getClass().getSimpleName() + " " + c.getMessage());
        }
    }

    static void run(Admin admin, String[] cmd) throws Exception {
        switch (cmd[0]) {
            case "alter": {
                AlterPartitionReassignmentsOptions options = new AlterPartitionReassignmentsOptions();
                Map<TopicPartition, Optional<NewPartitionReassignment>> req = new HashMap<>();
                for (int i = 1; i < cmd.length; i++) {
                    if (cmd[i].equals("--no-rf-change")) {
                        options.allowReplicationFactorChange(false);
                        continue;
                    }
                    String rest = cmd[i].substring(cmd[i].indexOf('=') + 1);
                    if (rest.equals("cancel")) {
                        req.put(tp(cmd[i]), Optional.empty());
                    } else {
                        List<Integer> replicas = new ArrayList<>();
                        for (String b : rest.split(",")) {
                            if (!b.isEmpty()) replicas.add(Integer.parseInt(b));
                        }
                        req.put(tp(cmd[i]), Optional.of(new NewPartitionReassignment(replicas)));
                    }
                }
                Map<TopicPartition, KafkaFuture<Void>> values =
                    admin.alterPartitionReassignments(req, options).values();
                for (Map.Entry<TopicPartition, KafkaFuture<Void>> e : values.entrySet()) {
                    result(e.getKey(), e.getValue());
                }
                break;
            }
            case "list": {
                Map<TopicPartition, PartitionReassignment> found;
                if (cmd.length == 1) {
                    found = admin.listPartitionReassignments().reassignments().get();
                } else {
                    Set<TopicPartition> parts = new HashSet<>();
                    for (int i = 1; i < cmd.length; i++) parts.add(tp(cmd[i]));
                    found = admin.listPartitionReassignments(parts).reassignments().get();
                }
                for (Map.Entry<TopicPartition, PartitionReassignment> e : found.entrySet()) {
                    PartitionReassignment r = e.getValue();
                    System.out.println("LIST " + e.getKey().topic() + " " + e.getKey().partition()
                        + " replicas=" + join(r.replicas()) + " adding=" + join(r.addingReplicas())
                        + " removing=" + join(r.removingReplicas()));
                }
                break;
            }
            case "elect": {
                ElectionType type = cmd[1].equals("unclean") ? ElectionType.UNCLEAN : ElectionType.PREFERRED;
                Set<TopicPartition> parts = new HashSet<>();
                for (int i = 2; i < cmd.length; i++) parts.add(tp(cmd[i]));
                Map<TopicPartition, Optional<Throwable>> res =
                    admin.electLeaders(type, parts).partitions().get();
                for (Map.Entry<TopicPartition, Optional<Throwable>> e : res.entrySet()) {
                    TopicPartition p = e.getKey();
                    if (e.getValue().isPresent()) {
                        Throwable c = e.getValue().get();
                        System.out.println("RESULT " + p.topic() + " " + p.partition() + " ERROR "
                            + c.getClass().getSimpleName() + " " + c.getMessage());
                    } else {
                        System.out.println("RESULT " + p.topic() + " " + p.partition() + " OK");
                    }
                }
                break;
            }
            case "describe": {
                TopicDescription d = admin.describeTopics(List.of(cmd[1])).allTopicNames().get().get(cmd[1]);
                for (TopicPartitionInfo p : d.partitions()) {
                    System.out.println("DESCRIBE " + cmd[1] + " " + p.partition()
                        + " leader=" + (p.leader() == null ? -1 : p.leader().id())
                        + " replicas=" + join(p.replicas().stream().map(Node::id).collect(Collectors.toList()))
                        + " isr=" + join(p.isr().stream().map(Node::id).collect(Collectors.toList())));
                }
                break;
            }
            default:
                System.out.println("FAILED UnknownCommand " + cmd[0]);
        }
    }
}
