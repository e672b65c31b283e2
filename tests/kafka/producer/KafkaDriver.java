// Drives a real broker through the real Java client for kdump's broker tests. Single file, Java 17:
//   java -cp "LIB/*" KafkaDriver.java COMMAND BOOTSTRAP ...
// (tests/kafka/broker.py compiles it once into the jar cache instead; class files never go in the repo).
//
// Commands (each prints "key value..." lines on stdout that the Python side parses):
//   setup BOOTSTRAP SEGMENT_CONFIG SEGMENT_BYTES   create the scenario's topics (1 partition each)
//   produce BOOTSTRAP SEED                         the scenario: every codec, idempotent and plain producers,
//                                                  transactions with aborts, headers, null keys and values,
//                                                  a compacted topic, consumer groups committing offsets;
//                                                  prints "sent TOPIC N", "aborted TOPIC N", "state KEY VALUE"
//   sequence BOOTSTRAP TOPIC RECORDS PER_BATCH START_MS STEP_MS
//                                                  kdump gen's seq/seq sequence: key-<offset>, value-<offset>,
//                                                  one batch of PER_BATCH records per produce request
//   stream BOOTSTRAP TOPIC RECORDS PAUSE_MS        a slow producer (for reading a live log dir)
//   count BOOTSTRAP TOPIC...                       read_committed consumer view: "count TOPIC N"
//   txncrash BOOTSTRAP TOPIC SEGMENT_CONFIG SEGMENT_BYTES TXNS
//                                                  create TOPIC, leave one transaction open, run TXNS
//                                                  transactions (every third aborted) beside an idempotent
//                                                  producer, leave a second one open, print "idle", wait
//                                                  to be killed (for kdump recover against a crashed broker)
// Record content depends only on the seed; batch boundaries depend on timing except in `sequence`.
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.*;

