#!/bin/sh
# ZeRO-Offload's optimizer offload in the whole model's training step on
# the OpenCL device (bench/workloads/model_offload.c): the fp32 master
# weights, the AdamW moments and the gradients in pinned host memory, each
# module's gradients copied to the host as the backward ends it, AdamW on
# the host and the updated weights back to the device. The device holds
# exactly plan's device bytes for the offload and the host plan's host
# bytes; the step verifies as the on-device one does (loss and every
# gradient against the double-precision step, AdamW on a sample against
# the reference), and the device's weights must be the host's master
# weights rounded, so a planted missing upload (GPUMEM_FAULT=
# offload-upload) is a mismatch row. A tied head larger than a layer
# passes its gradient through the host and back. params is an
# unsupported row with plan's bytes; bad input is one line and exit
# status 2.
. tests/lib.sh
plan 18

model="--model tiny-llama-gqa"
shape="--precision bf16 --batch 2 --seq 16"
plan_of() {   # MODE FIELD [OPTIONS]: plan's total or host_total
    m=$1 f=$2
    shift 2
    [ "$m" = lora ] && set -- --adapter-precision bf16 "$@"     # the device's adapters: the compute precision
    "$GPUMEM" plan $model --mode "$m" $shape "$@" --format csv |
        awk -F, -v f="$f" '$2 == "total" && $3 == f { print $4 }'
}

run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model --mode train,lora \
    $shape --reps 1 --zero-offload optimizer --out "$TEST_TMP/o" --quiet
is "$RC" 0 "train and lora with --zero-offload optimizer: exit status 0"
[ -n "$ERR" ] && diag "$ERR"
csv="$TEST_TMP/o/results.csv"
is "$(csv_count "$csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{note} =~ /ZeRO-Offload/')" 2 \
    "both steps verify with the states in host memory (gradients, loss, the host's AdamW on a sample)"
for m in train lora; do
    sel="\$_->{mode} eq '$m'"
    is "$(csv_value "$csv" "$sel && \$_->{metric} eq 'time'" model_bytes)" \
        "$(plan_of $m total --zero-offload optimizer)" "$m: the device holds plan's device bytes for the offload"
    is "$(csv_value "$csv" "$sel && \$_->{metric} eq 'host_bytes'" value)" \
        "$(plan_of $m host_total --zero-offload optimizer)" "$m: the host holds plan's host bytes (host_total)"
done
is "$(csv_count "$csv" '$_->{status} eq "ok" && $_->{value} > 0 && $_->{unit} eq "ms" && $_->{metric} =~ /^(offload_transfer|host_adamw|device_compute)_time$/')" 6 \
    "each step's rows give its transfer time, host AdamW time and device compute time"
is "$(csv_count "$csv" '$_->{metric} eq "tokens" && $_->{unit} eq "tokens/s" && $_->{status} eq "ok" && $_->{value} > 0')" 2 \
    "and tokens/s of whole steps"
none=$(plan_of train total)
off=$(csv_value "$csv" "\$_->{mode} eq 'train' && \$_->{metric} eq 'time'" model_bytes)
[ "$off" -lt "$none" ] 2>/dev/null
ok $? "the device holds less than without offload ($off < $none bytes)"

# A tied head, larger than a layer: the buffer holds the head's gradient
# (plan's gradient_buffer), which goes to the host after the head's
# backward and comes back for the embedding's rows to add to.
printf '{"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2, "vocab_size": 1024, "tie_word_embeddings": true}\n' \
    >"$TEST_TMP/tied.json"
run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block --model "$TEST_TMP/tied.json" \
    --mode train --precision bf16 --batch 2 --seq 8 --reps 1 --zero-offload optimizer --out "$TEST_TMP/t" --quiet
want=$("$GPUMEM" plan --model "$TEST_TMP/tied.json" --mode train --precision bf16 --batch 2 --seq 8 \
    --zero-offload optimizer --format csv | awk -F, '$3 == "gradient_buffer" { g = $4 } $3 == "total" { t = $4 } END { print g ":" t }')
is "$(csv_count "$TEST_TMP/t/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"'):$(csv_value "$TEST_TMP/t/results.csv" '$_->{metric} eq "time"' model_bytes)" \
    "1:${want#*:}" "tied head: the step verifies (the embedding's gradient with the head's part), plan's device bytes"
is "${want%%:*}" "$((1024 * 64 * 2))" "plan's gradient buffer there is the head's gradient"

GPUMEM_FAULT=offload-upload run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block \
    $model --mode train $shape --reps 1 --zero-offload optimizer --out "$TEST_TMP/f" --quiet
like "$(csv_value "$TEST_TMP/f/results.csv" '$_->{status} eq "mismatch"' note)" \
    "^weight of parameter \d+ on the device after the host's AdamW step" \
    "updated weights left on the host (GPUMEM_FAULT=offload-upload): a mismatch row naming the device's weight"

run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model --mode train \
    $shape --reps 1 --zero-offload params --out "$TEST_TMP/p" --quiet
is "$(csv_count "$TEST_TMP/p/results.csv" '$_->{status} eq "unsupported" && $_->{note} =~ /--zero-offload params: the device.s step does not fetch/')" 1 \
    "params: one unsupported row naming what the device's step lacks"
is "$(csv_value "$TEST_TMP/p/results.csv" '$_->{metric} eq "time"' model_bytes)" \
    "$(plan_of train total --zero-offload params)" "params: the row carries plan's device bytes"

# bad input: one line naming the option, exit status 2, no run folder
run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model $shape \
    --zero-offload optimizer --out "$TEST_TMP/b1" --quiet
is "$RC:$(printf '%s\n' "$ERR" | wc -l | tr -d ' ')" "2:1" "--zero-offload for inference: exit status 2, one line"
like "$ERR" "^gpumem bench: --zero-offload concerns --mode train, lora, qlora" "it names the option and the modes"
run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model --mode train $shape \
    --zero-offload optimizer --host-memory 16MiB --out "$TEST_TMP/b2" --quiet
is "$RC:$(printf '%s\n' "$ERR" | wc -l | tr -d ' ')" "2:1" "host memory too small: exit status 2, one line"
like "$ERR" "^gpumem bench: --host-memory 16MiB: --zero-offload optimizer puts 44MiB in host memory" \
    "it names --host-memory and what the offload needs"
done_testing
