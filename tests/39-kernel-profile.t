#!/bin/sh
# GPUMEM_KERNEL_PROFILE=1 (src/backend/kernel_profile.h): an oom probe
# worker prints, after each phase of a probe, the device time of its
# launches by kernel (worker.log), and the main process what is left when
# its device closes; the launches counted are the kernels really run, and
# the results are the same as without it. Without it nothing is printed.
. tests/lib.sh
plan 8

# The worker's wire format: bench/oom/probe.h (block = 2, per-tensor = 0,
# bf16 = 2): one probe of batch 2, seq 16 of the tiny GQA model (4 layers,
# 8 query heads on 2 KV heads).
printf 'point 2 tiled 0 2 2 16 0\n' >"$TEST_TMP/requests"
GPUMEM_KERNEL_PROFILE=1 "$GPUMEM" __worker oom.cpu --backend opencl --workload block --model tiny-llama-gqa \
    --precision bf16 --mem-limit 256MiB <"$TEST_TMP/requests" >"$TEST_TMP/answers" 2>"$TEST_TMP/log"
is "$?-$(grep -c '^result 0 ' "$TEST_TMP/answers")" "0-1" "profiled: the probe fits and verifies"
run=$(sed -n "/^kernel profile of the probe's run:/,/^[^ ]/p" "$TEST_TMP/log")
like "$run" "^kernel profile of the probe's run: \\d+ launches, [0-9.]+ ms of device time" \
    "the run's profile is printed, with its launches and device time"
# One attention launch a layer (its 8 heads at once), one LM head.
like "$run" "^  attention_tiled +4 launches " "attention: one launch a layer, every head in it"
like "$run" "^  model_lm_head +1 launches " "the LM head: one launch"
total=$(printf '%s\n' "$run" | sed -n "1s/.*: \\([0-9]*\\) launches.*/\\1/p")
sum=$(printf '%s\n' "$run" | awk '/^  / {n += $2} END {print n + 0}')
is "$sum" "$total" "the kernels' launches add up to the phase's ($total)"
grep -q "^kernel profile of the probe's verification: " "$TEST_TMP/log"
ok $? "the verification's replay is profiled too"

"$GPUMEM" __worker oom.cpu --backend opencl --workload block --model tiny-llama-gqa --precision bf16 \
    --mem-limit 256MiB <"$TEST_TMP/requests" >"$TEST_TMP/answers2" 2>"$TEST_TMP/log2"
is "$(grep -c 'kernel profile' "$TEST_TMP/log2")-$(grep -c '^result 0 ' "$TEST_TMP/answers2")" "0-1" \
    "without the switch nothing is printed, and the probe fits alike"

GPUMEM_KERNEL_PROFILE=1 "$GPUMEM" bench --backend opencl --mem-limit 128MiB --suite stream --kernels copy \
    --precision fp32 --sizes 16MiB --reps 2 --warmup 1 --out "$TEST_TMP/stream" --quiet 2>"$TEST_TMP/err"
rc=$?
# The warm-up, the launch that sets a rep's launches (its note: N launches
# back to back a rep; none: 1), then 2 reps of N.
n=$(perl -ne 'if (/(\d+) launches back to back/) { print $1; exit }' "$TEST_TMP/stream/results.csv")
like "$rc:$(cat "$TEST_TMP/err")" "^0:(?s:.*)kernel profile \\(until the device closed\\): (?s:.*)^  stream_copy +$((2 + 2 * ${n:-1})) launches " \
    "the main process prints its launches at close: stream copy, warm-up, setting and reps ($((2 + 2 * ${n:-1})))"
done_testing
