#!/bin/bash
# Same-run A/B of bench:e2e (main before the cluster merge vs after), four runs A B B A in one hold of the bench lock.
export MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072
A=/tmp/dc-tree-1b14bb5f-95VuTO; B=/tmp/dc-tree-291a4c84-b5kSn3
i=0
for side in A B B A; do
  i=$((i+1)); d=${!side}
  (cd $d && node --import tsx bench/e2e/run.ts --seconds 30 --max-pages 300000 --no-build --out /tmp/cl-ab/$side$i.json > /dev/null 2>/tmp/cl-ab/$side$i.err)
  echo "$side$i done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
