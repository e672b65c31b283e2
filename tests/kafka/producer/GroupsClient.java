// Real kafka-clients consumers for tests/kafka/test_real_groups_cluster.py: groups commit, then restarted
// consumers report where they really start (or the exception they raise).
//
//   java -cp "CLASSES:LIB/*" GroupsClient BOOTSTRAP COMMAND ARGS [; COMMAND ARGS ...]
// Compiled together with ClusterDriver.java, whose client settings (common) it shares.
//
//   consume GROUP PROTOCOL TOPIC COUNT   read COUNT records (earliest), commitSync the next offset with the
//                                        leader epoch of the last record read: "committed G T P OFFSET EPOCH"
//   eos GROUP IN OUT                     consume-transform-produce: offsets 10 sent in a committed transaction,
//                                        20 in an aborted one: "eos committed 10", "eos aborted 20"
//   delete TOPIC P OFFSET                Admin.deleteRecords before OFFSET: "deleted T P LOWWATERMARK"
//   list GROUP                           Admin.listConsumerGroupOffsets: "offset G T P OFFSET EPOCH|-"
//   start GROUP PROTOCOL TOPIC RESET     a consumer with auto.offset.reset=RESET that commits nothing:
//                                        "start G T P first OFFSET" (the first record it receives),
//                                        "start G T P position OFFSET" (nothing to read: position() after
//                                        polls), or "start G T - error EXCEPTION_CLASS"
//   share GROUP TOPIC ACCEPT             a share consumer (share.auto.offset.reset=earliest, explicit
//                                        acknowledgement) accepts the records below ACCEPT, releases the others
//   sharelist GROUP                      Admin.listShareGroupOffsets: "share G T P START"
//   sharestart GROUP TOPIC               a new share consumer: "start G T P first OFFSET" (the lowest offset of
//                                        the first records it is given)
//   (the share commands are GroupsShareClient.java's, compiled with this file against 4.x jars only)
// A line "ok" ends each command's output.
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.*;

public class GroupsClient {
    static final long WAIT_MS = 30_000;

