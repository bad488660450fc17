#!/bin/sh
# The whole model's inner products checked whole on the OpenCL device
# (bench/workloads/product_device_check.h, model_product_check.c): every
# projection of every layer and the LM head, during the verify's replay,
# by column checksums over blocks of rows. A product fault
# (GPUMEM_FAULT=corrupt-product or flip-product-bit, output_fault.h)
# strikes one element of one product's output in every forward, the
# timed one and the replay alike: a deterministic wrong product, which the
# replay's logits compare cannot see. Each product (q, k, v, o, gate, up,
# down, lm_head) is struck by both kinds, in fp32, fp16 and bf16 in turn,
# and in int8 beside four of them (product_device_check_int8.h): q_proj's
# flip of bit 7, o_proj's overwrite (a residual epilogue), the LM head's
# overwrite (fp32 logits) and layer 1 up_proj's flip, whose struck code
# -1 becomes the saturated 127;
# a training step (q and the LM head), LoRA, QLoRA and int4 weights (fp16,
# bf16) are struck too. Every point is a mismatch, none `ok`, and each names the struck
# product, the rows of the block whose column sum failed and the struck
# element itself (from the strike's stderr line). Without a fault every
# point is `ok` and says its products were checked whole; with the device
# checksums turned off (GPUMEM_PRODUCT_CHECK=sampled) struck products pass
# the sampled checks: what the checksums find, nothing else does. Where
# the checksums' scratch does not fit under the cap, the sampled checks
# stand alone and the note says so.
# The training backward's products (dX, dW, LoRA's, named ROLE PRODUCT:
# dX_up_proj ...) are checked whole during the verify's backward and
# struck in every backward: an untouched training step's every backward
# product is checked, and a struck one (a dX added in place, a dW and
# LoRA's dx from a transposed operand, in fp32 and bf16, both kinds) is
# named with its block (and, but where it was added in place, element).
# Every layer's attention output (and a training step's log-sum-exp) is
# recomputed whole on the device during the replay (model_attention_verify,
# model_attention_check.c), ours and the vendor path's (CLBlast's QK^T and
# PV GEMMs, our softmax): unstruck (every precision's inference, bf16
# training, fp16 beside an fp8 KV cache; CLBlast's path in
# tests/39-model-gemm-pocl.t) no point is wrong; layer 1's
# attention struck (GPUMEM_FAULT=...:attn:1) by both kinds is a mismatch
# at every point naming the struck row and column, and passes with the
# device check off, the struck row not one the stage check samples.
. tests/lib.sh
plan 35

# tiny-llama-gqa: 4 layers, hidden 256, 2 KV heads of 32, intermediate
# 688, vocabulary 1024; 2 sequences of 8 tokens.
model() {
    run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
        --model tiny-llama-gqa --batch 2 --seq 8 --reps 1 --warmup 0 --quiet "$@"
}

