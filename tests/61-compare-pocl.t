#!/bin/sh
# gpumem compare on real PoCL runs: two runs of one configuration (A/A)
# show no regression at the default settings; the same configuration on a
# slower driver set-up (A/B) is flagged; one run a side without rounds is
# not gated (--gate: exit 2 and how to bench for a gate), runs in rounds
# are (A/A passes, A/B fails listing the regressions), and a gate says
# where it could not see a change of its threshold; Markdown, CSV and
# overlay plots; points only one run has, or measured on another shape,
# are left out with the reason; a cut or malformed CSV exits 2 naming the
# file and line.
. tests/lib.sh
command -v gnuplot >/dev/null || skip_all "gnuplot not installed (Debian: gnuplot-nox)"
plan 43

# A compute-bound point (about 9 ms a repetition on two idle cores), 15
# repetitions a side after 10 untimed: enough for the U test to pass Holm
# when it is slower.
bench_args="bench --backend opencl --mem-limit 64MiB --suite workloads --workload linear --seq 64 --hidden 256
    --precision fp16 --warmup 10 --quiet --batch 16"
# The machine may be shared. What other work took of its CPUs while the
# A/A pair ran is measured (/proc/stat's busy time less the runs' own, in
# cores): a pair that ran beside more than half a core of other work
# cannot tell gpumem's noise from the neighbours', so its verdict is not
# judged then (the A/B one still is).
cpu_busy_total() { awk '/^cpu /{b = $2 + $3 + $4 + $7 + $8 + $9; t = 0; for (i = 2; i <= NF; i++) t += $i; print b, t}' /proc/stat; }
# timed_bench ARGS: run_gpumem through perl, whose times() gives the CPU
# seconds the run used; they add up in $TEST_TMP/own-cpu.
timed_bench() {
    GPUMEM_REAL=$GPUMEM
    export GPUMEM_REAL TEST_TMP
    GPUMEM=perl
    run_gpumem -e 'my $rc = system $ENV{GPUMEM_REAL}, @ARGV; my @t = times;
        open my $f, ">>", "$ENV{TEST_TMP}/own-cpu" or die; print $f $t[2] + $t[3], "\n"; exit($rc >> 8)' "$@"
    GPUMEM=$GPUMEM_REAL
}
# same_pair NAME1 NAME2 BENCH-ARGS...: runs the same configuration twice,
# back to back (the less time between them, the less can change), into
# fresh folders NAME1 and NAME2; sets RC (0: both ran), others and quiet.
same_pair() {
    _one=$1 _two=$2
    shift 2
    rm -rf "$TEST_TMP/$_one" "$TEST_TMP/$_two" "$TEST_TMP/own-cpu"
    _busy=$(cpu_busy_total)
    timed_bench "$@" --out "$TEST_TMP/$_one"
    rc1=$RC
    timed_bench "$@" --out "$TEST_TMP/$_two"
    RC=$((rc1 | RC))
    set -- $_busy $(cpu_busy_total)
    others=$(awk -v b="$1 $3" -v t="$2 $4" -v cpus="$(getconf _NPROCESSORS_ONLN)" -v hz="$(getconf CLK_TCK)" \
        '{own += $1} END {split(b, B, " "); split(t, T, " "); wall = (T[2] - T[1]) / cpus / hz;
          printf "%.2f", (wall > 0 ? ((B[2] - B[1]) / hz - own) / wall : 0)}' "$TEST_TMP/own-cpu")
    quiet=$(awk -v o="$others" 'BEGIN {print (o != "" && o <= 0.5) ? 1 : 0}')
}
# aa_pair: A1 and A2, 15 repetitions each.
# shellcheck disable=SC2086
aa_pair() { same_pair A1 A2 $bench_args --reps 15; }
# On a virtual machine a whole run can be shifted by 10-30% against the
# next (the host's scheduling and clocks): the U test rightly calls such a
# shift significant. A pair judged a regression is measured again, up to
# three pairs; a gate that flags identical runs systematically fails all
# three.
for attempt in 1 2 3; do
    aa_pair
    [ "$RC" = 0 ] || break
    "$GPUMEM" compare "$TEST_TMP/A1" "$TEST_TMP/A2" 2>/dev/null | grep -q '^no regression$' && break
    note "A/A pair $attempt: a regression between identical runs (other work: $others cores); measuring again"
