#!/bin/sh
# gpumem plan prints the memory model: one tensor a line and a last line
# `total <bytes>` that is the exact sum, per precision.
. tests/lib.sh
plan 68

run_gpumem plan --workload linear --batch 2 --seq 8 --hidden 16 --out-features 4 --precision fp32,int8
is "$RC" 0 "plan linear: exit status 0"
# fp32: x 16*16*4, w 16*4*4, y 16*4*4 = 1024 + 256 + 256
is "$(printf '%s\n' "$OUT" | grep '^total' | tr '\n' ' ')" "total 1536 total 384 " "exact totals for fp32 and int8"
sums=$(printf '%s\n' "$OUT" | awk '/^#/ { s = 0; next } /^total/ { print ($2 == s) ? "ok" : "bad"; next } { s += $3 }' | tr '\n' ' ')
is "$sums" "ok ok " "each total is the sum of its tensors"

for w in attention block kvcache; do
    run_gpumem plan --workload "$w" --model gpt2 --batch 4 --seq 1024 --precision bf16
    like "$OUT" "total [0-9]+" "plan $w prints a total"
done
run_gpumem plan --workload attention --batch 1 --seq 4096 --heads 8 --hidden 512 --variant naive
naive=$(printf '%s\n' "$OUT" | awk '/^total/ { print $2 }')
run_gpumem plan --workload attention --batch 1 --seq 4096 --heads 8 --hidden 512 --variant tiled
tiled=$(printf '%s\n' "$OUT" | awk '/^total/ { print $2 }')
# naive holds the 4096 x 4096 fp32 score matrix per head (512MiB); tiled 2 floats a row.
is "$((naive - tiled))" "$((8 * 4096 * 4096 * 4 - 8 * 4096 * 2 * 4))" "naive attention holds seq^2 scores, tiled does not"
run_gpumem plan --workload linear --hidden 0
is "$RC" 2 "a bad shape value: exit status 2"

# Whole models (--model without --workload): published parameter totals.
for pair in gpt2:124439808 llama-2-7b:6738415616 llama-3-8b:8030261248 mistral-7b:7241732096 \
            mixtral-8x7b:46702792704 llama-3.1-70b:70553706496 llama-3.2-1b:1235814400 qwen2.5-7b:7615616512 \
            mistral-nemo:12247782400 phi-3-mini:3821079552 gemma-2-9b:9241705984 smollm2-135m:134515008 \
            stories15m:15191712; do
    run_gpumem plan --model "${pair%%:*}"
    like "$OUT" "^# model ${pair%%:*} \\([a-z0-9_]+\\): ${pair#*:} parameters" "plan --model ${pair%%:*}: ${pair#*:} parameters"
done
run_gpumem plan --model llama-3-8b --precision fp16 --batch 2 --seq 1000
like "$OUT" "^# kv_bytes_per_token 131072\$" "Llama-3-8B fp16: 131072 KV cache bytes per token"
like "$OUT" "^kv_cache +kv_cache +262144000 " "KV cache: 131072 bytes x batch 2 x 1000 tokens"
sums=$(printf '%s\n' "$OUT" | awk '/^#/ { next } /^subtotal/ { s += $3 } /^total/ { print ($2 == s) ? "ok" : "bad" }')
is "$sums" "ok" "the role subtotals add up to the total"

# Training state: bf16 weights + fp32 master + AdamW = 16 bytes a parameter;
# ZeRO-3 over 8 GPUs divides all of it by 8.
state() { awk -F, '$2 == "weights" || $2 == "gradients" || $2 == "optimizer" { s += $4 } END { printf "%.0f\n", s }'; }
run_gpumem plan --model llama-2-7b --mode train --precision bf16 --format csv
is "$(printf '%s\n' "$OUT" | state)" "$((16 * 6738415616))" "train bf16 AdamW: 16 bytes a parameter"
run_gpumem plan --model llama-2-7b --mode train --precision fp32 --optimizer sgd --format csv
is "$(printf '%s\n' "$OUT" | state)" "$((8 * 6738415616))" "train fp32 SGD: 8 bytes a parameter"
run_gpumem plan --model llama-2-7b --mode train --precision bf16 --gpus 8 --zero 3 --format csv
is "$(printf '%s\n' "$OUT" | state)" "$((2 * 6738415616))" "ZeRO-3 over 8 GPUs: 16/8 bytes a parameter"

# Korthikanti et al. 2022 through the CLI: GPT-2 (MHA, 4h GELU MLP,
# LayerNorm, dropout), fp16, naive attention, s=1024, b=2, 12 layers:
# L * s*b*h*(34 + 5*a*s/h).
run_gpumem plan --model gpt2 --mode train --precision fp16 --variant naive --seq 1024 --batch 2 --format csv
is "$(printf '%s\n' "$OUT" | awk -F, '$3 == "layers_saved" { print $4 }')" \
   "$((12 * (1024 * 2 * 768 * 34 + 5 * 12 * 1024 * 1024 * 2)))" "activations kept: Korthikanti's s*b*h*(34+5as/h) per layer"

