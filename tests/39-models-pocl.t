#!/bin/sh
# Whole models on the OpenCL device (bench/workloads/model_*.c): the block
# workload with --model PRESET runs the tiny GQA/SwiGLU/RMSNorm model with
# its LM head, verified in every precision (fp8e4m3 and fp8e5m2 too) and
# with int4 weights (the LM head too, with --int4-lm-head) and/or an fp8
# KV cache beside 16-bit activations; its memory model is exactly `gpumem
# plan`'s for the same point, in inference and in training; --mode train runs whole training steps
# (tests/39-train-step-pocl.t checks their gradients);
# a wrong output is a mismatch row; the oom suite answers the largest batch
# that fine-tunes, and that serves with int4 weights and an fp8 KV cache,
# with the model's prediction beside it. --mode is a list: one run gives
# both modes, told apart by the `mode` column in the point's key (compare
# joins them apart; a run of schema 3, without the column, is read as of
# its one mode).
. tests/lib.sh
plan 41

model="--model tiny-llama-gqa"
plan_total() {   # MODE PRECISION BATCH SEQ [ROLE OPTIONS]
    m=$1 p=$2 b=$3 s=$4
    shift 4
    "$GPUMEM" plan $model --mode "$m" --precision "$p" --batch "$b" --seq "$s" "$@" --format csv |
        awk -F, '$2 == "total" { print $4 }'
}

run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model \
    --precision fp32,fp16,bf16,int8 --batch 2 --seq 32 --reps 2 --out "$TEST_TMP/inf" --quiet
is "$RC" 0 "inference sweep: exit status 0"
[ -n "$ERR" ] && diag "$ERR"
is "$(csv_count "$TEST_TMP/inf/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 4 \
    "the GQA/SwiGLU model verifies in fp32, fp16, bf16 and int8"
for p in fp32 bf16; do
    want=$(plan_total inference $p 2 32)
    is "$(csv_value "$TEST_TMP/inf/results.csv" "\$_->{metric} eq 'time' && \$_->{precision} eq '$p'" model_bytes)" \
        "$want" "inference $p: the workload's model is plan's total ($want bytes)"
done

# fp8 throughout, one byte an element.
run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model \
    --precision fp8e4m3,fp8e5m2 --batch 2 --seq 32 --reps 2 --out "$TEST_TMP/fp8" --quiet
is "$(csv_count "$TEST_TMP/fp8/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 2 \
    "the whole model verifies in fp8e4m3 and fp8e5m2"
want=$(plan_total inference fp8e5m2 2 32)
is "$(csv_value "$TEST_TMP/fp8/results.csv" "\$_->{metric} eq 'time' && \$_->{precision} eq 'fp8e5m2'" model_bytes)" \
    "$want" "inference fp8e5m2: the workload's model is plan's total ($want bytes)"

# int4 weights (groups of 16 rows: the intermediate size is 688) and an
# fp8 KV cache beside 16-bit activations; each alone too.
roles="--weight-precision int4 --kv-precision fp8e4m3 --group-size 16"
run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model \
    --precision bf16 $roles --batch 2 --seq 32 --reps 2 --out "$TEST_TMP/roles" --quiet
run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model \
    --precision fp16 --weight-precision int4 --group-size 16 --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/w4" --quiet
run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model \
    --precision fp16 --kv-precision fp8e5m2 --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/kv8" --quiet
is "$(cat "$TEST_TMP/roles/results.csv" "$TEST_TMP/w4/results.csv" "$TEST_TMP/kv8/results.csv" | csv_count /dev/stdin '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{precision} =~ /^(bf16-wint4-kvfp8e4m3|fp16-wint4|fp16-kvfp8e5m2)$/')" 3 \
    "int4 weights + an fp8e4m3 KV cache (bf16), int4 alone and an fp8e5m2 cache alone (fp16) verify"
want=$(plan_total inference bf16 2 32 $roles)
is "$(csv_value "$TEST_TMP/roles/results.csv" "\$_->{metric} eq 'time'" model_bytes)" "$want" \
    "int4 weights + fp8 KV: codes, scales, the rest in bf16 and the cache are plan's total ($want bytes)"
want=$(plan_total inference fp16 2 16 --kv-precision fp8e5m2)
is "$(csv_value "$TEST_TMP/kv8/results.csv" "\$_->{metric} eq 'time'" model_bytes)" "$want" \
    "an fp8 KV cache: plan's total ($want bytes)"

# The LM head in int4 too (--int4-lm-head): model_lm_head_int4 dequantises
# it on load; the check reads its codes and scales back against the host's
# quantisation and recomputes the logits from them. The head (h 256 x V
# 1024, untied) leaves the bf16 weights, 2 bytes a weight, for codes, half
# a byte a weight, and one fp16 scale per 16 rows of each column.
head="--weight-precision int4 --group-size 16 --int4-lm-head"
run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model \
    --precision bf16,fp16 $head --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/head" --quiet
