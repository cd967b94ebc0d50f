package io.meridian.cli;

import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/** The JVM-side commands of the {@code meridian} launcher, by name. */
final class Commands {
    private static final Map<String, Supplier<Command>> BY_NAME = new TreeMap<>();

    static {
        // each command registers here, one line each
        BY_NAME.put("local", LocalCommand::new);
        BY_NAME.put("submit", SubmitCommand::new);
        BY_NAME.put("feed", FeedCommand::new);
        BY_NAME.put("status", StatusCommand::new);
        BY_NAME.put("gen", GenCommand::new);
        BY_NAME.put("mds", MdsCommand::new);
        BY_NAME.put("demo", DemoCommand::new);
        BY_NAME.put("pwc", PwcCommand::new);
        BY_NAME.put("view", ViewCommand::new);
        BY_NAME.put("align", AlignCommand::new);
        BY_NAME.put("davs", DavsCommand::new);
    }

    private Commands() {
    }

    static Map<String, Supplier<Command>> all() {
        return Collections.unmodifiableMap(BY_NAME);
    }
}