# Without a fault (training, LoRA and QLoRA too: every product before the
# struck one passes in the runs below, the LM head's after all 28 of the
# layers'; tests/32-product-faults.t and 39-lora-step-pocl.t run them
# unstruck).
# Every layer's attention output is checked whole too (CLBlast's path
# unstruck, inference and training: tests/39-model-gemm-pocl.t).
attn_whole='; the attention of every layer checked whole on the device (4: recomputed row by row, largest difference '
export attn_whole
# The largest |got - want| / tolerance the attention's check saw in a run.
margin() {
    perl -e "$CSV_PERL"'my $m = 0; for (rows($ARGV[0])) {
        $m = $1 if $_->{note} =~ /largest difference (\S+) of its tolerance/ && $1 > $m } print "$m\n"' "$1"
}
model --mode inference --precision fp32,fp16,bf16,int8,fp8e4m3,fp8e5m2 --out "$TEST_TMP/clean"
is "$RC:$(csv_count "$TEST_TMP/clean/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"
    && $_->{note} =~ /every product checked whole on the device \(29: column checksums/
    && index($_->{note}, $ENV{attn_whole}) >= 0')" "0:6" \
    "without a fault: inference in fp32, fp16, bf16, int8 and both fp8 ok, its 29 products and 4 layers' attention checked whole"
[ "$RC" -eq 0 ] || diag "$ERR"

# faulted NAME COLUMNS LABEL MODE PRECISIONS [ARGS...]: runs with
# GPUMEM_FAULT=NAME (already exported), checks that every point is a
# mismatch naming LABEL, the block holding the struck element (the output
# has COLUMNS columns) and the element.
faulted() {
    name=$1 cols=$2 label=$3 mode=$4 precs=$5
    shift 5
    out=$TEST_TMP/$(printf '%s' "$GPUMEM_FAULT-$mode-$precs" | tr ':,' '__')
    model --mode "$mode" --precision "$precs" --out "$out" "$@"
    csv=$out/results.csv
    struck=$(printf '%s\n' "$ERR" | sed -n "s/^gpumem: fault: .* struck element \([0-9]*\) of .* of $label\$/\1/p" \
        | head -n 1)
    points=$(csv_count "$csv" '$_->{metric} eq "time" && $_->{status} ne "unsupported"')
    LABEL=$label STRUCK=${struck:--1} COLS=$cols
    export LABEL STRUCK COLS
    # A product added to its output in place (IN_PLACE=1) names the block
    # and column alone: what the output held before is gone.
    named=$(csv_count "$csv" '$_->{metric} eq "time" && $_->{status} eq "mismatch"
        && $_->{note} =~ /^\Q$ENV{LABEL}\E rows \[(\d+), (\d+)\) column (\d+): block sum off by \S+ \(tolerance \S+\), found by the device checksums(?:; element \[(\d+)\]\[(\d+)\] is wrong| \(added in place: the element is not located\))$/
        && do { my ($row, $col) = (int($ENV{STRUCK} / $ENV{COLS}), $ENV{STRUCK} % $ENV{COLS});
                $row >= $1 && $row < $2 && $3 == $col
                && ($ENV{IN_PLACE} ? !defined $4 : defined $4 && $4 == $row && $5 == $col) }')
    is "$RC:$points:$named:$(csv_count "$csv" '$_->{status} eq "ok"')" "1:$(printf '%s\n' "$precs" | tr ',' '\n' | wc -l | tr -d ' '):$points:0" \
        "$GPUMEM_FAULT, $mode $precs: every point a mismatch naming $label's block and element ${struck:-(no strike)}"
}

# Each product by both kinds, in inference, the precisions taken in turn
# (int8 beside the first kind of q_proj, o_proj and the LM head, and
# beside up_proj's flip; fp8e4m3 or fp8e5m2 beside the first kind of the
# others); q_proj and the LM head (every token's row) the
# second time in a training step.
set -- q_proj:1:256 k_proj:0:64 v_proj:3:64 o_proj:2:256 gate_proj:1:688 up_proj:1:688 down_proj:3:256 lm_head::1024
i=0
for spec; do
    name=${spec%%:*} rest=${spec#*:}
    layer=${rest%%:*} cols=${rest#*:}
    label="layer $layer $name"
    [ -n "$layer" ] || label=$name
    if [ $((i % 2)) -eq 0 ]; then first=flip-product-bit second=corrupt-product; else first=corrupt-product second=flip-product-bit; fi
    GPUMEM_FAULT=$first:$name${layer:+:$layer}
    export GPUMEM_FAULT
    case $name in
    q_proj | o_proj | lm_head) int8=,int8 ;;
    k_proj | gate_proj | down_proj) int8=,fp8e4m3 ;;   # fp8: blocks of one row
    *) int8=,fp8e5m2 ;;
    esac
    # Under the sanitizers every other product is struck (the same host
    # code as its neighbours'), up_proj by its second kind alone.
    case "$GM_BUILD:$name:$((i % 2))" in
    build-san*:up_proj:*) skip "$GPUMEM_FAULT: the plain pass strikes it" ;;
    build-san*:*:1) skip "$GPUMEM_FAULT: the plain pass strikes it"
        skip "$second:$name: the plain pass strikes it"; i=$((i + 1)); continue ;;
    *) faulted "$name" "$cols" "$label" inference "$(echo fp32 fp16 bf16 | cut -d' ' -f$((i % 3 + 1)))$int8" ;;
    esac
    GPUMEM_FAULT=$second:$name${layer:+:$layer}
    # Under the sanitizers each product is struck once (the second strike
    # runs the same host code as the first), but up_proj's int8 flip into
    # saturation, which the test after the loop reads.
    case "$GM_BUILD:$name" in
    build-san*:up_proj) ;;
    build-san*) skip "$GPUMEM_FAULT: the plain pass strikes it"; i=$((i + 1)); continue ;;
    esac
    case $name in
    q_proj | lm_head) faulted "$name" "$cols" "$label" train "$(echo bf16 fp32 | cut -d' ' -f$((i % 2 + 1)))" ;;
    up_proj) faulted "$name" "$cols" "$label" inference "$(echo fp32 fp16 bf16 | cut -d' ' -f$(((i + 1) % 3 + 1))),int8" ;;
    *) faulted "$name" "$cols" "$label" inference "$(echo fp32 fp16 bf16 | cut -d' ' -f$(((i + 1) % 3 + 1)))" ;;
    esac
    i=$((i + 1))