done
is "$RC" 0 "runs A1 and A2, the same configuration"
note "other work beside the A/A pair: $others cores"
# B: PoCL on one thread, its kernels compiled without the work-group
# vectorizer (POCL_WORK_GROUP_METHOD=loops): the kind of slowdown a driver
# upgrade can bring, whether or not the other core is free.
# shellcheck disable=SC2086
POCL_MAX_PTHREAD_COUNT=1 POCL_WORK_GROUP_METHOD=loops run_gpumem $bench_args --reps 15 --out "$TEST_TMP/B"
is "$RC" 0 "run B, PoCL on one thread without its vectorizer"
# shellcheck disable=SC2086
run_gpumem $bench_args,8 --reps 3 --out "$TEST_TMP/C"
is "$RC" 0 "run C, another batch list"
run_gpumem bench --backend opencl --mem-limit 64MiB --suite workloads --workload linear --seq 64 --hidden 128 \
    --precision fp16 --quiet --batch 16 --reps 3 --out "$TEST_TMP/D"
is "$RC" 0 "run D, another hidden size"

# A/A
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/A2"
note "A/A verdicts:" "$(printf '%s\n' "$OUT" | sed -n '/^point/,$p')"
if [ "$quiet" = 1 ]; then
    is "$RC" 0 "A/A: exit 0"
    like "$OUT" "^no regression$" "A/A: no regression"
else
    skip "A/A verdict not judged: other work took $others cores of this machine meanwhile"
    skip "A/A verdict not judged: other work took $others cores of this machine meanwhile"
fi
# One run a side without rounds cannot separate run-to-run noise: a gate
# judges none of its tests, says so, and exits 2 with how to bench for one.
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/A2" --gate
like "$RC $OUT" "^2 (.|\n)*^not gated: [0-9]+ tests of one run a side without rounds\n\n" \
    "A/A without rounds under --gate: exit 2, its tests not gated"
is "$(printf '%s\n' "$ERR" | grep -c '^gpumem compare: --gate: no point can be gated: [0-9]* tests compare one run a side without rounds, .* bench both sides in rounds (gpumem bench ... --reps 20 --rounds 5)')" 1 \
    "  one line says why and how to bench for a gate"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/A2" --format csv
printf '%s\n' "$OUT" >"$TEST_TMP/aa.csv"
if [ "$quiet" = 1 ]; then
    is "$(csv_count "$TEST_TMP/aa.csv" '$_->{verdict} eq "regression"')" 0 "A/A CSV: no regression row"
else
    skip "A/A verdict not judged: other work took $others cores of this machine meanwhile"
fi
is "$(csv_count "$TEST_TMP/aa.csv" '$_->{variant} eq "blocked" && $_->{test} eq "mann-whitney" && $_->{n} == 15')" 5 \
    "A/A CSV: the blocked point's five metrics (verify_time too), each tested on 15 samples a side"

# A/B
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/B"
is "$RC" 0 "A/B: exit 0 without --gate"
like "$OUT" "^[0-9]+ regressions?:\n  B: workloads linear blocked per-tensor fp16 batch 16 seq 64 time: [0-9.]+ -> [0-9.]+ ms \(\+[0-9.]+%, p=[0-9.e-]+ after Holm, repetitions of one run only\)" \
    "A/B: the regressions listed, the blocked time first, on the repetitions of one run"
note "A/B verdicts:" "$OUT"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/B" --gate
like "$RC:$ERR" "^2:gpumem compare: --gate: no point can be gated" "A/B without rounds under --gate: not gated either, exit 2"
printf '%s' "$ERR" | grep -q regression; ok $((1 - $?)) "  and no regression claimed"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/B" --format csv
printf '%s\n' "$OUT" >"$TEST_TMP/ab.csv"
is "$(csv_count "$TEST_TMP/ab.csv" '$_->{variant} eq "blocked" && $_->{verdict} eq "regression" && $_->{p_holm} < 0.05')" 4 \
    "A/B CSV: time, throughput, bandwidth and tokens of the blocked point flagged, significant after Holm"
