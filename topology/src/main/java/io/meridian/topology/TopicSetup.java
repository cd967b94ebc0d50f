package io.meridian.topology;

import io.meridian.config.MeridianConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.errors.TopicExistsException;

/** Creates the row and dead-letter topics when they do not exist yet. */
public final class TopicSetup {
    private TopicSetup() {
    }

    public static Admin admin(String brokers) {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, brokers);
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5000);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10000);
        return Admin.create(p);
    }

    /** The row and dead-letter topics and, with the live map on, its compacted {@code map.topic}. */
    public static List<String> ensureTopics(MeridianConfig config) throws InterruptedException {
        return ensureTopics(config.ingest().kafka(), config.map().enabled() ? config.map().topic() : null);
    }

    /** Returns the topics it created. */
    public static List<String> ensureTopics(MeridianConfig.Kafka kafka) throws InterruptedException {
        return ensureTopics(kafka, null);
    }

    /**
     * Creates the row and dead-letter topics and, if {@code mapTopic} is given, the live map's topic, compacted: it is
     * keyed by point id, so the last record of each id is the point as it stands and the topic holds the whole map.
     * Returns the topics it created.
     */
    public static List<String> ensureTopics(MeridianConfig.Kafka kafka, String mapTopic) throws InterruptedException {
        List<String> created = new ArrayList<>();
        try (Admin admin = admin(kafka.brokers())) {
            Set<String> existing = admin.listTopics().names().get(15, TimeUnit.SECONDS);
            List<String> topics = new ArrayList<>(List.of(kafka.topic(), kafka.rejectedTopic()));
            if (mapTopic != null) {
                topics.add(mapTopic);
            }
            for (String topic : topics) {
                if (existing.contains(topic)) {
                    continue;
                }
                NewTopic spec = new NewTopic(topic, kafka.partitions(), (short) 1);
                if (topic.equals(mapTopic)) {
                    spec.configs(Map.of("cleanup.policy", "compact"));
                }
                try {
                    admin.createTopics(List.of(spec)).all().get(15, TimeUnit.SECONDS);
                    created.add(topic);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw new IllegalStateException("cannot create topic " + topic + ": " + e.getCause().getMessage(), e);
                    }
                }
            }
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Kafka at " + kafka.brokers() + " does not answer: "
                    + (e.getCause() == null ? e : e.getCause().getMessage()), e);
        }
        return created;
    }
}