done

# In int8, up_proj's flip turns code -1 into 127, a saturated code, which
# the sums take out and recompute: its miss is judged against that
# element's own tolerance (the accumulation's, far below a step of
# 4/127), not a block's (half a step a row).
is "$(csv_count "$TEST_TMP/flip-product-bit_up_proj_1-inference-fp32_int8/results.csv" '$_->{metric} eq "time"
    && $_->{precision} eq "int8" && $_->{note} =~ /block sum off by (\S+) \(tolerance (\S+)\)/ && $1 > 3 && $2 < 0.01')" 1 \
    "int8 layer 1 up_proj flipped into saturation: found by its element's exact recomputation"

# LoRA and QLoRA (the base product checked before the adapter's term is
# added), and int4 weights (groups of 16 rows: the intermediate size is 688).
GPUMEM_FAULT=flip-product-bit:gate_proj:2
faulted gate_proj 688 "layer 2 gate_proj" lora bf16
GPUMEM_FAULT=corrupt-product:v_proj:1
faulted v_proj 64 "layer 1 v_proj" qlora bf16
GPUMEM_FAULT=flip-product-bit:down_proj:0
faulted down_proj 256 "layer 0 down_proj" inference fp16,bf16 --weight-precision int4 --group-size 16

# The training backward: without a fault every one of its products is
# checked (the head's dW and dX, then dW and dX of each of the 4 layers'
# 7 projections: 58), with one, the struck product is named. dX of up_proj
# is added in place to gate_proj's ([T, h]: 256 columns); dW of down_proj
# ([I, h] from act^T dR) and LoRA's dA of gate_proj ([h, r], r 16, from
# x^T d(xa)) read A transposed; LoRA's dx of v_proj is added in place.
unset GPUMEM_FAULT
model --mode train --precision bf16 --out "$TEST_TMP/train-clean"
is "$RC:$(csv_count "$TEST_TMP/train-clean/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"
    && $_->{note} =~ /every product checked whole on the device \(29: .*; backward products: \w+, 58 checked whole on the device/
    && index($_->{note}, $ENV{attn_whole}) >= 0')" \
    "0:1" "without a fault: a training step in bf16 ok, its 58 backward products checked whole, its attention (log-sum-exp too)"
[ "$RC" -eq 0 ] || diag "$ERR"
GPUMEM_FAULT=corrupt-product:dX_up_proj:1 IN_PLACE=1
export GPUMEM_FAULT IN_PLACE
faulted dX_up_proj 256 "layer 1 dX_up_proj" train fp32
GPUMEM_FAULT=flip-product-bit:dW_down_proj:2 IN_PLACE=
faulted dW_down_proj 256 "layer 2 dW_down_proj" train bf16
GPUMEM_FAULT=flip-product-bit:lora_dA_gate_proj:3
faulted lora_dA_gate_proj 16 "layer 3 lora_dA_gate_proj" lora fp32
GPUMEM_FAULT=corrupt-product:lora_dx_v_proj:0 IN_PLACE=1
faulted lora_dx_v_proj 256 "layer 0 lora_dx_v_proj" lora bf16
unset GPUMEM_FAULT IN_PLACE

# The attention's device check (model_attention_verify). tiny-llama-gqa's
# attention output is [tokens, 8 heads x 32]: 256 columns. Unstruck
# beside an fp8 KV cache (fp16 activations; the cache read in its own
# precision): no false alarm (the plain pass alone: its host code is the
# runs' above). The margin, the largest difference over its tolerance,
# over the unstruck runs.
case "$GM_BUILD" in
build-san*) skip "the attention unstruck beside an fp8 KV cache: the plain pass runs it" ;;
*)
    model --mode inference --precision fp16 --kv-precision fp8e4m3 --out "$TEST_TMP/attn-kv8"
    is "$RC:$(csv_count "$TEST_TMP/attn-kv8/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"
        && index($_->{note}, $ENV{attn_whole}) >= 0')" "0:1" \
        "without a fault: fp16 beside an fp8 KV cache ok, every layer's attention checked whole"
    [ "$RC" -eq 0 ] || diag "$ERR"
    ;;
