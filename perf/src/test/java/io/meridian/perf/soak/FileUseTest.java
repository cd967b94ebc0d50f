package io.meridian.perf.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileUseTest {
    @Test
    void namesTheKindOfFileAProcessMappedAndOpenedMore(@TempDir Path dir) throws Exception {
        long self = ProcessHandle.current().pid();
        Map<String, Integer> mappedBefore = FileUse.mapped(self);
        Map<String, Integer> openBefore = FileUse.open(self);
        Path file = dir.resolve("block-000042.tri");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_WRITE, 0, 1 << 16);
            map.put(0, (byte) 1);
            String mapped = FileUse.growth(mappedBefore, FileUse.mapped(self), 3);
            String opened = FileUse.growth(openBefore, FileUse.open(self), 3);
            String kind = FileUse.kind(file.toString());
            assertTrue(kind.endsWith("/block-#.tri"), kind);
            assertTrue(mapped.startsWith("+1 " + kind), mapped);
            assertTrue(opened.contains("+1 " + kind), opened);
        }
        assertEquals("none", FileUse.growth(Map.of("a", 1), Map.of("a", 1), 3));
    }
}