run_gpumem plan --model llama-3-8b --precision bf16 --seq 8192 --fit 24GiB --format json
fit=$(printf '%s' "$OUT" | perl -MJSON::PP -0777 -ne '$j = decode_json($_); $f = $j->{plans}[0]{fit}; print "$f->{max_batch} $f->{max_seq}"')
like "$fit" "^[1-9][0-9]* [1-9][0-9]*\$" "--fit 24GiB --format json: a largest batch and sequence length"
run_gpumem plan --model tiny-llama-gqa --mode train --precision fp32,bf16 --seq 128 --fit 64MiB
is "$(printf '%s\n' "$OUT" | grep -c '^fit 64MiB ')" 2 "--fit answers per precision"

# --fit RUN: the usable memory a run folder measured (its oom suite's
# largest total). The H100 reference held 78.7GiB, where the oom suite
# found Llama-3-8B bf16 inference's largest batch at seq 512 to be 648.
h100=results/reference/nvidia-h100-80gb-hbm3
run_gpumem plan --model llama-3-8b --precision bf16 --seq 512 --fit "$h100"
like "$RC $OUT" "^0 (.|\n)*^# fit budget 78.7GiB: the usable memory $h100 measured \(the oom suite's largest total\)\$" \
    "--fit RUN says it answers from the run's measured usable memory"
like "$OUT" "^fit 78.7GiB bf16: max_batch 648 at seq 512;" "--fit RUN: the H100's batch, as its oom suite measured it"
run_gpumem plan --model llama-3-8b --precision bf16 --seq 512 --fit "$h100" --format json
is "$(printf '%s' "$OUT" | perl -MJSON::PP -0777 -ne '$f = decode_json($_)->{plans}[0]{fit}; print "$f->{budget} $f->{measured_by}"')" \
    "$(csv_value "$h100/results.csv" '$_->{metric} eq "largest_total"' value) $h100" "--fit RUN --format json: the budget and the run"
# Sizes as the report prints them: decimals with a unit; a bare number is refused.
run_gpumem plan --model llama-3-8b --precision bf16 --seq 512 --fit 78.7GiB
like "$RC $OUT" "^0 (.|\n)*^fit 78.7GiB bf16: max_batch 648 at seq 512;" "--fit 78.7GiB: the size as the report prints it"
run_gpumem plan --model llama-3-8b --fit 24
is "$RC:$ERR" "2:gpumem plan: --fit: '24' has no unit: say 24GiB, 78.7GiB or 24GB, or B for bytes (or a run folder, or device)" \
    "--fit 24: a bare number is refused, exit status 2, one line"
run_gpumem plan --model llama-3-8b --fit "$TEST_TMP"
like "$RC:$ERR" "^2:gpumem plan: --fit $TEST_TMP: cannot read $TEST_TMP/results.csv" "--fit with a folder that is no run: exit status 2"
mkdir -p "$TEST_TMP/stream-only" && printf '%s\n' "$(head -1 "$h100/results.csv")" >"$TEST_TMP/stream-only/results.csv"
run_gpumem plan --model llama-3-8b --fit "$TEST_TMP/stream-only"
is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "2:1" "--fit with a run that measured no usable memory: exit status 2, one line"
like "$ERR" "the run measured no usable memory \(no ok largest_total row of the oom suite: bench with --suite oom\)" \
    "  the message says what the run lacks"

# The LM head in int4 too (--int4-lm-head). Llama-3-8B, int4 weights (G
# 128), fp8 KV cache, bf16 activations, seq 512: 5772538880 bytes with the
# head in bf16 (tests/35-precision-pocl.t); its h 4096 x V 128256 weights
# leave the bf16 weights (2 bytes each) for codes (half a byte each) and
# one fp16 scale per 128 rows of each of the 128256 columns.
roles="--model llama-3-8b --weight-precision int4 --kv-precision fp8e4m3 --activation-precision bf16 --seq 512"
run_gpumem plan $roles --format csv
without=$(printf '%s\n' "$OUT" | awk -F, '$2 == "total" { print $4 }')
run_gpumem plan $roles --int4-lm-head --format csv
with=$(printf '%s\n' "$OUT" | awk -F, '$2 == "total" { print $4 }')
is "$without:$with" "5772538880:4992742400" "Llama-3-8B int4 + fp8 KV + bf16: 5772538880 bytes, 4992742400 with an int4 head"
is "$((without - with))" "$((4096 * 128256 * 2 - 4096 * 128256 / 2 - 2 * (4096 / 128) * 128256))" \
    "the int4 head saves its bf16 bytes less its codes and scales (779796480 bytes)"
is "$(printf '%s\n' "$OUT" | awk -F, '$2 == "weights" { printf "%s=%s ", $3, $4 }')" \
    "weights_int4=$((3489660928 + 4096 * 128256 / 2)) weight_scales_fp16=$((109051904 + 2 * 32 * 128256)) weights_other=$((2101878784 - 4096 * 128256 * 2)) " \
    "the head's codes and scales join the layers', its bf16 weights leave the rest"
