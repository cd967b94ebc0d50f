package io.meridian.metrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * This process's resident set by kind, from {@code /proc/self/status}: anonymous (the heap, thread stacks, direct
 * buffers), file-backed (mapped row store files: page cache that the kernel can drop and read again) and shared
 * memory (the collectives' regions and the transport's queues in /dev/shm). One RSS figure hides which of them grew:
 * a live map at 100K points has a 10 GB triangle mapped, which counts as file-backed, and a heap under 1 GB.
 */
public record ResidentMemory(long anonymousBytes, long fileBytes, long sharedMemoryBytes) {
    private static final Path STATUS = Path.of("/proc/self/status");

    /** The figures now; zeros where the kernel does not report them (not Linux). */
    public static ResidentMemory read() {
        long anon = 0;
        long file = 0;
        long shmem = 0;
        try {
            for (String line : Files.readAllLines(STATUS)) {
                if (line.startsWith("RssAnon:")) {
                    anon = kilobytes(line);
                } else if (line.startsWith("RssFile:")) {
                    file = kilobytes(line);
                } else if (line.startsWith("RssShmem:")) {
                    shmem = kilobytes(line);
                }
            }
        } catch (IOException e) {
            return new ResidentMemory(0, 0, 0);
        }
        return new ResidentMemory(anon, file, shmem);
    }

    /** "RssAnon:	  123456 kB" -> bytes. */
    private static long kilobytes(String line) {
        long value = 0;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c >= '0' && c <= '9') {
                value = 10 * value + (c - '0');
            }
        }
        return value * 1024;
    }
}
