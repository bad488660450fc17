#!/bin/sh
# Every product's output checked whole on the OpenCL device: linear (our
# kernel and CLBlast's GEMM), attention, kvcache, a shape of blocks, the
# whole model (a tiny preset, inference and a training step, ours and the
# vendor's) and a serving step, in every precision each runs. Without a
# fault every point is `ok` with a verify_time row; with
# GPUMEM_FAULT=corrupt-output (one element anywhere in the output
# overwritten) or flip-output-bit (one bit a tolerance must see flipped,
# output_fault.h), over two seeds (the sanitizer pass runs the first, and
# for the block, the serving step and the whole model the first kind),
# every point is a mismatch row and none is `ok`. Each shape is past what
# the host checks alone: linear's output
# (16 x 8192) past its exact check's whole-output size (its checksums find
# the element); attention's 520 query rows past the host's 512 (the device
# verify kernel checks every row); kvcache's 36 query rows past the host's
# 32; the block's 256 tokens past the host's sample of rows (the output's
# checksums); the serving step's 6 logit rows past the 4 the host checks
# (the step's whole logits against a replay). For those four, every
# mismatch names the element the fault struck at that point.
. tests/lib.sh
plan 34

# sweep NAME WHERE ARGS...: runs the workloads suite with ARGS, without a
# fault, then under each fault and seed; checks every point of each run.
# WHERE (Perl, may be empty): true when the mismatch row's note ($_) names
# element $s, the one the fault struck at that point (its stderr line, in
# the order of the points).
sweep() {
    name=$1
    where=$2
    shift 2
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
            # The sanitizer pass: seed 1, and for the block, the serving
            # step and the whole model (the longest runs) the first kind.
            if sanitizer_pass && { [ "$seed" != 1 ] || { [ "$fault" = flip-output-bit ] &&
                case $name in block | serve | model) true ;; *) false ;; esac; }; }; then
                skip "$name, $fault, seed $seed: the plain pass runs it"
                continue
            fi
            GPUMEM_FAULT=$fault GPUMEM_FAULT_SEED=$seed run_gpumem bench --backend opencl \
                --mem-limit "$TEST_MEM_LIMIT" --suite workloads --reps 1 --warmup 0 \
                --out "$TEST_TMP/$name-$fault-$seed" --quiet "$@"
            csv=$TEST_TMP/$name-$fault-$seed/results.csv
            got="$RC:$(csv_count "$csv" '$_->{metric} eq "time" && $_->{status} eq "mismatch"'):$(csv_count "$csv" \
                '$_->{status} eq "ok"')"
            if [ -n "$where" ]; then
                STRUCK=$(printf '%s\n' "$ERR" | sed -n 's/^gpumem: fault: .* struck element \([0-9]*\) of .*/\1/p' \
                    | tr '\n' ' ')
                export STRUCK
                named=$(csv_count "$csv" '$_->{metric} eq "time" && $_->{status} eq "mismatch"
                    && do { my $s = (split " ", $ENV{STRUCK})[$main::at++]; defined $s && do { local $_ = $_->{note}; '"$where"' } }')
                is "$got:$named" "1:$points:0:$points" \
                    "$name, $fault, seed $seed: $points mismatch rows, none ok, each naming the struck element"
            else
                is "$got" "1:$points:0" "$name, $fault, seed $seed: $points mismatch rows, none ok"
            fi
        done
    done
}

sweep linear "" --workload linear --precision fp32,fp16,bf16,int8,fp8e4m3,fp8e5m2 --batch 1 --seq 16 --hidden 64 \
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
sweep attention '/^o: element (\d+) / && $1 == $s' --workload attention --precision fp32,fp16,bf16,int8 \
    --batch 1 --seq 260 --hidden 32 --heads 2 --causal
sweep kvcache '/^out: element (\d+) / && $1 == $s' --workload kvcache --precision fp32,fp16,bf16,int8 --batch 3 \
    --seq 21 --hidden 96 --heads 12 --layers 2 --block-tokens 4
sweep block '/^layer 1 block_output\[(\d+)\]\[(\d+)\]:/ && $1 * 64 + $2 == $s' --workload block \
    --precision fp32,fp16,bf16,int8,fp8e4m3,fp8e5m2 --batch 2 --hidden 64 --heads 4 --layers 2 --seq 128
# At least one of the block's faults lay outside the rows the host checks
# stage by stage: the output's checksums found it.
by_sums=$(cat "$TEST_TMP"/block-*/results.csv | grep -c "found by the output's checksums")
is "$([ "$by_sums" -gt 0 ] && echo found)" found \
    "the block's checksums find struck elements the sampled rows miss ($by_sums of 24 mismatches)"
sweep serve '/^logits of the step against its replay: element (\d+) / && $1 == $s' --workload serve --mode serve \
    --model tiny-serve --precision fp32,bf16 --batch 6 --seq 40
sweep model "" --workload block --model tiny-llama-gqa --mode inference,train --precision fp32,bf16 --batch 2 \
    --seq 16 --variant all
is "$(csv_count "$TEST_TMP/model/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{variant} eq "clblast"')" 2 \
    "the whole model's vendor path (CLBlast) is among them, inference and training"
done_testing
