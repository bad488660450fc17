#!/bin/sh
# The whole model's training step on the OpenCL device
# (bench/workloads/model_backward.c): the forward pass, the fused
# cross-entropy, the backward of every stage and AdamW on the real
# gradients, for the tiny GQA model in fp32 and bf16. The check compares
# the loss and every parameter's gradient with a double-precision step on
# the CPU (model_train_ref.c) and one AdamW step on a sample; a planted
# error in SwiGLU's backward kernel (GPUMEM_FAULT=train-backward) is a
# mismatch row naming the gradient it spoils. The tensors the step
# allocates are plan's items (dlogits, the backward workspace and the token
# ids among them): the harness allocates exactly them, at once, so the
# step's peak on the device is plan's total.
. tests/lib.sh
plan 14

model="--model tiny-llama-gqa"
plan_total() {   # PRECISION BATCH SEQ [OPTIONS]
    p=$1 b=$2 s=$3
    shift 3
    "$GPUMEM" plan $model --mode train --precision "$p" --batch "$b" --seq "$s" "$@" --format csv |
        awk -F, '$2 == "total" { print $4 }'
}

run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model --mode train \
    --precision fp32,bf16 --batch 2 --seq 16 --reps 2 --out "$TEST_TMP/t" --quiet
is "$RC" 0 "train fp32 and bf16: exit status 0"
[ -n "$ERR" ] && diag "$ERR"
csv="$TEST_TMP/t/results.csv"
is "$(csv_count "$csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{note} !~ /synthetic/')" 2 \
    "fp32 and bf16 steps verify: loss and gradients against the double-precision step, AdamW on a sample"
is "$(csv_count "$csv" '$_->{metric} eq "tokens" && $_->{unit} eq "tokens/s" && $_->{status} eq "ok" && $_->{value} > 0')" 2 \
    "each precision reports tokens/s of whole training steps"
# The step's FLOP rate beside its forward pass's alone, timed in turn in
# the point: the note gives the ratio and the two times (their values are
# the machine's; only that they are measured and stated is checked here).
is "$(csv_count "$csv" '$_->{metric} eq "time" && $_->{note} =~ /; step FLOP rate (\d+\.\d\d) x the forward.s \(3 x forward ([\d.e+-]+) ms over step ([\d.e+-]+) ms, medians of 3 pairs timed in turn\)/ && $1 > 0 && $2 > 0 && $3 > 0')" 2 \
    "each training row's note gives the step's FLOP rate over the forward's, with both times"
for p in fp32 bf16; do
    want=$(plan_total $p 2 16)
    is "$(csv_value "$csv" "\$_->{metric} eq 'time' && \$_->{precision} eq '$p'" model_bytes)" "$want" \
        "train $p: the step's tensors are plan's total ($want bytes)"
done
items=$("$GPUMEM" plan $model --mode train --precision bf16 --batch 2 --seq 16 --format csv | awk -F, '{ print $3 }')
like "$items" "dlogits" "plan counts the loss's gradient (dlogits)"
like "$items" "backward_workspace" "plan counts the backward's workspace"

# train_fault FAULT PRECISION: one step under a planted error; prints
# how many mismatch rows it wrote and the first one's note.
train_fault() {
    GPUMEM_FAULT=$1 run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model \
        --mode train --precision "$2" --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/$1" --quiet
    m='$_->{status} eq "mismatch"'
    echo "$(csv_count "$TEST_TMP/$1/results.csv" "$m"):$(csv_value "$TEST_TMP/$1/results.csv" "$m" note)"
}
like "$(train_fault train-backward fp32)" "^1:gradient of gate \(layer \d+\)" \
    "a planted error in SwiGLU's backward kernel is a mismatch row naming the gate's gradient"
like "$(train_fault corrupt-output bf16)" "^1:dlogits\[\d+\]\[\d+\] of the iteration" \
    "a corrupted gradient of the loss is a mismatch row (bf16)"

# --recompute: full keeps each layer's input and recomputes the rest of a
# layer before its backward; selective recomputes the attention's
# log-sum-exp (fp32 here: its recomputed statistics must not land on the
# loss's gradient, which fp32 keeps over the logits). Both verify, and the
# device's bytes drop by plan's.
for rp in full:bf16 selective:fp32; do
    r=${rp%%:*} p=${rp##*:}
    none=$(csv_value "$csv" "\$_->{metric} eq 'time' && \$_->{precision} eq '$p'" model_bytes)
    run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model --mode train \
        --recompute $r --precision $p --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/$r" --quiet
    is "$(csv_count "$TEST_TMP/$r/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 1 \
        "--recompute $r, $p: the step verifies (gradients against the double-precision step)"
    got=$(csv_value "$TEST_TMP/$r/results.csv" "\$_->{metric} eq 'time'" model_bytes)
    want=$(plan_total $p 2 16 --recompute $r)
    is "$((none - got))" "$(($(plan_total $p 2 16) - want))" \
        "--recompute $r, $p: the device holds $((none - got)) bytes less, as plan says"
done
