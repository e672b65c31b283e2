// Drives a real 4.x broker through every kind of group, so its __consumer_offsets and __share_group_state
// hold what each group coordinator writes (tests/kafka/make_real_fixtures.py, fixtures/real-groups/).
// Compiled once per source and release into the jar cache together with KafkaDriver.java (whose client
// settings it shares), with kafka-streams on the classpath.
//
//   java -cp "LIB/*:CLASSES" GroupsDriver BOOTSTRAP STATE_DIR
//
// One run, in this order (every group id starts with "kdump-"):
//   classic    two classic-protocol consumers (one static, group.instance.id), commits with metadata
//   consumer   two KIP-848 consumers (group.protocol=consumer; one static with client.rack) over 3 partitions
//   regex      a KIP-848 consumer subscribed to a SubscriptionPattern (regex resolved by the broker)
//   mixed      a KIP-848 consumer, then a classic consumer joining the same consumer group (KIP-848's
//              upgrade path: the member's record carries ClassicMemberMetadata)
//   share      a KIP-932 share consumer (explicit acknowledgement: accept, release once, reject)
//   streams    a Kafka Streams app on the KIP-1071 protocol (group.protocol=streams), with a repartition
//              topic and a state store changelog
//   eos        consume-transform-produce: sendOffsetsToTransaction, one transaction committed, one aborted
//   deleted    a classic group that commits, then is deleted (tombstones)
// Then what the brokers' admin API reports before the broker stops: "group ID TYPE PROTOCOL STATE",
// "offset GROUP TOPIC PARTITION OFFSET" (committed offsets, share-group start offsets included).
import java.nio.file.Path;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.GroupType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.*;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.*;

