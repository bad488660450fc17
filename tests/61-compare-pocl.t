#!/bin/sh
# gpumem compare on real PoCL runs: two runs of one configuration (A/A)
# show no regression at the default settings and pass --gate; the same
# configuration with PoCL held to one thread (A/B) is flagged and fails
# --gate, listing the regressions; Markdown, CSV and overlay plots; points
# only one run has, or measured on another shape, are left out with the
# reason; a cut or malformed CSV
# exits 2 naming the file and line.
. tests/lib.sh
command -v gnuplot >/dev/null || skip_all "gnuplot not installed (Debian: gnuplot-nox)"
plan 25

# A compute-bound point (about 9 ms a repetition on two threads), 15
# repetitions a side: enough for the U test to pass Holm when it is slower.
bench() {
    run_gpumem bench --backend opencl --mem-limit 64MiB --suite workloads --workload linear --seq 64 --hidden 256 \
        --precision fp16 --warmup 2 --quiet "$@"
}
bench --batch 16 --reps 15 --out "$TEST_TMP/A1"
is "$RC" 0 "run A1"
bench --batch 16 --reps 15 --out "$TEST_TMP/A2"
is "$RC" 0 "run A2, the same configuration"
POCL_MAX_PTHREAD_COUNT=1 bench --batch 16 --reps 15 --out "$TEST_TMP/B"
is "$RC" 0 "run B, PoCL limited to one thread"
bench --batch 8,16 --reps 3 --out "$TEST_TMP/C"
is "$RC" 0 "run C, another batch list"
run_gpumem bench --backend opencl --mem-limit 64MiB --suite workloads --workload linear --seq 64 --hidden 128 \
    --precision fp16 --quiet --batch 16 --reps 3 --out "$TEST_TMP/D"
is "$RC" 0 "run D, another hidden size"

# A/A
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/A2" --gate
is "$RC" 0 "A/A: exit 0 under --gate"
like "$OUT" "^no regression$" "A/A: no regression"
diag "A/A verdicts:" "$(printf '%s\n' "$OUT" | sed -n '/^point/,$p')"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/A2" --format csv
is "$(printf '%s\n' "$OUT" >"$TEST_TMP/aa.csv"; csv_count "$TEST_TMP/aa.csv" '$_->{verdict} eq "regression"')" 0 \
    "A/A CSV: no regression row"
is "$(csv_count "$TEST_TMP/aa.csv" '$_->{variant} eq "blocked" && $_->{test} eq "mann-whitney" && $_->{n} == 15')" 4 \
    "A/A CSV: the blocked point's four metrics, each tested on 15 samples a side"

# A/B
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/B" --gate
is "$RC" 1 "A/B: exit 1 under --gate"
like "$ERR" "^gpumem compare: [0-9]+ regressions? against A1:\n  B: workloads linear blocked per-tensor fp16 batch 16 seq 64 time: [0-9.]+ -> [0-9.]+ ms \(\+[0-9.]+%, p=" \
    "A/B: the regressions listed on stderr, the blocked time first"
diag "A/B verdicts:" "$OUT"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/B" --format csv
printf '%s\n' "$OUT" >"$TEST_TMP/ab.csv"
is "$(csv_count "$TEST_TMP/ab.csv" '$_->{variant} eq "blocked" && $_->{verdict} eq "regression" && $_->{p_holm} < 0.05')" 4 \
    "A/B CSV: time, throughput, bandwidth and tokens of the blocked point flagged, significant after Holm"
is "$(csv_value "$TEST_TMP/ab.csv" '$_->{variant} eq "blocked" && $_->{metric} eq "time"' ratio | perl -ne 'print $_ > 1.05 ? "slower" : "not slower"')" \
    slower "A/B CSV: the one-thread run is slower by more than the threshold"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/B" --format markdown
like "$OUT" "^## Verdict\n\n[0-9]+ regressions?:\n- B: workloads linear blocked" "A/B Markdown: the verdict lists them"
like "$OUT" "^\| workloads linear blocked per-tensor fp16 batch 16 seq 64 \| time \| ms \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \[[0-9.]+, [0-9.]+\] \| [0-9.e-]+ \| REGRESSION \|$" \
    "A/B Markdown: the point's row with medians, ratio, interval, p and verdict"

# Three runs, files and overlay plots
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/A2" "$TEST_TMP/B" --out "$TEST_TMP/cmp"
like "$RC $OUT" "^0 .*\n(.|\n)*^point +metric +unit +A1 +A2 +ratio \[95% CI\] +p \(Holm\) +verdict +B +ratio" \
    "three runs: a column group per run against BASE"
is "$(csv_count "$TEST_TMP/cmp/compare.csv" '$_->{run} eq "B" && $_->{verdict} eq "regression"')-$(csv_count "$TEST_TMP/cmp/compare.csv" '$_->{run} eq "A2" && $_->{verdict} eq "regression"')" \
    "$(csv_count "$TEST_TMP/ab.csv" '$_->{verdict} eq "regression"')-0" "compare.csv: B's regressions, none for A2"
grep -q '^## Results' "$TEST_TMP/cmp/compare.md"
ok $? "compare.md written"
png=$(head -c 8 "$TEST_TMP/cmp/throughput.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')
[ "$png" = 89504e470d0a1a0a ] && grep -q '<svg' "$TEST_TMP/cmp/throughput.svg" && \
    [ "$(grep -c '^"[A-Z0-9]*: ' "$TEST_TMP/cmp/throughput.all.dat")" -ge 3 ]
ok $? "overlay plot: throughput by batch as PNG and SVG, a line per run"

# Left out
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/C"
like "$OUT" "^left out \(4\):\n  workloads linear blocked per-tensor fp16 batch 8 seq 64 time: not in A1 \(only in C\)" \
    "points only in C are left out, with the reason"

run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/D" --gate
like "$RC $OUT" "^0 (.|\n)*^left out \(4\):\n  workloads linear blocked per-tensor fp16 batch 16 seq 64 time: model_bytes [0-9]+ in A1, [0-9]+ in D: another shape or model" \
    "a point whose shape differs (model_bytes) is left out, not compared"

# Bad input
mkdir -p "$TEST_TMP/cut" && cp "$TEST_TMP/A2/"* "$TEST_TMP/cut/"
head -c 500 "$TEST_TMP/A2/results.csv" >"$TEST_TMP/cut/results.csv"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/cut"
like "$RC $ERR" "^2 gpumem compare: .*/cut/results.csv:[0-9]+: (truncated line|malformed row)" \
    "a truncated results.csv: exit 2, naming the file and line"
cp "$TEST_TMP/A2/results.csv" "$TEST_TMP/cut/" && sed '5s/,[^,]*$/,fast/' "$TEST_TMP/A2/samples.csv" >"$TEST_TMP/cut/samples.csv"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/cut"
is "$RC $ERR" "2 gpumem compare: $TEST_TMP/cut/samples.csv:5: value 'fast' is not a number" \
    "a malformed samples.csv: exit 2, naming the file and line"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/none" --threshold 5%
like "$RC $ERR" "^2 gpumem compare: .*/none: not a run folder" "a missing folder: exit 2"
run_gpumem compare "$TEST_TMP/A1" "$TEST_TMP/A2" --frobnicate
like "$RC $ERR" "^2 gpumem compare: unexpected argument '--frobnicate'" "an unknown option: exit 2"
done_testing
