package io.meridian.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class TextNumbersTest {
    @Test
    void readsEverySpellingTextToolsWrite() {
        for (String nan : new String[] {"nan", "NaN", "NAN", "-nan", " nan\r"}) {
            assertTrue(Float.isNaN(TextNumbers.parse(nan)), nan);
        }
        for (String inf : new String[] {"inf", "Inf", "+inf", "infinity", "Infinity", "INF"}) {
            assertEquals(Float.POSITIVE_INFINITY, TextNumbers.parse(inf), inf);
        }
        for (String inf : new String[] {"-inf", "-Inf", "-Infinity", " -infinity "}) {
            assertEquals(Float.NEGATIVE_INFINITY, TextNumbers.parse(inf), inf);
        }
        // numpy.savetxt's default %.18e, C's %g, exponents of either case, signs and surrounding spaces
        for (String quarter : new String[] {"0.25", "2.500000000000000000e-01", "2.5E-1", "+0.25", " 0.25 ", "0.25\r",
            ".25", "25e-2"}) {
            assertEquals(0.25f, TextNumbers.parse(quarter), quarter);
        }
        assertEquals(-0.5f, TextNumbers.parse("-5e-1"));
    }

    @Test
    void readsIdsAsIntegersInAnySpellingAndRefusesFractionsAndNonNumbers() {
        for (String id : new String[] {"3000", " 3000 ", "+3000", "3.000000000000000000e+03", "3e3", "3000.0", "3000.\r",
            "3.0E+03"}) {
            assertEquals(3000, TextNumbers.parseId(id), id);
        }
        assertEquals(0, TextNumbers.parseId("0.000000000000000000e+00"), "row 0 as numpy writes it");
        assertEquals(-4, TextNumbers.parseId("-4.000000000000000000e+00"), "the topology judges the range");
        for (String bad : new String[] {"", "x", "3.5", "3.000000000000000001e+00", "nan", "inf", "-inf", "1e10", "3f",
            "0x10", "3,0"}) {
            assertThrows(NumberFormatException.class, () -> TextNumbers.parseId(bad), "'" + bad + "'");
        }
    }

    @Test
    void refusesWhatIsNotANumberInAnySpelling() {
        for (String bad : new String[] {"", " ", "foo", "0.5.5", "1,5", "0x1p-2", "1f", "2d", "nanx", "in f", "--1"}) {
            assertThrows(NumberFormatException.class, () -> TextNumbers.parse(bad), "'" + bad + "'");
        }
    }
}
