# score.py TRUTH_labels.tsv RUN_labels(id ... label last column) [OTHER_labels]: clusters, ARI on true peak points,
# background recall (true background in label 0) and precision; with OTHER, ARI between the two label sets.
import sys
from collections import Counter
from math import comb
def read(path):
    d = {}
    for line in open(path):
        p = line.split()
        if p and p[0].lstrip('-').isdigit():
            d[int(p[0])] = int(float(p[-1]))
    return d
def ari(a, b):
    n = len(a)
    pairs = Counter(zip(a, b)); ca = Counter(a); cb = Counter(b)
    s = sum(comb(v, 2) for v in pairs.values()); sa = sum(comb(v, 2) for v in ca.values()); sb = sum(comb(v, 2) for v in cb.values())
    e = sa * sb / comb(n, 2); m = (sa + sb) / 2
    return 1.0 if m == e else (s - e) / (m - e)
t = read(sys.argv[1]); r = read(sys.argv[2])
ids = sorted(t)
peaks = [i for i in ids if t[i] != 0]
bg = [i for i in ids if t[i] == 0]
found = len({r[i] for i in ids} - {0})
spongeall = [i for i in ids if r[i] == 0]
print(f"clusters {found} (labels: {sorted(Counter(r[i] for i in ids).items())[:3]}...) ARI(peaks) {ari([t[i] for i in peaks],[r[i] for i in peaks]):.4f} "
      f"ARI(all) {ari([t[i] for i in ids],[r[i] for i in ids]):.4f} bg recall {sum(r[i]==0 for i in bg)/len(bg):.3f} "
      f"bg precision {sum(t[i]==0 for i in spongeall)/max(1,len(spongeall)):.3f}")
if len(sys.argv) > 3:
    o = read(sys.argv[3])
    print(f"ARI vs other (all points) {ari([r[i] for i in ids],[o[i] for i in ids]):.4f}")
