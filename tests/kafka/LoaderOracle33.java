// The loader oracle (LoaderOracle.java: the protocol; LoaderOracle3.java: the 3.x Scala loader) for Kafka 3.3:
// what its kafka.log.UnifiedLog.apply (core/src/main/scala/kafka/log/UnifiedLog.scala, 3.3.2) takes, with
// LogConfig, KafkaScheduler and LogSegment still in core. tests/kafka/loader_oracle.py picks it for 3.3 releases.

import java.io.File;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import kafka.log.LogConfig;
import kafka.log.UnifiedLog;
import kafka.log.UnifiedLog$;
import kafka.server.BrokerTopicStats;
import kafka.server.LogDirFailureChannel;
import kafka.utils.KafkaScheduler;
import org.apache.kafka.common.utils.Time;

public final class LoaderOracle33 extends LoaderOracle3<LogConfig, KafkaScheduler> {
    public static void main(String[] args) throws Exception {
        LoaderOracle.serve(new LoaderOracle33());
    }

    public LogConfig logConfig(Map<String, Object> props) {
        return new LogConfig(props, scala.collection.immutable.Set$.MODULE$.empty());
    }

    public int brokerProducerIdExpirationMs() {
        // transactional.id.expiration.ms's default, which 3.3's KafkaServer gives LogManager as
        // maxPidExpirationMs (producer.id.expiration.ms came in 3.4).
        return 604800000;
    }

    public KafkaScheduler startScheduler() {
        KafkaScheduler scheduler = new KafkaScheduler(1, "loader-oracle-", true);
        scheduler.startup();
        return scheduler;
    }

    public void stopScheduler(KafkaScheduler scheduler) {
        scheduler.shutdown();
    }

    public UnifiedLog open(File dir, LogConfig config, long logStartOffset, long recoveryPoint, KafkaScheduler scheduler,
                           Time clock, int producerIdExpirationMs, boolean hadCleanShutdown) {
        // The arguments LogManager.loadLog passes (core/src/main/scala/kafka/log/LogManager.scala, 3.3.2):
        // no topic id, keepPartitionMetadataFile.
        return UnifiedLog$.MODULE$.apply(dir, config, logStartOffset, recoveryPoint, scheduler, new BrokerTopicStats(),
                clock, 900000, producerIdExpirationMs, 600000, new LogDirFailureChannel(1), hadCleanShutdown,
                scala.Option.empty(), true, new ConcurrentHashMap<>());
    }

    public void appendState(UnifiedLog log, StringBuilder sb) throws Exception {
        LoaderOracle.array(sb, "segments", scala.jdk.javaapi.CollectionConverters.asJava(log.logSegments()),
                (out, segment) -> LoaderOracle.segment(out, segment.baseOffset(), segment.size()).append('}'));
    }

    protected long firstSegmentBaseOffset(UnifiedLog log) {
        return log.logSegments().head().baseOffset();
    }
}
