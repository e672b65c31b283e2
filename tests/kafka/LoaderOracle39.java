// The loader oracle (LoaderOracle.java: the protocol; LoaderOracle3.java: the 3.x Scala loader) for Kafka 3.9:
// what its kafka.log.UnifiedLog.apply (core/src/main/scala/kafka/log/UnifiedLog.scala, 3.9.2) takes, with
// LogConfig and KafkaScheduler where 4.x has them (LoaderOracleStorage.java) and LogSegment in the storage
// module. tests/kafka/loader_oracle.py picks it for 3.9 releases.

import java.io.File;
import java.util.concurrent.ConcurrentHashMap;

import kafka.log.UnifiedLog;
import kafka.log.UnifiedLog$;
import kafka.server.BrokerTopicStats;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogOffsetsListener;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;

public final class LoaderOracle39 extends LoaderOracle3<LogConfig, KafkaScheduler>
        implements LoaderOracleStorage<UnifiedLog> {
    public static void main(String[] args) throws Exception {
        LoaderOracle.serve(new LoaderOracle39());
    }

    public int brokerProducerIdExpirationMs() {
        return 86400000;   // producer.id.expiration.ms's default (TransactionLogConfigs, 3.9.2)
    }

    public UnifiedLog open(File dir, LogConfig config, long logStartOffset, long recoveryPoint, KafkaScheduler scheduler,
                           Time clock, int producerIdExpirationMs, boolean hadCleanShutdown) {
        // The arguments LogManager.loadLog passes (core/src/main/scala/kafka/log/LogManager.scala, 3.9.2):
        // no topic id, keepPartitionMetadataFile, no remote storage.
        return UnifiedLog$.MODULE$.apply(dir, config, logStartOffset, recoveryPoint, scheduler, new BrokerTopicStats(false),
                clock, 900000, new ProducerStateManagerConfig(producerIdExpirationMs, false), 600000,
                new LogDirFailureChannel(1), hadCleanShutdown, scala.Option.empty(), true, new ConcurrentHashMap<>(), false,
                LogOffsetsListener.NO_OP_OFFSETS_LISTENER);
    }

    public void appendState(UnifiedLog log, StringBuilder sb) throws Exception {
        LoaderOracle.array(sb, "segments", log.logSegments(),
                (out, segment) -> LoaderOracle.segment(out, segment.baseOffset(), segment.size()).append('}'));
    }

    protected long firstSegmentBaseOffset(UnifiedLog log) {
        return log.logSegments().iterator().next().baseOffset();
    }
}