is "$(csv_value "$TEST_TMP/ab.csv" '$_->{variant} eq "blocked" && $_->{metric} eq "time"' ratio | perl -ne 'print $_ > 1.05 ? "slower" : "not slower"')" \
    slower "A/B CSV: the one-thread run is slower by more than the threshold"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/B" --format markdown
like "$OUT" "^## Verdict\n\n[0-9]+ regressions?:\n- B: workloads linear blocked" "A/B Markdown: the verdict lists them"
like "$OUT" "^\| workloads linear blocked per-tensor fp16 batch 16 seq 64 \| time \| ms \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \[[0-9.]+, [0-9.]+\] \| [0-9.e-]+ \| [0-9.]+% \| reps only \| REGRESSION \|$" \
    "A/B Markdown: the point's row with medians, ratio, interval, p, MDE, units and verdict"

# One run a side without rounds: the table says the test cannot see run-to-run noise.
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/B"
like "$OUT" "^WARNING: 4 tests compare one run a side without rounds" "A/B without rounds: the table warns it cannot separate run-to-run noise"
is "$(csv_count "$TEST_TMP/ab.csv" '$_->{variant} eq "blocked" && $_->{basis} eq "reps" && $_->{run_noise_seen} eq "0" && $_->{mde} > 0')" 4 \
    "A/B CSV without rounds: basis reps, run_noise_seen 0, an MDE on every row"

# Rounds: 10 repetitions in 5 rounds a side, judged on the round medians.
rounds_args="$bench_args --reps 10 --rounds 5 --warmup 2"
# A rounds pair that the gate flags is measured again, up to three pairs,
# as the A/A pair above; its own neighbours decide whether it is judged.
for attempt in 1 2 3; do
    # shellcheck disable=SC2086
    same_pair R1 R2 $rounds_args
    rc1=$RC
    [ "$RC" = 0 ] || break
    "$GPUMEM" compare "$TEST_TMP/R1" "$TEST_TMP/R2" --gate >/dev/null 2>&1 && break
    note "A/A rounds pair $attempt: gated between identical runs (other work: $others cores); measuring again"
done
# shellcheck disable=SC2086
POCL_MAX_PTHREAD_COUNT=1 POCL_WORK_GROUP_METHOD=loops run_gpumem $rounds_args --out "$TEST_TMP/RB"
is "$rc1 $RC" "0 0" "runs R1, R2 and RB in 5 rounds"
run_gpumem compare "$TEST_TMP/R1" "$TEST_TMP/R2" --format csv
printf '%s\n' "$OUT" >"$TEST_TMP/rr.csv"
is "$(csv_count "$TEST_TMP/rr.csv" '$_->{variant} eq "blocked" && $_->{test} eq "t" && $_->{basis} eq "rounds" && $_->{units_base} == 5 && $_->{units} == 5 && $_->{run_noise_seen} eq "1" && $_->{mde} > 0')" 4 \
    "A/A in rounds: each metric tested on 5 round medians a side, with its MDE"
run_gpumem compare "$TEST_TMP/R1" "$TEST_TMP/R2" --gate
printf "%s" "$OUT" | grep -q WARNING; ok $((1 - $?)) "A/A in rounds: no warning about run-to-run noise"
note "A/A in rounds:" "$(printf '%s\n' "$OUT" | sed -n '/^point/,$p')"
if [ "$quiet" = 1 ]; then
    is "$RC" 0 "A/A in rounds: exit 0 under --gate"
else
    skip "A/A verdict not judged: other work took $others cores of this machine meanwhile"
