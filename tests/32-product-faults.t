#!/bin/sh
# Every product's output checked whole on the OpenCL device: linear (our
# kernel and CLBlast's GEMM), attention, kvcache, a shape of blocks and the
# whole model (a tiny preset, inference and a training step, ours and the
# vendor's), in every precision each runs. Without a fault every point is
# `ok` with a verify_time row; with GPUMEM_FAULT=corrupt-output (one element
# anywhere in the output overwritten) or flip-output-bit (one bit a
# tolerance must see flipped, output_fault.h), over two seeds, every point
# is a mismatch row and none is `ok`. linear's output (16 x 8192) is past
# its exact check's whole-output size, so its checksums find the element:
# the mismatch names the one the fault struck.
. tests/lib.sh
plan 28

# sweep NAME ARGS...: runs the workloads suite with ARGS, without a fault,
# then under each fault and seed; checks every point of each run.
sweep() {
    name=$1
    shift
    run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --reps 1 --warmup 0 \
        --out "$TEST_TMP/$name" --quiet "$@"
    csv=$TEST_TMP/$name/results.csv
    points=$(csv_count "$csv" '$_->{metric} eq "time" && $_->{status} ne "unsupported"')
    is "$RC:$(csv_count "$csv" '$_->{metric} eq "time" && $_->{status} eq "ok"'):$(csv_count "$csv" \
        '$_->{metric} eq "verify_time" && $_->{unit} eq "ms" && $_->{value} > 0')" "0:$points:$points" \
        "$name: without a fault, $points points ok, each with its check's time"
    [ "$RC" -eq 0 ] || diag "$ERR"
    for fault in corrupt-output flip-output-bit; do
        for seed in 1 2; do
            GPUMEM_FAULT=$fault GPUMEM_FAULT_SEED=$seed run_gpumem bench --backend opencl \
                --mem-limit "$TEST_MEM_LIMIT" --suite workloads --reps 1 --warmup 0 \
                --out "$TEST_TMP/$name-$fault-$seed" --quiet "$@"
            csv=$TEST_TMP/$name-$fault-$seed/results.csv
            is "$RC:$(csv_count "$csv" '$_->{metric} eq "time" && $_->{status} eq "mismatch"'):$(csv_count "$csv" \
                '$_->{status} eq "ok"')" "1:$points:0" "$name, $fault, seed $seed: $points mismatch rows, none ok"
        done
    done
}

sweep linear --workload linear --precision fp32,fp16,bf16,int8,fp8e4m3,fp8e5m2 --batch 1 --seq 16 --hidden 64 \
    --out-features 8192
# The checksums place the struck element: its column's sum fails, and
# where its row's sum fails too (a row of 8192 int8 outputs carries more
# rounding than one element's error) the note names the element.
for fault in corrupt-output flip-output-bit; do
    GPUMEM_FAULT=$fault GPUMEM_FAULT_SEED=4 run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" \
        --suite workloads --workload linear --precision fp32,bf16,int8 --batch 1 --seq 16 --hidden 64 \
        --out-features 8192 --reps 1 --warmup 0 --out "$TEST_TMP/where-$fault" --quiet
    csv=$TEST_TMP/where-$fault/results.csv
    struck=$(printf '%s\n' "$ERR" | sed -n 's/^gpumem: fault: .* struck element \([0-9]*\) of 131072.*/\1/p' | head -n 1)
    s=${struck:-0}
    found=$(csv_count "$csv" '$_->{metric} eq "time" && $_->{status} eq "mismatch"
        && $_->{note} =~ /^y: checksums: column (\d+)\x27s sum/ && $1 == '"$s"' % 8192
        && ($_->{note} !~ /element/ || ($_->{note} =~ /element \[(\d+)\]\[(\d+)\]$/ && $1 * 8192 + $2 == '"$s"'))')
    elements=$(csv_count "$csv" '$_->{note} =~ /element \[\d+\]\[\d+\]$/')
    is "${struck:+struck}:$found:$elements" "struck:4:3" \
        "linear, $fault: all 4 mismatches name the struck element's column ($struck), 3 the element itself"
done
sweep attention --workload attention --precision fp32,fp16,bf16,int8 --batch 2 --seq 24 --hidden 96 --heads 3
sweep kvcache --workload kvcache --precision fp32,fp16,bf16,int8 --batch 2 --seq 21 --hidden 48 --heads 3 \
    --layers 2 --block-tokens 4
sweep block --workload block --precision fp32,fp16,bf16,int8,fp8e4m3,fp8e5m2 --batch 2 --hidden 64 --heads 4 \
    --layers 2 --seq 24
sweep model --workload block --model tiny-llama-gqa --mode inference,train --precision fp32,bf16 --batch 2 \
    --seq 16 --variant all
is "$(csv_count "$TEST_TMP/model/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{variant} eq "clblast"')" 2 \
    "the whole model's vendor path (CLBlast) is among them, inference and training"
done_testing
