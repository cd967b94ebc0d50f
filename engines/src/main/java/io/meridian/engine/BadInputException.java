package io.meridian.engine;

import java.nio.file.Path;

/**
 * An engine's input is unusable: a matrix of the wrong size or unreadable, a weight or layout file with a bad line, a
 * matrix without a single usable pair. The message says what is wrong and names the file (and line); {@link #input()}
 * says which input it was, so a front end can name its own option for it (the CLI prefixes {@code --distances} etc.).
 */
public final class BadInputException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** The inputs an engine reads. */
    public enum Input {
        DISTANCES("distance matrix"),
        WEIGHTS("weight matrix"),
        POINT_WEIGHTS("per-point weights"),
        INITIAL_LAYOUT("initial layout"),
        FIXED_POINTS("fixed points"),
        ROW_STORE("row store"),
        REFERENCE_MAP("reference map"),
        MAP("map to align"),
        VECTORS("vectors"),
        TRUE_LABELS("true labels");

        private final String description;

        Input(String description) {
            this.description = description;
        }

        public String description() {
            return description;
        }
    }

    private final Input input;
    private final Path file;

    public BadInputException(Input input, Path file, String problem) {
        this(input, file, problem, null);
    }

    public BadInputException(Input input, Path file, String problem, Throwable cause) {
        super(problem, cause);
        this.input = input;
        this.file = file;
    }

    public Input input() {
        return input;
    }

    /** The file at fault, or null when the input was not a file (e.g. a layout passed in memory). */
    public Path file() {
        return file;
    }

    /** Checks that {@code file} exists, is a regular file and can be read. */
    public static Path checkReadable(Input input, Path file) {
        if (!java.nio.file.Files.exists(file)) {
            throw new BadInputException(input, file, "file " + file + " does not exist");
        }
        if (!java.nio.file.Files.isRegularFile(file)) {
            throw new BadInputException(input, file, file + " is not a regular file");
        }
        if (!java.nio.file.Files.isReadable(file)) {
            throw new BadInputException(input, file, "file " + file + " is not readable");
        }
        return file;
    }
}
