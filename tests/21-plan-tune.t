#!/bin/sh
# gpumem plan --mode lora|qlora, --saved, --zero-offload: LoRA's adapters,
# QLoRA's NF4 base, what the backward keeps, offload's device and host
# bytes, and bad input refused with one line naming the option (exit 2).
# The Llama-3-8B figures are pinned against plain PyTorch measured on an
# H200 (bench/tools/peers/torch_card.py train, torch 2.11, peak =
# torch.cuda.max_memory_allocated; docs/training.md quotes the runs).
. tests/lib.sh
plan 35

total() { awk -F, '$2 == "total" && $3 == "total" { print $4 }'; }
item() { awk -F, -v n="$1" '$3 == n { print $4 }'; }
L3="--model llama-3-8b --precision bf16 --format csv"

# LoRA (Hu et al. 2021): r (in + out) a projection. Llama-3-8B at r 16 on
# all seven: 32 x 16 x (2 x 8192 + 2 x 5120 + 3 x 18432) = 41943040.
run_gpumem plan --model llama-3-8b --mode lora --precision bf16
like "$OUT" "rank=16 alpha=32 targets=q,k,v,o,gate,up,down adapters=fp32 adapter_params=41943040 " \
    "lora's defaults: rank 16, alpha 2r, every projection, fp32 adapters; 41943040 adapter parameters"
run_gpumem plan $L3 --mode lora --lora-targets q,v --lora-rank 8
is "$(printf '%s\n' "$OUT" | item adapters)" "$((32 * 8 * (8192 + 5120) * 4))" "q,v at rank 8: 3407872 fp32 adapter parameters"
is "$(printf '%s\n' "$OUT" | item adamw_moments)" "$((32 * 8 * (8192 + 5120) * 8))" "AdamW moments for the adapters only"
is "$(printf '%s\n' "$OUT" | item base_weights)" "$((8030261248 * 2))" "the frozen base in bf16"

# QLoRA's NF4 base, bitsandbytes' layout: the 7 x 32 projections' codes
# (half a byte a weight), an 8-bit absmax a 64, an fp32 scale a 256 absmax:
# the bytes torch_card.py's NF4 weights held (3600416768).
run_gpumem plan $L3 --mode qlora
nf4=$(printf '%s\n' "$OUT" | awk -F, '$3 ~ /^base_nf4/ { s += $4 } END { printf "%.0f\n", s }')
is "$nf4" 3600416768 "NF4 base of Llama-3-8B: 3600416768 bytes, as measured"
is "$(printf '%s\n' "$OUT" | item base_other)" "$(((8030261248 - 6979321856) * 2))" "embedding, LM head, norms stay bf16"
like "$(printf '%s\n' "$OUT" | item dequant_buffer)" "^$((4096 * 14336 * 2))\$" "one projection dequantised to bf16 at a time"

# Against PyTorch, same settings (--saved pytorch counts what its eager
# autograd keeps): within 3% of each measured peak.
within() {   # GOT WANT_GB LOW HIGH NAME: LOW <= GOT / WANT <= HIGH
    awk -v g="$1" -v w="$2" -v lo="$3" -v hi="$4" 'BEGIN { r = g / 1e9 / w; exit !(r >= lo && r <= hi) }'
    ok $? "$5 ($(awk -v g="$1" -v w="$2" 'BEGIN { printf "%.2f GB, %.3fx of %s GB", g / 1e9, g / 1e9 / w, w }'))"
}
for c in "train --batch 1 --seq 512:130.65" "lora --batch 2 --seq 2048:47.23" \
         "lora --batch 2 --seq 2048 --recompute full:24.08" "qlora --batch 2 --seq 2048:36.87" \
         "qlora --batch 2 --seq 2048 --recompute full:13.72"; do
    run_gpumem plan $L3 --mode ${c%%:*} --saved pytorch
    within "$(printf '%s\n' "$OUT" | total)" "${c##*:}" 0.97 1.03 "--saved pytorch --mode ${c%%:*}: within 3% of PyTorch"
done
# gpumem's own step keeps less (each tensor once, the loss fused): from
# 0.76x (QLoRA, nothing recomputed) to 1.0x of PyTorch's peak.
for c in "lora --batch 2 --seq 2048:47.23" "lora --batch 2 --seq 2048 --recompute full:24.08" \
         "qlora --batch 2 --seq 2048:36.87" "qlora --batch 2 --seq 2048 --recompute full:13.72"; do
    run_gpumem plan $L3 --mode ${c%%:*}
    within "$(printf '%s\n' "$OUT" | total)" "${c##*:}" 0.75 1.0 "gpumem's step, --mode ${c%%:*}: 0.75x to 1x PyTorch's"
done
run_gpumem plan $L3 --mode train --batch 1 --seq 512
is "$(printf '%s\n' "$OUT" | total)" 131193710596 "full fine-tuning's gpumem figure, dlogits, the backward workspace and the rotary tables with it (1.004x PyTorch's 130.65 GB)"

