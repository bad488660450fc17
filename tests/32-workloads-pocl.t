#!/bin/sh
# The workloads suite on the OpenCL device: every precision and
# implementation of `linear` verified over a batch x seq sweep; points the
# memory model cannot fit under the cap are skipped with the reason; a
# wrong output is a mismatch row.
. tests/lib.sh
plan 23

out=$TEST_TMP/run
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload linear \
    --precision fp32,fp16,bf16,int8 --batch 1,3 --seq 16:64:x4 --hidden 96 --out-features 80 \
    --reps 2 --out "$out" --quiet
is "$RC" 0 "linear sweep: exit status 0"
[ -n "$ERR" ] && diag "$ERR"
# 4 precisions x 2 batches x 2 seqs with our kernel, + 4 fp32 points on
# CLBlast (its fp16 rows, which depend on cl_khr_fp16: 32-vendor-gemm-pocl.t).
not_hgemm='!($_->{variant} eq "clblast" && $_->{precision} eq "fp16")'
is "$(csv_count "$out/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && '"$not_hgemm")" 20 "20 points verified and timed"
is "$(csv_count "$out/results.csv" '$_->{status} ne "ok" && '"$not_hgemm")" 0 "no point failed"
is "$(csv_count "$out/results.csv" '$_->{variant} eq "blocked" && $_->{metric} eq "time"')" 16 \
    "the CPU device runs the register-blocked kernel in every precision"
is "$(csv_count "$out/results.csv" '$_->{variant} eq "clblast" && $_->{precision} eq "fp32" && $_->{metric} eq "time"')" 4 \
    "and CLBlast's SGEMM beside it in fp32"
# Throughput follows from the shape: 2 * (batch * seq) * hidden * out FLOPs.
is "$(csv_count "$out/results.csv" '$_->{metric} eq "throughput" && $_->{unit} eq "GFLOP/s" && $_->{value} > 0 && '"$not_hgemm")" 20 \
    "a GFLOP/s row for every point"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "tokens" && $_->{batch} == 3 && $_->{seq_len} == 64 && $_->{value} > 0 && '"$not_hgemm")" 5 \
    "tokens/s rows carry batch and seq_len"
# The model's bytes: x [b*s, 96], w [96, 80], y [b*s, 80] at 2 bytes for fp16
# (on each of the point's rows: time, throughput, bandwidth, tokens, verify_time).
is "$(csv_count "$out/results.csv" '$_->{variant} eq "blocked" && $_->{precision} eq "fp16" && $_->{batch} == 3 && $_->{seq_len} == 64 && $_->{model_bytes} == 2 * (192 * 96 + 96 * 80 + 192 * 80)')" 5 \
    "rows carry the memory model's bytes"

# attention, naive and tiled, causal or not, in every precision.
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload attention \
    --precision fp32,fp16,bf16,int8 --batch 2 --seq 24,70 --hidden 96 --heads 3 --reps 2 --out "$TEST_TMP/attn" --quiet
is "$(csv_count "$TEST_TMP/attn/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 16 \
    "attention: naive and tiled verified in every precision"
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload attention \
    --precision fp32,bf16 --batch 1 --seq 65 --hidden 64 --heads 2 --causal --reps 1 --out "$TEST_TMP/causal" --quiet
is "$(csv_count "$TEST_TMP/causal/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 4 \
    "causal attention verified"
# naive holds the fp32 [2*3, 70, 70] score matrix, tiled two floats a row.
is "$(csv_count "$TEST_TMP/attn/results.csv" '$_->{seq_len} == 70 && $_->{precision} eq "fp32" && $_->{metric} eq "time" && $_->{model_bytes} == 4 * 6 * 70 * 32 * 4 + ($_->{variant} eq "naive" ? 6 * 70 * 70 * 4 : 6 * 70 * 2 * 4)')" 2 \
    "the model counts the score matrix for naive only"
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads \
    --workload attention --precision fp16 --batch 1 --seq 16 --hidden 32 --heads 2 --reps 1 --out "$TEST_TMP/afault" --quiet
is "$RC" 1 "attention: a wrong output makes the run exit 1"
is "$(csv_count "$TEST_TMP/afault/results.csv" '$_->{status} eq "mismatch" && $_->{note} =~ /^o: element \d+ \(o\[\d+\]\[\d+\] = .*checked whole on the device\); CPU check: o\[\d+\]\[\d+\]: expected/')" 2 \
    "attention: the corrupted element is found in both implementations, on the device and by the CPU"