is "$(csv_count "$TEST_TMP/head/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{precision} =~ /^(bf16|fp16)-wint4-lmint4$/')" 2 \
    "an int4 LM head verifies beside int4 layers (bf16, fp16), its rows' precision saying -lmint4"
want=$(plan_total inference bf16 2 16 $head)
is "$(csv_value "$TEST_TMP/head/results.csv" "\$_->{metric} eq 'time' && \$_->{precision} eq 'bf16-wint4-lmint4'" model_bytes)" \
    "$want" "int4 LM head: the workload's model is plan's total ($want bytes)"
is "$(($(plan_total inference bf16 2 16 --weight-precision int4 --group-size 16) - want))" \
    "$((256 * 1024 * 2 - 256 * 1024 / 2 - 2 * (256 / 16) * 1024))" \
    "int4 LM head: plan saves the head's bf16 bytes less its codes and fp16 scales (360448 bytes)"
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads \
    --workload block $model --precision bf16 $head --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/headfault" --quiet
is "$(csv_count "$TEST_TMP/headfault/results.csv" '$_->{status} eq "mismatch" && $_->{precision} eq "bf16-wint4-lmint4" && $_->{note} =~ /^logits\[\d+\]\[\d+\] of the iteration/')" 1 \
    "int4 LM head: a corrupted logit is a mismatch row"
printf '{"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 4, "num_hidden_layers": 1, "num_key_value_heads": 2, "vocab_size": 256, "tie_word_embeddings": true}\n' \
    >"$TEST_TMP/tied.json"
run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block --model "$TEST_TMP/tied.json" \
    --precision bf16 $head --batch 1 --seq 8 --reps 1 --out "$TEST_TMP/tiedhead" --quiet
is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "2:1" "--int4-lm-head with a tied head: exit status 2, one line"
like "$ERR" "tied\\.json ties its LM head to the embedding" "the message says the head is the embedding"

run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model --mode train \
    --optimizer adamw --precision fp32,bf16,int8,fp8e4m3 --batch 2 --seq 16 --reps 3 --out "$TEST_TMP/train" --quiet
is "$(csv_count "$TEST_TMP/train/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{note} !~ /synthetic/')" 2 \
    "train fp32 and bf16: whole steps (forward, backward, AdamW) verify, with real gradients"
is "$(csv_count "$TEST_TMP/train/results.csv" '$_->{precision} =~ /^(int8|fp8e4m3)$/ && $_->{status} eq "unsupported"')" 2 \
    "int8 and fp8e4m3 training are refused"
for p in fp32 bf16; do
    want=$(plan_total train $p 2 16)
    is "$(csv_value "$TEST_TMP/train/results.csv" "\$_->{metric} eq 'time' && \$_->{precision} eq '$p'" model_bytes)" \
        "$want" "train $p: weights, master weights, gradients, moments and saved activations are plan's ($want bytes)"
done

GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads \
    --workload block $model --precision bf16 --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/fault" --quiet
is "$(csv_count "$TEST_TMP/fault/results.csv" '$_->{status} eq "mismatch" && $_->{note} =~ /^logits\[\d+\]\[\d+\] of the iteration/')" 1 \
    "a corrupted logit is a mismatch row (inference)"
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads \
    --workload block $model --mode train --precision fp32 --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/fault2" --quiet
is "$(csv_count "$TEST_TMP/fault2/results.csv" '$_->{status} eq "mismatch" && $_->{note} =~ /^dlogits\[\d+\]\[\d+\]/')" 1 \
    "a corrupted gradient of the loss (over the fp32 logits) is a mismatch row (train)"
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads \
    --workload block $model --precision fp16,bf16 $roles --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/fault3" --quiet
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads \
    --workload block $model --precision fp8e4m3 --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/fault4" --quiet
is "$(cat "$TEST_TMP/fault3/results.csv" "$TEST_TMP/fault4/results.csv" | csv_count /dev/stdin '$_->{status} eq "mismatch" && $_->{note} =~ /^logits\[\d+\]\[\d+\] of the iteration/')" 3 \
    "a corrupted logit is a mismatch row (int4 + fp8 KV in fp16 and bf16, fp8e4m3)"

# kvcache with the whole model: KV caches of its 2 KV heads, 4 queries each.
run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload kvcache $model \
    --precision fp32,fp16,bf16,int8 --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/kv" --quiet
is "$(csv_count "$TEST_TMP/kv/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 8 \
    "kvcache decodes with grouped-query attention, verified in every precision, contiguous and paged"
