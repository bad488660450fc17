#!/bin/sh
# bench/tools/card_check.sh, a GPU machine's checks in one go, run for real on
# the OpenCL device (PoCL) with tiny, capped shapes: bad usage is refused
# before anything runs; the gemm, search, prefill and precisions steps write their
# logs, run folders and the figures of the summary (the two searches'
# answers agree); a step past its time limit is stopped by SIGINT, keeps
# the rows it measured, is reported as stopped and fails the whole.
. tests/lib.sh
plain_pass_only "card_check.sh's steps and summary are the script's"
plan 28

# card [VAR=VALUE...] $script [DIR STEP...]: the script on PoCL under the
# test's cap (the assignments override the settings); sets RC, OUT, ERR.
script="sh bench/tools/card_check.sh"
card() {
    env GPUMEM="$GPUMEM" CARD_BACKEND=opencl CARD_MEM_LIMIT="$TEST_MEM_LIMIT" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
    RC=$?
    OUT=$(cat "$TEST_TMP/out")
    ERR=$(cat "$TEST_TMP/err")
}

card $script
is "$RC:$ERR" "2:card_check: a folder for the logs and run folders is required
usage: bench/tools/card_check.sh DIR [STEP...]   (steps: env bench precisions gemm search; named only: prefill peers torch)" "no folder: exit 2, the usage"
card $script "$TEST_TMP/x" gemm fly
is "$RC:$(printf '%s' "$ERR" | head -1)" "2:card_check: unknown step 'fly'" "an unknown step: exit 2, named"
card CARD_BACKEND=vulkan $script "$TEST_TMP/x"
is "$RC:$(printf '%s' "$ERR" | head -1)" "2:card_check: CARD_BACKEND must be cuda or opencl (got 'vulkan')" \
    "an unknown backend: exit 2, named"
card CARD_GEMM_LIMIT=0 $script "$TEST_TMP/x"
is "$RC:$(printf '%s' "$ERR" | head -1)" "2:card_check: CARD_GEMM_LIMIT must be a whole number of seconds from 1 (got '0')" \
    "a limit of 0 s: exit 2, named"
card GPUMEM=/nonexistent $script "$TEST_TMP/x"
like "$RC:$ERR" "^2:card_check: /nonexistent is not an executable" "a missing binary: exit 2"
ok $([ ! -e "$TEST_TMP/x" ]; echo $?) "and none of them made the folder"

# gemm and search for real, tiny.
dir=$TEST_TMP/card
card CARD_GEMM_SIZE=128 CARD_GEMM_PRECISIONS=fp32,fp16 \
    CARD_SEARCH_ARGS="--workload linear --hidden 32 --seq 64 --precision bf16 --pattern per-tensor --mem-limit 16MiB" \
    $script "$dir" gemm search
is "$RC" 0 "gemm and search on PoCL: exit 0"
[ "$RC" = 0 ] || diag "$OUT" "$ERR"
like "$OUT" "^gemm: exit 0 in [0-9]+ s \(log: $dir/gemm.log\)
search: exit 0 in [0-9]+ s \(log: $dir/search.log\)
summary: $dir/summary.txt$" "a line a step, then where the summary is"
summary=$(cat "$dir/summary.txt")
like "$summary" "^gemm: exit 0 in [0-9]+ s.*
search: exit 0 in [0-9]+ s.*

gemm, m = n = k = 128" "the summary opens with the steps' lines, then the figures"
like "$summary" "^  linear blocked per-tensor fp16 inference batch 1 seq 128 throughput = [0-9.]+ GFLOP/s$" \
    "gemm quotes a throughput a precision and implementation"
like "$summary" "^  linear clblast per-tensor fp16 .*\[unsupported\]; CLBlast's HGEMM needs cl_khr_fp16" \
    "and the rows that did not run, with their reason"
model=$(printf '%s\n' "$summary" | sed -n '/^search model:/,/^search bisect:/p' | sed -n 's/.* max_batch = \([0-9]*\) batch;.*/\1/p')
bisect=$(printf '%s\n' "$summary" | sed -n '/^search bisect:/,$p' | sed -n 's/.* max_batch = \([0-9]*\) batch;.*/\1/p')
ok $([ -n "$model" ] && [ "$model" = "$bisect" ]; echo $?) "both searches quote their answer, the same batch ($model, $bisect)"
like "$summary" "search model:(.|\n)*probes = 2 count(.|\n)*search bisect:(.|\n)*probes = [0-9]+ count" \
    "and their probes"
