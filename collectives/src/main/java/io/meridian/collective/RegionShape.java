package io.meridian.collective;

/**
 * What a group's region holds: which group of how many, its members, the global block numbering and the data sizes.
 * {@code firstBlock} has {@code groups + 1} entries: group g owns blocks {@code firstBlock[g] .. firstBlock[g + 1]}.
 */
record RegionShape(int group, int groups, int members, int[] firstBlock, int capacity, int reduceCapacity,
                   boolean daemonLeader) {
    static final int MAX_GROUPS = 4096;
    static final int MAX_BLOCKS = 65536;

    RegionShape {
        if (groups < 1 || groups > MAX_GROUPS || group < 0 || group >= groups) {
            throw new IllegalArgumentException("group " + group + " of " + groups + " (at most " + MAX_GROUPS + " groups)");
        }
        if (firstBlock.length != groups + 1 || firstBlock[0] != 0) {
            throw new IllegalArgumentException("block table needs " + (groups + 1) + " entries starting at 0");
        }
        for (int g = 0; g < groups; g++) {
            if (firstBlock[g + 1] <= firstBlock[g]) {
                throw new IllegalArgumentException("group " + g + " has no members");
            }
        }
        if (firstBlock[groups] > MAX_BLOCKS) {
            throw new IllegalArgumentException(firstBlock[groups] + " blocks: at most " + MAX_BLOCKS);
        }
        if (members != firstBlock[group + 1] - firstBlock[group]) {
            throw new IllegalArgumentException("group " + group + " has " + (firstBlock[group + 1] - firstBlock[group])
                    + " blocks but " + members + " members");
        }
        if (capacity < 1 || reduceCapacity < 1) {
            throw new IllegalArgumentException("capacity " + capacity + " and reduce capacity " + reduceCapacity + " must be positive");
        }
    }

    int blocks() {
        return firstBlock[groups];
    }

    /** Group-level block table from per-group member counts. */
    static int[] table(int[] membersPerGroup) {
        int[] first = new int[membersPerGroup.length + 1];
        for (int g = 0; g < membersPerGroup.length; g++) {
            first[g + 1] = first[g] + membersPerGroup[g];
        }
        return first;
    }
}
