#!/bin/sh
# Precisions beyond fp32/fp16/bf16/int8 on the OpenCL device: fp8 (OCP
# e4m3, e5m2) in linear, attention, kvcache and the stream kernels, verified against a CPU
# reference with the same rounding (tolerances: bench/workloads/linear.c check(),
# src/lib/precision.c gm_tolerance: 2 units of the format's unit roundoff
# at the result, plus k * 2^-23 * sum|x w| for the fp32 reduction); int4
# weights with fp16 group scales in linear; a precision per role, in the
# rows (schema 3), in the memory model and in `gpumem plan`.
. tests/lib.sh
plan 23

out=$TEST_TMP/fp8
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload linear,attention,kvcache \
    --precision fp8e4m3,fp8e5m2 --batch 2 --seq 21 --hidden 48 --heads 3 --layers 2 --block-tokens 4 \
    --reps 2 --out "$out" --quiet
is "$RC" 0 "fp8: exit status 0"
[ -n "$ERR" ] && diag "$ERR"
# linear (blocked), attention (naive, tiled), kvcache (contiguous, paged) in two formats.
is "$(csv_count "$out/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 10 \
    "fp8: every workload and implementation verifies in e4m3 and e5m2"
is "$(csv_count "$out/results.csv" '$_->{variant} eq "clblast" && $_->{metric} eq "time" && $_->{status} eq "unsupported" && $_->{note} =~ /no fp8 GEMM/')" 2 \
    "fp8: the vendor GEMM beside ours is an unsupported row, never a fallback"
# One byte an element: x [42, 48], w [48, 48], y [42, 48].
is "$(csv_count "$out/results.csv" '$_->{workload} eq "linear" && $_->{variant} eq "blocked" && $_->{precision} eq "fp8e4m3" && $_->{metric} eq "time" && $_->{model_bytes} == 42 * 48 + 48 * 48 + 42 * 48')" 1 \
    "fp8: the memory model counts one byte an element"
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads \
    --workload linear,attention,kvcache --precision fp8e4m3,fp8e5m2 --batch 2 --seq 32 --hidden 64 --heads 2 \
    --reps 1 --out "$TEST_TMP/fp8fault" --quiet
is "$RC" 1 "fp8: a wrong output makes the run exit 1"
is "$(csv_count "$TEST_TMP/fp8fault/results.csv" '$_->{status} eq "mismatch"')" 10 "fp8: every point is a mismatch row"

# Every stream kernel in both fp8 formats and both access patterns, 16
# codes an access, over 1048579 bytes (three past the last whole vector:
# the tail), verified element by element (tolerance: one spacing of the
# format, 2u * |value| with u = 2^-4 for e4m3, 2^-3 for e5m2, plus the
# fp32 arithmetic; bench/stream/check.c). Fault-injected: 31-stream-verify.
out=$TEST_TMP/fp8stream
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite stream --precision fp8e4m3,fp8e5m2 \
    --access both --sizes 1048579 --reps 2 --out "$out" --quiet
is "$(csv_count "$out/results.csv" '$_->{metric} eq "bandwidth" && $_->{status} eq "ok" && $_->{value} > 0')" 28 \
    "stream: every kernel verifies in fp8e4m3 and fp8e5m2, grid and chunked"
is "$(csv_count "$out/results.csv" '$_->{metric} eq "bandwidth" && $_->{bytes} == 1048579 && $_->{model_bytes} == 3 * 1048579')" 28 \
    "stream: fp8 arrays of one byte an element"

# int4 weights, bf16 activations, groups of 32 rows (hidden 80: the last group has 16).
out=$TEST_TMP/int4
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload linear \
    --precision bf16,fp32 --weight-precision int4 --group-size 32 --batch 2 --seq 21 --hidden 80 --out-features 72 \
    --reps 2 --out "$out" --quiet
is "$(csv_count "$out/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{weight_precision} eq "int4"')" 2 \
    "int4 weights dequantised on load verify (bf16 and fp32 activations)"
# x [42, 80] and y [42, 72] in bf16, w packed ceil(80 * 72 / 2), scales ceil(80 / 32) * 72 fp16.
is "$(csv_count "$out/results.csv" '$_->{precision} eq "bf16-wint4" && $_->{metric} eq "time" && $_->{model_bytes} == 2 * 42 * 80 + 2 * 42 * 72 + 80 * 72 / 2 + 3 * 72 * 2')" 1 \
    "int4: packed weights and fp16 group scales counted exactly"
is "$(csv_count "$out/results.csv" '$_->{variant} eq "clblast" && $_->{status} eq "unsupported" && $_->{note} =~ /fp32 weights only/')" 1 \
    "the vendor SGEMM is an unsupported row with int4 weights, never a fallback"
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads \
    --workload linear --precision fp16 --weight-precision int4 --batch 2 --seq 32 --hidden 64 --reps 1 \
    --out "$TEST_TMP/int4fault" --quiet