fi
run_gpumem compare "$TEST_TMP/R1" "$TEST_TMP/R2" --gate --threshold 0.1%
like "$ERR" "^gpumem compare: --gate: cannot see a 0.1% change in 4 of 4 gated points \(MDE [0-9.]+%-[0-9.]+%\): workloads linear blocked per-tensor fp16 batch 16 seq 64 [a-z]+, .*; bench with more rounds" \
    "a gate names, on one line, the points whose MDE exceeds its threshold"
run_gpumem compare "$TEST_TMP/R1" "$TEST_TMP/RB" --gate
is "$RC" 1 "A/B in rounds: exit 1 under --gate"
like "$ERR" "blocked per-tensor fp16 batch 16 seq 64 time: [0-9.]+ -> [0-9.]+ ms \(\+[0-9.]+%, p=[0-9.e-]+ after Holm, t test on round medians\)" \
    "A/B in rounds: the blocked time listed, judged on the round medians"
run_gpumem compare "$TEST_TMP/R1,$TEST_TMP/R2" "$TEST_TMP/RB" --format csv
printf '%s\n' "$OUT" >"$TEST_TMP/group.csv"
is "$(csv_count "$TEST_TMP/group.csv" '$_->{variant} eq "blocked" && $_->{basis} eq "runs" && $_->{units_base} == 2 && $_->{units} == 1 && $_->{base_run} eq "R1+1"')" 5 \
    "BASE1,BASE2 NEW: a group of two baseline runs, the runs as units"

# Three runs, files and overlay plots
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/A2" "$TEST_TMP/B" --out "$TEST_TMP/cmp"
like "$RC $OUT" "^0 .*\n(.|\n)*^point +metric +unit +A1 +A2 +ratio \[95% CI\] +p \(Holm\) +MDE +units +verdict +B +ratio" \
    "three runs: a column group per run against BASE"
is "$(csv_count "$TEST_TMP/cmp/compare.csv" '$_->{run} eq "B" && $_->{verdict} eq "regression"')-$(csv_count "$TEST_TMP/cmp/compare.csv" '$_->{run} eq "A2" && $_->{verdict} eq "regression"')" \
    "$(csv_count "$TEST_TMP/ab.csv" '$_->{verdict} eq "regression"')-$(csv_count "$TEST_TMP/aa.csv" '$_->{verdict} eq "regression"')" \
    "compare.csv: a column group per run, the same verdicts as each pair alone"
