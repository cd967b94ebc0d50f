package io.meridian.matrix;

import io.meridian.engine.BadInputException;
import io.meridian.engine.BadInputException.Input;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The small text inputs of the engines (per-point weights, initial layouts, fixed points): the data lines of a file,
 * blank lines and lines starting with '#' skipped, with line numbers for messages. Every problem is a
 * {@link BadInputException} naming the file and the line.
 */
public final class DataLines {
    /** Receives one data line, trimmed, with its 1-based line number. */
    @FunctionalInterface
    public interface Handler {
        void line(int lineNo, String trimmed);
    }

    private DataLines() {
    }

    public static void read(Input input, Path file, Handler handler) {
        BadInputException.checkReadable(input, file);
        int lineNo = 0;
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                lineNo++;
                String t = line.trim();
                if (!t.isEmpty() && !t.startsWith("#")) {
                    handler.line(lineNo, t);
                }
            }
        } catch (IOException e) {
            throw new BadInputException(input, file, "cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /** Splits a data line into fields separated by tabs, spaces or commas. */
    public static String[] fields(String trimmed) {
        return trimmed.split("[\\t ,]+");
    }

    /** A finite number, or an error naming the file and line. */
    public static double number(Input input, Path file, int lineNo, String s) {
        double v;
        try {
            v = Double.parseDouble(s);
        } catch (NumberFormatException e) {
            throw new BadInputException(input, file, file + "" + " line " + lineNo + ": not a number: '" + s + "'");
        }
        if (!Double.isFinite(v)) {
            throw new BadInputException(input, file, file + "" + " line " + lineNo + ": not a finite number: '" + s + "'");
        }
        return v;
    }
}