public class KafkaDriver {
    static final long BASE_TIME = 1767225600000L; // 2026-01-01T00:00:00Z: fixed, so content is reproducible
    static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};
    static final String[] WORDS = {"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
        "india", "juliett", "kilo", "lima", "mike", "schön", "日本", "zulu"};
    static final int CODEC_RECORDS = 300, PLAIN_RECORDS = 150, COMPACT_RECORDS = 500, COMPACT_KEYS = 30;
    static final int TXNS = 12, TXN_RECORDS = 15;

    public static void main(String[] args) throws Exception {
        String bootstrap = args[1];
        switch (args[0]) {
            case "setup" -> setup(bootstrap, args[2], args[3]);
            case "produce" -> produce(bootstrap, Long.parseLong(args[2]));
            case "sequence" -> sequence(bootstrap, args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                Long.parseLong(args[5]), Long.parseLong(args[6]));
            case "stream" -> stream(bootstrap, args[2], Integer.parseInt(args[3]), Long.parseLong(args[4]));
            case "count" -> count(bootstrap, Arrays.copyOfRange(args, 2, args.length));
            case "txncrash" -> txnCrash(bootstrap, args[2], args[3], args[4], Integer.parseInt(args[5]));
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

    static void setup(String bootstrap, String segmentConfig, String segmentBytes) throws Exception {
        Map<String, String> base = new HashMap<>();
        base.put(segmentConfig, segmentBytes);
        base.put("retention.ms", "-1"); // record timestamps are fixed in the past; keep every segment
        List<NewTopic> topics = new ArrayList<>();
        for (String codec : CODECS) topics.add(topic("codec-" + codec, base, Map.of()));
        topics.add(topic("plain", base, Map.of()));
        topics.add(topic("txn", base, Map.of()));
        topics.add(topic("txn-b", base, Map.of()));
        // Small segments, so the cleaner has rolled segments to compact while the scenario runs.
        topics.add(topic("compacted", base, Map.of(segmentConfig, "4096", "cleanup.policy", "compact",
            "min.cleanable.dirty.ratio", "0.01", "delete.retention.ms", "86400000")));
        // kdump gen's defaults, for comparing its output with the broker's
        topics.add(topic("sequence", Map.of(segmentConfig, "16384", "retention.ms", "-1",
            "index.interval.bytes", "4096"), Map.of()));
        topics.add(topic("stream", base, Map.of()));
        try (Admin admin = Admin.create(common(bootstrap))) {
            admin.createTopics(topics).all().get();
        }
        System.out.println("created " + topics.size());
    }

    static NewTopic topic(String name, Map<String, String> base, Map<String, String> extra) {
        Map<String, String> configs = new HashMap<>(base);
        configs.putAll(extra);
        return new NewTopic(name, 1, (short) 1).configs(configs);
    }

    static KafkaProducer<String, String> producer(String bootstrap, Map<String, String> overrides) {
        Properties p = common(bootstrap);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("linger.ms", "5");
        p.put("acks", "all");
        p.putAll(overrides);
        return new KafkaProducer<>(p);
    }

    static String text(Random r) {
        int n = 2 + r.nextInt(20);
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < n; i++) sb.append(i == 0 ? "" : "-").append(WORDS[r.nextInt(WORDS.length)]);
        return sb.toString();
    }

    static ProducerRecord<String, String> record(String topic, Random r, int i, boolean allowNullKey) {
        String key = allowNullKey && r.nextInt(10) == 0 ? null : "k-" + i;
        String value = r.nextInt(20) == 0 ? null : text(r);
        ProducerRecord<String, String> rec = new ProducerRecord<>(topic, 0, BASE_TIME + i * 7L, key, value);
        int headers = r.nextInt(3);
        for (int h = 0; h < headers; h++) {
            byte[] hv = r.nextInt(4) == 0 ? null : ("h" + r.nextInt(1000)).getBytes(StandardCharsets.UTF_8);
            rec.headers().add(new RecordHeader("hdr-" + h, hv));
        }
        return rec;
    }

    static void produce(String bootstrap, long seed) throws Exception {
        Random r = new Random(seed);
        for (String codec : CODECS) {
            try (KafkaProducer<String, String> p = producer(bootstrap,
                    Map.of("compression.type", codec, "enable.idempotence", "true"))) {
                for (int i = 0; i < CODEC_RECORDS; i++) p.send(record("codec-" + codec, r, i, true));
                p.flush();
            }
            System.out.println("sent codec-" + codec + " " + CODEC_RECORDS);
        }
        try (KafkaProducer<String, String> p = producer(bootstrap,
                Map.of("enable.idempotence", "false", "acks", "1", "batch.size", "2048"))) {
            for (int i = 0; i < PLAIN_RECORDS; i++) p.send(record("plain", r, i, true));
            p.flush();
        }
        System.out.println("sent plain " + PLAIN_RECORDS);
        transactions(bootstrap, r);
        compacted(bootstrap, r);
        groups(bootstrap);
    }

    static void transactions(String bootstrap, Random r) throws Exception {
        int committed = 0, aborted = 0, committedB = 0, abortedB = 0;
        int[] txns = new int[4]; // committed and aborted transactions on txn, then on txn-b
        try (KafkaProducer<String, String> p = producer(bootstrap,
                Map.of("transactional.id", "kdump-txn", "compression.type", "lz4"))) {
            p.initTransactions();
            int i = 0;
            for (int t = 0; t < TXNS; t++) {
                boolean abort = r.nextInt(3) == 0;
                boolean both = t % 2 == 0; // every other transaction spans two partitions
                p.beginTransaction();
                int a = 0, b = 0;
                for (int k = 0; k < TXN_RECORDS; k++, i++) {
                    p.send(record("txn", r, i, true));
                    a++;
                    if (both && k % 3 == 0) {
                        p.send(record("txn-b", r, i, true));
                        b++;
                    }
                }
                if (abort) {
                    p.flush();
                    p.abortTransaction();
                    aborted += a;
                    abortedB += b;
                    txns[1]++;
                    if (both) txns[3]++;
                } else {
                    p.commitTransaction();
                    committed += a;
                    committedB += b;
                    txns[0]++;
                    if (both) txns[2]++;
                }
            }
        }
        System.out.println("sent txn " + committed);
        System.out.println("aborted txn " + aborted);
        System.out.println("sent txn-b " + committedB);
        System.out.println("aborted txn-b " + abortedB);
        System.out.println("transactions txn " + txns[0] + " " + txns[1]);
        System.out.println("transactions txn-b " + txns[2] + " " + txns[3]);
    }

    static void compacted(String bootstrap, Random r) throws Exception {
        TreeMap<String, String> state = new TreeMap<>();
        try (KafkaProducer<String, String> p = producer(bootstrap, Map.of("compression.type", "gzip"))) {
            for (int i = 0; i < COMPACT_RECORDS; i++) {
                String key = "user-" + r.nextInt(COMPACT_KEYS);
                String value = r.nextInt(8) == 0 ? null : text(r);
                p.send(new ProducerRecord<>("compacted", 0, BASE_TIME + i * 11L, key, value));
                if (value == null) state.remove(key); else state.put(key, value);
                if (i % 50 == 49) p.flush(); // several batches, so the cleaner has rolled segments to work on
            }
            p.flush();
        }
        System.out.println("sent compacted " + COMPACT_RECORDS);
        for (Map.Entry<String, String> e : state.entrySet()) System.out.println("state " + e.getKey() + " " + e.getValue());
    }

    static KafkaConsumer<String, String> consumer(String bootstrap, String group, String isolation) {
        Properties p = common(bootstrap);
        if (group != null) p.put("group.id", group);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("isolation.level", isolation);
        p.put("max.poll.records", "50");
        return new KafkaConsumer<>(p);
    }

    // Two groups: one subscribes and commits after every poll, one commits hand-picked offsets with metadata.
    static void groups(String bootstrap) {
        int seen = 0, commits = 0;
        try (KafkaConsumer<String, String> c = consumer(bootstrap, "kdump-group", "read_committed")) {
            c.subscribe(List.of("codec-none", "txn"));
            long deadline = System.currentTimeMillis() + 60000;
            int want = CODEC_RECORDS;
            while (seen < want && System.currentTimeMillis() < deadline) {
                ConsumerRecords<String, String> records = c.poll(Duration.ofMillis(500));
                for (ConsumerRecord<String, String> rec : records) if (rec.topic().equals("codec-none")) seen++;
                if (!records.isEmpty()) {
                    c.commitSync();
                    commits++;
                }
            }
        }
        try (KafkaConsumer<String, String> c = consumer(bootstrap, "kdump-manual", "read_uncommitted")) {
            TopicPartition tp = new TopicPartition("plain", 0);
            c.assign(List.of(tp));
            for (long offset = 25; offset <= PLAIN_RECORDS; offset += 25) {
                c.commitSync(Map.of(tp, new OffsetAndMetadata(offset, "kdump-" + offset)));
                commits++;
            }
        }
        System.out.println("consumed kdump-group " + seen);
        System.out.println("commits " + commits);
    }

    static void sequence(String bootstrap, String topic, int records, int perBatch, long start, long step)
            throws Exception {
        // No idempotence, one batch per flush: the batches kdump gen writes without --idempotent.
        try (KafkaProducer<String, String> p = producer(bootstrap, Map.of("enable.idempotence", "false",
                "acks", "1", "linger.ms", "60000", "batch.size", "1000000", "max.in.flight.requests.per.connection", "1"))) {
            for (int i = 0; i < records; i++) {
                p.send(new ProducerRecord<>(topic, 0, start + i * step, "key-" + i, "value-" + i));
                if (i % perBatch == perBatch - 1 || i == records - 1) p.flush();
            }
        }
        System.out.println("sent " + topic + " " + records);
    }

    static void stream(String bootstrap, String topic, int records, long pauseMs) throws Exception {
        Random r = new Random(records);
        try (KafkaProducer<String, String> p = producer(bootstrap, Map.of("compression.type", "snappy"))) {
            for (int i = 0; i < records; i++) {
                p.send(record(topic, r, i, true));
                if (i % 10 == 9) {
                    p.flush();
                    System.out.println("progress " + (i + 1));
                    System.out.flush();
                    Thread.sleep(pauseMs);
                }
            }
            p.flush();
        }
        System.out.println("sent " + topic + " " + records);
    }

    static void count(String bootstrap, String[] topics) {
        try (KafkaConsumer<String, String> c = consumer(bootstrap, null, "read_committed")) {
            for (String topic : topics) {
                TopicPartition tp = new TopicPartition(topic, 0);
                c.assign(List.of(tp));
                c.seekToBeginning(List.of(tp));
                long end = c.endOffsets(List.of(tp)).get(tp);
                long n = 0, deadline = System.currentTimeMillis() + 60000;
                while (c.position(tp) < end && System.currentTimeMillis() < deadline) {
                    n += c.poll(Duration.ofMillis(500)).count();
                }
                if (c.position(tp) < end) throw new IllegalStateException(topic + ": did not reach " + end);
                System.out.println("count " + topic + " " + n);
            }
        }
    }

    // Records carry the current time (no fixed timestamps): a broker drops producers whose last
    // timestamp is older than producer.id.expiration.ms when it loads a log, which would make the
    // restarted broker's producer state depend on the date rather than on the log.
    static void txnCrash(String bootstrap, String topic, String segmentConfig, String segmentBytes, int txns)
            throws Exception {
        try (Admin admin = Admin.create(common(bootstrap))) {
            admin.createTopics(List.of(topic(topic, Map.of(segmentConfig, segmentBytes, "retention.ms", "-1"),
                Map.of()))).all().get();
        }
        Map<String, String> txnConfig = Map.of("transaction.timeout.ms", "900000", "compression.type", "none");
        Random r = new Random(txns);
        KafkaProducer<String, String> hanging = producer(bootstrap, merged(txnConfig, "transactional.id", "kdump-hang"));
        hanging.initTransactions();
        hanging.beginTransaction();
        for (int k = 0; k < 3; k++) hanging.send(new ProducerRecord<>(topic, 0, "hang-" + k, text(r)));
        hanging.flush();
        System.out.println("open kdump-hang");
        KafkaProducer<String, String> txn = producer(bootstrap, merged(txnConfig, "transactional.id", "kdump-crash"));
        KafkaProducer<String, String> idem = producer(bootstrap, Map.of("enable.idempotence", "true"));
        txn.initTransactions();
        for (int t = 0; t < txns; t++) {
            txn.beginTransaction();
            for (int k = 0; k < 10; k++) {
                txn.send(new ProducerRecord<>(topic, 0, "t" + t + "-" + k, text(r)));
                if (k % 5 == 4) txn.flush();
            }
            idem.send(new ProducerRecord<>(topic, 0, "idem-" + t, text(r)));
            idem.flush();
            if (t % 3 == 2) {
                txn.abortTransaction();
                System.out.println("aborted " + t);
            } else {
                txn.commitTransaction();
                System.out.println("committed " + t);
            }
        }
        txn.beginTransaction();
        for (int k = 0; k < 4; k++) txn.send(new ProducerRecord<>(topic, 0, "open-" + k, text(r)));
        txn.flush();
        System.out.println("open kdump-crash");
        System.out.println("idle");
        System.out.flush();
        Thread.sleep(600_000);
    }

    static Map<String, String> merged(Map<String, String> base, String key, String value) {
        Map<String, String> out = new HashMap<>(base);
        out.put(key, value);
        return out;
    }
}