esac
diag "the attention's check: largest difference $(for r in clean train-clean attn-kv8; do
    [ -f "$TEST_TMP/$r/results.csv" ] && margin "$TEST_TMP/$r/results.csv"; done | sort -g | tail -n 1) of its tolerance over the unstruck runs"

# 2 sequences of 16 tokens: the strike's row lies outside layer 1's 4
# sampled rows of 32.
model16() {
    run_gpumem bench --backend opencl --mem-limit "$TEST_MEM_LIMIT" --suite workloads --workload block \
        --model tiny-llama-gqa --batch 2 --seq 16 --reps 1 --warmup 0 --quiet "$@"
}
# attn_faulted POINTS ARGS...: GPUMEM_FAULT (exported) strikes layer 1's
# attention; every one of the POINTS points must be a mismatch naming the
# struck element, the only one wrong.
attn_faulted() {
    want=$1
    shift
    out=$TEST_TMP/$(printf '%s' "$GPUMEM_FAULT-$*" | tr -c 'a-z0-9\n' '_')
    model16 --out "$out" "$@"
    STRUCK=$(printf '%s\n' "$ERR" | sed -n 's/^gpumem: fault: .* struck element \([0-9]*\) of .* of layer 1 attn$/\1/p' |
        head -n 1)
    export STRUCK
    points=$(csv_count "$out/results.csv" '$_->{metric} eq "time" && $_->{status} ne "unsupported"')
    named=$(csv_count "$out/results.csv" '$_->{metric} eq "time" && $_->{status} eq "mismatch"
        && $_->{note} =~ /^layer 1 attention row \[(\d+)\] column (\d+): off by \S+ \(tolerance \S+\), found by the device.s attention check; 1 of \d+ elements wrong$/
        && $1 == int($ENV{STRUCK} / 256) && $2 == $ENV{STRUCK} % 256')
    is "$RC:$points:$named" "1:$want:$want" "$GPUMEM_FAULT $*: every point a mismatch naming the struck element ${STRUCK:-(no strike)}"
}
# The flip: ours and CLBlast's, inference and training, in fp32; the
# overwrite (but under the sanitizers: the same host code): an fp8 KV
# cache beside fp16, and bf16 inference and training.
GPUMEM_FAULT=flip-product-bit:attn:1
export GPUMEM_FAULT
attn_faulted 4 --variant all --mode inference,train --precision fp32
GPUMEM_FAULT=corrupt-product:attn:1
case "$GM_BUILD" in
build-san*)
    skip "$GPUMEM_FAULT beside an fp8 KV cache: the plain pass strikes it"
    skip "$GPUMEM_FAULT, bf16: the plain pass strikes it"
    ;;
