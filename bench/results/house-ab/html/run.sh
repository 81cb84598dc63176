#!/bin/sh
# Same-run A/B of bench:html around the split of src/html/links.ts scan(): A = 837ccae (before),
# B = 6526fc3 (after), each a checkout with node_modules; A B B A, one process each, the whole
# script under `flock /tmp/heavy.lock`. run1: SECONDS=3, run2: SECONDS=5; the JSON files were
# copied to run<n>-<side><i>.json here.
set -e
A=${A:?checkout of 837ccae}; B=${B:?checkout of 6526fc3}; OUT=${OUT:?directory}; SECONDS_=${SECONDS_:-3}
for x in A1 B1 B2 A2; do
  case $x in A*) d=$A;; B*) d=$B;; esac
  (cd $d && node --import tsx bench/html/run.ts --seconds $SECONDS_ --out $OUT/$x.json > /dev/null)
done