# kvcache: decoding with contiguous and paged caches over two layers; the
# last step's output and every cached key and value are verified.
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload kvcache \
    --precision fp32,fp16,bf16,int8 --batch 2 --seq 21 --hidden 48 --heads 3 --layers 2 --block-tokens 4 \
    --reps 1 --out "$TEST_TMP/kv" --quiet
is "$(csv_count "$TEST_TMP/kv/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 8 \
    "kvcache: contiguous and paged verified in every precision"
# paged: 6 blocks of 4 tokens a sequence (24 slots for 21 tokens) and a block table of 2 x 6 ints.
is "$(csv_count "$TEST_TMP/kv/results.csv" '$_->{precision} eq "fp32" && $_->{metric} eq "time" && $_->{model_bytes} == ($_->{variant} eq "paged" ? 2 * 2 * 6 * 24 * 16 * 4 + 2 * 6 * 4 + 2 * 6 * 16 * 4 + 6 * 24 * 4 : 2 * 2 * 6 * 21 * 16 * 4 + 2 * 6 * 16 * 4 + 6 * 21 * 4)')" 2 \
    "paged caches round up to whole blocks and add the block table"
# Every workload allocates exactly what its memory model says (else an error row).
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload linear,attention,kvcache \
    --precision bf16 --batch 3 --seq 19 --hidden 40 --heads 5 --layers 3 --block-tokens 5 --reps 1 \
    --out "$TEST_TMP/exact" --quiet
is "$(csv_count "$TEST_TMP/exact/results.csv" '$_->{status} ne "ok"')" 0 "allocations match the memory model exactly"
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads \
    --workload kvcache --precision int8 --batch 1 --seq 9 --hidden 16 --heads 2 --reps 1 --out "$TEST_TMP/kvfault" --quiet
is "$(csv_count "$TEST_TMP/kvfault/results.csv" '$_->{status} eq "mismatch" && $_->{note} =~ /^out: element \d+ \(out\[\d+\]\[\d+\] = .*checked whole on the device\); CPU check: out\[\d+\]\[\d+\]: expected/')" 2 \
    "kvcache: the corrupted output is found, on the device and by the CPU"

# Any workload under any pattern: one arena carved into the tensors (five
# implementations in fp16: linear, naive and tiled attention, two caches).
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload linear,attention,kvcache \
    --pattern per-tensor,monolithic --precision fp16 --batch 2 --seq 23 --hidden 64 --heads 4 --layers 2 \
    --block-tokens 8 --reps 1 --out "$TEST_TMP/patterns" --quiet
is "$(csv_count "$TEST_TMP/patterns/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{pattern} eq "monolithic" && '"$not_hgemm")" 5 \
    "every workload and implementation verifies from a monolithic arena"
is "$(csv_count "$TEST_TMP/patterns/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{pattern} eq "per-tensor" && '"$not_hgemm")" 5 \
    "and from one allocation per tensor"

# Under a cap too small for the largest points, those are skipped by the model.
run_gpumem bench --backend opencl --mem-limit 4MiB --suite workloads --precision fp32 --batch 1,64 \
    --seq 512 --hidden 256 --reps 1 --out "$TEST_TMP/cap" --quiet
is "$(csv_count "$TEST_TMP/cap/results.csv" '$_->{status} eq "skipped" && $_->{batch} == 64 && $_->{note} =~ /^the model needs 64.2MiB, the device has [0-9.]+MiB free under the cap$/')" 2 \
    "points beyond the cap are skipped, naming what the model needs"
is "$(csv_count "$TEST_TMP/cap/results.csv" '$_->{status} eq "ok" && $_->{batch} == 1 && $_->{metric} eq "time"')" 2 \
    "the points that fit still run"

# The fault switch makes every output wrong: all mismatch rows, exit 1.
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads \
    --precision fp32,int8 --batch 2 --seq 32 --hidden 64 --reps 1 --out "$TEST_TMP/fault" --quiet
is "$RC" 1 "a wrong output makes the run exit 1"
is "$(csv_count "$TEST_TMP/fault/results.csv" '$_->{status} eq "mismatch" && $_->{note} =~ /^y\[\d+\]\[\d+\]: expected/')" 3 \
    "each implementation's corrupted element is found"
done_testing
