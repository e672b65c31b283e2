// Kafka's own log loading, without a broker: a release's UnifiedLog (LogLoader.load, LogSegment.recover,
// UnifiedLog.rebuildProducerState) run on a directory, and what it recovered printed as JSON.
// A test oracle for `kdump recover` (tests/kafka/loader_oracle.py compiles it into the jar cache and
// keeps one JVM per release and test session; class files never go in the repository).
//
// This file holds the request protocol and the answer, and uses only kafka-clients classes every release
// has. What differs between Kafka's loader APIs is an Api, one per API generation (the main classes):
// LoaderOracle4.java (4.3 and 4.4, UnifiedLog.create), LoaderOracle39.java and LoaderOracle33.java (the
// Scala kafka.log.UnifiedLog.apply of 3.9 and 3.3, on the 3.x base LoaderOracle3.java); 3.9 and 4.x take
// LogConfig and KafkaScheduler from the same classes (LoaderOracleStorage.java).
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
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;

public final class LoaderOracle {
    /** What one generation of Kafka's loader API does: C is its LogConfig, S its scheduler, L its UnifiedLog. */
    public interface Api<C, S, L> {
        TopicPartition parseTopicPartitionName(File dir) throws Exception;

        /** The entries of an offset checkpoint file, read with the release's OffsetCheckpointFile. */
        Map<TopicPartition, Long> readOffsetCheckpoint(File file) throws Exception;

        C logConfig(Map<String, Object> props);

        /** producer.id.expiration.ms as a broker with default settings has it (the expiry of `clock=system`). */
        int brokerProducerIdExpirationMs();

        S startScheduler();

        void stopScheduler(S scheduler) throws InterruptedException;

        /** The log loaded with the arguments LogManager.loadLog passes. */
        L open(File dir, C config, long logStartOffset, long recoveryPoint, S scheduler, Time clock,
               int producerIdExpirationMs, boolean hadCleanShutdown) throws Exception;

        long updateHighWatermark(L log, long highWatermark) throws Exception;

        Offsets offsets(L log);

        /** The answer's fields after "recoveryPoint": "segments" and what else the release's API gives. */
        void appendState(L log, StringBuilder sb) throws Exception;

        /** Stop the log as LogManager.shutdown does; the first segment's base offset after the stop. */
        long stop(L log) throws Exception;

        void close(L log) throws Exception;
    }

    /** A loaded log's offsets. */
    public record Offsets(long logStartOffset, long logEndOffset, long recoveryPoint) {
    }

    /** Appends one item of a JSON array. */
    public interface Item<T> {
        void append(StringBuilder sb, T item) throws Exception;
    }

    private static final Time CLOCK_AT_ZERO = new Time() {
        public long milliseconds() { return 0L; }
        public long nanoseconds() { return System.nanoTime(); }
        public void sleep(long ms) { Time.SYSTEM.sleep(ms); }
        public void waitObject(Object o, Supplier<Boolean> done, long deadline) throws InterruptedException {
            Time.SYSTEM.waitObject(o, done, deadline);
        }
    };

    private LoaderOracle() {
    }

