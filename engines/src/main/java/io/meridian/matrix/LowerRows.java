package io.meridian.matrix;

/**
 * Rows of a distance matrix as a stream delivers them: row {@code id} holds {@code d(id, j)} for {@code j < id}, raw
 * 16-bit entries (value / 32767, negative: missing). The row stores implement it over their mapped files; a full
 * matrix does too.
 */
public interface LowerRows {
    /** Copies entries {@code [from, to)} of row {@code id} ({@code to <= id}) into {@code dst} from 0. */
    void copy(int id, int from, int to, short[] dst);

    /** The raw entry {@code column} ({@code < id}) of row {@code id}. */
    short get(int id, int column);

    /**
     * Whether row {@code id} can be read here now. A full matrix holds every row; a row store holds a row once it is
     * written, and across hosts the publishing host's copy of another host's row comes later than the row itself.
     */
    default boolean isStored(int id) {
        return true;
    }

    /** The lower triangle of a full matrix. */
    static LowerRows of(RowBlock full) {
        return new LowerRows() {
            @Override
            public void copy(int id, int from, int to, short[] dst) {
                full.copyRow(id, from, to, dst, 0);
            }

            @Override
            public short get(int id, int column) {
                return full.raw(id, column);
            }
        };
    }
}