grep -q '^## Results' "$TEST_TMP/cmp/compare.md"
ok $? "compare.md written"
png=$(head -c 8 "$TEST_TMP/cmp/throughput.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')
[ "$png" = 89504e470d0a1a0a ] && grep -q '<svg' "$TEST_TMP/cmp/throughput.svg" && \
    [ "$(grep -c '^"[A-Z0-9]*: ' "$TEST_TMP/cmp/data/throughput.all.dat")" -ge 3 ] && \
    [ -z "$(ls "$TEST_TMP/cmp" | grep -v -x -E 'compare\.(md|csv|html)|[a-z_]+\.(png|svg)|data')" ]
ok $? "overlay plot: throughput by batch as PNG and SVG, a line per run, gnuplot's data in data/"

# Left out
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/C"
# (the vendor's fp16 row, unsupported where the device lacks fp16, is left out too)
like "$OUT" "^left out \([0-9]+\):\n(  [^\n]*\n)*  workloads linear blocked per-tensor fp16 batch 8 seq 64 time: not in A1 \(only in C\)" \
    "points only in C are left out, with the reason"

run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/D"
like "$RC $OUT" "^0 (.|\n)*^left out \([0-9]+\):\n(  [^\n]*\n)*  workloads linear blocked per-tensor fp16 batch 16 seq 64 time: model_bytes [0-9]+ in A1, [0-9]+ in D: another shape or model" \
    "a point whose shape differs (model_bytes) is left out, not compared"

# Timed another way: a short stream kernel launched back to back (4KiB
# arrays take microseconds a launch) against one launch a rep, as a run
# from before the suite launched short kernels back to back wrote it (the
# launches note taken off); 16MiB arrays fill a rep with one launch either way.
run_gpumem bench --backend opencl --mem-limit 64MiB --suite stream --kernels copy --precision fp32 --sizes 4KiB,16MiB \
    --reps 3 --out "$TEST_TMP/S1" --quiet
mkdir -p "$TEST_TMP/S0" && cp "$TEST_TMP/S1/"* "$TEST_TMP/S0/" &&
    sed -E "s/,[0-9]+ launches back to back a rep; time is one launch's\$/,/" "$TEST_TMP/S1/results.csv" >"$TEST_TMP/S0/results.csv"
run_gpumem compare "$TEST_TMP/S0" "$TEST_TMP/S1"
like "$RC $OUT" "^0 (.|\n)*^stream copy [a-z]+ per-tensor fp32 16MiB +bandwidth (.|\n)*^left out \(2\):\n  stream copy [a-z]+ per-tensor fp32 4KiB bandwidth: 1 launch a rep in S0, [0-9]+ in S1: timed another way \(one short launch includes its fixed cost\)\n  stream copy [a-z]+ per-tensor fp32 4KiB time: 1 launch a rep in S0" \
    "one launch a rep against back to back: left out, with the counts; one launch a side: compared"
run_gpumem compare "$TEST_TMP/S1" "$TEST_TMP/S1"
like "$RC $OUT" "^0 (.|\n)*^stream copy [a-z]+ per-tensor fp32 4KiB +bandwidth " "back to back a side: compared"
# At the edge where one launch just fills a rep, the count comes out 1 in
# one run and 2 in the next (S2: S1 with its 16MiB rows at 2). Between two
# runs that launched short kernels back to back, each single launch filled
# a rep alone: compared; against a run that never did (S0): left out.
mkdir -p "$TEST_TMP/S2" && cp "$TEST_TMP/S1/"* "$TEST_TMP/S2/" &&
    sed -E "/,16777216,/s/,\$/,2 launches back to back a rep; time is one launch's/" "$TEST_TMP/S1/results.csv" \
        >"$TEST_TMP/S2/results.csv"
run_gpumem compare "$TEST_TMP/S1" "$TEST_TMP/S2"
like "$RC $OUT" "^0 (.|\n)*^stream copy [a-z]+ per-tensor fp32 16MiB +bandwidth " \
    "one launch against two, both runs launching back to back: compared"
ok "$(printf '%s' "$OUT" | grep -c 'timed another way')" "  and nothing is left out for it"
run_gpumem compare "$TEST_TMP/S0" "$TEST_TMP/S2"
like "$RC $OUT" "^0 (.|\n)*^left out \([0-9]+\):\n(  [^\n]*\n)*  stream copy [a-z]+ per-tensor fp32 16MiB bandwidth: 1 launch a rep in S0, 2 in S2: timed another way" \
    "one launch against two, from a run that never launched back to back: left out"

# Bad input
mkdir -p "$TEST_TMP/cut" && cp "$TEST_TMP/A2/"* "$TEST_TMP/cut/"
head -c 500 "$TEST_TMP/A2/results.csv" >"$TEST_TMP/cut/results.csv"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/cut"
like "$RC $ERR" "^2 gpumem compare: .*/cut/results.csv:[0-9]+: (truncated line|malformed row)" \
    "a truncated results.csv: exit 2, naming the file and line"
cp "$TEST_TMP/A2/results.csv" "$TEST_TMP/cut/" && sed -E '5s/,[^,]*,([^,]*)$/,fast,\1/' "$TEST_TMP/A2/samples.csv" >"$TEST_TMP/cut/samples.csv"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/cut"
is "$RC $ERR" "2 gpumem compare: $TEST_TMP/cut/samples.csv:5: value 'fast' is not a number" \
    "a malformed samples.csv: exit 2, naming the file and line"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/none" --threshold 5%
like "$RC $ERR" "^2 gpumem compare: .*/none: not a run folder" "a missing folder: exit 2"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/A2" --frobnicate
like "$RC $ERR" "^2 gpumem compare: unexpected argument '--frobnicate'" "an unknown option: exit 2"
done_testing
