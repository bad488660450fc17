#!/bin/sh
# The block workload on the OpenCL device: transformer layers (qkv, KV
# cache, attention, residual, GELU MLP) verified stage by stage against the
# CPU reference in every precision, fp8 (e4m3, e5m2) included, and with
# int4 weights and/or an fp8 KV cache beside 16-bit activations (the
# tolerances: bench/workloads/block_check.c compare(): 2 units of each format's unit
# roundoff at the result for each rounding, plus 1.2 k 2^-23 sum|x w| for
# the fp32 reduction); --checkpoint and --micro-batch shrink the memory
# model by exactly the activations they drop and still verify; a wrong
# output is a mismatch row in every precision and role combination.
. tests/lib.sh
plan 21

shape="--hidden 64 --heads 4 --layers 2 --seq 24"
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
    --precision fp32,fp16,bf16,int8 --batch 1,3 $shape --reps 2 --out "$TEST_TMP/block" --quiet
is "$RC" 0 "block sweep: exit status 0"
[ -n "$ERR" ] && diag "$ERR"
is "$(csv_count "$TEST_TMP/block/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 8 \
    "every precision verified at two batch sizes"
# fp32, batch 3: weights 2*(3*64*64 + 64*64 + 2*64*256)*4, KV cache 2*2*3*24*64*4,
# block inputs 3*72*64*4, activations 2*72*(192+64+64+256)*4, stats 3*4*24*2*4.
is "$(csv_count "$TEST_TMP/block/results.csv" '$_->{precision} eq "fp32" && $_->{batch} == 3 && $_->{metric} eq "time" && $_->{model_bytes} == 393216 + 73728 + 55296 + 331776 + 2304')" 1 \
    "the memory model counts weights, KV cache, activations and workspace"
is "$(csv_count "$TEST_TMP/block/results.csv" '$_->{metric} eq "tokens" && $_->{batch} == 3 && $_->{unit} eq "tokens/s" && $_->{value} > 0')" 4 \
    "tokens/s rows"

run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
    --precision fp32,bf16 --batch 3 $shape --checkpoint --micro-batch 1 --causal --reps 2 --out "$TEST_TMP/ckpt" --quiet
is "$(csv_count "$TEST_TMP/ckpt/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 2 \
    "checkpointed, micro-batched, causal: verified"
# One micro-batch of 24 tokens live, one layer of activations recomputed.
is "$(csv_count "$TEST_TMP/ckpt/results.csv" '$_->{precision} eq "fp32" && $_->{metric} eq "time" && $_->{model_bytes} == 393216 + 73728 + 18432 + 55296 + 768')" 1 \
    "checkpointing and micro-batches shrink the model to one layer of one micro-batch"
# Three sequences in micro-batches of two: the last one is shorter.
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
    --precision fp32 --batch 3 $shape --pattern monolithic --micro-batch 2 --reps 1 --out "$TEST_TMP/mono" --quiet
is "$(csv_count "$TEST_TMP/mono/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{pattern} eq "monolithic"')" 1 \
    "from one arena, with an uneven last micro-batch"

# fp8 everywhere: one byte an element (weights 2*(3*4096 + 4096 + 2*16384),
# KV cache 2*2*3*24*64, block inputs 3*72*64, activations 2*72*576, stats 3*4*24*2*4).
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
    --precision fp8e4m3,fp8e5m2 --batch 1,3 $shape --reps 2 --out "$TEST_TMP/fp8" --quiet
is "$(csv_count "$TEST_TMP/fp8/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 4 \
    "fp8e4m3 and fp8e5m2 verify at two batch sizes"
is "$(csv_count "$TEST_TMP/fp8/results.csv" '$_->{batch} == 3 && $_->{metric} eq "time" && $_->{model_bytes} == 98304 + 18432 + 13824 + 82944 + 2304')" 2 \
    "fp8: the memory model counts one byte an element"

# The serving combination: int4 weights (groups of 32 rows), an fp8 KV cache, 16-bit activations.
roles="--weight-precision int4 --kv-precision fp8e4m3 --group-size 32"
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
    --precision fp16,bf16 $roles --batch 3 $shape --reps 2 --out "$TEST_TMP/roles" --quiet
is "$(csv_count "$TEST_TMP/roles/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{weight_precision} eq "int4" && $_->{kv_precision} eq "fp8e4m3"')" 2 \
    "int4 weights and an fp8e4m3 KV cache beside fp16 and bf16 activations verify"