like "$(printf '%s\n' "$OUT" | sed -n 2p)" "^bf16-wint4-kvfp8e4m3-lmint4," "the plan's precision says -lmint4, as the bench rows do"
run_gpumem plan $roles --int4-lm-head
like "$OUT" "^# roles weights=int4 lm_head=int4 kv_cache=fp8e4m3 activations=bf16 group_size=128\$" \
    "the text plan names the head's precision"
run_gpumem plan --model llama-3-8b --precision bf16 --int4-lm-head
is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "2:1" "--int4-lm-head without int4 weights: exit status 2, one line"
like "$ERR" "--int4-lm-head needs --weight-precision int4" "the message names what it needs"
run_gpumem plan --model gpt2 --weight-precision int4 --activation-precision fp16 --int4-lm-head
is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "2:1" "--int4-lm-head with a tied head (GPT-2): exit status 2, one line"
like "$ERR" "gpt2 ties its LM head to the embedding" "the message says the head is the embedding"
run_gpumem plan --workload block --hidden 768 --weight-precision int4 --activation-precision bf16 --int4-lm-head
is "$RC" 2 "--int4-lm-head with a block of the shape options (no LM head): exit status 2"

# int8 trains nowhere; every other storage precision does (fp8 included).
run_gpumem plan --model llama-2-7b --mode train --precision int8
is "$RC:$ERR" "2:gpumem plan: --precision int8 with --mode train: training keeps its weights in one of fp32, fp16, bf16, fp8e4m3, fp8e5m2" \
    "int8 training: exit status 2, the message naming the precisions that train"
run_gpumem plan --model llama-2-7b --mode train --precision fp8e4m3 --format csv
is "$RC" 0 "fp8 training is planned"

# Bad input: one line naming the file and the field, exit 2.
printf '{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4}\n' >"$TEST_TMP/missing.json"
run_gpumem plan --model "$TEST_TMP/missing.json"
is "$RC" 2 "config.json with a missing field: exit status 2"
like "$ERR" "missing\\.json: field 'num_hidden_layers': missing" "the message names the file and the field"
printf '{"model_type": "t5", "d_model": 512}\n' >"$TEST_TMP/t5.json"
run_gpumem plan --model "$TEST_TMP/t5.json"
is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "2:1" "unknown model_type: exit status 2, one line"
like "$ERR" "t5\\.json: field 'model_type': unknown value 't5'" "the message names the file and model_type"
run_gpumem plan --model llama-3-8b --hidden 1024
is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "2:1" "plan --model with a workload shape option: exit status 2, one line"
like "$ERR" "--hidden shapes the workloads without a whole model, and --model llama-3-8b sets the shape" \
    "the message says the preset sets the shape"
run_gpumem plan --model llama-3-8b --zero 4
is "$RC" 2 "--zero 4: exit status 2"

# Gemma-2: every other layer keeps a 4096-token window in its KV cache.
# bf16 at 8192 tokens: 21 layers x 8192 + 21 x 4096 tokens, 2 x 8 x 256 x 2
# bytes each.
run_gpumem plan --model gemma-2-9b --precision bf16 --seq 8192
like "$OUT" "^kv_cache +kv_cache +$((21 * 12288 * 8192)) " "Gemma-2-9B: sliding-window layers keep 4096 tokens"
run_gpumem plan --model gemma-2-9b --precision bf16 --seq 4096
like "$OUT" "^kv_cache +kv_cache +$((42 * 4096 * 8192)) " "Gemma-2-9B within the window: every layer every token"

# A Hugging Face model's folder is read through its config.json.
mkdir -p "$TEST_TMP/Llama-3-8B" "$TEST_TMP/empty-model"
cp share/models/llama-3-8b.json "$TEST_TMP/Llama-3-8B/config.json"
run_gpumem plan --model "$TEST_TMP/Llama-3-8B"
like "$RC $OUT" "^0 # model [^ ]*Llama-3-8B/config.json \(llama\): 8030261248 parameters" \
    "plan --model FOLDER reads FOLDER/config.json"
run_gpumem plan --model "$TEST_TMP/empty-model"
is "$RC:$ERR" "2:gpumem plan: --model '$TEST_TMP/empty-model': a folder without a readable config.json" \
    "a folder without config.json: exit status 2, one line"

# The retired models.ini names say which preset to use.
for pair in gpt-125m:gpt2 llama-1b:llama-3.2-1b llama-7b:llama-2-7b; do
    run_gpumem plan --workload block --model "${pair%%:*}"
    is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "2:1" "--model ${pair%%:*}: exit status 2, one line"
    like "$ERR" "--model '${pair%%:*}': the shapes of models.ini are retired; use the preset ${pair#*:} " \
        "--model ${pair%%:*} names the preset ${pair#*:}"
done
run_gpumem plan --model no-such-model
like "$RC $ERR" "^2 gpumem plan: --model 'no-such-model': no such preset \(presets: [^)]*stories15m[^)]*\)" \
    "an unknown name: exit status 2, the presets listed"
done_testing
