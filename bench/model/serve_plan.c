/* The KV-cache budget of a serving engine, as vLLM computes it
 * (bench/model/serve_plan.h, which cites the source lines). */
#include "bench/model/serve_plan.h"

#include "bench/model/mem_plan.h"
#include "bench/model/saturate.h"

#include <math.h>
#include <stdio.h>

#define GIB ((uint64_t)1 << 30)

static uint64_t cdiv(uint64_t x, uint64_t y) { return x / y + (x % y != 0); }
static uint64_t min64(uint64_t x, uint64_t y) { return x < y ? x : y; }

void gm_serve_defaults(const gm_arch *a, gm_serve_opts *o)
{
    bool big = o->total >= 70 * GIB;
    if (!o->utilization)
        o->utilization = GM_SERVE_UTILIZATION;
    if (!o->block_tokens)
        o->block_tokens = GM_SERVE_BLOCK_TOKENS;
    if (!o->max_model_len)
        o->max_model_len = a->context;
    if (!o->tp)
        o->tp = 1;
    bool default_tokens = !o->max_batched_tokens, default_seqs = !o->max_seqs;
    if (default_seqs)
        o->max_seqs = big ? 1024 : 256;
    if (default_tokens)
        o->max_batched_tokens = min64(big ? 8192 : 2048, gm_sat_mul(o->max_seqs, o->max_model_len));
    if (default_seqs)
        o->max_seqs = min64(o->max_seqs, o->max_batched_tokens);
}

uint64_t gm_serve_layer_peak(const gm_arch *a, uint64_t tokens, size_t e, uint64_t tp)
{
    uint64_t T = tp ? tp : 1, d = a->head_dim;
    /* Attention: qkv_proj's [q | k | v] (heads and KV heads split over the
     * ranks), the attention output and o_proj's output (all-reduced to h). */
    uint64_t attn = (a->heads / T + 2 * (a->kv_heads / T)) * d + a->heads / T * d + a->hidden;
    /* MLP: gate_up_proj's 2I and the activation's I (per rank). */
    uint64_t mlp = (a->gated_mlp ? 3 : 2) * (a->ffn / T);
    return gm_sat_mul(gm_sat_mul(tokens, e), gm_sat_add(2 * a->hidden, attn > mlp ? attn : mlp));
}

int gm_serve_plan(const gm_arch *a, const gm_serve_opts *in, gm_serve_budget *out, char *err, size_t err_len)
{
    gm_serve_opts o = *in;
    *out = (gm_serve_budget){0};
    if (!(o.utilization >= 0 && o.utilization <= 1)) {
        snprintf(err, err_len, "--gpu-memory-utilization %g: expected a share above 0, at most 1", o.utilization);
        return 2;
    }
    gm_serve_defaults(a, &o);
    if (a->context && o.max_model_len > a->context) {
        snprintf(err, err_len, "--max-model-len %llu: longer than %s's context, %llu tokens "
                 "(max_position_embeddings)", (unsigned long long)o.max_model_len, a->name,
                 (unsigned long long)a->context);
        return 2;
    }
    if (o.max_batched_tokens < o.max_seqs) {
        snprintf(err, err_len, "--max-batched-tokens %llu: below --max-seqs %llu (each running sequence takes a "
                 "token of every step)", (unsigned long long)o.max_batched_tokens, (unsigned long long)o.max_seqs);
        return 2;
    }
    if (a->kv_heads % o.tp || a->heads % o.tp) {
        snprintf(err, err_len, "--tensor-parallel %llu does not divide the model's %llu KV heads",
                 (unsigned long long)o.tp, (unsigned long long)a->kv_heads);
        return 2;
    }
    out->max_batched_tokens = o.max_batched_tokens;
    out->max_seqs = o.max_seqs;
    out->max_model_len = o.max_model_len;
    out->block_tokens = o.block_tokens;
    out->layers = a->layers;
    size_t e = gm_precision_size(o.act);
    /* One layer's block of K and V, on one rank (AttentionSpec). */
    out->page_bytes = gm_sat_mul(gm_sat_mul(2 * o.block_tokens, a->kv_heads / o.tp), gm_sat_mul(a->head_dim, gm_precision_size(o.kv)));
    if (o.kv_cache_memory) {
        /* kv_cache_memory_bytes: the budget as given, gpu_memory_utilization
         * not used (gpu_worker.py lines 362-380). */
        out->requested = out->available = o.kv_cache_memory;
    } else {
        /* request_memory: math.ceil of a float product, as here. */
        out->requested = (uint64_t)ceil((double)o.total * o.utilization);
        out->weights = o.weights;
        out->layer_peak = gm_serve_layer_peak(a, o.max_batched_tokens, e, o.tp);
        /* The sampler's input: compute_logits' [rows, V] in the model's
         * dtype and the fp32 copy the sampler works on. */
        out->logit_rows = min64(o.max_batched_tokens, o.max_seqs);
        out->logits = gm_sat_mul(gm_sat_mul(out->logit_rows, a->vocab), e + 4);
        out->reserve = o.reserve;
        out->non_kv = gm_sat_add(gm_sat_add(out->weights, out->layer_peak), gm_sat_add(out->logits, out->reserve));
        if (out->non_kv >= out->requested) {
            snprintf(err, err_len, "no memory left for the KV cache: %llu bytes requested (%.4g of %llu) hold "
                     "%llu of weights, activations and reserve (raise --gpu-memory-utilization, or lower "
                     "--max-batched-tokens or --max-seqs)", (unsigned long long)out->requested, o.utilization,
                     (unsigned long long)o.total, (unsigned long long)out->non_kv);
            return 2;
        }
        out->available = out->requested - out->non_kv;
    }
    uint64_t block_bytes = gm_sat_mul(out->page_bytes, a->layers);
    out->blocks = out->available / out->page_bytes / a->layers;
    out->tokens = gm_sat_mul(out->blocks, o.block_tokens);
    out->blocks_per_request = cdiv(o.max_model_len, o.block_tokens);
    out->concurrency = (double)out->blocks / (double)out->blocks_per_request;
    uint64_t needed = gm_sat_mul(out->blocks_per_request, block_bytes);
    if (needed > out->available) {
        /* estimate_max_model_len: the longest request the blocks hold. */
        snprintf(err, err_len, "the KV cache budget (%llu bytes, %llu blocks of %llu tokens) does not hold one "
                 "request of --max-model-len %llu tokens (%llu bytes); it holds at most %llu tokens a request",
                 (unsigned long long)out->available, (unsigned long long)out->blocks,
                 (unsigned long long)o.block_tokens, (unsigned long long)o.max_model_len,
                 (unsigned long long)needed, (unsigned long long)out->tokens);
        return 2;
    }
    return 0;
}
