// Kafka's own log loading (4.3 and 4.4), without a broker: UnifiedLog.create (LogLoader.load, LogSegment.recover,
// UnifiedLog.rebuildProducerState) run on a directory, and what it recovered printed as JSON.
// A test oracle for `kdump recover` (tests/kafka/loader_oracle.py compiles it into the jar cache and
// keeps one JVM per test session; class files never go in the repository).
//
// Protocol: one request per stdin line, one JSON line per request on stdout.
//   <path>[\t<key>=<value>]...
// <path> is a log dir (every partition dir in it is loaded, as LogManager.loadLogs does), or with
// `partition=true` one partition dir (its parent is the log dir). The log dir's recovery-point-offset-checkpoint and
// log-start-offset-checkpoint are read with Kafka's OffsetCheckpointFile (and the high watermark of
// replication-offset-checkpoint is applied with UnifiedLog.updateHighWatermark, as Partition.createLog does); the clean-shutdown marker
// .kafka_cleanshutdown decides hadCleanShutdown unless `clean=true|false` overrides it. With `stop=true`
// each log is stopped as LogManager.shutdown stops it (flush(true), then close) and the answer gives,
// per partition, the entries its checkpointRecoveryOffsetsInDir and checkpointLogStartOffsetsInDir
// would write ("checkpoints"). Every other key=value is a topic config (LogConfig), e.g. index.interval.bytes=512.
//
// THE DIRECTORY IS CHANGED as a broker changes it (recovery truncates, deletes, rebuilds indexes, and
// the log is closed as at a clean stop): give it a copy.
//
// The clock is fixed at 0 so no producer expires while its state is rebuilt from old data; `clock=system`
// gives the loader the wall clock a broker has (producers idle past producer.id.expiration.ms then expire
// while the snapshots are loaded, as in a restarted broker).

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile;
import org.apache.kafka.storage.internals.log.EpochEntry;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogSegment;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

public class LoaderOracle {
    private static final Time CLOCK_AT_ZERO = new Time() {
        public long milliseconds() { return 0L; }
        public long nanoseconds() { return System.nanoTime(); }
        public void sleep(long ms) { Time.SYSTEM.sleep(ms); }
        public void waitObject(Object o, Supplier<Boolean> done, long deadline) throws InterruptedException {
            Time.SYSTEM.waitObject(o, done, deadline);
        }
    };

