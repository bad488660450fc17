#!/bin/sh
# SIGINT and SIGTERM in the middle of a run: bench and stress stop at the
# next point, exit 130 / 143, meta.json gets its end time and status
# `interrupted`, results.csv holds whole points only, no worker process is
# left; `gpumem bench --resume` then finishes the run with exactly the
# points of an uninterrupted one.
. tests/lib.sh
. tests/lib_files.sh
plan 26

A="bench --backend opencl --mem-limit 32MiB --suite stream --sizes 64KiB:4MiB:x2 --precision fp32,fp16
   --kernels copy,triad,dot --reps 3 --warmup 0 --quiet"
run_gpumem $A --out "$TEST_TMP/ref"
is "$RC" 0 "an uninterrupted run"
point_keys "$TEST_TMP/ref/results.csv" >"$TEST_TMP/ref.keys"

# meta_field FILE KEY : a top-level string (or null) of meta.json.
meta_field() { perl -MJSON::PP -e 'my $m = decode_json(do { local $/; <STDIN> }); print $m->{$ARGV[0]} // "null"' "$2" <"$1"; }

# wait_for COMMAND... : polls (every 0.05 s, up to 20 s) until COMMAND succeeds.
wait_for() { n=0; until "$@" || [ $n -ge 400 ]; do sleep 0.05; n=$((n + 1)); done; }
has_points() { grep -q '^point ' "$1/points.journal" 2>/dev/null; }
tagged() { grep -l "GM_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | grep -v "^/proc/$pid/"; }

# The journal's finished rows equal results.csv's rows: no part of a point.
journal_rows() { awk '$1 == "point" { r = $5 } END { print r + 0 }' "$1/points.journal"; }

for sig in INT TERM; do
    want=$([ $sig = INT ] && echo 130 || echo 143)
    run=$TEST_TMP/$sig
    "$GPUMEM" $A --out "$run" >"$TEST_TMP/$sig.out" 2>"$TEST_TMP/$sig.err" &
    pid=$!
    wait_for has_points "$run"     # under way: some points finished, not all
    kill -$sig $pid
    wait $pid
    is "$?" "$want" "SIG$sig: exit status $want"
    like "$(cat "$TEST_TMP/$sig.err")" "interrupted by .* continue with gpumem bench --resume $run" \
        "SIG$sig: one message saying how to continue"
    is "$(meta_field "$run/meta.json" status)" interrupted "SIG$sig: meta.json status interrupted"
    like "$(meta_field "$run/meta.json" end_time)" "^[0-9]{4}-[0-9]{2}-[0-9]{2}T" "SIG$sig: meta.json has the end time"
    rows=$(csv_count "$run/results.csv" 1)
    ok "$([ "$(csv_whole "$run/results.csv")" = ok ] && [ "$rows" -gt 0 ] && [ "$rows" -lt 84 ] \
          && [ "$rows" = "$(journal_rows "$run")" ]; echo $?)" \
        "SIG$sig: results.csv whole, $rows rows, all of finished points"
    run_gpumem bench --resume "$run" --quiet
    is "$RC" 0 "SIG$sig: resumed to its end"
    point_keys "$run/results.csv" | cmp -s - "$TEST_TMP/ref.keys"
    ok $? "SIG$sig: the resumed run's points equal the uninterrupted run's"
done

# The oom suite's probes run in worker processes: SIGTERM to the main
# process leaves none behind. GM_TEST_TAG marks this test's processes.
tag="gpumem-interrupt-$$"
GM_TEST_TAG=$tag "$GPUMEM" bench --backend opencl --mem-limit 64MiB --suite oom --workload linear \
    --seq 16 --hidden 64 --precision fp32 --quiet --out "$TEST_TMP/oom" \
    >/dev/null 2>"$TEST_TMP/oom.err" &
pid=$!
wait_for tagged >/dev/null
workers=$(tagged | grep -c .)
kill -TERM $pid
wait $pid
is "$?" 143 "oom suite, SIGTERM: exit status 143"
note "$workers worker process(es) were running"
sleep 0.2
left=$(grep -l "GM_TEST_TAG=$tag" /proc/[0-9]*/environ 2>/dev/null | wc -l)
is "$left" 0 "oom suite, SIGTERM: no worker process left"
is "$(meta_field "$TEST_TMP/oom/meta.json" status)" interrupted "oom suite: meta.json status interrupted"

# gpumem stress: the soak loop sees the signal; the run stops within a
# second, not at the end of its 20 s.
for sig in INT TERM; do
    want=$([ $sig = INT ] && echo 130 || echo 143)
    "$GPUMEM" stress --backend opencl --mem-limit 32MiB --checks churn,soak --duration 20 --fill 10% \
        --out "$TEST_TMP/stress-$sig" >"$TEST_TMP/stress.out" 2>"$TEST_TMP/stress.err" &
    pid=$!
    wait_for [ -s "$TEST_TMP/stress-$sig/stress.tap" ]
    sleep 0.5
    t0=$(date +%s)
    kill -$sig $pid
    wait $pid
    rc=$?
    t1=$(date +%s)
    is "$rc" "$want" "stress, SIG$sig: exit status $want"
    ok "$([ $((t1 - t0)) -le 3 ]; echo $?)" "stress, SIG$sig: stopped within seconds ($((t1 - t0)) s)"
    is "$(meta_field "$TEST_TMP/stress-$sig/meta.json" status)" interrupted "stress, SIG$sig: meta.json status interrupted"
    like "$(cat "$TEST_TMP/stress.out")" "not ok 1 - churn" "stress, SIG$sig: the interrupted check is not reported as passed"
done
