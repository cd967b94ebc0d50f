#!/usr/bin/env python3
"""DA-VS against two baselines on the same generated peaks: scikit-learn's HDBSCAN and a Gaussian mixture with a
uniform noise component. Prints, for each, K, the ARI on the true peaks' points (noise counted as one more found
label) and the recall and precision of the noise label, the figures `meridian davs --truth` writes.

usage: baselines.py --data DIR --davs DIR
  DIR of `./meridian gen --kind peaks` (vectors.tsv, labels.tsv, dataset.json) and of `./meridian davs --out`
  (labels.tsv). Needs numpy and scikit-learn >= 1.3 (sklearn.cluster.HDBSCAN).

All three see the same width model: the baselines get the points in DA-VS's scaled units, u = ln(m/z) / p_0 (an m/z
width p_0 * m/z becomes 1) and v = rt / p_1, p from dataset.json, so that Euclidean distance is the scaled distance.
The mixture is given the true number of peaks (an advantage DA-VS and HDBSCAN do not have), initialised by
sklearn's GaussianMixture (k-means, 3 starts), then EM with one more component of uniform density over the box.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
from sklearn.cluster import HDBSCAN
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import GaussianMixture


def read_table(path, columns):
    rows = np.loadtxt(path, delimiter="\t", ndmin=2)
    return rows[:, 1:1 + columns] if columns else rows[:, 1].astype(int)


def score(truth, found, true_noise, found_noise):
    peaks = truth != true_noise
    ari = adjusted_rand_score(truth[peaks], found[peaks])
    said = found == found_noise
    noise = truth == true_noise
    recall = (said & noise).sum() / max(1, noise.sum())
    precision = (said & noise).sum() / max(1, said.sum())
    return ari, recall, precision


def gmm_with_noise(x, k, iterations=300, seed=0):
    """EM for k Gaussians (full covariance) plus a uniform component over the bounding box; returns labels, noise = k."""
    low, high = x.min(axis=0), x.max(axis=0)
    uniform = 1.0 / np.prod(high - low)
    g = GaussianMixture(n_components=k, covariance_type="full", n_init=3, random_state=seed).fit(x)
    means, covs = g.means_.copy(), g.covariances_.copy()
    weights = np.append(0.9 * g.weights_, 0.1)
    n, d = x.shape
    previous = -np.inf
    for _ in range(iterations):
        dens = np.empty((n, k + 1))
        for j in range(k):
            diff = x - means[j]
            inv = np.linalg.inv(covs[j])
            det = np.linalg.det(covs[j])
            dens[:, j] = np.exp(-0.5 * np.einsum("ni,ij,nj->n", diff, inv, diff)) / math.sqrt((2 * math.pi) ** d * det)
        dens[:, k] = uniform
        weighted = dens * weights
        total = weighted.sum(axis=1, keepdims=True)
        loglik = np.log(total).sum()
        r = weighted / total
        nk = r.sum(axis=0)
        weights = nk / n
        for j in range(k):
            means[j] = (r[:, j:j + 1] * x).sum(axis=0) / nk[j]
            diff = x - means[j]
            covs[j] = (r[:, j:j + 1] * diff).T @ diff / nk[j] + 1e-6 * np.eye(d)
        if loglik - previous < 1e-6 * abs(loglik):
            break
        previous = loglik
    return r.argmax(axis=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--davs", required=True)
    args = parser.parse_args()
    with open(os.path.join(args.data, "dataset.json")) as f:
        spec = json.load(f)
    x = read_table(os.path.join(args.data, "vectors.tsv"), 2)
    truth = read_table(os.path.join(args.data, "labels.tsv"), 0)
    found = read_table(os.path.join(args.davs, "labels.tsv"), 0)
    scaled = np.column_stack([np.log(x[:, 0]) / spec["mzWidth"], x[:, 1] / spec["rtWidth"]])
    k = spec["peaks"]
    rows = []
    ari, rec, prec = score(truth, found, 0, 0)
    with open(os.path.join(args.davs, "summary.json")) as f:
        davs = json.load(f)
    rows.append(("DA-VS (meridian davs)", davs["clusters"], ari, rec, prec, davs["seconds"]))
    for size in (5, 25):
        t = time.time()
        labels = HDBSCAN(min_cluster_size=size, copy=True).fit_predict(scaled)
        ari, rec, prec = score(truth, labels, 0, -1)
        rows.append((f"HDBSCAN min_cluster_size={size}", len(set(labels) - {-1}), ari, rec, prec, time.time() - t))
    t = time.time()
    labels = gmm_with_noise(scaled, k)
    ari, rec, prec = score(truth, labels, 0, k)
    rows.append((f"GMM + uniform noise, K={k} given", len(set(labels) - {k}), ari, rec, prec, time.time() - t))
    print(f"N {len(x)}, {k} peaks, {int((truth == 0).sum())} background points ({args.data})")
    print(f"{'method':36s} {'K':>4s} {'ARI peaks':>10s} {'bg recall':>10s} {'bg prec':>8s} {'seconds':>8s}")
    for name, clusters, ari, rec, prec, sec in rows:
        print(f"{name:36s} {clusters:4d} {ari:10.4f} {rec:10.3f} {prec:8.3f} {sec:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
