package io.meridian.topology;

import io.meridian.metrics.MetricSamples;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.storm.utils.Utils;

/**
 * The few calls of Prometheus's HTTP API ({@code /api/v1/query}) that {@code ./meridian status}, the benchmarks and
 * the tests make. Counters are read as raw samples over a range and summed across resets (a restarted worker's
 * counter starts again at 0): exact up to each worker's last scrape, where {@code increase()} would extrapolate.
 */
public final class PrometheusApi {
    private final String base;
    private final Duration timeout;
    private final HttpClient http;

    public PrometheusApi(String base, Duration timeout) {
        this.base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        this.timeout = timeout;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
    }

    public String base() {
        return base;
    }

    /** Whether the server answers its readiness check. */
    public boolean ready() {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(base + "/-/ready")).timeout(timeout)
                    .GET().build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** The {@code data} of an instant query; fails with the server's error and the query. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> query(String promql) throws IOException, InterruptedException {
        String url = base + "/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(timeout).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        Map<String, Object> body;
        try {
            body = Utils.parseJson(r.body());
        } catch (RuntimeException e) {
            throw new IOException(base + " answered HTTP " + r.statusCode() + " with no JSON to " + promql);
        }
        if (!"success".equals(body.get("status"))) {
            throw new IOException(base + ": query " + promql + " failed: " + body.get("errorType") + ": "
                    + body.get("error"));
        }
        return (Map<String, Object>) body.get("data");
    }

    /** The series of an instant vector query, as samples named by their {@code __name__}. */
    @SuppressWarnings("unchecked")
    public MetricSamples instant(String promql) throws IOException, InterruptedException {
        List<MetricSamples.Sample> out = new ArrayList<>();
        for (Object o : (List<Object>) query(promql).get("result")) {
            Map<String, Object> series = (Map<String, Object>) o;
            Map<String, String> labels = labels((Map<String, Object>) series.get("metric"));
            List<Object> value = (List<Object>) series.get("value");
            out.add(new MetricSamples.Sample(labels.remove("__name__") + "", labels, number(value.get(1))));
        }
        return MetricSamples.of(out);
    }

    /**
     * Every series matching {@code selector} (a range selector is added) over the last {@code seconds}, each as one
     * sample whose value is its counter's total across resets.
     */
    @SuppressWarnings("unchecked")
    public MetricSamples countersOver(String selector, long seconds) throws IOException, InterruptedException {
        List<MetricSamples.Sample> out = new ArrayList<>();
        for (Object o : (List<Object>) query(selector + "[" + Math.max(1, seconds) + "s]").get("result")) {
            Map<String, Object> series = (Map<String, Object>) o;
            Map<String, String> labels = labels((Map<String, Object>) series.get("metric"));
            double total = 0;
            double previous = 0;
            for (Object v : (List<Object>) series.get("values")) {
                double value = number(((List<Object>) v).get(1));
                if (value < previous) {
                    total += previous; // a reset: what the dead worker had counted up to its last scrape
                }
                previous = value;
            }
            out.add(new MetricSamples.Sample(labels.remove("__name__") + "", labels, total + previous));
        }
        return MetricSamples.of(out);
    }

    private static Map<String, String> labels(Map<String, Object> metric) {
        Map<String, String> out = new LinkedHashMap<>();
        metric.forEach((k, v) -> out.put(k, String.valueOf(v)));
        return out;
    }

    private static double number(Object o) {
        String s = String.valueOf(o);
        return switch (s) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(s);
        };
    }
}
