// One long-lived admin and producer client for the three-broker cluster tests (tests/kafka/cluster.py):
// it reads one command per line on stdin, "BOOTSTRAP COMMAND ARGS..." (the brokers' addresses change as
// they restart; one admin client is kept per bootstrap), and answers with result lines and then "ok" or
// "error MESSAGE", so a test drives many steps through one JVM. Compiled like KafkaDriver.java.
//
//   brokers                                   "brokers 1,2,3": the registered, unfenced brokers
//   create TOPIC ASSIGNMENT CONFIGS           ASSIGNMENT "1,2,3/2,3,1" (one replica list per partition);
//                                             CONFIGS "k=v;k=v" or "-"
//   describe TOPIC                            "partition P leader L isr 1,2 replicas 1,2,3" per partition
//                                             (leader -1 when there is none)
//   produce TOPIC PARTITION COUNT ACKS TAG    COUNT records keyed TAG-i, one producer with acks=ACKS;
//                                             "produced FIRST LAST" (the offsets the broker acknowledged)
//   elect TYPE TOPIC PARTITION                Admin.electLeaders, the request kafka-leader-election
//                                             (org.apache.kafka.tools.LeaderElectionCommand) sends;
//                                             TYPE unclean or preferred
//   offsets TOPIC PARTITION                   "offsets EARLIEST LATEST" (ListOffsets, read_uncommitted)
//   alter TOPIC CONFIGS                       incrementalAlterConfigs SET (TOPIC "broker:N": broker N's configs)
//   reassign TOPIC PARTITION REPLICAS         alterPartitionReassignments to REPLICAS "1,2"
//   movedir BROKER DIR TOPIC PARTITION        alterReplicaLogDirs: start moving the replica to DIR
import java.util.*;
import java.util.concurrent.*;
import java.io.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringSerializer;

public class ClusterDriver {
    public static void main(String[] args) throws Exception {
        Admin admin = null;
        String current = "";
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"))) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] words = line.trim().split(" ");
                String bootstrap = words[0];
                String[] a = Arrays.copyOfRange(words, 1, words.length);
                try {
                    if (!bootstrap.equals(current)) {
                        if (admin != null) admin.close(java.time.Duration.ofSeconds(5));
                        admin = Admin.create(common(bootstrap));
                        current = bootstrap;
                    }
                    run(admin, bootstrap, a);
                    System.out.println("ok");
                } catch (Exception e) {
                    Throwable c = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
                    System.out.println("error " + c.getClass().getSimpleName() + ": "
                        + String.valueOf(c.getMessage()).replace('\n', ' '));
                }
                System.out.flush();
            }
        } finally {
            if (admin != null) admin.close(java.time.Duration.ofSeconds(5));
        }
    }

    static Properties common(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("request.timeout.ms", "10000");
        p.put("default.api.timeout.ms", "20000");
        p.put("metadata.max.age.ms", "1000");
        return p;
    }

    static List<Integer> ids(String s) {
        List<Integer> out = new ArrayList<>();
        for (String x : s.split(",")) out.add(Integer.parseInt(x));
        return out;
    }

    static String join(Collection<?> xs) {
        StringJoiner j = new StringJoiner(",");
        for (Object x : xs) j.add(String.valueOf(x instanceof Node n ? n.id() : x));
        return xs.isEmpty() ? "-" : j.toString();
    }

    static Map<String, String> configs(String s) {
        Map<String, String> out = new HashMap<>();
        if (!s.equals("-")) for (String kv : s.split(";")) {
            int i = kv.indexOf('=');
            out.put(kv.substring(0, i), kv.substring(i + 1));
        }
        return out;
    }

    static void run(Admin admin, String bootstrap, String[] a) throws Exception {
        switch (a[0]) {
            case "brokers" -> System.out.println("brokers " + join(admin.describeCluster().nodes().get()));
            case "create" -> {
                Map<Integer, List<Integer>> assignment = new HashMap<>();
                String[] parts = a[2].split("/");
                for (int i = 0; i < parts.length; i++) assignment.put(i, ids(parts[i]));
                admin.createTopics(List.of(new NewTopic(a[1], assignment).configs(configs(a[3])))).all().get();
            }
            case "describe" -> {
                TopicDescription d = admin.describeTopics(List.of(a[1])).allTopicNames().get().get(a[1]);
                for (TopicPartitionInfo i : d.partitions()) {
                    int leader = i.leader() == null || i.leader().isEmpty() ? -1 : i.leader().id();
                    System.out.println("partition " + i.partition() + " leader " + leader + " isr "
                        + join(i.isr()) + " replicas " + join(i.replicas()));
                }
            }
            case "produce" -> produce(bootstrap, a[1], Integer.parseInt(a[2]), Integer.parseInt(a[3]), a[4], a[5]);
            case "elect" -> {
                TopicPartition tp = new TopicPartition(a[2], Integer.parseInt(a[3]));
                ElectionType type = a[1].equals("unclean") ? ElectionType.UNCLEAN : ElectionType.PREFERRED;
                Optional<Throwable> error = admin.electLeaders(type, Set.of(tp)).partitions().get().get(tp);
                if (error.isPresent()) throw new RuntimeException(error.get());
            }
            case "offsets" -> {
                TopicPartition tp = new TopicPartition(a[1], Integer.parseInt(a[2]));
                long first = admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get().get(tp).offset();
                long last = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get().get(tp).offset();
                System.out.println("offsets " + first + " " + last);
            }
            case "alter" -> {
                List<AlterConfigOp> ops = new ArrayList<>();
                for (Map.Entry<String, String> e : configs(a[2]).entrySet())
                    ops.add(new AlterConfigOp(new ConfigEntry(e.getKey(), e.getValue()), AlterConfigOp.OpType.SET));
                admin.incrementalAlterConfigs(Map.of(a[1].startsWith("broker:") ? new ConfigResource(ConfigResource.Type.BROKER, a[1].substring(7)) : new ConfigResource(ConfigResource.Type.TOPIC, a[1]), ops))
                    .all().get();
            }
            case "reassign" -> {
                TopicPartition tp = new TopicPartition(a[1], Integer.parseInt(a[2]));
                admin.alterPartitionReassignments(Map.of(tp, Optional.of(new NewPartitionReassignment(ids(a[3])))))
                    .all().get();
            }
            case "movedir" -> {
                TopicPartitionReplica r = new TopicPartitionReplica(a[3], Integer.parseInt(a[4]), Integer.parseInt(a[1]));
                admin.alterReplicaLogDirs(Map.of(r, a[2])).all().get();
            }
            default -> throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    static void produce(String bootstrap, String topic, int partition, int count, String acks, String tag)
            throws Exception {
        Properties p = common(bootstrap);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("acks", acks);
        p.put("enable.idempotence", "false");
        p.put("linger.ms", "5");
        p.put("batch.size", "1024");
        p.put("max.in.flight.requests.per.connection", "1");
        p.put("delivery.timeout.ms", "30000");
        p.put("retry.backoff.ms", "200");
        String pad = "x".repeat(100);
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            for (int i = 0; i < count; i++)
                sent.add(producer.send(new ProducerRecord<>(topic, partition, tag + "-" + i, tag + "-" + i + "-" + pad)));
            producer.flush();
        }
        long first = Long.MAX_VALUE, last = -1;
        for (Future<RecordMetadata> f : sent) {
            long o = f.get().offset();
            first = Math.min(first, o);
            last = Math.max(last, o);
        }
        System.out.println("produced " + first + " " + last);
    }
}
