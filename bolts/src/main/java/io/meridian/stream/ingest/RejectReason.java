package io.meridian.stream.ingest;

/** Why a row went to the dead-letter topic. The {@link #code()} is the Kafka key, header and metric name. */
public enum RejectReason {
    MALFORMED("malformed"),
    ID_OUT_OF_RANGE("id-out-of-range"),
    WRONG_LENGTH("wrong-length"),
    NAN("nan"),
    NEGATIVE("negative"),
    ABOVE_ONE("above-one"),
    BAD_WEIGHT("bad-weight"),
    ID_OUT_OF_ORDER("id-out-of-order"),
    CONFLICT("conflict");

    private final String code;

    RejectReason(String code) {
        this.code = code;
    }

    public String code() {
        return code;
    }

    public static RejectReason ofCode(String code) {
        for (RejectReason r : values()) {
            if (r.code.equals(code)) {
                return r;
            }
        }
        throw new IllegalArgumentException("unknown reject reason '" + code + "'");
    }
}
