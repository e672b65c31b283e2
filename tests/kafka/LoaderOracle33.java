// Kafka 3.3's own log loading, without a broker: the request protocol of LoaderOracle.java (4.x), for
// the Scala loader of the 3.x line (kafka.log.UnifiedLog's companion `apply`, core/src/main/scala/kafka/log/
// UnifiedLog.scala, 3.3.2), with the answer fields the recover tests need: log start and end offsets,
// recovery point, segments (base offset, size) and, with `stop=true`, the checkpoint entries.
// tests/kafka/loader_oracle.py picks this source for 3.3 releases and compiles it into the jar cache.
//
// THE DIRECTORY IS CHANGED as a broker changes it: give it a copy. The clock is fixed at 0 unless
// `clock=system` (a broker's wall clock).

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import kafka.log.UnifiedLog;
import kafka.log.UnifiedLog$;
import kafka.server.BrokerTopicStats;
import kafka.server.checkpoints.OffsetCheckpointFile;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import kafka.utils.KafkaScheduler;
import kafka.log.LogConfig;
import kafka.server.LogDirFailureChannel;
import kafka.log.LogSegment;

public class LoaderOracle33 {
    private static final Time CLOCK_AT_ZERO = new Time() {
        public long milliseconds() { return 0L; }
        public long nanoseconds() { return System.nanoTime(); }
        public void sleep(long ms) { Time.SYSTEM.sleep(ms); }
        public void waitObject(Object o, Supplier<Boolean> done, long deadline) throws InterruptedException {
            Time.SYSTEM.waitObject(o, done, deadline);
        }
    };