is "$(csv_count "$TEST_TMP/int4fault/results.csv" '$_->{status} eq "mismatch" && $_->{note} =~ /^(?:y\[\d+\]\[\d+\]: expected|y: checksums)/')" 1 \
    "int4: the corrupted element is found"

# Roles: bf16 activations, fp8 KV cache, rows carry each role.
out=$TEST_TMP/roles
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload kvcache \
    --precision fp16 --kv-precision fp8e5m2 --activation-precision bf16 --batch 2 --seq 21 --hidden 48 --heads 3 \
    --layers 2 --reps 1 --out "$out" --quiet
is "$(csv_count "$out/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{precision} eq "bf16-wfp16-kvfp8e5m2" && $_->{kv_precision} eq "fp8e5m2" && $_->{activation_precision} eq "bf16" && $_->{weight_precision} eq "fp16"')" 2 \
    "kvcache: an fp8 cache beside bf16 activations verifies; rows carry each role"
# caches 2 x [2 layers * 6 seqs * 21 tokens * 16] at 1 byte, query and output [6, 16] bf16, scores [6, 21] fp32.
is "$(csv_count "$out/results.csv" '$_->{variant} eq "contiguous" && $_->{metric} eq "time" && $_->{model_bytes} == 2 * 2 * 6 * 21 * 16 + 2 * 6 * 16 * 2 + 6 * 21 * 4')" 1 \
    "kvcache: the memory model counts the cache in its own precision"
is "$(head -1 "$out/results.csv" | cut -d, -f10-13)" "precision,weight_precision,kv_precision,activation_precision" \
    "results.csv: the role columns follow precision"

# Refusals, one line each.
run_gpumem bench --backend opencl --mem-limit 64MiB --suite workloads --precision int4
is "$RC $ERR" "2 gpumem bench: --precision int4: int4 is a weight precision only (use --weight-precision int4)" \
    "int4 as every role's precision is refused"
run_gpumem bench --backend opencl --mem-limit 64MiB --suite workloads --workload block --precision fp32 --weight-precision int4
is "$RC $ERR" "2 gpumem bench: block: roles differ only as int4 weights and/or an fp8 KV cache beside fp16 or bf16 activations (not weights int4, KV cache fp32, activations fp32)" \
    "block: int4 weights beside fp32 activations refused"

# The OOM search under a 4MiB cap, bf16 beside int4 weights + fp8 KV + bf16
# activations: kvcache at 2 layers x 2 heads of 64, 16 tokens, holds
# per sequence of the batch 2 caches x 2 layers x 2 heads x 16 x 64 x e,
# query and output 2 x 2 x 64 x 2, scores 2 x 16 x 4: 17024 bytes in bf16
# (246 fit 4MiB), 8832 with an fp8 cache (474 fit).
for roles in bf16 mixed; do
    extra=""; [ "$roles" = mixed ] && extra="--kv-precision fp8e4m3 --activation-precision bf16"
    run_gpumem bench --backend opencl --suite oom --mem-limit 4MiB --workload kvcache --precision bf16 $extra \
        --seq 16 --hidden 128 --heads 2 --layers 2 --pattern per-tensor --out "$TEST_TMP/oom-$roles" --quiet
done
is "$(csv_value "$TEST_TMP/oom-bf16/results.csv" '$_->{metric} eq "max_batch" && $_->{variant} eq "contiguous"' value)" 246 \
    "oom: kvcache in bf16 fits batch 246 under 4MiB"
is "$(csv_value "$TEST_TMP/oom-mixed/results.csv" '$_->{metric} eq "max_batch" && $_->{variant} eq "contiguous" && $_->{kv_precision} eq "fp8e4m3"' value)" 474 \
    "oom: with an fp8 KV cache, 474"

# The whole-model plan, exactly. Llama-3-8B (L 32, h 4096, 32 heads, 8 KV
# heads of 128, I 14336, V 128256, untied): per layer q, o 4096 x 4096, k, v
# 4096 x 1024, gate, up 4096 x 14336, down 14336 x 4096 = 218103808 weights
# in int4 (x 32 layers / 2 bytes), scales ceil(in / 128) * out fp16; the
# embeddings, LM head and norms (1050939392) in bf16; KV 2*32*8*128 = 65536
# bytes a token in fp8 (512 tokens).
run_gpumem plan --model llama-3-8b --weight-precision int4 --kv-precision fp8e4m3 --activation-precision bf16
like "$OUT" "^weights +weights_int4 +3489660928 " "plan: packed int4 weights"
like "$OUT" "^weights +weight_scales_fp16 +109051904 " "plan: fp16 scales, one per 128 weights along the input"
like "$OUT" "^kv_cache +kv_cache +33554432 " "plan: an fp8 KV cache, one byte an element"
like "$OUT" "^total 5772538880 " "plan: Llama-3-8B, int4 weights, fp8 KV, bf16 activations: 5772538880 bytes"
done_testing