kv=$("$GPUMEM" plan $model --precision fp32 --batch 2 --seq 16 --format csv | awk -F, '$2 == "subtotal" && $3 == "kv_cache" { print $4 }')
# K and V caches, plus query and output (2 x 8 heads x 32 x 4 bytes each) and fp32 scores (2 x 8 x 16 x 4).
is "$(csv_value "$TEST_TMP/kv/results.csv" '$_->{metric} eq "time" && $_->{precision} eq "fp32" && $_->{variant} eq "contiguous"' model_bytes)" \
    "$((kv + 2048 + 2048 + 1024))" "kvcache: the caches are plan's KV cache ($kv bytes)"
GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads \
    --workload kvcache $model --precision int8 --batch 2 --seq 16 --reps 1 --out "$TEST_TMP/kvfault" --quiet
is "$(csv_count "$TEST_TMP/kvfault/results.csv" '$_->{status} eq "mismatch"')" 2 "kvcache GQA: a wrong output is a mismatch row"

# Products wider than 1024 columns (the MLP, the vocabulary) are checked on
# sampled columns, tied head (the embedding's rows) or not: every
# precision still verifies.
for tied in false true; do
    cat >"$TEST_TMP/wide-$tied.json" <<END
{"model_type": "llama", "hidden_size": 128, "intermediate_size": 1100, "num_attention_heads": 4,
 "num_hidden_layers": 2, "num_key_value_heads": 2, "vocab_size": 3000, "tie_word_embeddings": $tied}
END
    run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block \
        --model "$TEST_TMP/wide-$tied.json" --mode inference,train --precision fp32,bf16,int8 --batch 2 --seq 8 \
        --reps 2 --out "$TEST_TMP/wide-$tied" --quiet
    is "$(csv_count "$TEST_TMP/wide-$tied/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 5 \
        "MLP of 1100 and vocabulary of 3000 columns (tied head: $tied): inference in 3 precisions and training in 2 verify"
done

# Without --model, block is the shape options' blocks, untouched by the whole-model path.
run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block \
    --hidden 64 --heads 4 --layers 1 --ffn 128 --precision fp32 --batch 1 --seq 8 --reps 1 --out "$TEST_TMP/ini" --quiet
is "$(csv_count "$TEST_TMP/ini/results.csv" '$_->{metric} eq "time" && $_->{status} eq "ok"')" 1 \
    "a block of the shape options runs as before"

# Fine-tuning under a 64MiB cap: the state takes about 52MiB.
run_gpumem bench --backend opencl --suite oom --mem-limit 64MiB --workload block $model --mode train \
    --optimizer adamw --precision bf16 --seq 128 --pattern per-tensor --out "$TEST_TMP/oom" --quiet
found=$(csv_value "$TEST_TMP/oom/results.csv" '$_->{metric} eq "max_batch"' value)
predicted=$(csv_value "$TEST_TMP/oom/results.csv" '$_->{metric} eq "max_batch_model"' value)
note "train bf16 seq 128 under 64MiB: max_batch $found, the model says $predicted"
[ "${found:-0}" -ge 1 ]
ok $? "the oom suite finds a batch that fine-tunes"
[ -n "$predicted" ] && [ "$found" -le "$predicted" ] && [ "$found" -ge $((predicted - 1)) ]
ok $? "the largest batch found is the memory model's prediction (or one less)"
is "$(csv_count "$TEST_TMP/oom/results.csv" '$_->{metric} eq "max_batch" && $_->{note} !~ /gradients synthetic/')" 1 \
    "the oom row's probes ran whole training steps (no synthetic gradients)"

# Serving under a 16MiB cap with int4 weights and an fp8 KV cache (bf16
# runs batch 16 there at seq 128; the model says 24 for this).
run_gpumem bench --backend opencl --suite oom --mem-limit 16MiB --workload block $model --precision bf16 $roles \
    --seq 128 --pattern per-tensor --out "$TEST_TMP/oom4" --quiet
found=$(csv_value "$TEST_TMP/oom4/results.csv" '$_->{metric} eq "max_batch" && $_->{precision} eq "bf16-wint4-kvfp8e4m3"' value)
predicted=$(csv_value "$TEST_TMP/oom4/results.csv" '$_->{metric} eq "max_batch_model"' value)
note "int4 + fp8 KV + bf16, seq 128 under 16MiB: max_batch $found, the model says $predicted"
[ -n "$predicted" ] && [ "${found:-0}" -ge 1 ] && [ "$found" -le "$predicted" ] && [ "$found" -ge $((predicted - 1)) ]
ok $? "int4 + fp8 KV: the largest batch that serves is the memory model's prediction (or one less)"

