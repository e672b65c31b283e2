// The loader oracle (LoaderOracle.java: the protocol) for the Scala loader of the 3.x line
// (kafka.log.UnifiedLog's companion `apply`, core/src/main/scala/kafka/log/UnifiedLog.scala, 3.3.2 and
// 3.9.2): what 3.3 and 3.9 call alike. LoaderOracle33.java and LoaderOracle39.java give what differs
// (the classes of LogConfig, the scheduler and LogSegment, and apply's parameter list). The answer has the
// fields the recover tests need: log start and end offsets, recovery point, segments (base offset, size)
// and, with `stop=true`, the checkpoint entries.

import java.io.File;
import java.util.Map;

import kafka.log.UnifiedLog;
import kafka.server.checkpoints.OffsetCheckpointFile;
import org.apache.kafka.common.TopicPartition;

public abstract class LoaderOracle3<C, S> implements LoaderOracle.Api<C, S, UnifiedLog> {
    /** The first segment's base offset. */
    protected abstract long firstSegmentBaseOffset(UnifiedLog log);

    public TopicPartition parseTopicPartitionName(File dir) {
        return UnifiedLog.parseTopicPartitionName(dir);
    }

    @SuppressWarnings("unchecked")
    public Map<TopicPartition, Long> readOffsetCheckpoint(File file) {
        // A Scala Map[TopicPartition, Long]: its values are java.lang.Long.
        return (Map<TopicPartition, Long>) (Map<?, ?>) scala.jdk.javaapi.CollectionConverters.asJava(
                new OffsetCheckpointFile(file, null).read());
    }

    public long updateHighWatermark(UnifiedLog log, long highWatermark) {
        return log.updateHighWatermark(highWatermark);
    }

    public LoaderOracle.Offsets offsets(UnifiedLog log) {
        return new LoaderOracle.Offsets(log.logStartOffset(), log.logEndOffset(), log.recoveryPoint());
    }

    public long stop(UnifiedLog log) {
        // LogManager.shutdown (LogManager.scala, 3.3.2 and 3.9.2): flush(true) then close per log.
        log.flush(true);
        log.close();
        return firstSegmentBaseOffset(log);
    }

    public void close(UnifiedLog log) {
        log.close();
    }
}
