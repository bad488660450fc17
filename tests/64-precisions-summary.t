#!/bin/sh
# The arithmetic of bench/tools/precisions.awk (through bench/tools/precisions.sh
# PREC_RUN=...) on a hand-made run folder of known values: per round, the
# median of the round's repetitions over fp32's median in the same round;
# then the median of those ratios over the rounds, and their min-max. Also
# bench/tools/median.awk alone, and the runs it refuses to judge.
. tests/lib.sh
plan 16

is "$(awk "$(cat bench/tools/median.awk)"'BEGIN {
        split("3 1 2", a, " "); m = median(a, 3); printf "%s %s %s", m, a[1], a[3]
        split("4 1 3 2", b, " "); printf " %s %s %s", median(b, 4), b[1], b[4]
        split("7", c, " "); printf " %s\n", median(c, 1) }')" "2 1 3 2.5 1 4 7" \
    "median.awk: odd, even (mean of the middle two) and one value; sorted in place (min, max)"

# judge DIR [VAR=VALUE...]: sets RC, OUT, ERR.
judge() {
    dir=$1
    shift
    env GPUMEM="$GPUMEM" PREC_RUN="$dir" "$@" bench/tools/precisions.sh >"$TEST_TMP/out" 2>"$TEST_TMP/err"
    RC=$?
    OUT=$(cat "$TEST_TMP/out")
    ERR=$(cat "$TEST_TMP/err")
}
results_head=schema_version,run_id,backend,device,device_id,suite,workload,variant,pattern,precision,weight_precision,kv_precision,activation_precision,model,mode,batch,seq_len,bytes,model_bytes,measured_bytes,metric,unit,value,min,max,stdev,reps,status,note
samples_head=schema_version,run_id,backend,device,device_id,suite,workload,variant,pattern,precision,weight_precision,kv_precision,activation_precision,model,mode,batch,seq_len,bytes,model_bytes,measured_bytes,metric,unit,rep,value,round
# sample KERNEL PRECISION ROUND VALUE [METRIC [BYTES]]: one samples.csv row
# (the device's name quoted, with a comma, as gpumem writes it).
sample() {
    echo "4,hand,opencl,\"Acme, GPU\",opencl:0,stream,$1,grid,per-tensor,$2,,,,,,,,${6:-268435456},,,${5:-bandwidth},GB/s,0,$4,$3"
}
# The known values, 2 rounds. read: fp32's round medians 20 (10 20 60)
# and 45 (40 50); fp16's 18 (18 16 100) and 27: ratios 0.9 and 0.6, median
# 0.75; fp32's GB/s the median of 20 and 45, 32.5. triad: fp32 8 and 12,
# fp16 8 and 13.2: ratios 1.0 and 1.1, median 1.05; fp32 10 GB/s. (The
# best repetitions, 100 over 60, would say 1.67 for read.)
known() {
    for v in 10 20 60; do sample read fp32 1 $v; done
    for v in 40 50; do sample read fp32 2 $v; done
    for v in 18 16 100; do sample read fp16 1 $v; done
    sample read fp16 2 27
    sample triad fp32 1 8
    sample triad fp32 1 99999 time
    sample triad fp32 2 12
    sample triad fp16 1 8
    sample triad fp16 2 13.2
}
mkrun() {
    mkdir -p "$1"
    echo "$results_head" >"$1/results.csv"
    echo "4,hand,opencl,\"Acme, GPU\",opencl:0,stream,read,grid,per-tensor,fp32,,,,,,,,268435456,,,bandwidth,GB/s,32.5,10,60,1,5,ok," \
        >>"$1/results.csv"
    echo "$samples_head" >"$1/samples.csv"
}

run=$TEST_TMP/known
mkrun "$run"
known >>"$run/samples.csv"
judge "$run"
is "$RC" 1 "read fp16 at 0.750 x fp32 misses the goal of 0.9: exit 1"
is "$ERR" "" "nothing on stderr"
like "$OUT" '^Acme, GPU \(opencl:0, grid access\), 256MiB arrays, 2 round\(s\) of 1-3 repetition\(s\)$' \
    "the device (a quoted CSV field), its access pattern, the array size, rounds and repetitions"
like "$OUT" '^kernel +fp32 GB/s +fp32 +fp16 *$' "the precisions the run holds, fp32 first"
like "$OUT" '^read +32\.50 +1\.000 +0\.750\*$' "read: fp32 32.50 GB/s, fp32 1.000, fp16 0.750 marked (median of 0.9 and 0.6)"
like "$OUT" '^triad +10\.00 +1\.000 +1\.050 ?$' "triad: fp32 10.00 GB/s (time rows ignored), fp16 1.050, not marked"
like "$OUT" '^read +0\.60-0\.90$' "read fp16's round ratios span 0.60-0.90"
like "$OUT" '^triad +1\.00-1\.10$' "triad fp16's span 1.00-1.10"
like "$OUT" '^1 of 2 cells below 0\.9 x fp32 \(\*\): read fp16 0\.750$' "the verdict names the cell that missed"
judge "$run" PREC_GOAL=0.7
is "$RC" 0 "with PREC_GOAL=0.7 every cell passes: exit 0"

# A failed point: its note (quoted, with a comma and two lines) and exit 2, no table.
run=$TEST_TMP/failed
mkrun "$run"
known >>"$run/samples.csv"
printf '%s\n' '4,hand,opencl,"Acme, GPU",opencl:0,stream,triad,grid,per-tensor,fp16,,,,,,,,268435456,,,bandwidth,GB/s,,,,,0,mismatch,"element 3: expected 1, got ""2""' \
    'at rep 0"' >>"$run/results.csv"
judge "$run"
is "$RC:$OUT" "2:" "a mismatch row: exit 2, no table"
is "$ERR" 'precisions: triad fp16: mismatch: element 3: expected 1, got "2"
at rep 0
precisions: 1 point(s) failed (above, with their notes): no ratio is taken from this run' "the row's note, whole"

# A point missing from a round, and a run of two sizes, cannot be judged.
run=$TEST_TMP/gap
mkrun "$run"
known | grep -v ',triad,grid,per-tensor,fp16,.*,2$' >>"$run/samples.csv"
judge "$run"
is "$RC:$ERR" "2:precisions: no samples of triad fp16 in round 2" "a point missing from a round: exit 2"
run=$TEST_TMP/sizes
mkrun "$run"
known >>"$run/samples.csv"
sample read fp32 1 20 bandwidth 1048576 >>"$run/samples.csv"
judge "$run"
like "$RC:$ERR" '^2:precisions: the run holds several array sizes \(268435456, 1048576\)' "two array sizes: exit 2"
judge "$TEST_TMP/none"
like "$RC:$ERR" '^2:precisions: PREC_RUN=.*: no results.csv and samples.csv there$' "no run folder: exit 2"
done_testing
