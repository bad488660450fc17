/*
 * The KV-cache budget of a serving engine, computed as vLLM's V1 engine
 * computes it (vllm-project/vllm at ff1b90a2dd05, 2026-03-18):
 *
 *   requested  = ceil(total memory x gpu_memory_utilization)
 *                  (vllm/v1/worker/utils.py request_memory, lines 403-423)
 *   available  = requested - (weights + the profile run's peak activation
 *                + non-torch memory) - a CUDA-graph estimate where opted in
 *                  (vllm/v1/worker/gpu_worker.py determine_available_memory,
 *                   line 350: non_kv_cache_memory lines 405-409, the
 *                   result lines 437-441; the estimate is applied only
 *                   with VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, lines
 *                   413-417, off by default: vllm/envs.py line 1642)
 *   page       = 2 x block_size x kv_heads x head_dim x dtype bytes, one
 *                  layer's block (vllm/v1/kv_cache_interface.py
 *                  AttentionSpec.real_page_size_bytes, lines 80-87)
 *   blocks     = available // page // layers, at least 0
 *                  (vllm/v1/core/kv_cache_utils.py get_num_blocks, line
 *                   848, with every layer in one group where the layers
 *                   share one spec: get_kv_cache_groups line 1244,
 *                   get_kv_cache_config_from_groups lines 1131-1139)
 *   tokens     = blocks x block_size ("GPU KV cache size: N tokens",
 *                  _report_kv_cache_config lines 1299-1303, 1316)
 *   concurrency = blocks / cdiv(max_model_len, block_size)
 *                  ("Maximum concurrency for L tokens per request: X.XXx",
 *                   line 1322; get_max_concurrency_for_kv_cache_config
 *                   lines 799-817,
 *                   FullAttentionSpec.max_memory_usage_bytes in
 *                   kv_cache_interface.py lines 113-121)
 * and refused where vLLM refuses: a utilization outside (0, 1]
 * (vllm/config/cache.py line 41), max_model_len above the model's
 * max_position_embeddings (vllm/config/model.py _get_and_verify_max_len),
 * max_num_batched_tokens below max_num_seqs (vllm/config/scheduler.py
 * lines 265-270), no memory left for the cache, or not enough for one
 * request of max_model_len tokens (kv_cache_utils.py
 * _check_enough_kv_cache_memory, lines 616-647).
 *
 * What vLLM measures, this counts from the model (a figure that is
 * modelled, not measured; gpumem bench's serve suite measures it on the
 * device): the weights (parameters x bytes); the peak activation of the
 * profile run, which forwards max_num_batched_tokens tokens
 * (vllm/v1/worker/gpu_model_runner.py profile_run, lines 5541-5548) and
 * samples the last token of min(tokens, max_num_seqs) dummy requests
 * (_dummy_run line 5058: num_reqs = min(num_tokens, max_num_reqs)); and
 * a reserve for what is neither (serve_reserve: non-torch allocations such as library
 * workspaces, and CUDA graphs where counted), 0 unless given, as vLLM by
 * default subtracts no graph estimate.
 */
#ifndef GM_SERVE_PLAN_H
#define GM_SERVE_PLAN_H

#include "bench/model/arch.h"
#include "lib/precision.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* vLLM's defaults (vllm/config/cache.py: block_size 16 line 34,
 * gpu_memory_utilization 0.9 line 41). */
#define GM_SERVE_BLOCK_TOKENS 16
#define GM_SERVE_UTILIZATION 0.9

typedef struct {
    uint64_t total;             /* the device's memory (the snapshot's total_memory) */
    double utilization;         /* gpu_memory_utilization; 0: 0.9 */
    uint64_t kv_cache_memory;   /* kv_cache_memory_bytes: the KV budget itself (no profile); 0: none */
    uint64_t max_batched_tokens, max_seqs; /* 0: vLLM's defaults for `total` */
    uint64_t max_model_len;     /* 0: the model's context */
    uint64_t block_tokens;      /* 0: 16 */
    uint64_t reserve;           /* non-KV memory beyond weights and activations */
    gm_precision act, kv;       /* the model's dtype and the cache's */
    uint64_t weights;           /* the weights' bytes (mem_plan: every role's precision) */
    uint64_t tp;                /* tensor-parallel ranks (0: 1): per-rank heads, MLP, weights */
} gm_serve_opts;

typedef struct {
    uint64_t max_batched_tokens, max_seqs, max_model_len, block_tokens; /* as resolved */
    uint64_t requested;         /* ceil(total x utilization); kv_cache_memory when given */
    uint64_t weights;
    uint64_t layer_peak;        /* the profile forward's peak: hidden, residual and the larger phase */
    uint64_t logits;            /* the profile's logits: model dtype and the sampler's fp32 copy */
    uint64_t logit_rows;        /* min(max_batched_tokens, max_seqs) */
    uint64_t reserve;
    uint64_t non_kv;            /* weights + layer_peak + logits + reserve (0 with kv_cache_memory) */
    uint64_t available;         /* requested - non_kv */
    uint64_t page_bytes;        /* one layer's block */
    uint64_t layers;
    uint64_t blocks, tokens;
    uint64_t blocks_per_request; /* cdiv(max_model_len, block_tokens) */
    double concurrency;         /* blocks / blocks_per_request */
} gm_serve_budget;

/* vLLM's defaults for a device of `total` bytes (vllm/engine/arg_utils.py
 * get_batch_defaults, lines 2013-2031, the OpenAI API server's: 8192
 * batched tokens and 1024 sequences from 70GiB up, else 2048 and 256),
 * bounded as _set_default_max_num_seqs_and_batched_tokens_args does
 * (lines 2187-2190, 2200): batched tokens at most max_seqs x max_model_len,
 * sequences at most the batched tokens. Fills the zeros of o. */
void gm_serve_defaults(const gm_arch *a, gm_serve_opts *o);

/* The profile run's activation peak for `tokens` tokens of model a in
 * element size e over tp ranks: the hidden states and residual, e x h each
 * a token, and the larger of the attention phase (qkv_proj's output, the
 * attention output and o_proj's output) and the MLP phase (gate_up_proj's
 * 2I and SiluAndMul's I), as vLLM's LlamaDecoderLayer holds them. */
uint64_t gm_serve_layer_peak(const gm_arch *a, uint64_t tokens, size_t e, uint64_t tp);

/* The budget of model a under o (its zeros filled by gm_serve_defaults).
 * Returns 0; 2 with one line in err where vLLM refuses the configuration
 * (see above), naming the option and what would be allowed. */
int gm_serve_plan(const gm_arch *a, const gm_serve_opts *o, gm_serve_budget *out, char *err, size_t err_len);

#endif
