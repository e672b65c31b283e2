// The loader oracle (LoaderOracle.java: the protocol) for Kafka 4.3 and 4.4: the Java
// org.apache.kafka.storage.internals.log.UnifiedLog.create, and the answer's fields beyond the offsets and
// segment sizes: each segment's .txnindex entries, the producer state and the leader-epoch cache.

import java.io.File;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.checkpoint.OffsetCheckpointFile;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

public final class LoaderOracle4 implements LoaderOracleStorage<UnifiedLog> {
    public static void main(String[] args) throws Exception {
        LoaderOracle.serve(new LoaderOracle4());
    }

    public TopicPartition parseTopicPartitionName(File dir) throws Exception {
        return UnifiedLog.parseTopicPartitionName(dir);
    }

    public Map<TopicPartition, Long> readOffsetCheckpoint(File file) throws Exception {
        return new OffsetCheckpointFile(file, null).read();
    }

    public int brokerProducerIdExpirationMs() {
        return 86400000;   // producer.id.expiration.ms's default (TransactionLogConfig, 4.x)
    }

    public UnifiedLog open(File dir, LogConfig config, long logStartOffset, long recoveryPoint, KafkaScheduler scheduler,
                           Time clock, int producerIdExpirationMs, boolean hadCleanShutdown) throws Exception {
        // The arguments LogManager.loadLog passes (kafka/log/LogManager.scala, 4.3.0).
        return UnifiedLog.create(dir, config, logStartOffset, recoveryPoint, scheduler, new BrokerTopicStats(), clock,
                900000, new ProducerStateManagerConfig(producerIdExpirationMs, false), 600000,
                new LogDirFailureChannel(1), hadCleanShutdown, Optional.empty());
    }

    public long updateHighWatermark(UnifiedLog log, long highWatermark) throws Exception {
        return log.updateHighWatermark(highWatermark);
    }

    public LoaderOracle.Offsets offsets(UnifiedLog log) {
        return new LoaderOracle.Offsets(log.logStartOffset(), log.logEndOffset(), log.recoveryPoint());
    }

    public void appendState(UnifiedLog log, StringBuilder sb) throws Exception {
        sb.append(",\"firstUnstableOffset\":")
          .append(log.producerStateManager().firstUnstableOffset().map(m -> Long.toString(m.messageOffset)).orElse("null"));
        LoaderOracle.array(sb, "segments", log.logSegments(), (out, segment) -> {
            LoaderOracle.segment(out, segment.baseOffset(), segment.size());
            // storage.internals.log.AbortedTxn up to 4.3, common.message.AbortedTxn from 4.4: same accessors.
            LoaderOracle.array(out, "abortedTxns", segment.txnIndex().allAbortedTxns(), (o, txn) ->
                o.append("{\"producerId\":").append(txn.producerId()).append(",\"firstOffset\":").append(txn.firstOffset())
                 .append(",\"lastOffset\":").append(txn.lastOffset()).append(",\"lastStableOffset\":")
                 .append(txn.lastStableOffset()).append('}'));
            out.append('}');
        });
        Method lastSeq = ProducerStateEntry.class.getDeclaredMethod("lastSeq");
        lastSeq.setAccessible(true);
        LoaderOracle.array(sb, "producers", new TreeMap<>(log.producerStateManager().activeProducers()).values(), (out, p) ->
            out.append("{\"producerId\":").append(p.producerId()).append(",\"epoch\":").append(p.producerEpoch())
               .append(",\"lastSeq\":").append(lastSeq.invoke(p)).append(",\"lastOffset\":").append(p.lastDataOffset())
               .append(",\"coordinatorEpoch\":").append(p.coordinatorEpoch()).append(",\"currentTxnFirstOffset\":")
               .append(p.currentTxnFirstOffset().isPresent() ? Long.toString(p.currentTxnFirstOffset().getAsLong()) : "null")
               .append('}'));
        LoaderOracle.array(sb, "leaderEpochs", log.leaderEpochCache().epochEntries(), (out, entry) ->
            out.append("{\"epoch\":").append(entry.epoch()).append(",\"startOffset\":").append(entry.startOffset()).append('}'));
    }

    public long stop(UnifiedLog log) throws Exception {
        // LogManager.shutdown: each log's job is flush(true) then close (core/src/main/scala/
        // kafka/log/LogManager.scala, 4.3.0); 4.4.0's (storage/src/main/java/org/apache/kafka/
        // storage/internals/log/LogManager.java) first calls prepareActiveSegmentForClose, which
        // trims the active segment's indexes (its LogSegment.close no longer does).
        Method prepare = null;
        try {
            prepare = UnifiedLog.class.getMethod("prepareActiveSegmentForClose");
        } catch (NoSuchMethodException absentBefore44) {
            // 4.3: LogSegment.close trims the indexes
        }
        if (prepare != null) prepare.invoke(log);
        log.flush(true);
        log.close();
        return log.logSegments().iterator().next().baseOffset();
    }

    public void close(UnifiedLog log) throws Exception {
        log.close();
    }
}
