#!/bin/sh
# A device that stops answering (GPUMEM_BACKEND_FAULT=OP:N:hang: that call
# never returns) must not hang the run: the watchdog (src/watchdog.h) ends
# it after --hang-timeout seconds with exit status 3, meta.json status
# `hung`, a message naming the call, and results.csv holding whole rows of
# finished points only; `--resume` then completes the run with exactly the
# points of an undisturbed one. Stress ends its TAP stream with a bail-out.
. tests/lib.sh
. tests/lib_files.sh
plan 22

BENCH="bench --backend opencl --mem-limit 64MiB --suite stream,workloads,swap --precision fp32
       --sizes 1MiB --kernels copy,dot --reps 1 --warmup 0 --workload linear --batch 1 --seq 16
       --hidden 64 --pattern per-tensor --blocks 64KiB --kv-block-sizes 64KiB --swap-batch 1
       --unified-sizes 1MiB --quiet"
STRESS="stress --backend opencl --mem-limit 32MiB --fill 50% --duration 1 --checks memtest,churn,concurrency"
# No test waits on a hung run for ever: past this, the watchdog failed.
GUARD=120


# guarded ARGS... : run_gpumem under the guard's timeout.
guarded() {
    timeout -s KILL "$GUARD" "$GPUMEM" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
    RC=$?
    OUT=$(cat "$TEST_TMP/out")
    ERR=$(cat "$TEST_TMP/err")
}

# A clean run under the watchdog: no call of a healthy device is judged
# hung (its kernels compiled here, maybe for the first time), and meta.json
# counts the calls of each op. The runs after it find the kernels cached
# and hang on purpose under a short limit.
guarded $BENCH --hang-timeout 60 --out "$TEST_TMP/clean"
is "$RC" 0 "a clean bench run under --hang-timeout 60: exit status 0"
point_keys "$TEST_TMP/clean/results.csv" >"$TEST_TMP/clean.keys"

for op in launch synchronize copy map alloc; do
    calls=$(json "$TEST_TMP/clean/meta.json" "\$m->{backend_calls}{$op}")
    if [ "${calls:-0}" -lt 2 ]; then
        ok 1 "bench calls $op more than once ($calls)"
        continue
    fi
    n=$((calls / 2 + 1))
    dir="$TEST_TMP/$op"
    t0=$(date +%s)
    GPUMEM_BACKEND_FAULT=$op:$n:hang guarded $BENCH --hang-timeout 2 --out "$dir"
    took=$(($(date +%s) - t0))
    why=""
    [ "$RC" -eq 3 ] || why="$why exit status $RC, want 3 (137: still hung after ${GUARD}s);"
    [ "$(json "$dir/meta.json" '$m->{status}')" = hung ] || why="$why meta.json status not hung;"
    [ -n "$(json "$dir/meta.json" '$m->{end_time}')" ] || why="$why meta.json has no end time;"
    case $ERR in *"has not answered a $op call"*"--resume $dir"*) ;; *) why="$why stderr does not name the call and the resume;" ;; esac
    whole=$(csv_whole "$dir/results.csv")
    [ "$whole" = ok ] || why="$why results.csv: $whole;"
    # Only finished points remain: as many rows as the journal's last point.
    journaled=$(awk '$1 == "point" { r = $5 } END { print r + 0 }' "$dir/points.journal")
    rows=$(($(wc -l <"$dir/results.csv") - 1))
    [ "$rows" -eq "$journaled" ] || why="$why $rows rows but $journaled journaled;"
    if [ -z "$why" ]; then
        ok 0 "bench, $op hung at call $n of $calls: exit 3 after ${took}s, status hung, $rows whole rows"
    else
        ok 1 "bench, $op hung at call $n of $calls"
        diag "$why" "$ERR"
    fi
    guarded bench --resume "$dir" --quiet
    point_keys "$dir/results.csv" >"$TEST_TMP/$op.keys"
    if [ "$RC" -eq 0 ] && cmp -s "$TEST_TMP/clean.keys" "$TEST_TMP/$op.keys"; then
        ok 0 "bench, $op: --resume completes with the points of an undisturbed run, none twice"
    else
        ok 1 "bench, $op: --resume completes with the points of an undisturbed run, none twice"
        diag "resume exit status $RC" "$ERR" "$(diff "$TEST_TMP/clean.keys" "$TEST_TMP/$op.keys" | head -5)"
    fi
done

# Stress: the TAP stream bails out naming the call.
guarded $STRESS --hang-timeout 60 --out "$TEST_TMP/stress-clean"
is "$RC" 0 "a clean stress run under --hang-timeout 60: exit status 0"
launches=$(json "$TEST_TMP/stress-clean/meta.json" '$m->{backend_calls}{launch}')
n=$((${launches:-2} / 2 + 1))
GPUMEM_BACKEND_FAULT=launch:$n:hang guarded $STRESS --hang-timeout 2 --out "$TEST_TMP/stress"
is "$RC" 3 "stress, launch hung at call $n of $launches: exit status 3"
is "$(json "$TEST_TMP/stress/meta.json" '$m->{status}')" hung "stress: meta.json status hung"
like "$(cat "$TEST_TMP/stress/stress.tap")" "Bail out! the device hung in a launch call" \
    "stress.tap ends with a bail-out naming the call"
is "$(csv_whole "$TEST_TMP/stress/results.csv")" ok "stress: results.csv whole"

# --device all: each worker has its own watchdog; devices.csv says hung.
POCL_DEVICES="pthread pthread" GPUMEM_BACKEND_FAULT=launch:5:hang guarded bench --backend opencl \
    --mem-limit 64MiB --suite stream --sizes 1MiB --kernels copy --reps 1 --quiet --device all \
    --hang-timeout 2 --out "$TEST_TMP/devices"
is "$RC" 3 "--device all with every device hung: exit status 3"
is "$(csv_count "$TEST_TMP/devices/devices.csv" '$_->{result} eq "exit status 3 (hung)"')" 2 \
    "devices.csv: both workers 'exit status 3 (hung)'"

# The switch and the option refuse what they cannot mean.
run_gpumem $BENCH --hang-timeout -1 --out "$TEST_TMP/bad1"
is "$RC" 2 "--hang-timeout -1 refused: exit status 2"
run_gpumem $STRESS --hang-timeout soon --out "$TEST_TMP/bad2"
is "$RC" 2 "stress --hang-timeout soon refused: exit status 2"
GPUMEM_BACKEND_FAULT=launch:1:stall run_gpumem $BENCH --out "$TEST_TMP/bad3"
is "$RC" 2 "an unknown fault mode refused: exit status 2"
like "$ERR" "lost, oom, leak or hang" "the message lists the modes"

done_testing
