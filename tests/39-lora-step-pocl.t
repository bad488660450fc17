#!/bin/sh
# LoRA trained on the OpenCL device (bench/workloads/model_lora.c): the
# tiny GQA model's base frozen, rank-r adapters on its projections, the
# forward, the loss, the backward (dX through the base, dA and dB) and
# AdamW on the adapters. The check replays each adapted product with its
# adapter's part and compares the loss and every A and B gradient with
# the double-precision step of model_train_ref.c; a planted error in the
# adapters' backward (GPUMEM_FAULT=lora-backward: alpha / r left out) is a
# mismatch row naming the gradient. The step's tensors (the harness
# allocates exactly them, at once) are plan's --mode lora items within 5%.
# QLoRA: the same adapters over a base whose projections are NF4 codes
# (bench/workloads/model_nf4.c), dequantised for each product; the
# reference dequantises the same codes on the host, so a planted error in
# the device's dequantisation (GPUMEM_FAULT=nf4-dequant) is caught.
# Bad LoRA input is one line and exit status 2. --recompute full and
# selective recompute in the backward, verify, and drop plan's bytes; the
# oom suite finds both steps' largest batch by running them.
. tests/lib.sh
plan 31

model="--model tiny-llama-gqa"
plan_total() {   # PRECISION [OPTIONS]
    p=$1
    shift
    "$GPUMEM" plan $model --mode "${mode:-lora}" --precision "$p" --batch 2 --seq 16 "$@" --format csv |
        awk -F, '$2 == "total" { print $4 }'
}
# within5 GOT WANT: "ok" where GOT is within 5% of WANT, else both
within5() { awk -v g="$1" -v w="$2" 'BEGIN { d = g - w; if (d < 0) d = -d; print (w > 0 && d <= 0.05 * w) ? "ok" : g " vs " w }'; }

run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model --mode lora \
    --precision fp32,bf16 --batch 2 --seq 16 --reps 2 --out "$TEST_TMP/l" --quiet
is "$RC" 0 "lora fp32 and bf16: exit status 0"
[ -n "$ERR" ] && diag "$ERR"
csv="$TEST_TMP/l/results.csv"
is "$(csv_count "$csv" '$_->{metric} eq "time" && $_->{mode} eq "lora" && $_->{status} eq "ok"')" 2 \
    "fp32 and bf16 LoRA steps verify: adapted products, loss and every adapter gradient against the double-precision step"
is "$(csv_count "$csv" '$_->{metric} eq "tokens" && $_->{unit} eq "tokens/s" && $_->{status} eq "ok" && $_->{value} > 0')" 2 \
    "each precision reports tokens/s of whole LoRA steps"
for p in fp32 bf16; do
    got=$(csv_value "$csv" "\$_->{metric} eq 'time' && \$_->{precision} eq '$p'" model_bytes)
    want=$(plan_total $p)
    is "$(within5 "$got" "$want")" ok "lora $p: the step holds $got bytes, plan says $want"
done

# Rank 8 on q and v alone (LoRA's paper), --precision left out: bf16.
run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model --mode lora \
    --lora-rank 8 --lora-alpha 32 --lora-targets q,v --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/qv" --quiet
csv="$TEST_TMP/qv/results.csv"
is "$(csv_count "$csv" '$_->{metric} eq "time" && $_->{precision} eq "bf16" && $_->{status} eq "ok"'):$(csv_count "$csv" '$_->{metric} eq "time"')" 1:1 \
    "without --precision the LoRA step runs bf16 alone, and verifies with rank 8 on q and v"
got=$(csv_value "$csv" "\$_->{metric} eq 'time'" model_bytes)
want=$(plan_total bf16 --lora-rank 8 --lora-targets q,v)
is "$(within5 "$got" "$want")" ok "rank 8 on q, v: the step holds $got bytes, plan says $want"

GPUMEM_FAULT=lora-backward run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block \
    $model --mode lora --precision fp32 --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/f" --quiet
m='$_->{status} eq "mismatch"'
like "$RC:$(csv_count "$TEST_TMP/f/results.csv" "$m"):$(csv_value "$TEST_TMP/f/results.csv" "$m" note)" \
    "^1:1:gradient of LoRA A of down \(layer 3\)" \
    "a planted error in the adapters' backward is a mismatch row naming the first adapter gradient it spoils"

run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model --mode qlora \
    --precision fp32,bf16 --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/q" --quiet
csv="$TEST_TMP/q/results.csv"
is "$RC:$(csv_count "$csv" '$_->{metric} eq "time" && $_->{mode} eq "qlora" && $_->{status} eq "ok"')" 0:2 \
    "fp32 and bf16 QLoRA steps verify against the double-precision step over the host's dequantised NF4 base"
like "$(csv_value "$csv" "\$_->{metric} eq 'time'" note)" "the base in NF4 dequantised for each product" \
    "the rows say the base was NF4"
for p in fp32 bf16; do
    got=$(csv_value "$csv" "\$_->{metric} eq 'time' && \$_->{precision} eq '$p'" model_bytes)
    want=$(mode=qlora plan_total $p)
    is "$(within5 "$got" "$want")" ok "qlora $p: the step holds $got bytes, plan says $want"
done
GPUMEM_FAULT=nf4-dequant run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block \
    $model --mode qlora --precision bf16 --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/nf" --quiet
like "$RC:$(csv_count "$TEST_TMP/nf/results.csv" "$m"):$(csv_value "$TEST_TMP/nf/results.csv" "$m" note)" \
    "^1:1:training loss: expected [0-9.]+ \(double-precision step\), got" \
    "a planted error in the device's NF4 dequantisation is a mismatch row (the loss off the reference's)"

