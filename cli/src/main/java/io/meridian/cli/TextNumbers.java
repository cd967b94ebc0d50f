package io.meridian.cli;

/**
 * Decimal numbers as the common tools write them in text: Java's and C's spellings, exponents, surrounding spaces (a
 * CRLF line's carriage return among them), and numpy's and R's {@code nan}, {@code inf}, {@code -inf}, {@code Inf},
 * {@code NA}-free spellings of the IEEE values in any case. Judging the values (finite, in [0, 1]) is the topology's:
 * {@code feed} passes them on as they are.
 */
final class TextNumbers {
    private TextNumbers() {
    }

    /** The value of {@code text}; throws {@link NumberFormatException} for what is not a number in any spelling. */
    static float parse(String text) {
        String t = text.strip();
        String unsigned = t.startsWith("+") || t.startsWith("-") ? t.substring(1) : t;
        boolean negative = t.startsWith("-");
        switch (unsigned.toLowerCase(java.util.Locale.ROOT)) {
            case "nan":
                return Float.NaN;
            case "inf":
            case "infinity":
                return negative ? Float.NEGATIVE_INFINITY : Float.POSITIVE_INFINITY;
            default:
                break;
        }
        if (t.isEmpty() || t.endsWith("f") || t.endsWith("F") || t.endsWith("d") || t.endsWith("D")
                || t.startsWith("0x") || t.startsWith("0X")) {
            // Java would take 1f, 2d and hex floats: no text tool writes them for data
            throw new NumberFormatException("'" + text + "' is not a number");
        }
        return Float.parseFloat(t);
    }

    /**
     * A row id: an integer in any spelling, numpy.savetxt's default {@code %.18e} among them ({@code 3.000000000000000000e+03},
     * {@code 3000.0}); throws {@link NumberFormatException} for what is not a whole number that fits an int.
     */
    static int parseId(String text) {
        try {
            return new java.math.BigDecimal(text.strip()).intValueExact(); // exact: 3.0000000000000000001 is no id
        } catch (ArithmeticException e) {
            throw new NumberFormatException("'" + text.strip() + "' is not an integer");
        }
    }
}
