#!/bin/sh
# gpumem plan --mode serve: the KV cache a serving engine keeps, by vLLM
# V1's arithmetic (vllm-project/vllm at ff1b90a2dd05, 2026-03-18), which
# this test recomputes on its own from the source lines:
#   requested = math.ceil(total_memory * gpu_memory_utilization)
#       vllm/v1/worker/utils.py request_memory, lines 408-410
#   available = requested - non_kv_cache_memory (weights + the profile's
#       activation peak + non-torch memory), no CUDA-graph estimate by default
#       vllm/v1/worker/gpu_worker.py determine_available_memory, lines 405-441
#   kv_cache_memory_bytes set: available = it, utilization not used
#       gpu_worker.py lines 362-380
#   page_size = 2 * block_size * num_kv_heads * head_size * dtype bytes
#       vllm/v1/kv_cache_interface.py real_page_size_bytes, lines 80-87
#   num_blocks = int(available // page_size // num_layers)
#       vllm/v1/core/kv_cache_utils.py get_num_blocks, line 848
#   "GPU KV cache size: {num_blocks // 1 * block_size:,} tokens"
#       kv_cache_utils.py _report_kv_cache_config, lines 1299-1303, 1316
#   "Maximum concurrency for {max_model_len:,} tokens per request: %.2fx",
#       num_blocks / cdiv(max_model_len, block_size)
#       kv_cache_utils.py lines 815-816, 1322; kv_cache_interface.py 121
#   defaults: block_size 16 (vllm/config/cache.py line 34), utilization 0.9
#       (line 41); max_num_batched_tokens 8192 and max_num_seqs 1024 from
#       70GiB, else 2048 and 256 (vllm/engine/arg_utils.py lines 2013-2031),
#       then min(max_num_seqs * max_model_len, tokens) and min(seqs, tokens)
#       (lines 2187-2190, 2200)
. tests/lib.sh
plan 36

# vLLM's figures from (available, page, layers, block, max_model_len).
vllm() {
    perl -e 'use POSIX qw(floor);
        my ($avail, $page, $layers, $block, $len) = @ARGV;
        my $blocks = floor(floor($avail / $page) / $layers);
        my $tokens = $blocks * $block;
        my $per = int(($len + $block - 1) / $block);
        sub commas { my $n = reverse shift; $n =~ s/(\d{3})(?=\d)/$1,/g; scalar reverse $n }
        printf "GPU KV cache size: %s tokens\nMaximum concurrency for %s tokens per request: %.2fx\n",
               commas($tokens), commas($len), $blocks / $per;' "$@"
}
tail2() { printf '%s\n' "$1" | tail -n 2; }

# 1. kv_cache_memory_bytes: the budget itself. Llama-3-8B bf16: a page is
# 2 x 16 x 8 x 128 x 2 = 65536 bytes, 32 layers.
run_gpumem plan --model llama-3-8b --mode serve --precision bf16 --kv-cache-memory 10GiB
is "$RC" 0 "serve, --kv-cache-memory: exit status 0"
is "$(tail2 "$OUT")" "$(vllm 10737418240 65536 32 16 8192)" "Llama-3-8B bf16, 10GiB of KV cache: vLLM's tokens and concurrency"
like "$OUT" "^GPU KV cache size: 81,920 tokens\$" "5120 blocks of 16 tokens"
like "$OUT" "^Maximum concurrency for 8,192 tokens per request: 10\\.00x\$" "10 requests of 8192 tokens"

# 2. Larger blocks, a shorter max_model_len that is no multiple of them.
run_gpumem plan --model llama-3-8b --mode serve --precision bf16 --kv-cache-memory 10GiB --block-tokens 32 \
    --max-model-len 4000
is "$(tail2 "$OUT")" "$(vllm 10737418240 131072 32 32 4000)" "block 32, max_model_len 4000: cdiv(4000, 32) = 125 blocks a request"

# 3. A budget that is no multiple of anything: both floors of get_num_blocks.
# tiny-llama-gqa fp32: page 2 x 16 x 2 x 32 x 4 = 8192 bytes, 4 layers, context 2048.
run_gpumem plan --model tiny-llama-gqa --mode serve --precision fp32 --kv-cache-memory 1000000007
is "$(tail2 "$OUT")" "$(vllm 1000000007 8192 4 16 2048)" "an odd budget: available // page // layers"
like "$OUT" "^kv_cache +blocks +30517 " "1000000007 // 8192 // 4 = 30517 blocks"

# 4. gpu_memory_utilization: requested = ceil(total x util), less the
# modelled non-KV memory the plan prints.
figure() { printf '%s\n' "$1" | awk -v k="$2" -v n="$3" '$1 == k && $2 == n { print $3 }'; }
check_util() { # total util max_len: vLLM's arithmetic on plan's printed non-KV bytes
    requested=$(perl -MPOSIX=ceil -e 'printf "%.0f", ceil($ARGV[0] * $ARGV[1])' "$1" "$2")
    is "$(figure "$OUT" budget requested)" "$requested" "requested = ceil($1 x $2) = $requested"
    non_kv=$(figure "$OUT" subtotal non_kv)
    is "$(tail2 "$OUT")" "$(vllm $((requested - non_kv)) 65536 32 16 "$3")" \
       "$1 bytes at utilization $2: vLLM's blocks, tokens and concurrency from $((requested - non_kv)) available"
}
run_gpumem plan --model llama-3-8b --mode serve --precision bf16 --fit 80GiB
is "$RC" 0 "serve --fit 80GiB: exit status 0"
check_util 85899345920 0.9 8192
# The modelled terms: weights P x 2; the profile forward of 8192 tokens
# holding hidden states and residual (2h) and the MLP's gate_up and
# activation (3I, above attention's qkv, output and o_proj); the logits of
# min(8192, 1024) rows in bf16 and the sampler's fp32 copy.
is "$(figure "$OUT" weights weights)" "$((8030261248 * 2))" "weights: 8030261248 parameters x 2 bytes"
is "$(figure "$OUT" activations profile_peak)" "$((8192 * 2 * (2 * 4096 + 3 * 14336)))" \
   "profile peak: 8192 tokens x 2 bytes x (2h + 3I)"