# bad_input ARGS...: exit status, lines on stderr and the first.
bad_input() {
    run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block --batch 2 --seq 16 \
        --reps 1 --out "$TEST_TMP/bad" --quiet "$@"
    echo "$RC:$(printf '%s\n' "$ERR" | grep -c .):$ERR"
}
like "$(bad_input $model --mode lora --lora-rank 300)" \
    "^2:1:gpumem bench: --lora-rank 300: above the width of q in tiny-llama-gqa" "a rank above the width: one line, exit 2"
like "$(bad_input --model tiny-gpt2 --mode lora --lora-targets q,gate)" \
    "^2:1:gpumem bench: --lora-targets gate: model tiny-gpt2 has no gate projection" \
    "targets the model lacks: one line, exit 2"
like "$(bad_input $model --mode qlora --weight-precision bf16)" \
    "^2:1:gpumem bench: --weight-precision bf16 with --mode qlora: QLoRA's frozen base is 4-bit" \
    "QLoRA over a 16-bit base: one line, exit 2"
like "$(bad_input $model --mode lora --weight-precision int4)" \
    "^2:1:gpumem bench: --weight-precision int4 with --mode lora: LoRA's frozen base is in --precision" \
    "LoRA over an int4 base: one line pointing to qlora, exit 2"
like "$(bad_input $model --mode lora --precision bf16,int8)" \
    "^2:1:gpumem bench: --precision int8 with --mode lora: fine-tuning trains in fp32, fp16 or bf16" \
    "LoRA in int8: one line naming --precision, exit 2"
like "$(bad_input $model --mode train --lora-rank 8)" "^2:1:gpumem bench: --lora-rank concerns --mode lora, qlora" \
    "--lora-rank without lora or qlora: one line, exit 2"
[ ! -e "$TEST_TMP/bad/results.csv" ]; ok $? "refused before anything is measured: no results written"

# --recompute: full keeps each layer's input and runs the rest of the
# layer again before its backward (the down adapter's x A with it),
# selective the attention (its log-sum-exp). LoRA and QLoRA verify as
# above (full in fp32, whose recomputed attention statistics must not
# land on the loss's gradient over the logits; selective in bf16), and
# the device holds plan's difference less, to the byte.
for rp in full:fp32 selective:bf16; do
    r=${rp%%:*} p=${rp##*:}
    run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model --mode lora,qlora \
        --recompute $r --precision $p --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/r$r" --quiet
    is "$RC:$(csv_count "$TEST_TMP/r$r/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 0:2 \
        "--recompute $r, $p: the LoRA and QLoRA steps verify (every adapter gradient against the double-precision step)"
    for m in lora qlora; do
        base=l
        [ $m = qlora ] && base=q
        none=$(csv_value "$TEST_TMP/$base/results.csv" "\$_->{metric} eq 'time' && \$_->{precision} eq '$p'" model_bytes)
        got=$(csv_value "$TEST_TMP/r$r/results.csv" "\$_->{metric} eq 'time' && \$_->{mode} eq '$m'" model_bytes)
        want=$(($(mode=$m plan_total $p) - $(mode=$m plan_total $p --recompute $r)))
        is "$((none - got))" "$want" "--recompute $r, $m $p: the device holds $((none - got)) bytes less, as plan says"
    done
done

# The oom suite searches LoRA's and QLoRA's largest batch by running
# their steps on the device (per tensor here, as --mode train's test; the
# patterns are the suite's, whatever the mode); the answer is the memory
# model's (or one less), as for --mode train, and the answer to where the
# models stop fitting names both.
run_gpumem bench --backend opencl --suite oom --oom-parts batch --mem-limit 32MiB --workload block $model \
    --mode lora,qlora --precision bf16 --seq 16 --pattern per-tensor --out "$TEST_TMP/oom"
is "$RC" 0 "the oom suite's LoRA and QLoRA searches: exit status 0"
csv="$TEST_TMP/oom/results.csv"
is "$(csv_count "$csv" '$_->{metric} eq "max_batch" && $_->{status} eq "ok" && $_->{value} >= 1 && $_->{note} =~ /guess \d+ for .* free; each probe allocated the whole batch and ran and verified its first sequence/')" 2 \
    "lora and qlora: a batch of at least 1 whose probes ran and verified the step, the guess beside it"
for m in lora qlora; do
    found=$(csv_value "$csv" "\$_->{metric} eq 'max_batch' && \$_->{mode} eq '$m' && \$_->{pattern} eq 'per-tensor'" value)
    predicted=$(csv_value "$csv" "\$_->{metric} eq 'max_batch_model' && \$_->{mode} eq '$m' && \$_->{pattern} eq 'per-tensor'" value)
    [ -n "$predicted" ] && [ "${found:-0}" -le "$predicted" ] && [ "${found:-0}" -ge $((predicted - 1)) ]
    ok $? "$m bf16 seq 16 under 32MiB: the largest batch found ($found) is the memory model's ($predicted) or one less"
done
like "$OUT" "^Where do the models stop fitting\\? .*tiny-llama-gqa bf16 lora per-tensor, seq 16: batch <= [1-9][0-9]* \\(model: [0-9]+\\); tiny-llama-gqa bf16 qlora per-tensor, seq 16: batch <= [1-9]" \
    "the answer to where the models stop fitting names the LoRA and QLoRA searches"