    static KafkaConsumer<String, String> consumer(String bootstrap, String group, String protocol, String reset,
                                                  String isolation) {
        Properties p = ClusterDriver.common(bootstrap);
        p.put("group.id", group);
        p.put("group.protocol", protocol);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", reset);
        p.put("isolation.level", isolation);
        if (protocol.equals("classic")) {
            p.put("session.timeout.ms", "10000");
            p.put("heartbeat.interval.ms", "500");
        }
        return new KafkaConsumer<>(p);
    }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        List<String> command = new ArrayList<>();
        for (int i = 1; i <= args.length; i++) {
            if (i == args.length || args[i].equals(";")) {
                run(bootstrap, command.toArray(new String[0]));
                System.out.println("ok");
                System.out.flush();
                command.clear();
            } else {
                command.add(args[i]);
            }
        }
    }

    static void run(String bootstrap, String[] a) throws Exception {
        switch (a[0]) {
            case "consume" -> consume(bootstrap, a[1], a[2], a[3], Integer.parseInt(a[4]));
            case "eos" -> eos(bootstrap, a[1], a[2], a[3]);
            case "delete" -> {
                TopicPartition tp = new TopicPartition(a[1], Integer.parseInt(a[2]));
                try (Admin admin = Admin.create(ClusterDriver.common(bootstrap))) {
                    long low = admin.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(Long.parseLong(a[3]))))
                        .lowWatermarks().get(tp).get().lowWatermark();
                    System.out.println("deleted " + a[1] + " " + a[2] + " " + low);
                }
            }
            case "list" -> {
                try (Admin admin = Admin.create(ClusterDriver.common(bootstrap))) {
                    Map<TopicPartition, OffsetAndMetadata> offsets =
                        admin.listConsumerGroupOffsets(a[1]).partitionsToOffsetAndMetadata().get();
                    for (Map.Entry<TopicPartition, OffsetAndMetadata> e : new TreeMap<>(offsets.entrySet().stream()
                            .collect(java.util.stream.Collectors.toMap(x -> x.getKey().toString(), x -> x))).values()) {
                        OffsetAndMetadata o = e.getValue();
                        System.out.println("offset " + a[1] + " " + e.getKey().topic() + " " + e.getKey().partition()
                            + " " + o.offset() + " " + o.leaderEpoch().map(String::valueOf).orElse("-"));
                    }
                }
            }
            case "start" -> start(bootstrap, a[1], a[2], a[3], a[4]);
            case "share", "sharelist", "sharestart" ->
                // KIP-932's client API is 4.x's: compiled only against 4.x jars (GroupsShareClient.java).
                Class.forName("GroupsShareClient").getMethod("run", String.class, String[].class)
                    .invoke(null, bootstrap, a);
            default -> throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    static void consume(String bootstrap, String group, String protocol, String topic, int count) {
        try (KafkaConsumer<String, String> c = consumer(bootstrap, group, protocol, "earliest", "read_uncommitted")) {
            c.subscribe(List.of(topic));
            int seen = 0;
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (seen < count) {
                if (System.currentTimeMillis() > deadline) throw new RuntimeException("consumed only " + seen);
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    if (seen++ == count - 1) {
                        TopicPartition tp = new TopicPartition(r.topic(), r.partition());
                        c.commitSync(Map.of(tp, new OffsetAndMetadata(r.offset() + 1, r.leaderEpoch(), "")));
                        System.out.println("committed " + group + " " + topic + " " + r.partition() + " "
                            + (r.offset() + 1) + " " + r.leaderEpoch().map(String::valueOf).orElse("-"));
                        break;
                    }
                }
            }
        }
    }

    static void eos(String bootstrap, String group, String in, String out) throws Exception {
        Properties p = ClusterDriver.common(bootstrap);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("transactional.id", group + "-txn");
        try (KafkaConsumer<String, String> c = consumer(bootstrap, group, "classic", "earliest", "read_committed");
             KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
            producer.initTransactions();
            TopicPartition tp = new TopicPartition(in, 0);
            c.assign(List.of(tp));
            List<ConsumerRecord<String, String>> read = new ArrayList<>();
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (read.size() < 20) {
                if (System.currentTimeMillis() > deadline) throw new RuntimeException("read only " + read.size());
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) read.add(r);
            }
            for (int round = 0; round < 2; round++) {
                producer.beginTransaction();
                for (int i = 0; i < 10; i++) {
                    ConsumerRecord<String, String> r = read.get(round * 10 + i);
                    producer.send(new ProducerRecord<>(out, 0, r.key(), r.value()));
                }
                long next = read.get(round * 10 + 9).offset() + 1;
                producer.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(next)), new ConsumerGroupMetadata(group));
                if (round == 0) {
                    producer.commitTransaction();
                    System.out.println("eos committed " + next);
                } else {
                    producer.abortTransaction();
                    System.out.println("eos aborted " + next);
                }
            }
        }
    }

    static void start(String bootstrap, String group, String protocol, String topic, String reset) {
        try (KafkaConsumer<String, String> c = consumer(bootstrap, group, protocol, reset, "read_uncommitted")) {
            c.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + WAIT_MS;
            long quietSince = -1;
            while (System.currentTimeMillis() < deadline) {
                try {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                        System.out.println("start " + group + " " + topic + " " + r.partition() + " first " + r.offset());
                        return;
                    }
                    if (!c.assignment().isEmpty()) {
                        if (quietSince < 0) quietSince = System.currentTimeMillis();
                        if (System.currentTimeMillis() - quietSince > 3000) {
                            for (TopicPartition tp : c.assignment())
                                System.out.println("start " + group + " " + topic + " " + tp.partition()
                                    + " position " + c.position(tp));
                            return;
                        }
                    }
                } catch (KafkaException e) {
                    System.out.println("start " + group + " " + topic + " - error " + e.getClass().getSimpleName());
                    return;
                }
            }
            throw new RuntimeException("no assignment within " + WAIT_MS + " ms");
        }
    }
}