is "$(figure "$OUT" activations logits)" "$((1024 * 128256 * (2 + 4)))" "logits: 1024 rows x V x (2 + 4) bytes"
like "$OUT" "max_batched_tokens=8192 max_seqs=1024 block_tokens=16 max_model_len=8192" "80GiB: vLLM's defaults from 70GiB"
# An odd total and utilization: the ceiling of a product that is no whole number.
run_gpumem plan --model llama-3-8b --mode serve --precision bf16 --fit 85520809985B --gpu-memory-utilization 0.85
check_util 85520809985 0.85 8192
# Below 70GiB: 2048 batched tokens and 256 sequences, bounded by max_model_len.
run_gpumem plan --model llama-3-8b --mode serve --precision bf16 --fit 24GiB --max-model-len 4
like "$OUT" "max_batched_tokens=1024 max_seqs=256 " "24GiB: min(2048, 256 x 4) batched tokens, 256 sequences"
check_util 25769803776 0.9 4
run_gpumem plan --model llama-3-8b --mode serve --precision bf16 --fit 24GiB --max-model-len 4096 --format csv
is "$(printf '%s\n' "$OUT" | awk -F, '$3 == "tokens" { print $4 }')" \
   "$(printf '%s\n' "$OUT" | awk -F, '$3 == "blocks" { print $4 * 16 }')" "csv: tokens are blocks x 16"
run_gpumem plan --model llama-3-8b --mode serve --precision bf16 --fit 24GiB --format json
like "$OUT" '"max_concurrency": [0-9.]+' "json: the maximum concurrency"

# Every fit answer stays within the model's context (max_position_embeddings).
run_gpumem plan --model llama-3-8b --precision bf16 --fit 80GiB
like "$OUT" "max_seq 8192 at batch 1" "plan --fit: no sequence longer than Llama-3-8B's 8192 tokens"
run_gpumem plan --model tiny-llama-gqa --precision fp32 --fit 1GiB
like "$OUT" "max_seq 2048 at batch 1" "tiny-llama-gqa: its context, 2048"

# Bad input: one line naming the option, exit status 2.
bad() { # name args...
    name=$1
    shift
    run_gpumem plan --model llama-3-8b --mode serve --precision bf16 "$@"
    is "$RC:$(printf '%s\n' "$ERR" | wc -l)" "2:1" "$name: exit status 2, one line"
}
bad "utilization 0" --fit 80GiB --gpu-memory-utilization 0
like "$ERR" "--gpu-memory-utilization '0'" "the line names the option and the value"
bad "utilization above 1" --fit 80GiB --gpu-memory-utilization 1.5
bad "block size 0" --fit 80GiB --block-tokens 0
bad "a budget that holds no request" --kv-cache-memory 1MiB
like "$ERR" "does not hold one request of --max-model-len 8192" "the line says what the budget holds"
bad "a budget with no room for the cache" --fit 16GiB
bad "a request longer than the context" --fit 80GiB --max-model-len 9000
like "$ERR" "longer than llama-3-8b's context, 8192" "the line names the context"
bad "no card's memory" --max-seqs 8
# serve is no training mode: it takes the precisions inference takes
# (training refuses int8 weights and a KV cache of its own precision).
run_gpumem plan --model llama-3-8b --mode serve --precision int8 --fit 80GiB
like "$RC:$OUT" "^0:(?s:.*)GPU KV cache size: [0-9,]+ tokens" "plan --mode serve --precision int8: a plan, not a training refusal"
run_gpumem plan --model llama-3-8b --mode serve --precision bf16 --kv-precision fp8e4m3 --fit 80GiB --format csv
fp8_tokens=$(printf '%s\n' "$OUT" | awk -F, '$3 == "tokens" { print $4 }')
run_gpumem plan --model llama-3-8b --mode serve --precision bf16 --fit 80GiB --format csv
bf16_tokens=$(printf '%s\n' "$OUT" | awk -F, '$3 == "tokens" { print $4 }')
perl -e 'exit !($ARGV[0] > 1.9 * $ARGV[1] && $ARGV[0] <= 2 * $ARGV[1] + 32)' "${fp8_tokens:-0}" "${bf16_tokens:-1}"
ok $? "--mode serve --kv-precision fp8e4m3: about twice bf16's KV tokens ($fp8_tokens against $bf16_tokens)"
run_gpumem plan --model llama-3-8b --precision bf16 --seq 9000
is "$RC:$ERR" "2:gpumem plan: --seq 9000: longer than llama-3-8b's context, 8192 tokens (max_position_embeddings)" \
   "plan --seq past the context: exit status 2, one line"
done_testing
