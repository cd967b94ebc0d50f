package io.meridian.config;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One mapping of a YAML configuration file, read key by key with typed getters. Every getter records the key as known;
 * {@link #requireAllKnown()} then refuses any key nobody read, so a misspelt key is an error instead of a silent default.
 * Every error names the file and the full dotted key: {@code config.yaml: key ingest.rowStore.blockRows: must be ...}.
 */
public final class YamlSection {
    private final String source;
    private final String path;
    private final Map<String, Object> values;
    private final Set<String> known = new LinkedHashSet<>();
    private final Map<String, YamlSection> children = new LinkedHashMap<>();

    YamlSection(String source, String path, Map<String, Object> values) {
        this.source = source;
        this.path = path;
        this.values = values;
    }

    /** A nested mapping; an absent key gives an empty section (all defaults). */
    public YamlSection section(String key) {
        known.add(key);
        Object value = values.get(key);
        Map<String, Object> map;
        if (value == null) {
            map = Collections.emptyMap();
        } else if (value instanceof Map<?, ?> m) {
            map = new LinkedHashMap<>();
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!(e.getKey() instanceof String)) {
                    throw error(key, "keys must be names, got " + describe(e.getKey()));
                }
                map.put((String) e.getKey(), e.getValue());
            }
        } else {
            throw error(key, "must be a mapping of keys, got " + describe(value));
        }
        YamlSection child = new YamlSection(source, fullKey(key), map);
        children.put(key, child);
        return child;
    }

    public String string(String key, String defaultValue) {
        known.add(key);
        Object value = values.get(key);
        if (value == null) {
            return defaultValue;
        }
        if (!(value instanceof String s)) {
            throw error(key, "must be a string, got " + describe(value));
        }
        if (s.isBlank()) {
            throw error(key, "must not be empty");
        }
        return s;
    }

    /** A string that must be one of {@code allowed}. */
    public String choice(String key, String defaultValue, String... allowed) {
        String value = string(key, defaultValue);
        for (String a : allowed) {
            if (a.equals(value)) {
                return value;
            }
        }
        throw error(key, "must be one of " + String.join("|", allowed) + ", got '" + value + "'");
    }

    /** A path; relative paths are resolved against the working directory, so the result is absolute. */
    public Path path(String key, String defaultValue) {
        String value = string(key, defaultValue);
        if (value == null) {
            return null;
        }
        try {
            return Path.of(value).toAbsolutePath().normalize();
        } catch (RuntimeException e) {
            throw error(key, "is not a valid path: " + e.getMessage());
        }
    }

    /**
     * A directory Meridian writes its working data to (row stores, snapshots, a local run's output): an absolute path
     * as given, a relative one under the per-user {@link MeridianConfig#dataRoot() data root}, never under the
     * working directory of whichever process reads the configuration (a Storm worker's is Storm's own).
     */
    public Path workPath(String key, String defaultValue) {
        String value = string(key, defaultValue);
        try {
            Path p = Path.of(value);
            return (p.isAbsolute() ? p : MeridianConfig.dataRoot().resolve(p)).normalize();
        } catch (RuntimeException e) {
            throw error(key, "is not a valid path: " + e.getMessage());
        }
    }

    /** As {@link #workPath}, or null when the key is absent. */
    public Path optionalWorkPath(String key) {
        return string(key, null) == null ? null : workPath(key, null);
    }

    public long longIn(String key, long defaultValue, long min, long max) {
        known.add(key);
        Object value = values.get(key);
        if (value == null) {
            return defaultValue;
        }
        if (!(value instanceof Integer || value instanceof Long || value instanceof java.math.BigInteger)) {
            throw error(key, "must be an integer, got " + describe(value));
        }
        if (value instanceof java.math.BigInteger big && big.bitLength() > 63) {
            throw error(key, "must be from " + min + " to " + max + ", got " + value);
        }
        long v = ((Number) value).longValue();
        if (v < min || v > max) {
            throw error(key, "must be from " + min + " to " + max + ", got " + v);
        }
        return v;
    }

    public int intIn(String key, int defaultValue, int min, int max) {
        return (int) longIn(key, defaultValue, min, max);
    }

    public double doubleIn(String key, double defaultValue, double min, double max) {
        known.add(key);
        Object value = values.get(key);
        if (value == null) {
            return defaultValue;
        }
        if (!(value instanceof Number n)) {
            throw error(key, "must be a number, got " + describe(value));
        }
        double v = n.doubleValue();
        if (!Double.isFinite(v) || v < min || v > max) {
            throw error(key, "must be a number from " + min + " to " + max + ", got " + value);
        }
        return v;
    }

    public boolean bool(String key, boolean defaultValue) {
        known.add(key);
        Object value = values.get(key);
        if (value == null) {
            return defaultValue;
        }
        if (!(value instanceof Boolean b)) {
            throw error(key, "must be true or false, got " + describe(value));
        }
        return b;
    }

    public List<String> strings(String key, List<String> defaultValue) {
        known.add(key);
        Object value = values.get(key);
        if (value == null) {
            return defaultValue;
        }
        if (!(value instanceof List<?> list)) {
            throw error(key, "must be a list of strings, got " + describe(value));
        }
        List<String> out = new ArrayList<>(list.size());
        for (Object o : list) {
            if (!(o instanceof String s) || s.isBlank()) {
                throw error(key, "must be a list of non-empty strings, got element " + describe(o));
            }
            out.add(s);
        }
        return List.copyOf(out);
    }

    /** Refuses keys that no getter read, in this section and every section read below it. */
    public void requireAllKnown() {
        for (String key : values.keySet()) {
            if (!known.contains(key)) {
                throw new UsageException(source + ": key " + fullKey(key) + ": unknown key (known here: "
                        + String.join(", ", known) + ")");
            }
        }
        children.values().forEach(YamlSection::requireAllKnown);
    }

    /** An error about {@code key} of this section, for checks that involve several keys. */
    public UsageException error(String key, String reason) {
        return new UsageException(source + ": key " + fullKey(key) + ": " + reason);
    }

    private String fullKey(String key) {
        return path.isEmpty() ? key : path + "." + key;
    }

    private static String describe(Object value) {
        if (value == null) {
            return "nothing";
        }
        String type = value instanceof Map ? "a mapping" : value instanceof List ? "a list"
                : value instanceof String ? "a string" : value instanceof Boolean ? "a boolean"
                : value instanceof Integer || value instanceof Long ? "an integer"
                : value instanceof Number ? "a number" : value.getClass().getSimpleName();
        String text = String.valueOf(value);
        if (text.length() > 40) {
            text = text.substring(0, 40) + "...";
        }
        return type + " '" + text + "'";
    }
}
