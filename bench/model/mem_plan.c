/*
 * Whole-model memory per GPU (bench/model/mem_plan.h).
 *
 * Notation (DESIGN.md section 6): L layers, h hidden, a query heads, k KV
 * heads, d head dim, I intermediate size, V vocabulary, P parameters, b
 * batch, s sequence length, e element size, T tensor-parallel degree,
 * D = N / T data-parallel ranks.
 */
#include "bench/model/mem_plan.h"

#include "bench/model/saturate.h"
#include "bench/model/train_plan.h"

#include <string.h>

/* Saturating arithmetic (saturate.h): UINT64_MAX stands for "does not fit". */
#define mul gm_sat_mul
#define add gm_sat_add
#define mul3 gm_sat_mul3
#define share gm_sat_share

const char *const gm_plan_mode_names[GM_PLAN_MODE_COUNT] = {"inference", "train", "lora", "qlora", "serve"};

const char *gm_plan_role_name(gm_plan_role r)
{
    static const char *const names[] = {"weights", "gradients", "optimizer", "kv_cache", "activations", "workspace"};
    return (unsigned)r < GM_PLAN_ROLE_COUNT ? names[r] : "?";
}

void gm_plan_opts_init(gm_plan_opts *o)
{
    memset(o, 0, sizeof *o);
    o->mode = GM_PLAN_INFERENCE;
    o->prec = GM_FP32;
    o->batch = 1;
    o->seq = 512;
    o->optimizer = GM_OPTIM_ADAMW;
    o->recompute = GM_RECOMPUTE_NONE;
    o->gpus = 1;
    o->tp = 1;
}

/*
 * Activations one transformer layer keeps for the backward pass, derived
 * the way Korthikanti et al. 2022 ("Reducing Activation Recomputation in
 * Large Transformer Models", section 4.1) count them: every op's saved
 * inputs, e bytes an element, dropout masks 1 byte an element. Their
 * result for MHA, FFN 4h, GELU, LayerNorm and dropout, 16-bit, T = 1, is
 * s*b*h*(34 + 5*a*s/h); with T ranks and no sequence parallelism
 * s*b*h*(10 + 24/T + 5*a*s/(h*T)). Term by term, with sbh = s*b*h:
 *   both norms' inputs                      2 * e*sbh (Gemma-2's four
 *                                           norms: 4 * e*sbh)
 *   attention input (the norm's output)     e*sbh
 *   Q, K, V (GQA: K, V have k*d columns)    e*s*b*(a*d + 2*k*d) / T
 *   naive attention: softmax output         e*a*s^2*b / T
 *     with dropout: its mask and output     (1 + e)*a*s^2*b / T
 *     with soft-capped scores (Gemma-2:     e*a*s^2*b / T more
 *     cap * tanh(scores / cap)): tanh's
 *     output, which its backward reads
 *   tiled (flash) attention: fp32 row       4*a*s*b / T
 *     logsumexp; the output it also needs is the o_proj input below
 *   o_proj input                            e*s*b*a*d / T
 *   dropout mask after attention            sbh (with dropout)
 *   MLP input (the norm's output)           e*sbh (MoE: the router's
 *                                           logits e*s*b*experts too)
 *   plain MLP: GELU input, down input       2 * e*s*b*I / T
 *   gated MLP: gate and up outputs (the     3 * e*s*b*I / T
 *     fused SwiGLU/GeGLU input), down input
 *     (MoE: the expert terms times experts_per_token, each routed token
 *     also copied to its experts: experts_per_token * e*sbh)
 *   dropout mask after the MLP              sbh (with dropout)
 * Selective recomputation (Korthikanti section 5) recomputes the
 * attention core and keeps neither the s^2 terms nor the row statistics;
 * full recomputation keeps only the layer's input, e*sbh.
 */