# What the backward keeps, per layer and token (bf16, Llama-3-8B, r 16 on
# all seven, tiled attention): gpumem x, n1, x_mid, n2 (4 x 8192), q, o
# (2 x 8192), k, v (2 x 2048), fp32 lse (128), gate, up, their product
# (3 x 28672), x A (7 x 32): 139616; recomputing each layer keeps x alone.
run_gpumem plan $L3 --mode lora --batch 1 --seq 1
is "$(printf '%s\n' "$OUT" | item layers_saved)" "$((32 * 139616))" "gpumem keeps 139616 bytes a token and layer"
run_gpumem plan $L3 --mode lora --batch 1 --seq 1 --saved pytorch
is "$(printf '%s\n' "$OUT" | item layers_saved)" "$((32 * (139616 + 2 * (16384 + 4 - 8192) + 28672)))" \
    "PyTorch also keeps the norms' fp32 upcasts, 1/rms and silu(gate): 184680 bytes"
run_gpumem plan $L3 --mode lora --batch 2 --seq 2048 --recompute full
is "$(printf '%s\n' "$OUT" | item layers_saved)" "$((32 * 4096 * 8192))" "--recompute full keeps each layer's input"
is "$(printf '%s\n' "$OUT" | item recomputed_layer)" "$((4096 * (139616 - 8192)))" \
    "and one layer recomputed in backward, all of it but its input, which stays kept"
run_gpumem plan $L3 --mode lora --lora-targets o --batch 1 --seq 1
is "$(printf '%s\n' "$OUT" | item layers_saved)" "$((32 * (139616 - 3 * 8192 + 8192 - 3 * 28672 + 2 * 28672 - 6 * 32)))" \
    "an adapter on o alone keeps no norm output, no SwiGLU product"

# ZeRO-Offload: master weights, AdamW moments and the bf16 gradients in
# host memory (14 bytes a parameter), the weights and one module's
# gradients on the device (the LM head's, 128256 x 4096, larger than a
# layer's); with params the weights go too.
P=8030261248
run_gpumem plan $L3 --mode train --zero-offload optimizer --host-memory 1TiB
is "$(printf '%s\n' "$OUT" | awk -F, '$3 == "host_total" { print $4 }')" "$((14 * P))" "host holds 14 bytes a parameter"
is "$(printf '%s\n' "$OUT" | item gradient_buffer)" "$((128256 * 4096 * 2))" "the device the LM head's gradients (larger than a layer's)"
like "$(printf '%s\n' "$OUT" | grep -c '^bf16,host_')" "^3\$" "three host items: master, gradients, moments"
run_gpumem plan $L3 --mode train --zero-offload params --host-memory 1TiB
is "$(printf '%s\n' "$OUT" | awk -F, '$3 == "host_total" { print $4 }')" "$((16 * P))" "params: the host holds all 16"
run_gpumem plan --model llama-3-8b --precision bf16 --mode qlora --zero-offload optimizer --host-memory 1GiB --format json
like "$OUT" '"offload": "optimizer"' "--format json says the offload"

# The workloads suite runs both steps on the device
# (tests/39-lora-step-pocl.t checks them, and the oom suite's searches of
# them), its lora row holding plan's total.
run_gpumem bench --backend opencl --suite workloads --workload block --model tiny-llama-gqa \
    --mode lora,qlora --precision fp32 --batch 2 --seq 32 --reps 1 --mem-limit "$TEST_MEM_LIMIT" \
    --out "$TEST_TMP/run" --quiet
is "$RC:$(csv_count "$TEST_TMP/run/results.csv" '$_->{status} eq "unsupported"'):$(csv_count "$TEST_TMP/run/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" "0:0:2" \
    "lora and qlora steps run in workloads"
run_gpumem plan --model tiny-llama-gqa --mode lora --precision fp32 --batch 2 --seq 32 --format csv
is "$(csv_value "$TEST_TMP/run/results.csv" '$_->{mode} eq "lora"' model_bytes)" \
    "$(printf '%s\n' "$OUT" | total)" "the lora row's model_bytes are plan's total"

# Bad input: one line naming the option, exit 2, nothing on stdout.
bad() {   # NAME REGEX ARGS...
    name=$1 re=$2
    shift 2
    run_gpumem plan "$@"
    like "$RC:$(printf '%s' "$ERR" | wc -l | tr -d ' '):${#OUT}:$ERR" "^2:0:0:gpumem plan: $re" "$name"
}
bad "a rank above a projection's width" "--lora-rank 2048: above the width of k" \
    --model llama-3-8b --mode lora --lora-rank 2048
bad "a target the model lacks" "--lora-targets gate: model gpt2 has no gate projection" \
    --model gpt2 --mode qlora --lora-targets q,gate
bad "QLoRA over a 16-bit base" "--weight-precision bf16 with --mode qlora: QLoRA's frozen base is 4-bit" \
    --model llama-3-8b --mode qlora --weight-precision bf16
bad "offload without the host memory for it" "--zero-offload optimizer: the host would hold 104.7GiB" \
    --model llama-3-8b --mode train --precision bf16 --zero-offload optimizer --host-memory 64GiB
bad "LoRA's options outside lora and qlora" "--lora-rank concerns --mode lora, qlora, and --mode is train" \
    --model llama-3-8b --mode train --lora-rank 8
bad "an adapter precision that does not train" "--adapter-precision 'int8': expected one of fp32, fp16, bf16" \
    --model llama-3-8b --mode lora --adapter-precision int8

done_testing
