package io.meridian.topology;

import io.meridian.config.MeridianConfig;
import java.util.ArrayList;
import java.util.List;
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

    /** Returns the topics it created. */
    public static List<String> ensureTopics(MeridianConfig.Kafka kafka) throws InterruptedException {
        List<String> created = new ArrayList<>();
        try (Admin admin = admin(kafka.brokers())) {
            Set<String> existing = admin.listTopics().names().get(15, TimeUnit.SECONDS);
            for (String topic : List.of(kafka.topic(), kafka.rejectedTopic())) {
                if (existing.contains(topic)) {
                    continue;
                }
                try {
                    admin.createTopics(List.of(new NewTopic(topic, kafka.partitions(), (short) 1))).all().get(15, TimeUnit.SECONDS);
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
