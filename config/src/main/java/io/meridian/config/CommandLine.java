package io.meridian.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * GNU-style long options for the {@code meridian} commands: {@code --name value}, {@code --name=value} and flags.
 * Every lookup validates as it converts, so a command reads its options and gets a {@link UsageException} that names
 * the option and the problem ("--n must be a positive integer, got 'abc'").
 */
public final class CommandLine {
    private final String command;
    private final Map<String, String> values;
    private final Set<String> flags;
    private final List<String> positional;

    private CommandLine(String command, Map<String, String> values, Set<String> flags, List<String> positional) {
        this.command = command;
        this.values = values;
        this.flags = flags;
        this.positional = positional;
    }

    /**
     * @param command       the command name, used in messages
     * @param valuedOptions option names (without dashes) that take a value
     * @param flagOptions   option names that take none
     */
    public static CommandLine parse(String command, String[] args, Set<String> valuedOptions, Set<String> flagOptions) {
        Map<String, String> values = new HashMap<>();
        Set<String> flags = new LinkedHashSet<>();
        List<String> positional = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--") || arg.length() == 2) {
                positional.add(arg);
                continue;
            }
            String name = arg.substring(2);
            String inlineValue = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                inlineValue = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (valuedOptions.contains(name)) {
                String value = inlineValue;
                if (value == null) {
                    if (i + 1 >= args.length) {
                        throw new UsageException("option --" + name + " needs a value");
                    }
                    value = args[++i];
                    if (value.startsWith("--") && isOption(value.substring(2), valuedOptions, flagOptions)) {
                        // "--n --out DIR": the value was left out, not "--out"
                        throw new UsageException("option --" + name + " needs a value, got option " + value);
                    }
                }
                if (values.put(name, value) != null) {
                    throw new UsageException("option --" + name + " is given twice");
                }
            } else if (flagOptions.contains(name)) {
                if (inlineValue != null) {
                    throw new UsageException("option --" + name + " takes no value");
                }
                flags.add(name);
            } else {
                throw new UsageException("unknown option --" + name + " for '" + command + "'");
            }
        }
        return new CommandLine(command, values, flags, positional);
    }

    private static boolean isOption(String name, Set<String> valuedOptions, Set<String> flagOptions) {
        int eq = name.indexOf('=');
        String bare = eq >= 0 ? name.substring(0, eq) : name;
        return valuedOptions.contains(bare) || flagOptions.contains(bare);
    }

    public String command() {
        return command;
    }

    public boolean has(String name) {
        return values.containsKey(name) || flags.contains(name);
    }

    public boolean flag(String name) {
        return flags.contains(name);
    }

    public List<String> positional() {
        return Collections.unmodifiableList(positional);
    }

    public void requireNoPositional() {
        if (!positional.isEmpty()) {
            throw new UsageException("unexpected argument '" + positional.get(0) + "' for '" + command + "'");
        }
    }

    public String string(String name, String defaultValue) {
        return values.getOrDefault(name, defaultValue);
    }

    public String requiredString(String name) {
        String value = values.get(name);
        if (value == null) {
            throw new UsageException("option --" + name + " is required");
        }
        if (value.isEmpty()) {
            throw new UsageException("option --" + name + " must not be empty");
        }
        return value;
    }

    public String choice(String name, String defaultValue, String... allowed) {
        String value = values.getOrDefault(name, defaultValue);
        for (String a : allowed) {
            if (a.equals(value)) {
                return value;
            }
        }
        throw new UsageException("--" + name + " must be one of " + String.join("|", allowed) + ", got '" + value + "'");
    }

    public long requiredLong(String name, long min, long max) {
        requiredString(name);
        return longValue(name, 0, min, max);
    }

    public long longValue(String name, long defaultValue, long min, long max) {
        String value = values.get(name);
        if (value == null) {
            return defaultValue;
        }
        long parsed;
        try {
            parsed = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be an integer, got '" + value + "'");
        }
        if (parsed < min || parsed > max) {
            throw new UsageException("--" + name + " must be " + range(min, max) + ", got " + parsed);
        }
        return parsed;
    }

    public int requiredInt(String name, int min, int max) {
        return (int) requiredLong(name, min, max);
    }

    public int intValue(String name, int defaultValue, int min, int max) {
        return (int) longValue(name, defaultValue, min, max);
    }

    /** A finite double in [min, max]; use {@code minExclusive} for strictly positive values. */
    public double doubleValue(String name, double defaultValue, double min, double max, boolean minExclusive) {
        String value = values.get(name);
        if (value == null) {
            return defaultValue;
        }
        double parsed;
        try {
            parsed = Double.parseDouble(value.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be a number, got '" + value + "'");
        }
        boolean below = minExclusive ? parsed <= min : parsed < min;
        if (!Double.isFinite(parsed) || below || parsed > max) {
            String lower = minExclusive ? "> " + min : ">= " + min;
            throw new UsageException("--" + name + " must be " + lower + " and <= " + max + ", got '" + value + "'");
        }
        return parsed;
    }

    /**
     * A number strictly between {@code min} and {@code max}: a factor applied round after round (a cooling factor, a
     * temperature's ratio), which at either end would never change, or change nothing, and never end the loop.
     */
    public double fraction(String name, double defaultValue, double min, double max) {
        double v = doubleValue(name, defaultValue, min, max, true);
        if (v >= max) {
            throw new UsageException("--" + name + " must be > " + min + " and < " + max + ", got '" + values.get(name)
                    + "'");
        }
        return v;
    }

    /**
     * The directory option {@code name} names, created if it is missing: refused in one line (no stack trace) when it
     * is a file, cannot be created or is not writable, before any work starts.
     */
    public Path outputDirectory(String name) {
        Path out = Path.of(requiredString(name));
        if (Files.exists(out) && !Files.isDirectory(out)) {
            throw new UsageException("--" + name + ": " + out + " exists and is not a directory");
        }
        try {
            Files.createDirectories(out);
        } catch (java.io.IOException e) {
            throw new UsageException("--" + name + ": cannot create directory " + out + ": " + reason(e), e);
        }
        if (!Files.isWritable(out)) {
            throw new UsageException("--" + name + ": directory " + out + " is not writable");
        }
        return out;
    }

    /**
     * {@link #outputDirectory}, for a command that writes {@code results} (file names) there: a directory that already
     * holds any of them is refused, naming them, unless the flag {@code --force} is given (declare it with the
     * command's flags), so that the results of an earlier run are never overwritten silently.
     */
    public Path resultDirectory(String name, List<String> results) {
        Path out = Path.of(requiredString(name));
        if (!flag("force") && Files.isDirectory(out)) {
            List<String> held = new ArrayList<>();
            for (String result : results) {
                if (Files.exists(out.resolve(result))) {
                    held.add(result);
                }
            }
            if (!held.isEmpty()) {
                throw new UsageException("--" + name + ": " + out + " already holds results (" + String.join(", ", held)
                        + "): give --force to overwrite them, or another --" + name);
            }
        }
        return outputDirectory(name);
    }

    private static String reason(java.io.IOException e) {
        if (e instanceof java.nio.file.FileSystemException f && f.getReason() != null) {
            return f.getReason();
        }
        if (e instanceof java.nio.file.NoSuchFileException) {
            return "no such file or directory";
        }
        if (e instanceof java.nio.file.AccessDeniedException) {
            return "permission denied";
        }
        return e.getMessage();
    }

    /** A path that must name an existing, readable regular file. */
    public Path existingFile(String name) {
        Path path = Path.of(requiredString(name));
        return checkReadableFile("--" + name, path);
    }

    public Path optionalExistingFile(String name) {
        return values.containsKey(name) ? existingFile(name) : null;
    }

    public static Path checkReadableFile(String what, Path path) {
        if (!Files.exists(path)) {
            throw new UsageException(what + ": file " + path + " does not exist");
        }
        if (!Files.isRegularFile(path)) {
            throw new UsageException(what + ": " + path + " is not a regular file");
        }
        if (!Files.isReadable(path)) {
            throw new UsageException(what + ": file " + path + " is not readable");
        }
        return path;
    }

    private static String range(long min, long max) {
        if (max == Long.MAX_VALUE || max == Integer.MAX_VALUE) {
            return min == 1 ? "a positive integer" : "an integer >= " + min;
        }
        return "an integer from " + min + " to " + max;
    }
}