# Inference and training in one run, from a profile's section for this kind
# of device as the quick profile's [oom.gpu] gives them.
cat >"$TEST_TMP/both.ini" <<END
[bench]
suite = workloads,oom
batch = 2
seq = 16
[oom.cpu]
mode = inference,train
seq = 16,32
pattern = per-tensor
END
run_gpumem bench --backend opencl --profile "$TEST_TMP/both.ini" --mem-limit 64MiB --workload block $model \
    --mode inference,train --precision bf16 --reps 1 --out "$TEST_TMP/both" --quiet
is "$RC" 0 "--mode inference,train: exit status 0"
both=$TEST_TMP/both/results.csv
is "$(csv_count "$both" '$_->{suite} eq "workloads" && $_->{metric} eq "time" && $_->{status} eq "ok" && $_->{model} eq "tiny-llama-gqa"')-$(csv_value "$both" '$_->{suite} eq "workloads" && $_->{metric} eq "time"' mode)-$(csv_value "$both" '$_->{suite} eq "workloads" && $_->{metric} eq "time" && $_->{mode} ne "inference"' mode)" \
    "2-inference-train" "the workloads suite runs the point in both modes, the rows naming model and mode"
for m in inference train; do
    is "$(csv_count "$both" "\$_->{metric} eq 'max_batch' && \$_->{status} eq 'ok' && \$_->{mode} eq '$m' && \$_->{note} =~ /each probe allocated the whole batch and ran and verified its first sequence/")" 2 \
        "the oom suite searches $m at seq 16 and 32, each probe running one sequence of the batch"
done
# Each search's answer is the model's (or one less) under the 64MiB cap.
is "$(perl -e '
    open my $f, "<", $ARGV[0] or die; my @h = split /,/, scalar(<$f>) =~ s/\r?\n$//r; my (%b, %m);
    while (<$f>) { chomp; my %r; @r{@h} = split /,/; my $k = "$r{mode} $r{seq_len}";
        $b{$k} = $r{value} if $r{metric} eq "max_batch"; $m{$k} = $r{value} if $r{metric} eq "max_batch_model" }
    print scalar grep { $b{$_} <= $m{$_} && $b{$_} >= $m{$_} - 1 && $b{$_} >= 1 } keys %b;
' "$both")" 4 "every search finds the memory model's batch (or one less)"
[ "$(csv_value "$both" '$_->{metric} eq "max_batch" && $_->{mode} eq "train" && $_->{seq_len} == 16' value)" -lt \
  "$(csv_value "$both" '$_->{metric} eq "max_batch" && $_->{mode} eq "inference" && $_->{seq_len} == 16' value)" ]
ok $? "training's largest batch is below inference's"

# compare keeps the modes apart (no point of the model repeated, none left
# out against itself).
run_gpumem compare "$TEST_TMP/both" "$TEST_TMP/both" --format csv
is "$(printf '%s\n' "$OUT" | grep -c ',oom,block,blocked,per-tensor,bf16,train,[0-9]*,16,,max_batch,')-$(printf '%s\n' "$OUT" | grep ',block,' | grep -c 'left-out')" \
    "1-0" "compare joins each mode's point with its own"
# A run of schema 3 had no model or mode column: its train rows say so in
# their note (that run's train steps had synthetic gradients: the note is
# put back here), and compare reads them as train.
mkdir -p "$TEST_TMP/old" && cp "$TEST_TMP/train/meta.json" "$TEST_TMP/old/"
for f in results samples; do
    perl -e '
        open my $f, "<", $ARGV[0] or die; my $h = <$f>; chomp $h; my @h = split /,/, $h;
        my @keep = grep { $h[$_] ne "model" && $h[$_] ne "mode" } 0 .. $#h;
        my ($mi) = grep { $h[$_] eq "mode" } 0 .. $#h; my ($ni) = grep { $h[$_] eq "note" } 0 .. $#h;
        print join(",", @h[@keep]), "\n";
        while (<$f>) { chomp; my @r = split /,(?=(?:[^"]*"[^"]*")*[^"]*$)/, $_, -1;
            if (defined $mi && defined $ni && $r[$mi] eq "train") {
                (my $n = $r[$ni]) =~ s/^"|"$//g;
                $r[$ni] = "\"" . ($n eq "" ? "" : "$n; ") . "backward not computed: gradients synthetic\"" }
            print join(",", @r[@keep]), "\n" }
    ' "$TEST_TMP/train/$f.csv" >"$TEST_TMP/old/$f.csv"
done
run_gpumem compare "$TEST_TMP/old" "$TEST_TMP/both" --format csv
like "$OUT" ',workloads,block,blocked,per-tensor,bf16,train,2,16,,time,ms,[^\n]*,(same|faster|slower|regression|improvement|untested),' \
    "an old train run's rows join the train rows of a new run"
like "$OUT" ',workloads,block,blocked,per-tensor,bf16,inference,2,16,,time,[^\n]*left-out' \
    "and the new inference rows are left out: the old run had none"
done_testing
