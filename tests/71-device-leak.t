#!/bin/sh
# The device leak check at the end of every bench and stress run: a normal
# run reports none; a buffer deliberately kept from the driver
# (GPUMEM_BACKEND_FAULT=free:N:leak, test-only) is noticed by bench and by
# stress: a message, meta.json's device_leak_check, exit status 1, and no
# row lost.
. tests/lib.sh
plan 12

BENCH="bench --backend opencl --mem-limit 64MiB --suite stream,workloads --precision fp32 --sizes 1MiB
       --kernels copy,triad --reps 1 --warmup 0 --workload linear --batch 1 --seq 16 --hidden 64 --quiet"
STRESS="stress --backend opencl --mem-limit 32MiB --duration 1 --checks churn,oom-recovery"

run_gpumem $BENCH --out "$TEST_TMP/bench"
is "$RC" 0 "bench without a leak: exit status 0"
[ "$RC" = 0 ] || diag "$ERR"
is "$(json "$TEST_TMP/bench/meta.json" '$m->{device_leak_check}{result}')" ok "bench without a leak: meta.json says ok"
rows=$(csv_count "$TEST_TMP/bench/results.csv" 1)

GPUMEM_BACKEND_FAULT=free:3:leak run_gpumem $BENCH --out "$TEST_TMP/bench-leak"
is "$RC" 1 "bench with a buffer leaked: exit status 1"
like "$ERR" '^gpumem bench: device memory leak: still held at the end beyond the start: 1 buffers, \d+ bytes$' \
    "bench with a leak: one message naming what is still held"
is "$(json "$TEST_TMP/bench-leak/meta.json" '$m->{device_leak_check}{result} . " " . $m->{device_leak_check}{live_at_end}{buffers} . " " . $m->{status}')" \
    "leak 1 failed" "bench with a leak: meta.json device_leak_check says so, status failed"
is "$(csv_count "$TEST_TMP/bench-leak/results.csv" '$_->{status} eq "ok"')" "$rows" "bench with a leak: every row still written"

run_gpumem $STRESS --out "$TEST_TMP/stress"
is "$RC" 0 "stress without a leak: exit status 0"
[ "$RC" = 0 ] || diag "$ERR"
is "$(json "$TEST_TMP/stress/meta.json" '$m->{device_leak_check}{result}')" ok "stress without a leak: meta.json says ok"

GPUMEM_BACKEND_FAULT=free:5:leak run_gpumem $STRESS --out "$TEST_TMP/stress-leak"
is "$RC" 1 "stress with a buffer leaked: exit status 1"
like "$ERR" 'gpumem stress: device memory leak: still held at the end beyond the start: 1 buffers' \
    "stress with a leak: says so"
like "$OUT" '^# device memory leak: ' "stress with a leak: the TAP stream says so"
is "$(json "$TEST_TMP/stress-leak/meta.json" '$m->{device_leak_check}{result} . " " . $m->{status}')" "leak failed" \
    "stress with a leak: meta.json says so"
done_testing
