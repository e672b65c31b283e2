// GroupsClient's share-group commands (KIP-932; the client API of Kafka 4.x, so compiled only against 4.x
// jars): see GroupsClient.java for the commands and their output.
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.*;

public class GroupsShareClient {
    static final long WAIT_MS = GroupsClient.WAIT_MS;

    public static void run(String bootstrap, String[] a) throws Exception {
        switch (a[0]) {
            case "share" -> share(bootstrap, a[1], a[2], Long.parseLong(a[3]));
            case "sharelist" -> {
                try (Admin admin = Admin.create(ClusterDriver.common(bootstrap))) {
                    admin.listShareGroupOffsets(Map.of(a[1], new ListShareGroupOffsetsSpec()))
                        .partitionsToOffsetInfo(a[1]).get()
                        .forEach((tp, o) -> System.out.println("share " + a[1] + " " + tp.topic() + " " + tp.partition()
                            + " " + (o == null ? "null" : String.valueOf(o.startOffset()))));
                }
            }
            case "sharestart" -> shareStart(bootstrap, a[1], a[2]);
            default -> throw new IllegalArgumentException("unknown command " + a[0]);
        }
    }

    static KafkaShareConsumer<String, String> shareConsumer(String bootstrap, String group) {
        Properties p = ClusterDriver.common(bootstrap);
        p.put("group.id", group);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("share.acknowledgement.mode", "explicit");
        return new KafkaShareConsumer<>(p);
    }

    static void share(String bootstrap, String group, String topic, long accept) throws Exception {
        try (Admin admin = Admin.create(ClusterDriver.common(bootstrap))) {
            ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
            admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
                new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
        }
        try (KafkaShareConsumer<String, String> c = shareConsumer(bootstrap, group)) {
            c.subscribe(List.of(topic));
            long accepted = 0;
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (accepted < accept) {
                if (System.currentTimeMillis() > deadline) throw new RuntimeException("accepted only " + accepted);
                ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(200));
                for (ConsumerRecord<String, String> r : records) {
                    if (r.offset() < accept) {
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                        accepted++;
                    } else {
                        c.acknowledge(r, AcknowledgeType.RELEASE);
                    }
                }
                if (!records.isEmpty()) c.commitSync();
            }
            System.out.println("shared " + group + " " + topic + " accepted " + accepted);
        }
    }

    static void shareStart(String bootstrap, String group, String topic) {
        try (KafkaShareConsumer<String, String> c = shareConsumer(bootstrap, group)) {
            c.subscribe(List.of(topic));
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(200));
                if (records.isEmpty()) continue;
                long first = Long.MAX_VALUE;
                int partition = -1;
                for (ConsumerRecord<String, String> r : records) {
                    if (r.offset() < first) {
                        first = r.offset();
                        partition = r.partition();
                    }
                    c.acknowledge(r, AcknowledgeType.RELEASE);
                }
                System.out.println("start " + group + " " + topic + " " + partition + " first " + first);
                return;
            }
            throw new RuntimeException("no records within " + WAIT_MS + " ms");
        }
    }

}
