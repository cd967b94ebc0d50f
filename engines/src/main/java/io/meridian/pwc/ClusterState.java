package io.meridian.pwc;

/**
 * One DA-PWC solution as one block holds it: K clusters; for each of the block's rows and each cluster the membership
 * M_a(k), the epsilon eps_a(k) = B_a(k) + A_k and B_a(k) = sum_b d(a,b) M_b(k) / C_k (rows x K, row-major, stride K:
 * entry {@code a * k + j}); for each cluster C_k = sum_a M_a(k), A_k and the freezing measure
 * sum_a M_a(k)(1 - M_a(k)) / C_k; the temperature and the Hamiltonian it was made at. Arrays are sized once for the
 * largest K, so copying one state into another allocates nothing.
 *
 * <p>{@link PwcEngine} holds four: {@code current} (the annealing), {@code best} (the lowest Hamiltonian so far,
 * dapwc's BestPWC), {@code trial} (where a split test runs EM with one cluster duplicated) and {@code eigen} (each
 * cluster's inputs to the power method). Not thread-safe: owned by the engine's thread.
 */
final class ClusterState {
    /** The block's rows. */
    final int rows;
    int k;
    double temperature;
    double hamiltonian;
    /** M_a(k), rows x k row-major. */
    final double[] m;
    /** eps_a(k), rows x k row-major. */
    final double[] eps;
    /** B_a(k), rows x k row-major. */
    final double[] b;
    /** C_k. */
    final double[] c;
    /** A_k. */
    final double[] a;
    /** Freezing measure of each cluster. */
    final double[] freeze;

    ClusterState(int rows, int maxK) {
        this.rows = rows;
        int local = rows * maxK;
        m = new double[local];
        eps = new double[local];
        b = new double[local];
        c = new double[maxK];
        a = new double[maxK];
        freeze = new double[maxK];
    }

    /** Makes this state a copy of {@code other} (its k clusters). */
    void copyFrom(ClusterState other) {
        int len = rows * other.k;
        k = other.k;
        temperature = other.temperature;
        hamiltonian = other.hamiltonian;
        System.arraycopy(other.m, 0, m, 0, len);
        System.arraycopy(other.eps, 0, eps, 0, len);
        System.arraycopy(other.b, 0, b, 0, len);
        System.arraycopy(other.c, 0, c, 0, k);
        System.arraycopy(other.a, 0, a, 0, k);
        System.arraycopy(other.freeze, 0, freeze, 0, k);
    }

    /** Takes {@code other}'s epsilons only (same k), leaving M, B, C, A and the freezing measures as they are. */
    void copyEpsilonFrom(ClusterState other) {
        System.arraycopy(other.eps, 0, eps, 0, rows * k);
    }

    /** Takes column {@code cluster} of M and B, and A and C of that cluster, from {@code other} (same k). */
    void copyClusterFrom(ClusterState other, int cluster) {
        for (int i = 0, p = cluster; i < rows; i++, p += k) {
            m[p] = other.m[p];
            b[p] = other.b[p];
        }
        a[cluster] = other.a[cluster];
        c[cluster] = other.c[cluster];
    }

    /**
     * Drops the clusters with {@code remove[j]} (eps, C, A and freezing measure of the others are kept, in order; M
     * and B are not, the next EM iteration makes them from eps). Returns the new k.
     */
    int removeClusters(boolean[] remove) {
        int oldK = k;
        int drop = 0;
        for (int j = 0; j < oldK; j++) {
            if (remove[j]) {
                drop++;
            }
        }
        int newK = oldK - drop;
        for (int i = 0; i < rows; i++) {
            int to = i * newK;
            for (int j = 0; j < oldK; j++) {
                if (!remove[j]) {
                    eps[to++] = eps[i * oldK + j];
                }
            }
        }
        int kept = 0;
        for (int j = 0; j < oldK; j++) {
            if (!remove[j]) {
                c[kept] = c[j];
                a[kept] = a[j];
                freeze[kept] = freeze[j];
                kept++;
            }
        }
        k = newK;
        return newK;
    }

    /**
     * Splits cluster {@code cluster} in two: its eps column becomes eps + {@code step} v and a new last column
     * eps - {@code step} v ({@code v} one value per row). The other columns keep their values; k grows by one.
     */
    void splitEpsilon(int cluster, double[] v, double step) {
        int oldK = k;
        int newK = oldK + 1;
        for (int i = rows - 1; i >= 0; i--) {
            for (int j = oldK - 1; j >= 0; j--) {
                eps[i * newK + j] = eps[i * oldK + j];
            }
        }
        for (int i = 0; i < rows; i++) {
            double original = eps[i * newK + cluster];
            double perturbation = v[i] * step;
            eps[i * newK + cluster] = original + perturbation;
            eps[i * newK + oldK] = original - perturbation;
        }
        k = newK;
    }
}
