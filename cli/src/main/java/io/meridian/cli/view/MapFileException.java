package io.meridian.cli.view;

import java.nio.file.Path;

/**
 * A map file that the viewer cannot show: a missing {@code points.tsv}, a line that is not {@code id x y z}, an id
 * outside the map, a {@code summary.json} that is not JSON. The message names the file (and line) and what is wrong;
 * {@code ./meridian view} prints it on one line.
 */
public final class MapFileException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public MapFileException(Path file, String problem) {
        super(file + ": " + problem, null, false, false);
    }

    public MapFileException(Path file, long line, String problem) {
        super(file + " line " + line + ": " + problem, null, false, false);
    }
}
