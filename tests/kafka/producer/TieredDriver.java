// Drives a real broker with tiered storage for kdump's tiered tests (tests/kafka/test_real_broker_tiered.py).
// Compiled once per source and release into the jar cache by tests/kafka/tiered_broker.py.
//
// Commands:
//   create BOOTSTRAP TOPIC SEGMENT_BYTES   a 1-partition topic with remote.storage.enable=true, segments of
//                                          SEGMENT_BYTES (internal.segment.bytes) and a 1 s local retention;
//                                          prints "topicId ID"
//   produce BOOTSTRAP TOPIC ROUND          plain records, gzip records, a committed and an aborted transaction
//                                          (keys carry the round, so two rounds never repeat a record)
//   stop-copy BOOTSTRAP TOPIC              remote.log.copy.disable=true (KIP-950), local.retention.ms=-1:
//                                          later segments stay local
//   consume BOOTSTRAP TOPIC ISOLATION      every record from offset 0 to the end, as the consumer with
//                                          isolation.level=ISOLATION gets it: "record OFFSET KEYHEX VALUEHEX"
//   metadata BOOTSTRAP                     every event of __remote_log_metadata, decoded by the broker's own
//                                          RemoteLogMetadataSerde: "segment ID START END STATE" for a
//                                          RemoteLogSegmentMetadata, "update ID STATE" for an update
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.*;

public class TieredDriver {
    static final int PLAIN = 150, GZIP = 150, TXN = 20;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[1];
        switch (args[0]) {
            case "create" -> create(bootstrap, args[2], args[3]);
            case "produce" -> produce(bootstrap, args[2], Integer.parseInt(args[3]));
            case "consume" -> consume(bootstrap, args[2], args[3]);
            case "stop-copy" -> stopCopy(bootstrap, args[2]);
            case "metadata" -> metadata(bootstrap);
            default -> throw new IllegalArgumentException("unknown command " + args[0]);
        }
    }

    static Properties common(String bootstrap) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("request.timeout.ms", "20000");
        p.put("default.api.timeout.ms", "60000");
        return p;
    }

    static void create(String bootstrap, String topic, String segmentBytes) throws Exception {
        Map<String, String> config = Map.of("remote.storage.enable", "true", "internal.segment.bytes", segmentBytes,
            "local.retention.ms", "1000", "retention.ms", "-1", "index.interval.bytes", "512");
        try (Admin admin = Admin.create(common(bootstrap))) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1).configs(config))).all().get();
            TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            System.out.println("topicId " + d.topicId());
        }
    }

    static void stopCopy(String bootstrap, String topic) throws Exception {
        try (Admin admin = Admin.create(common(bootstrap))) {
            var resource = new org.apache.kafka.common.config.ConfigResource(
                org.apache.kafka.common.config.ConfigResource.Type.TOPIC, topic);
            // Kafka refuses the switch unless local.retention.ms equals retention.ms (-1: nothing deleted)
            var ops = List.of(new AlterConfigOp(new ConfigEntry("remote.log.copy.disable", "true"), AlterConfigOp.OpType.SET),
                new AlterConfigOp(new ConfigEntry("local.retention.ms", "-1"), AlterConfigOp.OpType.SET));
            admin.incrementalAlterConfigs(Map.of(resource, ops)).all().get();
        }
    }

    static KafkaProducer<String, String> producer(String bootstrap, Map<String, String> extra) {
        Properties p = common(bootstrap);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("linger.ms", "5");
        p.put("batch.size", "2048");
        p.putAll(extra);
        return new KafkaProducer<>(p);
    }

    static String value(int round, String kind, int i) {
        return kind + " record " + i + " of round " + round + " " + "x".repeat(40 + (i % 17));
    }

    static void produce(String bootstrap, String topic, int round) throws Exception {
        try (KafkaProducer<String, String> p = producer(bootstrap, Map.of("compression.type", "none"))) {
            for (int i = 0; i < PLAIN; i++) p.send(new ProducerRecord<>(topic, 0, "r" + round + "-plain-" + i, value(round, "plain", i)));
            p.flush();
        }
        try (KafkaProducer<String, String> p = producer(bootstrap, Map.of("compression.type", "gzip"))) {
            for (int i = 0; i < GZIP; i++) p.send(new ProducerRecord<>(topic, 0, "r" + round + "-gzip-" + i, value(round, "gzip", i)));
            p.flush();
        }
        try (KafkaProducer<String, String> p = producer(bootstrap, Map.of("transactional.id", "tiered-" + round,
                "compression.type", "none"))) {
            p.initTransactions();
            p.beginTransaction();
            for (int i = 0; i < TXN; i++) p.send(new ProducerRecord<>(topic, 0, "r" + round + "-commit-" + i, value(round, "commit", i)));
            p.commitTransaction();
            p.beginTransaction();
            for (int i = 0; i < TXN; i++) p.send(new ProducerRecord<>(topic, 0, "r" + round + "-abort-" + i, value(round, "abort", i)));
            p.flush();
            p.abortTransaction();
        }
        // A last plain batch so the aborted transaction's marker is not the log's last batch.
        try (KafkaProducer<String, String> p = producer(bootstrap, Map.of("compression.type", "none"))) {
            p.send(new ProducerRecord<>(topic, 0, "r" + round + "-tail", value(round, "tail", 0))).get();
        }
    }

    static String hex(byte[] b) {
        if (b == null) return "-";
        StringBuilder s = new StringBuilder();
        for (byte x : b) s.append(String.format("%02x", x));
        return s.toString();
    }

    static void consume(String bootstrap, String topic, String isolation) {
        Properties p = common(bootstrap);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("isolation.level", isolation);
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seek(tp, 0);
            long end = c.endOffsets(List.of(tp)).get(tp);
            long deadline = System.currentTimeMillis() + 90000;
            while (c.position(tp) < end && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    System.out.println("record " + r.offset() + " " + hex(r.key()) + " " + hex(r.value()));
                }
            }
            if (c.position(tp) < end) throw new IllegalStateException(topic + ": did not reach " + end);
            System.out.println("end " + end);
        }
    }

    static void metadata(String bootstrap) {
        Properties p = common(bootstrap);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        var serde = new org.apache.kafka.server.log.remote.metadata.storage.serialization.RemoteLogMetadataSerde();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> parts = new ArrayList<>();
            for (var info : c.partitionsFor("__remote_log_metadata")) parts.add(new TopicPartition(info.topic(), info.partition()));
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts);
            long deadline = System.currentTimeMillis() + 60000;
            while (parts.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                if (System.currentTimeMillis() > deadline) throw new IllegalStateException("__remote_log_metadata: did not reach " + end);
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    var event = serde.deserialize(r.value());
                    if (event instanceof org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadata m) {
                        System.out.println("segment " + m.remoteLogSegmentId().id() + " " + m.startOffset() + " "
                            + m.endOffset() + " " + m.state());
                    } else if (event instanceof org.apache.kafka.server.log.remote.storage.RemoteLogSegmentMetadataUpdate u) {
                        System.out.println("update " + u.remoteLogSegmentId().id() + " " + u.state());
                    }
                }
            }
        }
    }
}
