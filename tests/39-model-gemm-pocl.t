#!/bin/sh
# The whole model's products through the dispatch (bench/workloads/matmul.h)
# on the OpenCL device: its rows name what ran the projections, attention
# and the LM head; by default a CPU device runs ours (`blocked`, faster
# there than CLBlast), --variant vendor the vendor's (CLBlast's SGEMM in
# fp32: every projection, attention as batched GEMMs over chunks of queries
# with our softmax between, the fp32 LM head), --variant all both side by
# side, each verified by the model's check, in inference and training; the
# vendor path's score chunk is in its memory model, as `gpumem plan
# --variant vendor` counts it; every model row has its tokens/s and an mfu
# row (model FLOPs over the device's measured peak, the basis in its note);
# a corrupted logit of the vendor's run is a mismatch row; an oom probe of
# the vendor's path runs its whole sequence; a --variant the option does
# not know is refused.
. tests/lib.sh
plan 18

model="--model tiny-llama-gqa"
rows() { csv_count "$TEST_TMP/$1/results.csv" "$2"; }

run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model \
    --precision fp32,bf16 --batch 2 --seq 24 --reps 2 --out "$TEST_TMP/dflt" --quiet
is "$RC-$(rows dflt '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{variant} eq "blocked"')" "0-2" \
    "by default a CPU device runs ours (blocked) in fp32 and bf16, verified"
is "$(rows dflt '$_->{metric} eq "time" && $_->{note} =~ /^\Qprojections: blocked; attention: attention_tiled (ours); LM head: model_lm_head (ours); every product checked whole on the device (29: column checksums over blocks of rows); the attention of every layer checked whole on the device (4: recomputed row by row, largest difference \E[0-9.e+-]+ of its tolerance\)$/')" 2 \
    "its rows name what ran the projections, attention and the LM head, and how the products were checked"

run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model \
    --precision fp32,bf16 --batch 2 --seq 24 --reps 2 --variant all --mode inference,train --out "$TEST_TMP/all" --quiet
is "$RC" 0 "--variant all, inference and training: exit status 0"
is "$(rows all '$_->{metric} eq "time" && $_->{status} eq "ok" && $_->{variant} eq "clblast" && $_->{precision} eq "fp32"')" 2 \
    "CLBlast's fp32 model verifies beside ours, in inference and training"
is "$(rows all '$_->{variant} eq "clblast" && $_->{precision} ne "fp32"')" 0 \
    "no CLBlast row in bf16 (CLBlast has no bf16 GEMM)"
is "$(rows all '$_->{metric} eq "time" && $_->{variant} eq "clblast" && $_->{note} =~ /^projections: clblast; attention: clblast QK\^T and PV over 16-query chunks, softmax ours; LM head: clblast(;|$)/')" 2 \
    "the vendor's rows say CLBlast ran every projection, attention's GEMMs and the LM head"
for mode in inference train; do
    want=$("$GPUMEM" plan $model --mode $mode --precision fp32 --batch 2 --seq 24 --variant vendor --format csv |
        awk -F, '$2 == "total" { print $4 }')
    is "$(csv_value "$TEST_TMP/all/results.csv" "\$_->{metric} eq 'time' && \$_->{variant} eq 'clblast' && \$_->{mode} eq '$mode'" model_bytes)" \
        "$want" "$mode: the vendor's memory model is plan --variant vendor's total ($want bytes)"
done
ours=$(csv_value "$TEST_TMP/all/results.csv" "\$_->{metric} eq 'time' && \$_->{variant} eq 'blocked' && \$_->{mode} eq 'inference' && \$_->{precision} eq 'fp32'" model_bytes)
vendor=$(csv_value "$TEST_TMP/all/results.csv" "\$_->{metric} eq 'time' && \$_->{variant} eq 'clblast' && \$_->{mode} eq 'inference'" model_bytes)
# tiny-llama-gqa: 8 heads, 16-query chunks of a 24-token sequence: fp32
# scores and probabilities, 8 bytes a score.
is "$((vendor - ours))" "$((8 * 16 * 24 * 8))" "the vendor path holds one chunk's scores and probabilities more (24576 bytes)"
is "$(rows all '$_->{metric} eq "tokens" && $_->{status} eq "ok" && $_->{value} > 0')" 6 "every model point has its tokens/s"
is "$(rows all '$_->{metric} eq "mfu" && $_->{unit} eq "%" && $_->{value} > 0 && $_->{note} =~ /^model FLOPs [0-9.e+]+ an iteration \(PaLM.s: .* over [0-9.]+ GFLOP\/s, the (fp32|bf16) peak measured in this run: blocked at 512\^3, best of 3/')" 6 \
    "and its mfu row, against the device's measured peak (our kernel at 512^3), the convention in its note"
is "$(rows all '$_->{metric} eq "mfu" && $_->{mode} eq "train" && $_->{note} =~ /training: 3 x the forward.s, its backward twice its products/')" 3 \
    "training's mfu rows count the backward's FLOPs (3 x the forward's)"

GPUMEM_FAULT=corrupt-output run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block \
    $model --precision fp32 --batch 2 --seq 24 --reps 1 --variant vendor --out "$TEST_TMP/fault" --quiet
is "$(rows fault '$_->{status} eq "mismatch" && $_->{variant} eq "clblast" && $_->{note} =~ /^logits\[\d+\]\[\d+\] of the iteration/')" 1 \
    "a corrupted logit of the vendor's run is a mismatch row"

# An oom probe of the vendor's path runs its whole sequence (ours: the
# first 128 tokens of it).
run_gpumem bench --backend opencl --suite oom --oom-parts batch --mem-limit 96MiB --workload block $model \
    --precision fp32 --seq 160 --pattern per-tensor --variant all --out "$TEST_TMP/probe" --quiet
is "$(rows probe '$_->{metric} eq "max_batch" && $_->{status} eq "ok" && $_->{variant} eq "clblast" && $_->{note} =~ /ran and verified its first sequence/')" 1 \
    "the vendor's probes ran and verified the whole 160-token sequence"
is "$(rows probe '$_->{metric} eq "max_batch" && $_->{status} eq "ok" && $_->{variant} eq "blocked" && $_->{note} =~ /ran and verified the first 128 tokens of its first sequence/')" 1 \
    "ours ran its first 128"

run_gpumem bench --backend opencl --mem-limit 256MiB --suite workloads --workload block $model --variant fast
is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "2:1" "--variant fast: exit status 2, one line"
like "$ERR" "--variant.*'fast'" "the message names the option and the value"
run_gpumem plan $model --batch 2 --seq 24 --precision bf16 --variant vendor
like "$OUT" "attention=vendor" "plan --variant vendor says which attention it counts"
done_testing
