#!/bin/sh
# On a CUDA device (skipped without one): the memory model's bytes match
# what the device's free memory says each workload took, within 5%, at
# shapes large enough (hundreds of MiB) that the allocator's granularity
# does not count.
. tests/lib.sh
./gpumem info 2>/dev/null | grep -q '^  cuda:0 ' || skip_all "no CUDA device here"
plan 10
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

# A whole model (GQA, SwiGLU, RMSNorm, LM head: bench/workloads/model_*.c) for
# inference and for training (weights, master weights, gradients, AdamW
# states, activations kept): hundreds of MiB to a few GiB.
cat >"$TEST_TMP/mid.json" <<'JSON'
{"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2816, "num_attention_heads": 16,
 "num_hidden_layers": 4, "num_key_value_heads": 4, "vocab_size": 32000, "tie_word_embeddings": false}
JSON
run_gpumem bench --backend cuda --suite workloads --workload block --model "$TEST_TMP/mid.json" \
    --precision fp32,bf16 --batch 8 --seq 1024 --reps 1 --warmup 0 --out "$TEST_TMP/whole" --quiet
is "$RC" 0 "a whole model runs on the GPU (inference)"
run_gpumem bench --backend cuda --suite workloads --workload block --model "$TEST_TMP/mid.json" --mode train \
    --precision fp32,bf16 --batch 8 --seq 1024 --reps 1 --warmup 0 --out "$TEST_TMP/train" --quiet
is "$RC" 0 "and its training step"
is "$(cat "$TEST_TMP/whole/results.csv" "$TEST_TMP/train/results.csv" >"$TEST_TMP/whole.csv"; csv_count "$TEST_TMP/whole.csv" '$_->{metric} eq "time" && ($_->{status} ne "ok" || $_->{measured_bytes} < 0.95 * $_->{model_bytes} || $_->{measured_bytes} > 1.05 * $_->{model_bytes})')" 0 \
    "inference and training: measured bytes within 5% of the model's, every point ok"
# A GPU runs a whole model on cuBLAS by default: every projection, the
# attention's GEMMs and the LM head, with the MFU against the card's peak.
is "$(csv_count "$TEST_TMP/whole.csv" '$_->{metric} eq "time" && $_->{variant} eq "cublas" && $_->{note} =~ /^projections: cublas; attention: cublas QK\^T and PV over 1024-query chunks, softmax ours; LM head: cublas(;|$)/')" 4 \
    "every point ran cuBLAS for its projections, attention's GEMMs and its LM head"
is "$(csv_count "$TEST_TMP/whole.csv" '$_->{metric} eq "mfu" && $_->{value} > 0 && $_->{note} =~ / over [0-9.]+ (TFLOP\/s, the dense|GFLOP\/s, the .* peak measured in this run: cublas at 8192\^3)/')" 4 \
    "and an mfu row against the card's dense peak (a datasheet's, or cuBLAS's at 8192^3)"
# Ours beside it (--variant all), both verified.
run_gpumem bench --backend cuda --suite workloads --workload block --model "$TEST_TMP/mid.json" \
    --precision bf16 --batch 2 --seq 256 --reps 1 --warmup 0 --variant all --out "$TEST_TMP/both" --quiet
is "$RC" 0 "--variant all: exit status 0"
is "$(csv_count "$TEST_TMP/both/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && ($_->{variant} eq "tiled" || $_->{variant} eq "cublas")')" 2 \
    "ours (tiled) and cuBLAS's side by side, each verified"
done_testing