    // With the wall clock, producers expire after what a broker with default settings allows: transactional.id.expiration.ms's default, which 3.3's KafkaServer gives LogManager as
    // maxPidExpirationMs (producer.id.expiration.ms came in 3.4).
    private static final int BROKER_PRODUCER_EXPIRATION_MS = 604800000;

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        System.setOut(System.err);   // Kafka's own log lines must not reach stdout, which carries the answers.
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        out.println("{\"ready\":true}");
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            String answer;
            try {
                answer = handle(line);
            } catch (Throwable t) {
                answer = "{\"error\":" + str(t.toString()) + "}";
            }
            out.println(answer);
        }
    }

    private static String handle(String line) throws Exception {
        String[] parts = line.split("\t");
        File path = new File(parts[0]).getAbsoluteFile();
        Boolean clean = null;
        boolean single = false, stop = false;
        Time clock = CLOCK_AT_ZERO;
        Map<String, Object> props = new HashMap<>();
        props.put("file.delete.delay.ms", "0");
        for (int i = 1; i < parts.length; i++) {
            int eq = parts[i].indexOf('=');
            String key = parts[i].substring(0, eq), value = parts[i].substring(eq + 1);
            if (key.equals("clean")) clean = Boolean.parseBoolean(value);
            else if (key.equals("partition")) single = Boolean.parseBoolean(value);
            else if (key.equals("stop")) stop = Boolean.parseBoolean(value);
            else if (key.equals("clock")) clock = value.equals("system") ? Time.SYSTEM : CLOCK_AT_ZERO;
            else props.put(key, value);
        }
        File logDir = single ? path.getParentFile() : path;
        List<File> dirs = new ArrayList<>();
        if (single) {
            dirs.add(path);
        } else {
            File[] children = logDir.listFiles();
            if (children != null) {
                Arrays.sort(children);
                for (File child : children) {
                    // LogManager.loadLogs: every directory but the tiered-storage index cache and the KRaft log.
                    if (child.isDirectory() && !child.getName().equals("remote-log-index-cache")
                            && !UnifiedLog.parseTopicPartitionName(child).topic().equals("__cluster_metadata"))
                        dirs.add(child);
                }
            }
        }
        boolean hadCleanShutdown = clean != null ? clean : new File(logDir, ".kafka_cleanshutdown").exists();
        StringBuilder sb = new StringBuilder("{\"logDir\":").append(str(logDir.getPath()))
                .append(",\"cleanShutdown\":").append(hadCleanShutdown);
        Map<TopicPartition, Object> recoveryPoints = readCheckpoint(logDir, "recovery-point-offset-checkpoint", sb);
        Map<TopicPartition, Object> logStarts = readCheckpoint(logDir, "log-start-offset-checkpoint", sb);
        Map<TopicPartition, Object> highWatermarks = readCheckpoint(logDir, "replication-offset-checkpoint", sb);
        sb.append(",\"partitions\":[");
        LogConfig config = new LogConfig(props, scala.collection.immutable.Set$.MODULE$.empty());
        for (int i = 0; i < dirs.size(); i++) {
            if (i > 0) sb.append(',');
            sb.append(load(dirs.get(i), config, hadCleanShutdown, recoveryPoints, logStarts, highWatermarks, stop, clock));
        }
        return sb.append("]}").toString();
    }

    private static Map<TopicPartition, Object> readCheckpoint(File logDir, String name, StringBuilder sb) {
        File file = new File(logDir, name);
        if (!file.exists()) return Collections.emptyMap();
        try {
            return scala.jdk.javaapi.CollectionConverters.asJava(new OffsetCheckpointFile(file, null).read());
        } catch (Exception e) {
            sb.append(",\"checkpointError\":").append(str(name + ": " + e));
            return Collections.emptyMap();
        }
    }

    private static String load(File dir, LogConfig config, boolean hadCleanShutdown, Map<TopicPartition, Object> recoveryPoints,
                               Map<TopicPartition, Object> logStarts, Map<TopicPartition, Object> highWatermarks, boolean stop,
                               Time clock) {
        StringBuilder sb = new StringBuilder("{\"dir\":").append(str(dir.getName()));
        KafkaScheduler scheduler = new KafkaScheduler(1, "loader-oracle-", true);
        scheduler.startup();
        UnifiedLog log = null;
        try {
            TopicPartition tp = UnifiedLog.parseTopicPartitionName(dir);
            sb.append(",\"topic\":").append(str(tp.topic())).append(",\"partition\":").append(tp.partition());
            long logStartCheckpoint = (Long) logStarts.getOrDefault(tp, 0L);
            long recoveryPointCheckpoint = (Long) recoveryPoints.getOrDefault(tp, 0L);
            // The arguments LogManager.loadLog passes (core/src/main/scala/kafka/log/LogManager.scala, 3.3.2):
            // no topic id, keepPartitionMetadataFile.
            log = UnifiedLog$.MODULE$.apply(dir, config, logStartCheckpoint, recoveryPointCheckpoint, scheduler,
                    new BrokerTopicStats(), clock, 900000,
                    clock == Time.SYSTEM ? BROKER_PRODUCER_EXPIRATION_MS : Integer.MAX_VALUE, 600000,
                    new LogDirFailureChannel(1), hadCleanShutdown, scala.Option.empty(), true, new ConcurrentHashMap<>());
            if (highWatermarks.containsKey(tp)) {
                // What Partition.createLog does with the replication-offset-checkpoint once the log is loaded.
                sb.append(",\"highWatermark\":").append(log.updateHighWatermark((Long) highWatermarks.get(tp)));
            }
            sb.append(",\"logStartOffset\":").append(log.logStartOffset())
              .append(",\"logEndOffset\":").append(log.logEndOffset())
              .append(",\"recoveryPoint\":").append(log.recoveryPoint());
            sb.append(",\"segments\":[");
            boolean first = true;
            for (LogSegment segment : scala.jdk.javaapi.CollectionConverters.asJava(log.logSegments())) {
                if (!first) sb.append(',');
                first = false;
                sb.append("{\"baseOffset\":").append(segment.baseOffset()).append(",\"size\":").append(segment.size()).append('}');
            }
            sb.append(']');
        } catch (Throwable t) {
            sb.append(",\"error\":").append(str(t.getClass().getName() + ": " + t.getMessage()));
        } finally {
            if (log != null) {
                try {
                    if (stop) {
                        // LogManager.shutdown (LogManager.scala, 3.3.2): flush(true) then close per log; then
                        // checkpointRecoveryOffsetsInDir writes log.recoveryPoint, checkpointLogStartOffsetsInDir
                        // log.logStartOffset only when it is above the first segment's base offset.
                        log.flush(true);
                        log.close();
                        long first = log.logSegments().head().baseOffset();
                        sb.append(",\"checkpoints\":{\"recoveryPoint\":").append(log.recoveryPoint())
                          .append(",\"logStart\":").append(log.logStartOffset() > first ? Long.toString(log.logStartOffset()) : "null")
                          .append('}');
                    } else {
                        log.close();
                    }
                } catch (Throwable t) {
                    sb.append(",\"closeError\":").append(str(t.toString()));
                }
            }
            try {
                scheduler.shutdown();
            } catch (Exception e) {
                if (e instanceof InterruptedException) Thread.currentThread().interrupt();
            }
        }
        return sb.append('}').toString();
    }

    private static String str(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') sb.append('\\').append(c);
            else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
            else sb.append(c);
        }
        return sb.append('"').toString();
    }
}
