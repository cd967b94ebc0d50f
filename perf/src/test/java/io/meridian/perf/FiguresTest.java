package io.meridian.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FiguresTest {
    @Test
    void listsAreJsonArraysOfTheirValues() {
        Figures f = new Figures("t").put("counts", List.of(List.of(500L, 499L), List.of()))
                .put("m", Map.of("x", List.of(true, "a\"b", 0.5)));
        assertEquals("{\"benchmark\":\"t\",\"counts\":[[500,499],[]],\"m\":{\"x\":[true,\"a\\\"b\",0.500000]}}",
                f.toJson());
    }
}