uint64_t gm_layer_train_activations(const gm_arch *a, uint64_t b, uint64_t s, size_t e, bool naive,
                                    gm_recompute r, uint64_t tp)
{
    uint64_t sb = mul(s, b), sbh = mul(sb, a->hidden);
    if (r == GM_RECOMPUTE_FULL)
        return mul(e, sbh);
    uint64_t mask = a->dropout ? 1 : 0, norms = a->layer_norms ? a->layer_norms : 2;
    uint64_t n = mul((norms + 1) * e, sbh);                         /* norm inputs, attention input */
    n = add(n, share(mul3(e, sb, a->heads * a->head_dim * 2 + 2 * a->kv_heads * a->head_dim), tp)); /* Q,K,V, o_proj in */
    if (r == GM_RECOMPUTE_NONE) {
        uint64_t per_score = (a->dropout ? 1 + 2 * e : e) + (a->attn_softcap ? e : 0);
        if (naive)
            n = add(n, share(mul3(per_score, mul3(a->heads, s, s), b), tp));
        else
            n = add(n, share(mul3(4, a->heads, sb), tp));
    }
    uint64_t routed = a->experts ? a->experts_per_token : 1;
    n = add(n, mul3(2 * mask, sbh, 1));                             /* the two dropout masks */
    n = add(n, mul3(e, sbh, routed + (a->experts ? 1 : 0)) );      /* MLP input (and copies) */
    if (a->experts)
        n = add(n, mul3(e, sb, a->experts));                        /* router logits */
    uint64_t per_i = a->gated_mlp ? 3 : 2;
    n = add(n, share(mul3(per_i * e, mul(sb, a->ffn), routed), tp));
    return n;
}

/*
 * Activations live while one layer runs its forward pass (inference): the
 * residual stream and the norm's output, e*s*b*h each, plus the larger of
 * the attention phase (Q and the attention output, 2*e*s*b*a*d / T; K and
 * V go straight into the KV cache) and the MLP phase (gate and up, or up:
 * e*s*b*I / T each, times experts_per_token for MoE, plus the routed
 * copies of the input).
 */
static uint64_t live_layer(const gm_arch *a, uint64_t b, uint64_t s, size_t e, uint64_t tp)
{
    uint64_t sb = mul(s, b);
    uint64_t routed = a->experts ? a->experts_per_token : 1;
    uint64_t attn = share(mul3(2 * e, sb, a->heads * a->head_dim), tp);
    uint64_t mlp = share(mul3((a->gated_mlp ? 2 : 1) * e, mul(sb, a->ffn), routed), tp);
    if (a->experts)
        mlp = add(mlp, mul3(e * routed, sb, a->hidden));
    return add(mul3(2 * e, sb, a->hidden), attn > mlp ? attn : mlp);
}

/* One matrix [in, out] in int4: packed nibbles and fp16 scales per group
 * of `group` rows (along the input dimension), times `count`. */
static void int4_matrix(uint64_t in, uint64_t outf, uint64_t count, uint64_t group, uint64_t *packed,
                        uint64_t *scales, uint64_t *elems)
{
    uint64_t e = mul(in, outf);
    *packed = add(*packed, mul(count, e == UINT64_MAX ? e : e / 2 + (e & 1)));
    *scales = add(*scales, mul3(count, mul(in / group + (in % group != 0), outf), 2));
    *elems = add(*elems, mul(count, e));
}

void gm_plan_int4_weights(const gm_arch *a, uint64_t group, bool lm_head, size_t other_elem, uint64_t *packed,
                          uint64_t *scales, uint64_t *other)
{
    uint64_t q = a->heads * a->head_dim, kv = a->kv_heads * a->head_dim, L = a->layers, elems = 0;
    uint64_t experts = a->experts ? a->experts : 1;
    *packed = *scales = 0;
    group = group ? group : 128;
    /* Per layer: q_proj h x a*d, k_proj and v_proj h x k*d, o_proj a*d x h;
     * per expert gate and up h x I (up only when not gated), down I x h. */
    int4_matrix(a->hidden, q, L, group, packed, scales, &elems);
    int4_matrix(a->hidden, kv, mul(2, L), group, packed, scales, &elems);
    int4_matrix(q, a->hidden, L, group, packed, scales, &elems);
    int4_matrix(a->hidden, a->ffn, mul3(a->gated_mlp ? 2 : 1, experts, L), group, packed, scales, &elems);
    int4_matrix(a->ffn, a->hidden, mul(experts, L), group, packed, scales, &elems);
    /* The LM head h x V (input h), when untied and asked for. */
    if (lm_head && !a->tied)
        int4_matrix(a->hidden, a->vocab, 1, group, packed, scales, &elems);
    uint64_t P = gm_arch_params(a);
    *other = mul(P >= elems ? P - elems : 0, other_elem);
}

