package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** {@code --help} and {@code -h} print a command's usage and exit 0, whatever else is on the line. */
class HelpTest {
    @Test
    void everyCommandAnswersHelp() {
        for (String name : Commands.all().keySet()) {
            for (String flag : new String[] {"--help", "-h"}) {
                PrintStream saved = System.out;
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
                int status;
                try {
                    status = Main.run(new String[] {name, "--no-such-option", flag});
                } finally {
                    System.setOut(saved);
                }
                assertEquals(0, status, name + " " + flag);
                String text = out.toString(StandardCharsets.UTF_8);
                assertTrue(text.startsWith("usage: ./meridian " + name), name + " " + flag + " printed: " + text);
            }
        }
    }
}
