package io.meridian.topology;

import io.meridian.config.MeridianConfig;
import io.meridian.stream.ingest.KafkaRowLimits;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.TopicExistsException;

/** Creates the row and dead-letter topics when they do not exist yet, and sizes them for the widest row. */
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
        return ensureTopics(config.ingest(), config.map().enabled() ? config.map().topic() : null);
    }

    /** The row and dead-letter topics of {@code ingest}. Returns the topics it created. */
    public static List<String> ensureTopics(MeridianConfig.IngestSettings ingest) throws InterruptedException {
        return ensureTopics(ingest, null);
    }

    /**
     * Creates the row and dead-letter topics, sized for the widest row of {@code ingest.maxPoints}
     * ({@link KafkaRowLimits}), and, if {@code mapTopic} is given, the live map's topic, compacted: it is keyed by
     * point id, so the last record of each id is the point as it stands and the topic holds the whole map. Row and
     * dead-letter topics that exist already with a smaller {@code max.message.bytes} are raised to it (never lowered).
     * Returns the topics it created.
     */
    public static List<String> ensureTopics(MeridianConfig.IngestSettings ingest, String mapTopic)
            throws InterruptedException {
        MeridianConfig.Kafka kafka = ingest.kafka();
        KafkaRowLimits limits = KafkaRowLimits.forMaxPoints(ingest.maxPoints());
        Map<String, Map<String, String>> topics = new LinkedHashMap<>();
        topics.put(kafka.topic(), limits.rowTopicConfigs());
        topics.put(kafka.rejectedTopic(), limits.deadLetterTopicConfigs());
        if (mapTopic != null) {
            topics.put(mapTopic, Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT));
        }
        return ensureTopics(kafka.brokers(), kafka.partitions(), topics);
    }

    /**
     * Creates each topic of {@code topics} (name -> its settings) that does not exist; one that exists gets its
     * {@code max.message.bytes} raised to the one asked for when it is smaller. Returns the topics it created.
     */
    public static List<String> ensureTopics(String brokers, int partitions, Map<String, Map<String, String>> topics)
            throws InterruptedException {
        List<String> created = new ArrayList<>();
        try (Admin admin = admin(brokers)) {
            Set<String> existing = admin.listTopics().names().get(15, TimeUnit.SECONDS);
            for (Map.Entry<String, Map<String, String>> t : topics.entrySet()) {
                String topic = t.getKey();
                if (existing.contains(topic)) {
                    String wanted = t.getValue().get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG);
                    if (wanted != null) {
                        raiseMaxMessageBytes(admin, topic, Integer.parseInt(wanted));
                    }
                    continue;
                }
                NewTopic spec = new NewTopic(topic, partitions, (short) 1).configs(t.getValue());
                try {
                    admin.createTopics(List.of(spec)).all().get(15, TimeUnit.SECONDS);
                    created.add(topic);
                } catch (ExecutionException e) {
                    if (!(e.getCause() instanceof TopicExistsException)) {
                        throw new IllegalStateException("cannot create topic " + topic + ": "
                                + e.getCause().getMessage(), e);
                    }
                }
            }
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("Kafka at " + brokers + " does not answer: "
                    + (e.getCause() == null ? e : e.getCause().getMessage()), e);
        }
        return created;
    }

    /** The {@code max.message.bytes} in effect for {@code topic} (its own setting, or the broker's default). */
    public static int maxMessageBytes(Admin admin, String topic)
            throws InterruptedException, ExecutionException, TimeoutException {
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        Config config = admin.describeConfigs(List.of(resource)).all().get(15, TimeUnit.SECONDS).get(resource);
        ConfigEntry entry = config.get(TopicConfig.MAX_MESSAGE_BYTES_CONFIG);
        return entry == null ? KafkaRowLimits.KAFKA_DEFAULT_MESSAGE_BYTES : Integer.parseInt(entry.value());
    }

    /**
     * Raises an existing topic's {@code max.message.bytes} to {@code wanted} (one made before rows grew wider, or by
     * a producer's auto-creation with the broker's 1 MiB default); a larger setting is left as it is.
     */
    private static void raiseMaxMessageBytes(Admin admin, String topic, int wanted)
            throws InterruptedException, ExecutionException, TimeoutException {
        int now = maxMessageBytes(admin, topic);
        if (now >= wanted) {
            return;
        }
        ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
        AlterConfigOp set = new AlterConfigOp(new ConfigEntry(TopicConfig.MAX_MESSAGE_BYTES_CONFIG,
                Integer.toString(wanted)), AlterConfigOp.OpType.SET);
        admin.incrementalAlterConfigs(Map.of(resource, List.of(set))).all().get(15, TimeUnit.SECONDS);
        System.out.println("raised max.message.bytes of Kafka topic " + topic + " from " + now + " to " + wanted
                + " (the widest row and its record)");
    }
}
