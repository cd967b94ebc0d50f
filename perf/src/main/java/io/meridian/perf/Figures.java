package io.meridian.perf;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** The figures of one benchmark run, printed as the single JSON line that ends its output. */
public final class Figures {
    private final Map<String, Object> values = new LinkedHashMap<>();

    public Figures(String benchmark) {
        values.put("benchmark", benchmark);
    }

    public Figures put(String key, Object value) {
        values.put(key, value);
        return this;
    }

    /** The value put under {@code key}, or null. */
    public Object get(String key) {
        return values.get(key);
    }

    public String toJson() {
        StringBuilder out = new StringBuilder("{");
        boolean first = true;
        for (Map.Entry<String, Object> e : values.entrySet()) {
            if (!first) {
                out.append(',');
            }
            first = false;
            out.append('"').append(escape(e.getKey())).append("\":");
            appendValue(out, e.getValue());
        }
        return out.append('}').toString();
    }

    public void print() {
        System.out.println(toJson());
    }

    private static void appendValue(StringBuilder out, Object v) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            out.append(Double.isFinite(d) ? String.format(Locale.ROOT, "%.6g", d) : "null");
        } else if (v instanceof Number || v instanceof Boolean) {
            out.append(v);
        } else if (v instanceof Map<?, ?> m) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                out.append('"').append(escape(String.valueOf(e.getKey()))).append("\":");
                appendValue(out, e.getValue());
            }
            out.append('}');
        } else if (v instanceof Collection<?> c) {
            out.append('[');
            boolean first = true;
            for (Object e : c) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                appendValue(out, e);
            }
            out.append(']');
        } else {
            out.append('"').append(escape(v.toString())).append('"');
        }
    }

    private static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }
}