    /** Answers requests from stdin until it closes (the main of each Api). */
    public static void serve(Api<?, ?, ?> api) throws Exception {
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
                answer = handle(api, line);
            } catch (Throwable t) {
                answer = "{\"error\":" + str(t.toString()) + "}";
            }
            out.println(answer);
        }
    }

    private static <C, S, L> String handle(Api<C, S, L> api, String line) throws Exception {
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
                            && !api.parseTopicPartitionName(child).topic().equals("__cluster_metadata"))
                        dirs.add(child);
                }
            }
        }
        boolean hadCleanShutdown = clean != null ? clean : new File(logDir, ".kafka_cleanshutdown").exists();
        StringBuilder sb = new StringBuilder("{\"logDir\":").append(str(logDir.getPath()))
                .append(",\"cleanShutdown\":").append(hadCleanShutdown);
        Map<TopicPartition, Long> recoveryPoints = readCheckpoint(api, logDir, "recovery-point-offset-checkpoint", sb);
        Map<TopicPartition, Long> logStarts = readCheckpoint(api, logDir, "log-start-offset-checkpoint", sb);
        Map<TopicPartition, Long> highWatermarks = readCheckpoint(api, logDir, "replication-offset-checkpoint", sb);
        sb.append(",\"partitions\":[");
        C config = api.logConfig(props);
        for (int i = 0; i < dirs.size(); i++) {
            if (i > 0) sb.append(',');
            sb.append(load(api, dirs.get(i), config, hadCleanShutdown, recoveryPoints, logStarts, highWatermarks, stop, clock));
        }
        return sb.append("]}").toString();
    }

    private static Map<TopicPartition, Long> readCheckpoint(Api<?, ?, ?> api, File logDir, String name, StringBuilder sb) {
        File file = new File(logDir, name);
        if (!file.exists()) return Collections.emptyMap();
        try {
            return api.readOffsetCheckpoint(file);
        } catch (Exception e) {
            // LogManager.loadLogs warns and goes on with no offsets (the read marks the log dir offline).
            sb.append(",\"checkpointError\":").append(str(name + ": " + e));
            return Collections.emptyMap();
        }
    }

    private static <C, S, L> String load(Api<C, S, L> api, File dir, C config, boolean hadCleanShutdown,
                                         Map<TopicPartition, Long> recoveryPoints, Map<TopicPartition, Long> logStarts,
                                         Map<TopicPartition, Long> highWatermarks, boolean stop, Time clock) {
        StringBuilder sb = new StringBuilder("{\"dir\":").append(str(dir.getName()));
        S scheduler = api.startScheduler();
        L log = null;
        try {
            TopicPartition tp = api.parseTopicPartitionName(dir);
            sb.append(",\"topic\":").append(str(tp.topic())).append(",\"partition\":").append(tp.partition());
            long logStartCheckpoint = logStarts.getOrDefault(tp, 0L);
            long recoveryPointCheckpoint = recoveryPoints.getOrDefault(tp, 0L);
            int producerIdExpirationMs = clock == Time.SYSTEM ? api.brokerProducerIdExpirationMs() : Integer.MAX_VALUE;
            log = api.open(dir, config, logStartCheckpoint, recoveryPointCheckpoint, scheduler, clock,
                    producerIdExpirationMs, hadCleanShutdown);
            if (highWatermarks.containsKey(tp)) {
                // What Partition.createLog does with the replication-offset-checkpoint once the log is loaded.
                sb.append(",\"highWatermark\":").append(api.updateHighWatermark(log, highWatermarks.get(tp)));
            }
            Offsets offsets = api.offsets(log);
            sb.append(",\"logStartOffset\":").append(offsets.logStartOffset())
              .append(",\"logEndOffset\":").append(offsets.logEndOffset())
              .append(",\"recoveryPoint\":").append(offsets.recoveryPoint());
            api.appendState(log, sb);
        } catch (Throwable t) {
            sb.append(",\"error\":").append(str(t.getClass().getName() + ": " + t.getMessage()));
        } finally {
            if (log != null) {
                try {
                    if (stop) {
                        // After the logs are stopped, LogManager.shutdown's checkpointRecoveryOffsetsInDir writes
                        // log.recoveryPoint and checkpointLogStartOffsetsInDir log.logStartOffset only when it is
                        // above the first segment's base offset (no remote storage).
                        long first = api.stop(log);
                        Offsets stopped = api.offsets(log);
                        sb.append(",\"checkpoints\":{\"recoveryPoint\":").append(stopped.recoveryPoint())
                          .append(",\"logStart\":")
                          .append(stopped.logStartOffset() > first ? Long.toString(stopped.logStartOffset()) : "null")
                          .append('}');
                    } else {
                        api.close(log);   // as at a clean stop: producer snapshot, indexes trimmed
                    }
                } catch (Throwable t) {
                    sb.append(",\"closeError\":").append(str(t.toString()));
                }
            }
            try {
                api.stopScheduler(scheduler);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        return sb.append('}').toString();
    }

    /** Appends ,"name":[item,...] to sb. */
    public static <T> void array(StringBuilder sb, String name, Iterable<T> items, Item<T> item) throws Exception {
        sb.append(",\"").append(name).append("\":[");
        boolean first = true;
        for (T each : items) {
            if (!first) sb.append(',');
            first = false;
            item.append(sb, each);
        }
        sb.append(']');
    }

    /** Appends a segment's {"baseOffset":..,"size":.. (the caller may add fields, then closes it). */
    public static StringBuilder segment(StringBuilder sb, long baseOffset, int size) {
        return sb.append("{\"baseOffset\":").append(baseOffset).append(",\"size\":").append(size);
    }

    /** A JSON string. */
    public static String str(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') sb.append('\\').append(c);
            else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
            else sb.append(c);
        }
        return sb.append('"').toString();
    }
}