    // With the wall clock, producers expire after what a broker with default settings allows: producer.id.expiration.ms's default (TransactionLogConfig, 4.x).
    private static final int BROKER_PRODUCER_EXPIRATION_MS = 86400000;

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        // Kafka's own log lines must not reach stdout, which carries the answers.
        System.setOut(System.err);
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
        Map<TopicPartition, Long> recoveryPoints = readCheckpoint(logDir, "recovery-point-offset-checkpoint", sb);
        Map<TopicPartition, Long> logStarts = readCheckpoint(logDir, "log-start-offset-checkpoint", sb);
        Map<TopicPartition, Long> highWatermarks = readCheckpoint(logDir, "replication-offset-checkpoint", sb);
        sb.append(",\"partitions\":[");
        LogConfig config = new LogConfig(props);
        for (int i = 0; i < dirs.size(); i++) {
            if (i > 0) sb.append(',');
            sb.append(load(dirs.get(i), config, hadCleanShutdown, recoveryPoints, logStarts, highWatermarks, stop, clock));
        }
        return sb.append("]}").toString();
    }

    private static Map<TopicPartition, Long> readCheckpoint(File logDir, String name, StringBuilder sb) {
        File file = new File(logDir, name);
        if (!file.exists()) return Collections.emptyMap();
        try {
            return new OffsetCheckpointFile(file, null).read();
        } catch (Exception e) {
            // LogManager.loadLogs warns and goes on with no offsets (the read marks the log dir offline).
            sb.append(",\"checkpointError\":").append(str(name + ": " + e));
            return Collections.emptyMap();
        }
    }

    private static String load(File dir, LogConfig config, boolean hadCleanShutdown,
                               Map<TopicPartition, Long> recoveryPoints, Map<TopicPartition, Long> logStarts,
                               Map<TopicPartition, Long> highWatermarks, boolean stop, Time clock) {
        StringBuilder sb = new StringBuilder("{\"dir\":").append(str(dir.getName()));
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "loader-oracle-");
        scheduler.startup();
        UnifiedLog log = null;
        try {
            TopicPartition tp = UnifiedLog.parseTopicPartitionName(dir);
            sb.append(",\"topic\":").append(str(tp.topic())).append(",\"partition\":").append(tp.partition());
            long logStartCheckpoint = logStarts.getOrDefault(tp, 0L);
            long recoveryPointCheckpoint = recoveryPoints.getOrDefault(tp, 0L);
            // The arguments LogManager.loadLog passes (kafka/log/LogManager.scala, 4.3.0).
            log = UnifiedLog.create(dir, config, logStartCheckpoint, recoveryPointCheckpoint, scheduler,
                    new BrokerTopicStats(), clock, 900000,
                    new ProducerStateManagerConfig(clock == Time.SYSTEM ? BROKER_PRODUCER_EXPIRATION_MS : Integer.MAX_VALUE, false), 600000,
                    new LogDirFailureChannel(1), hadCleanShutdown, Optional.empty());
            if (highWatermarks.containsKey(tp)) {
                // What Partition.createLog does with the replication-offset-checkpoint once the log is loaded.
                sb.append(",\"highWatermark\":").append(log.updateHighWatermark(highWatermarks.get(tp)));
            }
            sb.append(",\"logStartOffset\":").append(log.logStartOffset())
              .append(",\"logEndOffset\":").append(log.logEndOffset())
              .append(",\"recoveryPoint\":").append(log.recoveryPoint())
              .append(",\"firstUnstableOffset\":")
              .append(log.producerStateManager().firstUnstableOffset().map(m -> Long.toString(m.messageOffset)).orElse("null"));
            sb.append(",\"segments\":[");
            boolean first = true;
            for (LogSegment segment : log.logSegments()) {
                if (!first) sb.append(',');
                first = false;
                sb.append("{\"baseOffset\":").append(segment.baseOffset()).append(",\"size\":").append(segment.size())
                  .append(",\"abortedTxns\":[");
                // storage.internals.log.AbortedTxn up to 4.3, common.message.AbortedTxn from 4.4: same accessors.
                var aborted = segment.txnIndex().allAbortedTxns();
                for (int i = 0; i < aborted.size(); i++) {
                    var txn = aborted.get(i);
                    if (i > 0) sb.append(',');
                    sb.append("{\"producerId\":").append(txn.producerId()).append(",\"firstOffset\":").append(txn.firstOffset())
                      .append(",\"lastOffset\":").append(txn.lastOffset()).append(",\"lastStableOffset\":")
                      .append(txn.lastStableOffset()).append('}');
                }
                sb.append("]}");
            }
            sb.append("],\"producers\":[");
            Method lastSeq = ProducerStateEntry.class.getDeclaredMethod("lastSeq");
            lastSeq.setAccessible(true);
            first = true;
            for (Map.Entry<Long, ProducerStateEntry> e : new java.util.TreeMap<>(log.producerStateManager().activeProducers()).entrySet()) {
                ProducerStateEntry p = e.getValue();
                if (!first) sb.append(',');
                first = false;
                sb.append("{\"producerId\":").append(p.producerId()).append(",\"epoch\":").append(p.producerEpoch())
                  .append(",\"lastSeq\":").append(lastSeq.invoke(p)).append(",\"lastOffset\":").append(p.lastDataOffset())
                  .append(",\"coordinatorEpoch\":").append(p.coordinatorEpoch()).append(",\"currentTxnFirstOffset\":")
                  .append(p.currentTxnFirstOffset().isPresent() ? Long.toString(p.currentTxnFirstOffset().getAsLong()) : "null")
                  .append('}');
            }
            sb.append("],\"leaderEpochs\":[");
            first = true;
            for (EpochEntry entry : log.leaderEpochCache().epochEntries()) {
                if (!first) sb.append(',');
                first = false;
                sb.append("{\"epoch\":").append(entry.epoch()).append(",\"startOffset\":").append(entry.startOffset()).append('}');
            }
            sb.append(']');
        } catch (Throwable t) {
            sb.append(",\"error\":").append(str(t.getClass().getName() + ": " + t.getMessage()));
        } finally {
            if (log != null) {
                try {
                    if (stop) {
                        // LogManager.shutdown: each log's job is flush(true) then close (core/src/main/scala/
                        // kafka/log/LogManager.scala, 4.3.0); 4.4.0's (storage/src/main/java/org/apache/kafka/
                        // storage/internals/log/LogManager.java) first calls prepareActiveSegmentForClose, which
                        // trims the active segment's indexes (its LogSegment.close no longer does). Then
                        // checkpointRecoveryOffsetsInDir writes log.recoveryPoint and checkpointLogStartOffsetsInDir
                        // log.logStartOffset only when it is above the first segment's base offset (no remote storage).
                        Method prepare = null;
                        try {
                            prepare = UnifiedLog.class.getMethod("prepareActiveSegmentForClose");
                        } catch (NoSuchMethodException absentBefore44) {
                            // 4.3: LogSegment.close trims the indexes
                        }
                        if (prepare != null) prepare.invoke(log);
                        log.flush(true);
                        log.close();
                        long first = log.logSegments().iterator().next().baseOffset();
                        sb.append(",\"checkpoints\":{\"recoveryPoint\":").append(log.recoveryPoint())
                          .append(",\"logStart\":").append(log.logStartOffset() > first ? Long.toString(log.logStartOffset()) : "null")
                          .append('}');
                    } else {
                        log.close();   // as at a clean stop: producer snapshot, indexes trimmed
                    }
                } catch (Throwable t) {
                    sb.append(",\"closeError\":").append(str(t.toString()));
                }
            }
            try {
                scheduler.shutdown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
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
