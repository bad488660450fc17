#!/bin/sh
# The block workload on the OpenCL device: transformer layers (qkv, KV
# cache, attention, residual, GELU MLP) verified stage by stage against the
# CPU reference in every precision; --checkpoint and --micro-batch shrink
# the memory model by exactly the activations they drop and still verify;
# a wrong output is a mismatch row.
. tests/lib.sh
plan 12

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

GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads \
    --workload block --precision fp16,int8 --batch 2 $shape --reps 1 --out "$TEST_TMP/fault" --quiet
is "$RC" 1 "a wrong output makes the run exit 1"
is "$(csv_count "$TEST_TMP/fault/results.csv" '$_->{status} eq "mismatch" && $_->{note} =~ /^layer 1 block_output\[0\]\[0\]: expected/')" 2 \
    "the corrupted output is found in the last layer"

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

run_gpumem plan --workload block --model llama-7b --batch 1 --seq 4096 --precision bf16 --checkpoint
like "$OUT" "recompute_mlp_hidden +workspace" "plan names the recomputation workspace of --checkpoint"
done_testing