bool gm_plan_attention_by_gemm(gm_precision act, gm_precision kv)
{
    return act == kv && (act == GM_FP32 || act == GM_FP16 || act == GM_BF16);
}

uint64_t gm_plan_attention_rows(uint64_t heads, uint64_t s, size_t e)
{
    uint64_t row = mul3(heads ? heads : 1, s, 4 + e), rows = 1;
    while (rows * 2 <= s && mul(rows * 2, row) <= GM_PLAN_SCORE_BUDGET)
        rows *= 2;
    return rows;
}

uint64_t gm_plan_attention_scratch(const gm_arch *a, uint64_t s, size_t e, uint64_t tp)
{
    uint64_t heads = share(a->heads, tp);
    return mul3(mul(heads, gm_plan_attention_rows(heads, s, e)), s, 4 + e);
}

uint64_t gm_plan_int4_dequant(const gm_arch *a, size_t e, uint64_t tp)
{
    uint64_t q = a->heads * a->head_dim, kv = a->kv_heads * a->head_dim, h = a->hidden;
    uint64_t most = mul(h, q > a->ffn ? q : a->ffn);
    most = most > mul(h, kv) ? most : mul(h, kv);
    return share(mul(most, e), tp);
}

static int push(gm_plan_item *out, int n, const char *name, gm_plan_role role, uint64_t bytes)
{
    out[n].name = name;
    out[n].role = role;
    out[n].bytes = bytes;
    out[n].host = false;
    return n + 1;
}

