# Convert Meridian's vectors.tsv (id, mz, rt) to the original's input format (InputFileType 0):
# id x_1..x_D charge f f label -- the charge column is D+1 (SelectedInputLabel picks it), the label column D+4.
import sys
src, dst = sys.argv[1], sys.argv[2]
with open(src) as f, open(dst, "w") as g:
    for line in f:
        p = line.split()
        if not p:
            continue
        g.write("\t".join(p + ["2", "0", "0", "0"]) + "\n")
