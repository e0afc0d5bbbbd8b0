#!/usr/bin/env bash
# temporary (session 8): ncu of the accurate and fast softmax and the row sum
O=$1; bin=/tmp/bundle/bin
export LD_LIBRARY_PATH=/tmp/bundle/lib:${LD_LIBRARY_PATH:-}
export TESSERA_CACHE_DIR=/tmp/cache-ncu
$bin/bench_rows > $O/warm.log 2>&1
for k in tessera_softmax tessera_softmax_fast tessera_row_sum tessera_rmsnorm; do
  timeout 120 ncu -k "regex:^${k}\$" -s 3 -c 1 --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section WarpStateStats --section InstructionStats --section ComputeWorkloadAnalysis --section SchedulerStats \
    $bin/bench_rows > $O/ncu_$k.log 2>&1
done
