package io.meridian.stream.live;

import java.util.List;
import org.apache.storm.generated.GlobalStreamId;
import org.apache.storm.grouping.CustomStreamGrouping;
import org.apache.storm.task.WorkerTopologyContext;

/**
 * Routes each valid row to the row store that {@link MapLayout} gives its block: one on the host of the map task that
 * owns the block, plus a mirror on the publishing task's host when that is another host. The layout follows the
 * assignment ({@link MapLayout.Tracker}). The block is the tuple's first field.
 */
public final class BlockStoreGrouping implements CustomStreamGrouping {
    private static final long serialVersionUID = 1L;
    private final String mapComponent;
    private transient MapLayout.Tracker layout;
    /** The routes of the blocks seen, for {@link #routed}: a tuple allocates no list. */
    private transient List<Integer>[] routes;
    private transient MapLayout routed;

    /** @param mapComponent the live map's component id (none in the topology: plain block routing) */
    public BlockStoreGrouping(String mapComponent) {
        this.mapComponent = mapComponent;
    }

    @Override
    public void prepare(WorkerTopologyContext context, GlobalStreamId stream, List<Integer> targetTasks) {
        this.layout = new MapLayout.Tracker(context, mapComponent, context.getComponentId(targetTasks.get(0)));
    }

    @Override
    public List<Integer> chooseTasks(int taskId, List<Object> values) {
        int block = (Integer) values.get(0);
        MapLayout l = layout.current();
        if (l != routed || block >= routes.length) {
            routes = grow(l == routed ? routes : null, block);
            routed = l;
        }
        List<Integer> route = routes[block];
        if (route == null) {
            int primary = l.primaryStore(block);
            int mirror = l.mirrorStore(block);
            route = mirror < 0 ? List.of(primary) : List.of(primary, mirror);
            routes[block] = route;
        }
        return route;
    }

    @SuppressWarnings("unchecked")
    private static List<Integer>[] grow(List<Integer>[] old, int block) {
        List<Integer>[] grown = new List[Math.max(64, Integer.highestOneBit(block) * 2)];
        if (old != null) {
            System.arraycopy(old, 0, grown, 0, old.length);
        }
        return grown;
    }
}