*)
    attn_faulted 1 --mode inference --precision fp16 --kv-precision fp8e4m3
    attn_faulted 2 --mode inference,train --precision bf16
    ;;
esac
# Without the device check (GPUMEM_PRODUCT_CHECK=sampled) the same strike
# passes: its row is not one of layer 1's sampled rows, and o_proj's
# checksums and the logits' replay take it as it is.
GPUMEM_PRODUCT_CHECK=sampled model16 --mode inference --precision fp32 --out "$TEST_TMP/attn-sampled"
is "$RC:$(csv_count "$TEST_TMP/attn-sampled/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"
    && $_->{note} =~ /; attention checked on sampled rows \(GPUMEM_PRODUCT_CHECK=sampled\)$/'):$(printf '%s\n' "$ERR" |
    grep -c "struck element ${STRUCK:-x} of .* of layer 1 attn\$")" "0:1:2" \
    "without the device check, layer 1's attention struck (in the timed forward and the replay) passes as ok"
unset GPUMEM_FAULT

# The same strike as up_proj's above, the device checksums off: it lies
# outside the rows the stages are checked on, and the logits' replay
# repeats it, so the point passes.
GPUMEM_PRODUCT_CHECK=sampled GPUMEM_FAULT=corrupt-product:up_proj:1 model --mode inference --precision bf16 \
    --out "$TEST_TMP/sampled"
is "$RC:$(csv_count "$TEST_TMP/sampled/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"
    && $_->{note} =~ /products checked on sampled rows \(GPUMEM_PRODUCT_CHECK=sampled\)/')" "0:1" \
    "without the device checksums, layer 1 up_proj struck passes as ok"

# Under a cap of exactly the model's bytes the checksums' scratch cannot
# be allocated: the replay goes on with the sampled checks, the point is
# ok, and its note says why.
total=$("$GPUMEM" plan --model tiny-llama-gqa --mode inference --precision bf16 --batch 2 --seq 8 --format csv |
    awk -F, '$2 == "total" { print $4 }')
run_gpumem bench --backend opencl --mem-limit "${total:-0}" --suite workloads --workload block --model tiny-llama-gqa \
    --batch 2 --seq 8 --reps 1 --warmup 0 --quiet --mode inference --precision bf16 --out "$TEST_TMP/edge"
is "$RC:$(csv_count "$TEST_TMP/edge/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"
    && $_->{note} =~ /products checked on sampled rows \(no device memory for the checksums. scratch \(\d+ bytes would exceed the memory limit/')" "0:1" \
    "at the edge of the cap ($total bytes): the sampled checks alone, the note saying so"

# A product fault names a product the model has, or it is a usage error.
GPUMEM_FAULT=flip-product-bit:w_proj model --mode inference --precision fp32 --out "$TEST_TMP/bad"
is "$RC:$(printf '%s\n' "$ERR" | grep -c "GPUMEM_FAULT 'flip-product-bit:w_proj': a product fault is")" "2:1" \
    "an unknown product: exit status 2 and one line naming the fault"
GPUMEM_FAULT=corrupt-product:dX_attn model --mode train --precision fp32 --out "$TEST_TMP/bad-attn"
is "$RC:$(printf '%s\n' "$ERR" | grep -c "GPUMEM_FAULT 'corrupt-product:dX_attn': a product fault is")" "2:1" \
    "attn has no backward product: exit status 2"
done_testing
