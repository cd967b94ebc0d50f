package io.meridian.metrics;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Samples read from Prometheus text-format endpoints (what {@link MetricsEndpoint} serves): for
 * {@code ./meridian status}, the benchmarks and the tests, which read a worker's or leader's figures without a
 * Prometheus server in between. Parses the exposition format's sample lines ({@code name{l="v",...} value}); comments
 * and timestamps are skipped.
 */
public final class MetricSamples {
    /** One sample: metric name (with any _total, _bucket, _sum, _count suffix), labels, value. */
    public record Sample(String name, Map<String, String> labels, double value) {
        public String label(String name) {
            return labels.getOrDefault(name, "");
        }
    }

    private final List<Sample> samples;

    private MetricSamples(List<Sample> samples) {
        this.samples = Collections.unmodifiableList(samples);
    }

    public static MetricSamples of(List<Sample> samples) {
        return new MetricSamples(new ArrayList<>(samples));
    }

    /** Fetches and parses {@code url} (an endpoint's {@code /metrics}); fails with the address and reason. */
    public static MetricSamples scrape(String url, Duration timeout) {
        return parse(fetch(url, timeout));
    }

    /** The text an endpoint serves. */
    public static String fetch(String url, Duration timeout) {
        HttpClient client = HttpClient.newBuilder().connectTimeout(timeout).build();
        try {
            HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(url)).timeout(timeout)
                    .header("Accept", "text/plain").GET().build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new UncheckedIOException(new IOException(url + " answered HTTP " + r.statusCode()));
            }
            return r.body();
        } catch (IOException e) {
            throw new UncheckedIOException(url + ": " + (e.getMessage() == null ? e.getClass().getSimpleName()
                    : e.getMessage()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading " + url, e);
        }
    }

    /** The samples of several endpoints together (a topology's workers). */
    public static MetricSamples merge(List<MetricSamples> parts) {
        List<Sample> all = new ArrayList<>();
        parts.forEach(p -> all.addAll(p.samples));
        return new MetricSamples(all);
    }

    public static MetricSamples parse(String text) {
        List<Sample> out = new ArrayList<>();
        int lineNo = 0;
        for (String line : text.split("\n")) {
            lineNo++;
            if (line.isEmpty() || line.charAt(0) == '#') {
                continue;
            }
            try {
                out.add(parseLine(line));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("line " + lineNo + " of the metrics is not a sample ("
                        + e.getMessage() + "): " + line);
            }
        }
        return new MetricSamples(out);
    }

    private static Sample parseLine(String line) {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ') {
            i++;
        }
        String name = line.substring(0, i);
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i++;
            while (line.charAt(i) != '}') {
                int eq = line.indexOf('=', i);
                String key = line.substring(i, eq).trim();
                i = eq + 2; // past ="
                StringBuilder value = new StringBuilder();
                while (line.charAt(i) != '"') {
                    char c = line.charAt(i++);
                    if (c == '\\') {
                        char n = line.charAt(i++);
                        value.append(n == 'n' ? '\n' : n);
                    } else {
                        value.append(c);
                    }
                }
                labels.put(key, value.toString());
                i++; // closing quote
                if (line.charAt(i) == ',') {
                    i++;
                }
            }
            i++; // '}'
        }
        String[] rest = line.substring(i).trim().split(" ");
        return new Sample(name, Collections.unmodifiableMap(labels), parseValue(rest[0]));
    }

    private static double parseValue(String v) {
        return switch (v) {
            case "+Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(v);
        };
    }

    public List<Sample> all() {
        return samples;
    }

    /** The samples of metric {@code name} (exact, suffix included) whose labels pass {@code filter}. */
    public List<Sample> get(String name, Predicate<Sample> filter) {
        List<Sample> out = new ArrayList<>();
        for (Sample s : samples) {
            if (s.name.equals(name) && filter.test(s)) {
                out.add(s);
            }
        }
        return out;
    }

    /** The sum of metric {@code name}'s samples that pass {@code filter} (0 when none). */
    public double sum(String name, Predicate<Sample> filter) {
        double sum = 0;
        for (Sample s : get(name, filter)) {
            sum += s.value;
        }
        return sum;
    }

    /** The sums of metric {@code name} by the value of label {@code by}. */
    public Map<String, Double> sumBy(String name, String by, Predicate<Sample> filter) {
        Map<String, Double> out = new LinkedHashMap<>();
        for (Sample s : get(name, filter)) {
            out.merge(s.label(by), s.value, Double::sum);
        }
        return out;
    }

    /**
     * Quantile {@code q} of histogram {@code name} (base name, without _bucket) over every sample passing
     * {@code filter}, buckets summed, interpolated linearly within the bucket as Prometheus's
     * {@code histogram_quantile} does; NaN without observations.
     */
    public double quantile(String name, double q, Predicate<Sample> filter) {
        Map<Double, Double> cumulative = new java.util.TreeMap<>();
        for (Sample s : get(name + "_bucket", filter)) {
            cumulative.merge(parseValue(s.label("le")), s.value, Double::sum);
        }
        if (cumulative.isEmpty()) {
            return Double.NaN;
        }
        double total = ((java.util.TreeMap<Double, Double>) cumulative).lastEntry().getValue();
        if (total == 0) {
            return Double.NaN;
        }
        double rank = q * total;
        double lowerBound = 0;
        double lowerCount = 0;
        for (Map.Entry<Double, Double> b : cumulative.entrySet()) {
            if (b.getValue() >= rank) {
                if (b.getKey().isInfinite()) {
                    return lowerBound; // above the largest bound: Prometheus answers the largest finite bound
                }
                double inBucket = b.getValue() - lowerCount;
                return inBucket == 0 ? b.getKey() : lowerBound + (b.getKey() - lowerBound) * (rank - lowerCount) / inBucket;
            }
            lowerBound = b.getKey();
            lowerCount = b.getValue();
        }
        return lowerBound;
    }
}