int gm_plan_model(const gm_arch *a, const gm_plan_opts *o, gm_plan_item *out)
{
    if (o->gpus == 0 || o->tp == 0 || o->gpus % o->tp || o->zero < 0 || o->zero > 3 || o->mode == GM_PLAN_SERVE)
        return -1;
    /* LoRA and QLoRA, and what PyTorch's autograd keeps: train_plan.c. */
    if (o->mode == GM_PLAN_LORA || o->mode == GM_PLAN_QLORA
        || (o->mode == GM_PLAN_TRAIN && o->tune.saved == GM_SAVED_PYTORCH))
        return gm_plan_tune(a, o, out);
    if (o->mode == GM_PLAN_TRAIN && o->prec == GM_INT8)
        return -1;
    if (o->mode == GM_PLAN_TRAIN && (o->weight_prec || o->kv_prec || o->act_prec))
        return -1;
    gm_precision pw = o->weight_prec ? (gm_precision)(o->weight_prec - 1) : o->prec;
    gm_precision pk = o->kv_prec ? (gm_precision)(o->kv_prec - 1) : o->prec;
    gm_precision pa = o->act_prec ? (gm_precision)(o->act_prec - 1) : o->prec;
    if (pa == GM_INT4 || pk == GM_INT4 || (o->mode == GM_PLAN_TRAIN && pw == GM_INT4))
        return -1;
    if (o->int4_lm_head && (pw != GM_INT4 || a->tied))
        return -1;
    size_t e = gm_precision_size(pa);
    uint64_t T = o->tp, D = o->gpus / o->tp, b = o->batch, s = o->seq;
    /* Tensor parallelism (Megatron-LM, Shoeybi et al. 2019) splits every
     * matrix, the vocabulary and the KV heads over T ranks; the norms and
     * row-parallel biases it replicates are divided here too (under 0.01%
     * of a 7B model). */
    uint64_t P = share(gm_arch_params(a), T);
    uint64_t naive_scores = share(mul3(4, mul(a->heads, s), mul(s, b)), T);   /* fp32 s x s per head */
    int n = 0;
    if (o->mode == GM_PLAN_INFERENCE) {
        if (pw == GM_INT4) {
            uint64_t packed, scales, other;
            gm_plan_int4_weights(a, o->group_size, o->int4_lm_head, e, &packed, &scales, &other);
            n = push(out, n, "weights_int4", GM_PLAN_WEIGHTS, share(packed, T));
            n = push(out, n, "weight_scales_fp16", GM_PLAN_WEIGHTS, share(scales, T));
            n = push(out, n, "weights_other", GM_PLAN_WEIGHTS, share(other, T));
        } else {
            n = push(out, n, "weights", GM_PLAN_WEIGHTS, mul(P, gm_precision_size(pw)));
        }
        /* DESIGN section 6: 2*L*k*d*e bytes per token, for b*s tokens; a
         * sliding-window layer keeps its window's tokens only (Gemma-2, as
         * transformers' HybridCache and vLLM's sliding-window KV manager
         * allocate them). */
        n = push(out, n, "kv_cache", GM_PLAN_KV_CACHE,
                 share(mul(gm_arch_kv_bytes_per_sequence(a, gm_precision_size(pk), s), b), T));
        n = push(out, n, "live_layer", GM_PLAN_ACTIVATIONS, live_layer(a, b, s, e, T));
        /* Logits are computed in fp32 for sampling (and the loss). */
        n = push(out, n, o->logits_all ? "logits_all" : "logits_last", GM_PLAN_ACTIVATIONS,
                 share(mul3(4, mul(b, o->logits_all ? s : 1), a->vocab), T));
        /* One layer's attention scratch: naive materialises fp32 scores,
         * tiled keeps a running max and sum per row (2 floats). */
        n = push(out, n, o->naive ? "attention_scores" : "attention_row_stats", GM_PLAN_WORKSPACE,
                 o->naive ? naive_scores : share(mul3(8, a->heads, mul(s, b)), T));
        if (o->vendor_gemm && gm_plan_attention_by_gemm(pa, pk))
            n = push(out, n, "attention_score_chunk", GM_PLAN_WORKSPACE, gm_plan_attention_scratch(a, s, e, T));
        if (o->vendor_gemm && pw == GM_INT4)
            n = push(out, n, "int4_dequantised", GM_PLAN_WORKSPACE, gm_plan_int4_dequant(a, e, T));
        return n;
    }
    /* Training state per parameter (DESIGN section 6; ZeRO, Rajbhandari et
     * al. 2020): weights e, gradients e, fp32 master weights 4 when e < 4,
     * optimizer states; stage 1 divides the optimizer states and master
     * weights over D ranks, stage 2 also the gradients, 3 also the weights. */
    n = push(out, n, "weights", GM_PLAN_WEIGHTS, share(mul(P, e), o->zero >= 3 ? D : 1));
    if (e < 4)
        n = push(out, n, "master_weights_fp32", GM_PLAN_WEIGHTS, share(mul(P, 4), o->zero >= 1 ? D : 1));
    n = push(out, n, "gradients", GM_PLAN_GRADIENTS, share(mul(P, e), o->zero >= 2 ? D : 1));
    static const char *const opt_names[] = {"adamw_moments", "adamw_8bit_moments", "sgd", "momentum"};
    if (o->optimizer != GM_OPTIM_SGD)
        n = push(out, n, opt_names[o->optimizer], GM_PLAN_OPTIMIZER,
                 share(gm_optimizer_bytes(o->optimizer, P), o->zero >= 1 ? D : 1));
    uint64_t layer = gm_layer_train_activations(a, b, s, e, o->naive, o->recompute, T);
    n = push(out, n, "layers_saved", GM_PLAN_ACTIVATIONS, mul(layer, a->layers));
    if (o->recompute == GM_RECOMPUTE_FULL)
        /* The backward pass recomputes one layer at a time and holds all
         * of its activations meanwhile but its input, which it keeps. */
        n = push(out, n, "recomputed_layer", GM_PLAN_ACTIVATIONS,
                 gm_layer_train_activations(a, b, s, e, o->naive, GM_RECOMPUTE_NONE, T)
                     - gm_layer_train_activations(a, b, s, e, o->naive, GM_RECOMPUTE_FULL, T));
    /* Outside the layers (Korthikanti section 4.1.2): the final norm's
     * input and output, e*s*b*h each, the embedding dropout mask, and
     * the logits, kept in fp32 for the cross-entropy loss: 4*s*b*V / T. */
    uint64_t sbh = mul3(s, b, a->hidden);
    n = push(out, n, "head_inputs", GM_PLAN_ACTIVATIONS, add(mul(2 * e, sbh), a->dropout ? sbh : 0));
    n = push(out, n, "logits_fp32", GM_PLAN_ACTIVATIONS, share(mul3(4, mul(s, b), a->vocab), T));
    if (a->final_softcap)
        /* Soft-capped logits (Gemma-2): tanh's output too, for its backward. */
        n = push(out, n, "logits_softcap_fp32", GM_PLAN_ACTIVATIONS, share(mul3(4, mul(s, b), a->vocab), T));
    /* The device's step (docs/training.md): the loss's gradient in the
     * compute precision for the head's products (fp32: in place over the
     * logits), the backward's workspace and the token ids it uploads. */
    if (e < 4)
        n = push(out, n, "dlogits", GM_PLAN_ACTIVATIONS, share(mul3(e, mul(s, b), a->vocab), T));
    n = push(out, n, "backward_workspace", GM_PLAN_WORKSPACE, gm_plan_backward_workspace(a, o, b, s));
    n = push(out, n, "token_inputs", GM_PLAN_WORKSPACE, gm_plan_token_inputs(b, s));
    if (gm_plan_rope_tables(a, s))
        n = push(out, n, "rope_tables", GM_PLAN_WORKSPACE, gm_plan_rope_tables(a, s));
    if (o->naive && o->recompute != GM_RECOMPUTE_NONE)
        /* Recomputing naive attention materialises one layer's scores. */
        n = push(out, n, "attention_scores", GM_PLAN_WORKSPACE, naive_scores);
    if (o->vendor_gemm && gm_plan_attention_by_gemm(pa, pk))
        n = push(out, n, "attention_score_chunk", GM_PLAN_WORKSPACE, gm_plan_attention_scratch(a, s, e, T));
    return gm_plan_offload(a, o, out, n);
}

