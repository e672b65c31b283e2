// What the loader oracle's Apis for 3.9 (LoaderOracle39.java) and 4.x (LoaderOracle4.java) call alike:
// LogConfig in the storage module (org.apache.kafka.storage.internals.log) and KafkaScheduler in
// server-common (org.apache.kafka.server.util), where 3.9 moved them from core (3.3: LoaderOracle33.java).

import java.util.Map;

import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.LogConfig;

public interface LoaderOracleStorage<L> extends LoaderOracle.Api<LogConfig, KafkaScheduler, L> {
    default LogConfig logConfig(Map<String, Object> props) {
        return new LogConfig(props);
    }

    default KafkaScheduler startScheduler() {
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "loader-oracle-");
        scheduler.startup();
        return scheduler;
    }

    default void stopScheduler(KafkaScheduler scheduler) throws InterruptedException {
        scheduler.shutdown();
    }
}
