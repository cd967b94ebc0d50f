package io.meridian.stream.live;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.storm.utils.TupleUtils;
import org.junit.jupiter.api.Test;

class MapLayoutTest {
    private static final List<Integer> MAP = List.of(8, 5, 7, 6);
    private static final List<Integer> STORES = List.of(1, 2, 3, 4);
    private static final Map<Integer, String> TWO_HOSTS = Map.of(5, "h2", 6, "h1", 7, "h2", 8, "h1",
            1, "h1", 2, "h2", 3, "h1", 4, "h2");

    @Test
    void groupsFollowTheHostOfTheLowestMapTaskThenTheOthersByName() {
        MapLayout layout = MapLayout.of(TWO_HOSTS, MAP, STORES);
        assertEquals(List.of("h2", "h1"), layout.hosts());
        assertArrayEquals(new int[] {2, 2}, layout.members());
        assertEquals(0, layout.rank(5));
        assertEquals(1, layout.rank(7));
        assertEquals(2, layout.rank(6));
        assertEquals(3, layout.rank(8));
        assertEquals(1, layout.member(3));
        assertEquals(1, layout.group(2));
        assertEquals("h1", layout.hostOfRank(3));
    }

    @Test
    void eachBlockIsStoredOnItsOwnersHostAndMirroredOnThePublishersHost() {
        MapLayout layout = MapLayout.of(TWO_HOSTS, MAP, STORES);
        for (int block = 0; block < 64; block++) {
            String ownerHost = layout.hostOfRank(layout.owner(block));
            int primary = layout.primaryStore(block);
            assertEquals(ownerHost, TWO_HOSTS.get(primary), "block " + block);
            int mirror = layout.mirrorStore(block);
            if (ownerHost.equals("h2")) {
                assertEquals(-1, mirror, "block " + block + " is owned on the publisher's host");
            } else {
                assertEquals("h2", TWO_HOSTS.get(mirror), "block " + block);
            }
            assertTrue(layout.stores(primary, block));
            int others = 0;
            for (int store : STORES) {
                others += layout.stores(store, block) ? 1 : 0;
            }
            assertEquals(mirror < 0 ? 1 : 2, others, "block " + block);
        }
    }

    @Test
    void oneHostOrNoMapIsTheFieldsGroupingOnTheBlock() {
        MapLayout oneHost = MapLayout.of(Map.of(), MAP, STORES);
        MapLayout noMap = MapLayout.of(TWO_HOSTS, List.of(), STORES);
        assertEquals(1, oneHost.groups());
        for (int block = 0; block < 4096; block++) {
            int fields = STORES.get(TupleUtils.chooseTaskIndex(List.of(block), STORES.size()));
            assertEquals(fields, oneHost.primaryStore(block));
            assertEquals(-1, oneHost.mirrorStore(block));
            assertEquals(fields, noMap.primaryStore(block));
            assertEquals(-1, noMap.mirrorStore(block));
        }
    }

    @Test
    void aHostWithoutRowStoresFallsBackToAnyStore() {
        Map<Integer, String> hosts = Map.of(5, "h1", 6, "h2", 1, "h1", 2, "h1");
        MapLayout layout = MapLayout.of(hosts, List.of(5, 6), List.of(1, 2));
        assertTrue(layout.storesOn("h2").isEmpty());
        assertTrue(List.of(1, 2).contains(layout.primaryStore(1)));
        assertEquals(-1, layout.mirrorStore(1));
    }

    @Test
    void eachHostsLeaderServesMetricsOnItsLowestMapSlotPlusTheOffset() {
        Map<Integer, String> hosts = Map.of(5, "h1", 6, "h2", 7, "h1", 8, "h2");
        Map<Integer, Integer> ports = Map.of(5, 6701, 6, 6700, 7, 6700, 8, 6702);
        MapLayout layout = MapLayout.of(hosts, ports, List.of(5, 6, 7, 8), List.of());
        assertEquals("h1=7800,h2=7800", layout.leaderMetricsPorts(1100));
        assertEquals("", MapLayout.of(hosts, List.of(5, 6, 7, 8), List.of()).leaderMetricsPorts(1100),
                "no endpoint when the ports are not known");
    }
}
