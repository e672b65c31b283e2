// The real clients' side of tests/kafka/test_real_cluster_history.py (issue 33): what a consumer of the
// restarted cluster reads, and a transaction held open across a leader election. Compiled like
// ClusterDriver.java (tests/kafka/broker.py driver_classes).
//
//   read BOOTSTRAP TOPIC PARTITION ISOLATION
//       A KafkaConsumer (ISOLATION read_committed or read_uncommitted) assigned TOPIC-PARTITION, from its
//       earliest offset up to the end offset it lists (the LSO under read_committed, the HW otherwise).
//       One line per record: "OFFSET TIMESTAMP KEY VALUE HEADERS", KEY/VALUE base64 ("-" for null),
//       HEADERS "-" or "key:base64value,..." (key base64 too); then "end N".
//   txn BOOTSTRAP TOPIC PARTITION COUNT TXNID
//       A transactional producer initializes (prints "ready", waits for a stdin line), begins a transaction, sends COUNT records (with a header each) and flushes;
//       prints "sent FIRST LAST" and waits for one stdin line: "abort" or "commit"; then "done".

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public class HistoryReader {
    public static void main(String[] a) throws Exception {
        if (a[0].equals("read")) read(a[1], a[2], Integer.parseInt(a[3]), a[4]);
        else if (a[0].equals("txn")) txn(a[1], a[2], Integer.parseInt(a[3]), Integer.parseInt(a[4]), a[5]);
        else throw new IllegalArgumentException("unknown command " + a[0]);
    }

    static String b64(byte[] b) {
        return b == null ? "-" : Base64.getEncoder().encodeToString(b);
    }

    static void read(String bootstrap, String topic, int partition, String isolation) {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        p.put("isolation.level", isolation);
        p.put("enable.auto.commit", "false");
        p.put("auto.offset.reset", "earliest");
        p.put("default.api.timeout.ms", "30000");
        TopicPartition tp = new TopicPartition(topic, partition);
        StringBuilder out = new StringBuilder();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            long deadline = System.currentTimeMillis() + 60_000;
            while (consumer.position(tp) < end) {
                if (System.currentTimeMillis() > deadline)
                    throw new IllegalStateException("not at the end offset " + end + " within 60 s");
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    if (r.offset() >= end) continue;
                    List<String> headers = new ArrayList<>();
                    for (Header h : r.headers())
                        headers.add(b64(h.key().getBytes(StandardCharsets.UTF_8)) + ":" + b64(h.value()));
                    out.append(r.offset()).append(' ').append(r.timestamp()).append(' ').append(b64(r.key()))
                       .append(' ').append(b64(r.value())).append(' ')
                       .append(headers.isEmpty() ? "-" : String.join(",", headers)).append('\n');
                }
            }
            out.append("end ").append(end).append('\n');
        }
        System.out.print(out);
        System.out.flush();
    }

    static void txn(String bootstrap, String topic, int partition, int count, String txnId) throws Exception {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.serializer", ByteArraySerializer.class.getName());
        p.put("value.serializer", ByteArraySerializer.class.getName());
        p.put("transactional.id", txnId);
        p.put("linger.ms", "5");
        p.put("delivery.timeout.ms", "60000");
        p.put("request.timeout.ms", "10000");
        p.put("metadata.max.age.ms", "1000");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p);
             BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            producer.initTransactions();
            System.out.println("ready");              // __transaction_state exists: the test places the topic
            System.out.flush();
            in.readLine();
            producer.beginTransaction();
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, partition,
                    ("txn-" + i).getBytes(StandardCharsets.UTF_8), ("in-a-transaction-" + i).getBytes(StandardCharsets.UTF_8));
                r.headers().add("h", ("v" + i).getBytes(StandardCharsets.UTF_8));
                sent.add(producer.send(r));
            }
            producer.flush();
            long first = Long.MAX_VALUE, last = -1;
            for (Future<RecordMetadata> f : sent) {
                first = Math.min(first, f.get().offset());
                last = Math.max(last, f.get().offset());
            }
            System.out.println("sent " + first + " " + last);
            System.out.flush();
            String line = in.readLine();
            if ("commit".equals(line)) producer.commitTransaction();
            else producer.abortTransaction();
            System.out.println("done");
            System.out.flush();
        }
    }
}
