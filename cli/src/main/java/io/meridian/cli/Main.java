package io.meridian.cli;

import io.meridian.config.UsageException;
import io.meridian.engine.BadInputException;
import java.io.UncheckedIOException;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Entry point behind {@code ./meridian <command>} for the commands that run in a JVM. Usage errors and bad input print
 * one line, {@code meridian <command>: <what is wrong>}, and exit with status 2; a usage error is followed by the
 * command's usage line ({@link #usageLine}). Nothing else prints a stack trace unless it is a bug.
 */
public final class Main {
    public static final int EXIT_USAGE = 2;

    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(args));
    }

    static int run(String[] args) {
        if (args.length == 0) {
            System.err.println("meridian: missing command (try ./meridian help)");
            return EXIT_USAGE;
        }
        String name = args[0];
        Map<String, Supplier<Command>> commands = Commands.all();
        if ("help".equals(name)) {
            commands.forEach((n, c) -> System.out.println("  " + c.get().usage()));
            return 0;
        }
        Supplier<Command> factory = commands.get(name);
        if (factory == null) {
            System.err.println("meridian: unknown command '" + name + "' (try ./meridian help)");
            return EXIT_USAGE;
        }
        Command command = factory.get();
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        if (wantsHelp(rest)) {
            System.out.println("usage: ./meridian " + command.usage());
            return 0;
        }
        try {
            return command.run(rest);
        } catch (UsageException e) {
            System.err.println("meridian " + name + ": " + e.getMessage());
            System.err.println(usageLine(name, command));
            return EXIT_USAGE;
        } catch (BadInputException e) {
            String option = command.optionFor(e.input());
            System.err.println("meridian " + name + ": " + (option == null ? e.input().description() : option) + ": "
                    + e.getMessage());
            return EXIT_USAGE;
        } catch (RowTooWideException e) {
            System.err.println("meridian " + name + ": " + e.getMessage());
            return EXIT_USAGE;
        } catch (UnavailableException e) {
            System.err.println("meridian " + name + ": " + e.getMessage());
            return 1;
        } catch (io.meridian.mds.NonFiniteResultException e) {
            System.err.println("meridian " + name + ": " + e.getMessage());
            return 1;
        } catch (UncheckedIOException e) {
            System.err.println("meridian " + name + ": " + e.getCause().getMessage());
            return EXIT_USAGE;
        } catch (Exception e) {
            System.err.println("meridian " + name + ": failed: " + e);
            e.printStackTrace();
            return 1;
        }
    }

    /** {@code --help} or {@code -h} anywhere on the line: the usage wins over everything else given. */
    static boolean wantsHelp(String[] args) {
        return Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h");
    }

    /**
     * The line that ends a usage error: {@code usage: ./meridian } and the first line of the command's usage, with a
     * pointer to {@code --help} when the usage has more lines.
     */
    static String usageLine(String name, Command command) {
        String usage = command.usage();
        int newline = usage.indexOf('\n');
        return "usage: ./meridian " + (newline < 0 ? usage
                : usage.substring(0, newline) + "  (./meridian " + name + " --help: the rest)");
    }
}