ok $([ -s "$dir/gemm/results.csv" ] && [ -s "$dir/search-model/results.csv" ] && [ -s "$dir/search-bisect/results.csv" ]
     echo $?) "the run folders are kept under the folder"
like "$(cat "$dir/search.log")" '^\$ timeout -s INT -k 30 100 .* bench --suite oom --oom-parts batch --backend opencl --device 0 --mem-limit' \
    "the log holds each command as run, under its time limit: the searches alone"
is "$(csv_count "$dir/search-model/results.csv" '$_->{workload} ne "linear"')" 0 \
    "no allocation, fragmentation or latency rows beside them"

# prefill: a whole model's time, tokens/s and MFU in the summary.
card CARD_PREFILL_ARGS="--workload block --model tiny-llama-gqa --precision fp32 --batch 2 --seq 16 --variant vendor" \
    $script "$dir" prefill
is "$RC" 0 "prefill: exit 0"
like "$(cat "$dir/summary.txt")" "^prefill (.|\n)*^  block clblast per-tensor fp32 inference batch 2 seq 16 tokens = [0-9.]+ tokens/s; projections: clblast;(.|\n)*^  block clblast .* mfu = [0-9.]+ %; model FLOPs" \
    "and the summary quotes its tokens/s with what ran it, and its MFU with the basis"
like "$(cat "$dir/summary.txt")" "^  blas clblast fp32 batched +[0-9]+ launches(.|\n)*^  attention: [0-9.]+% of the forward passes' [0-9.]+ ms \(its GEMMs and softmax\)" \
    "and the profiled run's device time by kernel, attention's share of it"

# precisions: its table in the summary; 1 (a cell under the goal) is a finding, not a failure.
card CARD_PREC_SIZE=1MiB CARD_PREC_PRECISIONS=bf16 $script "$dir" precisions
is "$RC" 0 "precisions: exit 0 whatever the cells"
like "$(cat "$dir/summary.txt")" "^kernel +fp32 GB/s +fp32 +bf16" "and the summary holds its table"

# peers as on a GPU (no clpeak, no OpenMP triad): our read at least, in its summary.
card PEERS_MODE=gpu CARD_PEERS_SIZE=1048576 $script "$dir" peers
is "$RC" 0 "peers: exit 0"
like "$(cat "$dir/summary.txt")" "^peers \\(the summary of $dir/peers.log\\):(.|\n)*^read \\(median\\) +[0-9.]+" \
    "and the summary quotes its read figure"

# torch: without PyTorch the step says so and fails; with it, a tiny model's prefill.
if python3 -c 'import torch' 2>/dev/null; then
    card CARD_TORCH_MODEL=share/models/tiny-llama-gqa.json CARD_TORCH_RUNS="forward --batch 1 --seq 16 --reps 1" \
        $script "$dir" torch
    like "$(cat "$dir/torch.jsonl")" '"what": "forward", "params": [0-9]+' "torch: the prefill's figures in torch.jsonl"
    ok $([ "$RC" = 1 ]; echo $?) "and the step fails where basics needs a GPU"
else
    card $script "$dir" torch
    is "$RC" 1 "torch without PyTorch: the whole fails"
    like "$(cat "$dir/summary.txt")" "^torch: exit 2 in [0-9]+ s(.|\n)*^torch: python3 cannot import torch" \
        "and the summary says why"
fi

# A step past its limit: stopped, its rows kept, the whole fails.
card CARD_BENCH_LIMIT=3 CARD_BENCH_ARGS="--suite stream --sizes 4MiB:64MiB:x2 --precision fp32,bf16 --reps 20" \
    $script "$dir" bench
like "$RC:$OUT" "^1:bench: stopped at its limit of 3 s \(exit 124\) in [0-9]+ s" \
    "bench past its 3 s: stopped, reported, exit 1"
rows=$(csv_count "$dir/bench/results.csv" '$_->{status} eq "ok"')
ok $([ "$rows" -gt 0 ]; echo $?) "and the rows it measured are kept ($rows)"
stress_args=$(sed -n 's/^BENCH_STRESS_ARGS ?= //p' Makefile)
like "$(cat "$dir/bench.log")" "^\\\$ $GPUMEM stress $stress_args --backend opencl --device 0 --out $dir/bench/stress\n" \
    "its stress checks are make bench's ($stress_args)"
done_testing