# Codes 2*(64*192 + 64*64 + 2*64*256)/2, scales 2*(2*192 + 2*64 + 2*256 + 8*64)*2, KV cache
# 2*2*3*24*64 at one byte, block inputs 3*72*64*2, activations 2*72*576*2, stats.
is "$(csv_count "$TEST_TMP/roles/results.csv" '$_->{precision} eq "bf16-wint4-kvfp8e4m3" && $_->{metric} eq "time" && $_->{model_bytes} == 49152 + 6144 + 18432 + 27648 + 165888 + 2304')" 1 \
    "int4 + fp8 KV: packed codes, fp16 group scales and the one-byte cache counted exactly"
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
    --precision bf16 --kv-precision fp8e5m2 --batch 3 $shape --micro-batch 2 --causal --reps 2 --out "$TEST_TMP/kv" --quiet
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
    --precision fp16 --weight-precision int4 --group-size 16 --batch 2 $shape --reps 2 --out "$TEST_TMP/w4" --quiet
is "$(cat "$TEST_TMP/kv/results.csv" "$TEST_TMP/w4/results.csv" | csv_count /dev/stdin '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{precision} =~ /^(bf16-kvfp8e5m2|fp16-wint4)$/')" 2 \
    "an fp8e5m2 KV cache alone (micro-batched, causal), int4 weights alone: verified"
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
    --precision fp32 --weight-precision int4 --batch 1 $shape
is "$RC $ERR" "2 gpumem bench: block: roles differ only as int4 weights and/or an fp8 KV cache beside fp16 or bf16 activations (not weights int4, KV cache fp32, activations fp32)" \
    "int4 weights beside fp32 activations: refused in one line"
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
    --precision bf16 --weight-precision int4 --batch 1 $shape --reps 1 --out "$TEST_TMP/g128" --quiet
is "$(csv_count "$TEST_TMP/g128/results.csv" '$_->{metric} eq "time" && $_->{status} eq "unsupported" && $_->{note} eq "int4 weights: --hidden (64) and --ffn (256) must be multiples of --group-size 128, --hidden even"')" 1 \
    "int4 groups that do not divide the matrices: an unsupported row saying why"

GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads \
    --workload block --precision fp16,int8,fp8e4m3,fp8e5m2 --batch 2 $shape --reps 1 --out "$TEST_TMP/fault" --quiet
is "$RC" 1 "a wrong output makes the run exit 1"
is "$(csv_count "$TEST_TMP/fault/results.csv" '$_->{status} eq "mismatch" && $_->{note} =~ /^layer 1 block_output\[\d+\]\[\d+\]: expected/')" 4 \
    "the corrupted output is found in the last layer (fp16, int8, fp8e4m3, fp8e5m2)"
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads \
    --workload block --precision fp16,bf16 $roles --batch 2 $shape --reps 1 --out "$TEST_TMP/fault2" --quiet
is "$(csv_count "$TEST_TMP/fault2/results.csv" '$_->{status} eq "mismatch" && $_->{weight_precision} eq "int4" && $_->{note} =~ /^layer 1 block_output\[\d+\]\[\d+\]: expected/')" 2 \
    "int4 weights + fp8 KV cache: the corrupted output is a mismatch row"

# --offload: four layers' weights in host memory, two on the device, streamed.
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
    --precision fp32,int8 --batch 3 --hidden 64 --heads 4 --layers 4 --seq 24 --offload --checkpoint --reps 2 \
    --out "$TEST_TMP/offload" --quiet
is "$(csv_count "$TEST_TMP/offload/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 2 \
    "offloaded weights streamed through two slots: verified"
# Weights of two layers 2*(3*4096 + 4096 + 2*16384)*4, KV cache 2*4*3*24*64*4, block inputs
# 5*72*64*4, one layer of recomputed activations 72*576*4, stats 3*4*24*2*4.
is "$(csv_count "$TEST_TMP/offload/results.csv" '$_->{precision} eq "fp32" && $_->{metric} eq "time" && $_->{model_bytes} == 393216 + 147456 + 92160 + 165888 + 2304')" 1 \
    "the device holds two layers of weights"
# int4 codes and scales quantised on the host, streamed with the weights; an fp8e5m2 cache.
run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
    --precision bf16 --weight-precision int4 --kv-precision fp8e5m2 --group-size 32 --batch 3 --hidden 64 --heads 4 \
    --layers 4 --seq 24 --offload --checkpoint --micro-batch 2 --reps 2 --out "$TEST_TMP/offload4" --quiet
is "$(csv_count "$TEST_TMP/offload4/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{model_bytes} == 12288 + 1536 + 4096 + 512 + 16384 + 2048 + 16384 + 2048 + 36864 + 30720 + 55296 + 1536')" 1 \
    "offloaded int4 weights (two layers of codes and scales on the device): verified, counted exactly"

run_gpumem plan --workload block --hidden 4096 --heads 32 --layers 32 --ffn 11008 --batch 1 --seq 4096 --precision bf16 \
    --checkpoint
like "$OUT" "recompute_mlp_hidden +workspace" "plan names the recomputation workspace of --checkpoint"
done_testing