public class GroupsDriver {
    static final long BASE_TIME = 1767225600000L; // 2026-01-01T00:00:00Z, as KafkaDriver
    static final int RECORDS = 20;
    static final long WAIT_MS = 90_000;
    // topic -> partitions
    static final Map<String, Integer> TOPICS = new TreeMap<>(Map.of(
        "grp-a", 2, "grp-b", 1, "grp-regex-1", 1, "grp-regex-2", 1, "share-in", 1,
        "streams-in", 2, "streams-out", 1, "eos-in", 1, "eos-out", 1));

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        Path stateDir = Path.of(args[1]);
        try (Admin admin = Admin.create(KafkaDriver.common(bootstrap))) {
            setup(admin, bootstrap);
            twoMembers(bootstrap, "kdump-classic", "classic", List.of("grp-a"), RECORDS,
                Map.of("group.instance.id", "classic-static"), "classic-a", "classic-b");
            twoMembers(bootstrap, "kdump-consumer", "consumer", List.of("grp-a", "grp-b"), 2L * RECORDS,
                Map.of("group.instance.id", "consumer-static", "client.rack", "rack-a"), "", "consumer-b");
            regex(bootstrap);
            mixed(bootstrap);
            share(admin, bootstrap);
            streams(admin, bootstrap, stateDir);
            eos(bootstrap);
            deleted(admin, bootstrap);
            report(admin);
        }
    }

    static void setup(Admin admin, String bootstrap) throws Exception {
        List<NewTopic> topics = new ArrayList<>();
        for (Map.Entry<String, Integer> t : TOPICS.entrySet()) {
            topics.add(new NewTopic(t.getKey(), t.getValue(), (short) 1).configs(Map.of("retention.ms", "-1")));
        }
        admin.createTopics(topics).all().get();
        try (KafkaProducer<String, String> p = KafkaDriver.producer(bootstrap, Map.of())) {
            for (Map.Entry<String, Integer> t : TOPICS.entrySet()) {
                if (t.getKey().endsWith("-out")) continue;
                for (int i = 0; i < RECORDS; i++) {
                    int partition = i % t.getValue();
                    p.send(new ProducerRecord<>(t.getKey(), partition, BASE_TIME + i, "k-" + i, "v-" + (i % 4)));
                }
            }
            p.flush();
        }
        System.out.println("created " + topics.size());
    }

    static KafkaConsumer<String, String> consumer(String bootstrap, String group, String protocol,
                                                  Map<String, String> overrides) {
        Properties p = KafkaDriver.common(bootstrap);
        p.put("group.id", group);
        p.put("group.protocol", protocol);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.putAll(overrides);
        return new KafkaConsumer<>(p);
    }

    // Poll every consumer in turn until `done` holds (each consumer's records counted per partition).
    static Map<TopicPartition, Long> pollUntil(List<KafkaConsumer<String, String>> consumers, long wanted,
                                               java.util.function.BooleanSupplier extra) {
        Map<TopicPartition, Long> next = new HashMap<>();
        long seen = 0, deadline = System.currentTimeMillis() + WAIT_MS;
        while (System.currentTimeMillis() < deadline) {
            for (KafkaConsumer<String, String> c : consumers) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    next.merge(new TopicPartition(r.topic(), r.partition()), r.offset() + 1, Math::max);
                    seen++;
                }
            }
            if (seen >= wanted && extra.getAsBoolean()) return next;
        }
        throw new IllegalStateException("consumed " + seen + " of " + wanted + " within " + WAIT_MS + " ms");
    }

    static void commitOwned(KafkaConsumer<String, String> c, Map<TopicPartition, Long> next, String metadata) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        for (TopicPartition tp : c.assignment()) {
            Long offset = next.get(tp);
            if (offset != null) offsets.put(tp, new OffsetAndMetadata(offset, metadata));
        }
        c.commitSync(offsets);
    }

    // Two members of one group, the second static (group.instance.id) with `staticConfig`, until each owns
    // a partition and every record of `topics` is read; each commits what it owns with its metadata.
    static void twoMembers(String bootstrap, String group, String protocol, List<String> topics, long records,
                           Map<String, String> staticConfig, String metadataA, String metadataB) {
        try (KafkaConsumer<String, String> a = consumer(bootstrap, group, protocol, Map.of());
             KafkaConsumer<String, String> b = consumer(bootstrap, group, protocol, staticConfig)) {
            a.subscribe(topics);
            b.subscribe(topics);
            Map<TopicPartition, Long> next = pollUntil(List.of(a, b), records,
                () -> !a.assignment().isEmpty() && !b.assignment().isEmpty());
            commitOwned(a, next, metadataA);
            commitOwned(b, next, metadataB);
        }
        System.out.println("ran " + group);
    }

    static void regex(String bootstrap) {
        String group = "kdump-regex";
        try (KafkaConsumer<String, String> c = consumer(bootstrap, group, "consumer", Map.of())) {
            c.subscribe(new SubscriptionPattern("grp-regex-.*"));
            pollUntil(List.of(c), 2L * RECORDS, () -> true);
            c.commitSync();
        }
        System.out.println("ran " + group);
    }

    static void mixed(String bootstrap) {
        String group = "kdump-mixed";
        try (KafkaConsumer<String, String> a = consumer(bootstrap, group, "consumer", Map.of())) {
            a.subscribe(List.of("grp-a"));
            pollUntil(List.of(a), RECORDS, () -> a.assignment().size() == 2);
            a.commitSync();
            try (KafkaConsumer<String, String> b = consumer(bootstrap, group, "classic",
                    Map.of("partition.assignment.strategy", CooperativeStickyAssignor.class.getName()))) {
                b.subscribe(List.of("grp-a"));
                pollUntil(List.of(a, b), 0, () -> a.assignment().size() == 1 && b.assignment().size() == 1);
                b.commitSync(Map.of(b.assignment().iterator().next(), new OffsetAndMetadata(5, "classic-in-consumer")));
            }
        }
        System.out.println("ran " + group);
    }

    static void share(Admin admin, String bootstrap) throws Exception {
        String group = "kdump-share";
        ConfigResource resource = new ConfigResource(ConfigResource.Type.GROUP, group);
        admin.incrementalAlterConfigs(Map.of(resource, List.of(new AlterConfigOp(
            new ConfigEntry("share.auto.offset.reset", "earliest"), AlterConfigOp.OpType.SET)))).all().get();
        Properties p = KafkaDriver.common(bootstrap);
        p.put("group.id", group);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("share.acknowledgement.mode", "explicit");
        int accepted = 0, rejected = 0, released = 0;
        Set<Long> releasedOnce = new HashSet<>();
        try (KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(p)) {
            c.subscribe(List.of("share-in"));
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (accepted + rejected < RECORDS && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, String> r : records) {
                    if (r.offset() % 5 == 0) {
                        c.acknowledge(r, AcknowledgeType.REJECT);
                        rejected++;
                    } else if (r.offset() % 7 == 3 && releasedOnce.add(r.offset())) {
                        c.acknowledge(r, AcknowledgeType.RELEASE); // delivered again
                        released++;
                    } else {
                        c.acknowledge(r, AcknowledgeType.ACCEPT);
                        accepted++;
                    }
                }
                if (!records.isEmpty()) c.commitSync();
            }
        }
        if (accepted + rejected < RECORDS) throw new IllegalStateException("share: " + accepted + " + " + rejected);
        System.out.println("ran " + group + " accepted " + accepted + " rejected " + rejected + " released " + released);
    }

    static void streams(Admin admin, String bootstrap, Path stateDir) throws Exception {
        String group = "kdump-streams";
        Properties p = KafkaDriver.common(bootstrap);
        p.put(StreamsConfig.APPLICATION_ID_CONFIG, group);
        p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "200");
        p.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        p.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        p.put(StreamsConfig.consumerPrefix("auto.offset.reset"), "earliest");
        StreamsBuilder builder = new StreamsBuilder();
        // A new key (a repartition topic), a count (a state store and its changelog), an output topic.
        builder.<String, String>stream("streams-in")
            .groupBy((k, v) -> v)
            .count(Materialized.as("counts"))
            .toStream()
            .to("streams-out", Produced.with(Serdes.String(), Serdes.Long()));
        TopicPartition in0 = new TopicPartition("streams-in", 0), in1 = new TopicPartition("streams-in", 1);
        try (KafkaStreams streams = new KafkaStreams(builder.build(), p)) {
            streams.start();
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (true) {
                Map<TopicPartition, OffsetAndMetadata> committed = admin.listStreamsGroupOffsets(
                    Map.of(group, new ListStreamsGroupOffsetsSpec())).partitionsToOffsetAndMetadata(group).get();
                long done = 0;
                for (TopicPartition tp : List.of(in0, in1)) {
                    OffsetAndMetadata o = committed.get(tp);
                    if (o != null) done += o.offset();
                }
                if (done >= RECORDS) break;
                if (System.currentTimeMillis() > deadline) throw new IllegalStateException("streams committed " + done);
                Thread.sleep(300);
            }
        }
        System.out.println("ran " + group);
    }

    static void eos(String bootstrap) {
        String group = "kdump-eos";
        TopicPartition in = new TopicPartition("eos-in", 0);
        try (KafkaConsumer<String, String> c = consumer(bootstrap, group, "consumer",
                 Map.of("isolation.level", "read_committed"));
             KafkaProducer<String, String> p = KafkaDriver.producer(bootstrap, Map.of("transactional.id", "kdump-eos-txn"))) {
            p.initTransactions();
            c.subscribe(List.of("eos-in"));
            List<ConsumerRecord<String, String>> got = new ArrayList<>();
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (got.size() < RECORDS && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) got.add(r);
            }
            if (got.size() < RECORDS) throw new IllegalStateException("eos consumed " + got.size());
            int half = RECORDS / 2;
            for (int t = 0; t < 2; t++) {
                List<ConsumerRecord<String, String>> part = got.subList(t * half, (t + 1) * half);
                p.beginTransaction();
                for (ConsumerRecord<String, String> r : part) {
                    p.send(new ProducerRecord<>("eos-out", 0, r.timestamp(), r.key(), r.value().toUpperCase()));
                }
                long next = part.get(part.size() - 1).offset() + 1;
                p.sendOffsetsToTransaction(Map.of(in, new OffsetAndMetadata(next, "eos-" + t)), c.groupMetadata());
                if (t == 0) {
                    p.commitTransaction();
                    System.out.println("eos committed " + next);
                } else {
                    p.abortTransaction();
                    System.out.println("eos aborted " + next);
                }
            }
        }
        System.out.println("ran " + group);
    }

    static void deleted(Admin admin, String bootstrap) throws Exception {
        String group = "kdump-deleted";
        TopicPartition tp = new TopicPartition("grp-b", 0);
        try (KafkaConsumer<String, String> c = consumer(bootstrap, group, "classic", Map.of())) {
            c.assign(List.of(tp));
            c.commitSync(Map.of(tp, new OffsetAndMetadata(7, "to-be-deleted")));
        }
        admin.deleteConsumerGroups(List.of(group)).all().get();
        System.out.println("ran " + group);
    }

    static void report(Admin admin) throws ExecutionException, InterruptedException {
        List<GroupListing> groups = new ArrayList<>(admin.listGroups().all().get());
        groups.sort(Comparator.comparing(GroupListing::groupId));
        for (GroupListing g : groups) {
            System.out.println("group " + g.groupId() + " " + g.type().map(GroupType::toString).orElse("-") + " "
                + g.protocol() + " " + g.groupState().map(Object::toString).orElse("-"));
            GroupType type = g.type().orElse(GroupType.CLASSIC);
            Map<TopicPartition, String> offsets = new TreeMap<>(Comparator.comparing(TopicPartition::toString));
            if (type == GroupType.SHARE) {
                admin.listShareGroupOffsets(Map.of(g.groupId(), new ListShareGroupOffsetsSpec()))
                    .partitionsToOffsetInfo(g.groupId()).get()
                    .forEach((tp, o) -> offsets.put(tp, o == null ? "null" : "start " + o.startOffset()));
            } else {
                Map<TopicPartition, OffsetAndMetadata> committed = type == GroupType.STREAMS
                    ? admin.listStreamsGroupOffsets(Map.of(g.groupId(), new ListStreamsGroupOffsetsSpec()))
                        .partitionsToOffsetAndMetadata(g.groupId()).get()
                    : admin.listConsumerGroupOffsets(g.groupId()).partitionsToOffsetAndMetadata().get();
                committed.forEach((tp, o) -> offsets.put(tp, o == null ? "null"
                    : o.offset() + " epoch " + o.leaderEpoch().map(String::valueOf).orElse("-") + " metadata " + o.metadata()));
            }
            offsets.forEach((tp, o) -> System.out.println("offset " + g.groupId() + " " + tp.topic() + " "
                + tp.partition() + " " + o));
        }
    }
}