uint64_t gm_plan_sum(const gm_plan_item *it, int n)
{
    uint64_t t = 0;
    for (int i = 0; i < n; i++)
        t = it[i].host ? t : add(t, it[i].bytes);
    return t;
}

uint64_t gm_plan_host_sum(const gm_plan_item *it, int n)
{
    uint64_t t = 0;
    for (int i = 0; i < n; i++)
        t = it[i].host ? add(t, it[i].bytes) : t;
    return t;
}

static bool fits(const gm_arch *a, gm_plan_opts o, uint64_t b, uint64_t s, uint64_t budget)
{
    gm_plan_item it[GM_PLAN_MAX_ITEMS];
    o.batch = b;
    o.seq = s;
    int n = gm_plan_model(a, &o, it);
    return n >= 0 && gm_plan_sum(it, n) <= budget;
}

/* The largest x in [1, limit] with fits(x), 0 if none: totals grow with
 * batch and with sequence length, so a binary search finds it. */
static uint64_t largest(const gm_arch *a, const gm_plan_opts *o, uint64_t budget, bool vary_batch, uint64_t limit)
{
    uint64_t lo = 0, hi = limit;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        bool ok = vary_batch ? fits(a, *o, mid, o->seq, budget) : fits(a, *o, o->batch, mid, budget);
        if (ok)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

void gm_plan_fit(const gm_arch *a, const gm_plan_opts *o, uint64_t budget, uint64_t *max_batch, uint64_t *max_seq)
{
    uint64_t limit = (uint64_t)1 << 24;
    *max_batch = largest(a, o, budget, true, limit);
    /* No sequence longer than the model's context (max_position_embeddings). */
    *max_seq = largest(a, o, budget, false, a->context && a->context < limit ? a->context : limit);
}
