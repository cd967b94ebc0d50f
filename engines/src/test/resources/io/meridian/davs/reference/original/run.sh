#!/usr/bin/env bash
# run.sh DATASET N TMIN TAG [extra config lines...]: one run of the original, one rank, one thread.
set -euo pipefail
cd "$(dirname "$0")"
ds=$1 n=$2 tmin=$3 tag=$4; shift 4
out=$PWD/runs/$ds-$tag; mkdir -p "$out"
sed -e "s#@DIR@#$PWD/data/$ds#" -e "s#@OUT@#$out#" -e "s#@N@#$n#" -e "s#@TMIN@#$tmin#" config-template.properties > "$out/config.properties"
for line in "$@"; do echo "$line" >> "$out/config.properties"; done
start=$(date +%s.%N)
nice -n 19 mpirun --allow-run-as-root -np 1 java -Djava.library.path=/usr/lib/x86_64-linux-gnu -cp classes:$(cat cp.txt) \
  edu.indiana.soic.spidal.davs.Program -c "$out/config.properties" -n 1 -t 1 > "$out/console.txt" 2>&1 || echo "exit $?" >> "$out/console.txt"
end=$(date +%s.%N)
echo "wall $(echo "$end - $start" | bc)" >> "$out/console.txt"
