#!/bin/sh
# On a CUDA device (skipped without one): the memory model's bytes match
# what the device's free memory says each workload took, within 5%, at
# shapes large enough (hundreds of MiB) that the allocator's granularity
# does not count.
. tests/lib.sh
./gpumem info 2>/dev/null | grep -q '^  cuda:0 ' || skip_all "no CUDA device here"
plan 3
# kvcache decodes token by token (its attention is one work item per
# sequence), so it runs at a shorter sequence: 256MiB of cache still.
run_gpumem bench --backend cuda --suite workloads --workload linear,attention,block --precision fp32,bf16 \
    --batch 32 --seq 1024 --hidden 2048 --heads 16 --layers 2 --reps 1 --warmup 0 --out "$TEST_TMP/model" --quiet
is "$RC" 0 "large points run on the GPU"
run_gpumem bench --backend cuda --suite workloads --workload kvcache --precision fp32,bf16 \
    --batch 32 --seq 256 --hidden 2048 --heads 16 --layers 2 --reps 1 --warmup 0 --out "$TEST_TMP/kv" --quiet
is "$RC" 0 "and the KV cache's"
is "$(cat "$TEST_TMP/model/results.csv" "$TEST_TMP/kv/results.csv" >"$TEST_TMP/all.csv"; csv_count "$TEST_TMP/all.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && ($_->{measured_bytes} < 0.95 * $_->{model_bytes} || $_->{measured_bytes} > 1.05 * $_->{model_bytes})')" 0 \
    "every point's measured bytes are within 5% of the model's"
done_testing
