package io.meridian.collective;

/** A region file exists but is not the one this process expects (magic, layout version, job id or shape differ). */
public final class RegionMismatchException extends CollectiveException {
    private static final long serialVersionUID = 1L;

    public RegionMismatchException(String message) {
        super(message);
    }
}
