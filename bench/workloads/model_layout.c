/* The whole model's tensor list and weight layout (bench/workloads/model_private.h). */
#include "bench/workloads/model_private.h"
#include "bench/workloads/kernel_calls.h"
#include "bench/model/mem_plan.h"
#include "bench/model/precision_roles.h"
#include "bench/model/train_plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the memory model ---- */

/* Is the architecture one this file runs? NULL, or why not. */
const char *model_unsupported(const gm_arch *a)
{
    if (a->experts)
        return "mixture of experts";
    if (a->layernorm)
        return "LayerNorm";
    if (!a->gated_mlp)
        return "a plain (ungated) MLP";
    if (a->qkv_bias || a->o_bias || a->mlp_bias)
        return "biases";
    if (a->positions)
        return "learned position embeddings";
    if (strcmp(a->model_type, "gemma") == 0)
        return "GeGLU and scaled embeddings (gemma)";
    if (a->layer_norms > 2 || a->sliding_window || a->attn_softcap || a->final_softcap)
        return "four norms a layer, sliding-window layers and soft-capping (gemma2)";
    if (a->head_dim > 256)
        return "head_dim over 256";
    if (a->heads % a->kv_heads)
        return "heads not a multiple of kv_heads";
    return NULL;
}

uint64_t model_layer_elems(const gm_arch *a)
{
    uint64_t h = a->hidden, ad = a->heads * a->head_dim, kd = a->kv_heads * a->head_dim;
    return 2 * h + h * ad + 2 * h * kd + ad * h + 3 * h * a->ffn;
}

bool model_is_vendor(const char *impl)
{
    return strcmp(impl, "tiled") != 0 && strcmp(impl, "blocked") != 0;
}

int block_model_impls(const gm_device *dev, const gm_shape *s, const char **out)
{
    const char *ours = gm_device_prefers_chunked(dev) ? "blocked" : "tiled";
    bool takes = s->prec == GM_FP32 || s->prec == GM_FP16 || s->prec == GM_BF16;
    const char *vendor = takes && dev->backend->blas_impl ? dev->backend->blas_impl(s->prec) : NULL;
    /* By default the vendor's on a GPU where its library plans the
     * precision (blas_plan: host only; the failure it records is put back). */
    bool usable = false;
    if (vendor && dev->info.type != GM_DEV_CPU && dev->backend->blas_plan) {
        gm_device *d = (gm_device *)dev;
        gm_error before = d->err;
        gm_gemm g = {.prec = s->prec, .m = 64, .n = 64, .k = 64};
        usable = dev->backend->blas_plan(d, &g) == GM_OK;
        d->err = before;
    }
    return gm_impls_pick(s, ours, vendor, usable ? vendor : ours, out);
}

void block_model_adapt(gm_shape *s, const char *impl)
{
    s->naive = false;
    s->vendor_gemm = model_is_vendor(impl);
}

/* Does LoRA with the adapted matrices `adapted` (bit M_*) keep the input
 * of m's group (q, k, v; gate, up; down) for the backward? */
static bool lora_keeps(unsigned adapted, int m)
{
    unsigned group = m == M_DOWN ? 1u << M_DOWN
                     : m == M_GATE ? (1u << M_GATE) | (1u << M_UP)
                                   : (1u << M_Q) | (1u << M_K) | (1u << M_V);
    return (adapted & group) != 0;
}

/* The tensor list, with each tensor's buffer index in ids. Inference: the
 * items of gm_plan_model (mem_plan.c), same bytes; train: its items split
 * into the tensors the forward pass writes. */
int model_tensor_list(const gm_shape *s, gm_tensor *out, int *ids)
{
    gm_tensor_list l = {out, 0, false};
    const gm_arch *a = &s->arch;
    uint64_t e = gm_precision_size(s->prec), h = a->hidden, V = a->vocab, L = a->layers;
    uint64_t ad = a->heads * a->head_dim, kd = a->kv_heads * a->head_dim, I = a->ffn;
    uint64_t T = gm_tensor_mul(&l, s->batch, s->seq);
    uint64_t P = gm_arch_params(a), lm = a->tied ? 0 : h * V;
    /* QLoRA: the base's projections in NF4, whatever --weight-precision
     * (int4 or none: option checks) says. */
    const bool qlora = s->tune == GM_PLAN_QLORA, lora = s->tune == GM_PLAN_LORA || qlora;
    gm_precision wp = qlora ? s->prec : gm_weight_prec(s);
    int n = 0;
#define ADD(id, name, role, elems, size)                                                                   \
    do {                                                                                                   \
        ids[n++] = (id);                                                                                   \
        gm_tensor_list_add(&l, (name), (role), (elems), (size));                                           \
    } while (0)
    if (wp == GM_INT4) {
        /* mem_plan's int4 weights: the layers' codes and scales (and the
         * head's after them with --int4-lm-head); the rest (other, with
         * an LM head left out of them) in the activations' precision. */
        uint64_t packed, scales, other;
        bool head = s->int4_lm_head && lm;
        gm_plan_int4_weights(a, gm_group_size(s), head, e, &packed, &scales, &other);
        l.overflow |= packed == UINT64_MAX || scales == UINT64_MAX || other == UINT64_MAX;
        ADD(B_W4, "weights_int4", GM_ROLE_WEIGHT, packed, 1);
        ADD(B_WS, "weight_scales_fp16", GM_ROLE_WEIGHT, scales, 1);
        lm = head ? 0 : lm;
        ADD(B_W, "weights_other", GM_ROLE_WEIGHT, other / e - lm, e);
    } else if (qlora) {
        /* plan's NF4 base: codes, absmax codes, their scales, the rest
         * (embedding, norms; the head apart) in the compute precision. */
        uint64_t codes, absmax, scales, other;
        gm_plan_nf4_weights(a, e, &codes, &absmax, &scales, &other);
        l.overflow |= other == UINT64_MAX;
        ADD(B_NF4C, "base_nf4_codes", GM_ROLE_WEIGHT, codes, 1);
        ADD(B_NF4A, "base_nf4_absmax_u8", GM_ROLE_WEIGHT, absmax, 1);
        ADD(B_NF4S, "base_nf4_scales_fp32", GM_ROLE_WEIGHT, scales, 1);
        ADD(B_W, "base_other", GM_ROLE_WEIGHT, other / e - lm, e);
    } else {
        ADD(B_W, lora ? "base_weights" : "weights", GM_ROLE_WEIGHT, P - lm, e);
    }
    if (lm)
        ADD(B_LM, lora ? "base_lm_head" : "lm_head", GM_ROLE_WEIGHT, lm, e);
    if (!s->train && !lora) {
        ADD(B_KV, "kv_cache", GM_ROLE_KV_CACHE, gm_tensor_mul(&l, 2 * L, gm_tensor_mul(&l, T, kd)),
            gm_precision_size(gm_kv_prec(s)));
        ADD(B_RES, "residual", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, h), e);
        ADD(B_NORM, "normed", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, h), e);
        /* Q and the attention output, then gate and up (mem_plan.c live_layer). */
        uint64_t phase = 2 * (ad > I ? ad : I);
        ADD(B_PHASE, "phase", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, phase), e);
        ADD(B_LOGITS, "logits_last", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, s->batch, V), 4);
        ADD(B_STATS, "attention_row_stats", GM_ROLE_WORKSPACE, gm_tensor_mul(&l, gm_tensor_mul(&l, a->heads, T), 2), 4);
        if (s->vendor_gemm && gm_plan_attention_by_gemm(s->prec, gm_kv_prec(s)))
            ADD(B_SCORES, "attention_score_chunk", GM_ROLE_WORKSPACE, gm_plan_attention_scratch(a, s->seq, e, 1), 1);
        if (s->vendor_gemm && wp == GM_INT4)
            ADD(B_DEQUANT, "int4_dequantised", GM_ROLE_WORKSPACE, gm_plan_int4_dequant(a, e, 1), 1);
        return l.overflow ? -1 : n;
    }
    /* LoRA: the adapters in the compute precision, their fp32 master
     * copies (16-bit), gradients and moments (plan's with
     * --adapter-precision the compute precision: 16 bytes a parameter,
     * as its fp32 default) and nothing of the frozen base. */
    uint64_t Pa = lora ? model_lora_params(s) : 0, n_ad = 0, rank = 0;
    double alpha;
    unsigned adapted = lora ? model_lora_matrices(s, &n_ad, &rank, &alpha) : ~0u;
    if (lora)
        ADD(B_AD, "adapters", GM_ROLE_WEIGHT, Pa, e);
    if (s->zero_offload) {
        /* plan's gradient_buffer (train_plan.c, gm_plan_offload): one
         * module's gradients, a layer's or the LM head's where larger; the
         * master weights, moments and gradients are in host memory
         * (model_offload.c), not in this list. */
        uint64_t module = lora ? Pa / L : model_layer_elems(a);
        if (!lora && h * V > module)
            module = h * V;
        ADD(lora ? B_AGRAD : B_GRAD, "gradient_buffer", GM_ROLE_WEIGHT, module, e);
    } else {
        if (e < 4)
            ADD(lora ? B_AMASTER : B_MASTER, lora ? "adapter_master_fp32" : "master_weights_fp32", GM_ROLE_WEIGHT,
                lora ? Pa : P, 4);
        ADD(lora ? B_AGRAD : B_GRAD, lora ? "adapter_gradients" : "gradients", GM_ROLE_WEIGHT, lora ? Pa : P, e);
        ADD(lora ? B_AMOM : B_MOM, "adamw_moments", GM_ROLE_WEIGHT, gm_tensor_mul(&l, lora ? Pa : P, 2), 4);
    }
    /* Every layer's input; its other tensors for every layer, or with
     * --recompute full for the one layer the backward recomputes (mem_plan's
     * recomputed_layer); --recompute selective keeps no log-sum-exp (the
     * backward recomputes it into the logits' space). */
    uint64_t LT = gm_tensor_mul(&l, L, T), KT = s->recompute == GM_RECOMPUTE_FULL ? T : LT;
    const char *kept = s->recompute == GM_RECOMPUTE_FULL ? "recomputed" : "saved";
    char names[12][32];
    static const char *const what[] = {"attn_in", "q", "k", "v", "attn_out", "lse", "mid", "mlp_in", "gate", "up",
                                       "down_in", "lora_xa"};
    for (int i = 0; i < 12; i++)
        snprintf(names[i], sizeof names[i], "%s_%s", kept, what[i]);
    /* LoRA: a projection's input is kept only where an adapter learns
     * from it (mem_plan's count); else one layer's, reused. */
    uint64_t KA = lora_keeps(adapted, M_Q) ? KT : T, KM = lora_keeps(adapted, M_GATE) ? KT : T;
    uint64_t KD = lora_keeps(adapted, M_DOWN) ? KT : T;
    ADD(B_X, "saved_x", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, h), e);
    ADD(B_AIN, KA == T && lora ? "attn_in" : names[0], GM_ROLE_ACTIVATION, gm_tensor_mul(&l, KA, h), e);
    ADD(B_Q, names[1], GM_ROLE_ACTIVATION, gm_tensor_mul(&l, KT, ad), e);
    ADD(B_K, names[2], GM_ROLE_ACTIVATION, gm_tensor_mul(&l, KT, kd), e);
    ADD(B_V, names[3], GM_ROLE_ACTIVATION, gm_tensor_mul(&l, KT, kd), e);
    ADD(B_O, names[4], GM_ROLE_ACTIVATION, gm_tensor_mul(&l, KT, ad), e);
    if (s->recompute != GM_RECOMPUTE_SELECTIVE)
        ADD(B_LSE, names[5], GM_ROLE_ACTIVATION, gm_tensor_mul(&l, KT, a->heads), 4);
    ADD(B_MID, names[6], GM_ROLE_ACTIVATION, gm_tensor_mul(&l, KT, h), e);
    ADD(B_MIN, KM == T && lora ? "mlp_in" : names[7], GM_ROLE_ACTIVATION, gm_tensor_mul(&l, KM, h), e);
    ADD(B_GATE, names[8], GM_ROLE_ACTIVATION, gm_tensor_mul(&l, KT, I), e);
    ADD(B_UP, names[9], GM_ROLE_ACTIVATION, gm_tensor_mul(&l, KT, I), e);
    ADD(B_ACT, KD == T && lora ? "down_in" : names[10], GM_ROLE_ACTIVATION, gm_tensor_mul(&l, KD, I), e);
    if (lora)   /* --recompute full: one layer's, as the layer's other tensors */
        ADD(B_XA, names[11], GM_ROLE_ACTIVATION, gm_tensor_mul(&l, KT, n_ad * rank), e);
    ADD(B_FIN, "final_norm_in", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, h), e);
    /* LoRA: the head does not learn, so its input is not kept: the final
     * norm writes it into the backward's workspace, free until the loss. */
    if (!lora)
        ADD(B_FOUT, "final_norm_out", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, h), e);
    ADD(B_LOGITS, "logits_fp32", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, V), 4);
    if (s->vendor_gemm && gm_plan_attention_by_gemm(s->prec, gm_kv_prec(s)))
        ADD(B_SCORES, "attention_score_chunk", GM_ROLE_WORKSPACE, gm_plan_attention_scratch(a, s->seq, e, 1), 1);
    /* The backward's (mem_plan.c's items of the same names): the loss's
     * gradient in the compute precision (fp32: in place), the workspace
     * that model_backward.c lays its buffers out in, and the token ids. */
    if (e < 4)
        ADD(B_DLOGITS, "dlogits", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, V), e);
    gm_plan_opts po = {.prec = s->prec, .mode = lora ? GM_PLAN_LORA : GM_PLAN_TRAIN, .gpus = 1, .tp = 1};
    po.tune.rank = s->lora_rank;
    ADD(B_BWS, "backward_workspace", GM_ROLE_WORKSPACE, gm_plan_backward_workspace(a, &po, s->batch, s->seq), 1);
    ADD(B_TGT, "targets", GM_ROLE_WORKSPACE, T, 4);
    /* plan's rope_tables: fp32 cos and sin of each position */
    ADD(B_ROPE, "rope_tables", GM_ROLE_WORKSPACE, gm_plan_rope_tables(a, s->seq), 1);
    if (qlora) {
        /* plan's dequant_buffer (the largest projection, one at a time)
         * and the second quantisation's map (256 floats; plan leaves it out). */
        uint64_t big = h * (ad > kd ? ad : kd);
        big = big > h * I ? big : h * I;
        ADD(B_DEQUANT, "dequant_buffer", GM_ROLE_WORKSPACE, big, e);
        ADD(B_NF4M, "nf4_code_map", GM_ROLE_WORKSPACE, 256, 4);
    }
    if (lora)   /* the embedding is frozen: no segments for its backward */
        return l.overflow ? -1 : n;
    ADD(B_ORDER, "embedding_order", GM_ROLE_WORKSPACE, T, 4);
    ADD(B_SEG_START, "embedding_segment_starts", GM_ROLE_WORKSPACE, T + 1, 4);
    ADD(B_SEG_TOKEN, "embedding_segment_tokens", GM_ROLE_WORKSPACE, T, 4);
#undef ADD
    return l.overflow ? -1 : n;
}

int block_model_tensors(const gm_shape *s, gm_tensor *out)
{
    int ids[GM_MAX_TENSORS];
    return model_tensor_list(s, out, ids);
}

/* ---- weights ---- */

uint64_t model_in(const model_state *st, int m)
{
    switch (m) {
    case M_O: return st->ad;
    case M_DOWN: return st->I;
    case M_EMB: return st->V;
    case M_NORM1: case M_NORM2: case M_FINAL: return 1;
    default: return st->h;
    }
}

uint64_t model_out(const model_state *st, int m)
{
    switch (m) {
    case M_Q: return st->ad;
    case M_K: case M_V: return st->kd;
    case M_GATE: case M_UP: return st->I;
    case M_LM: return st->V;
    default: return st->h;
    }
}

/* Is matrix m stored in int4 (a layer's projection, with int4 weights;
 * the LM head with --int4-lm-head)? */
bool model_is_int4(const model_state *st, int m)
{
    return (st->int4 && m < N_LAYER_M && m != M_NORM1 && m != M_NORM2) || (m == M_LM && st->int4_head);
}

/* The index of matrix m's first parameter in the model (embedding, the
 * layers, the final norm, then the LM head): its weights' hashes start
 * there in every precision. */
uint64_t model_param(const model_state *st, int m, uint64_t layer)
{
    if (m == M_EMB || (m == M_LM && st->tied))
        return 0;
    if (m == M_LM)
        return st->p_main;
    uint64_t base = st->V * st->h;
    if (m == M_FINAL)
        return base + st->L * st->per_layer;
    uint64_t off = base + layer * st->per_layer;
    for (int i = 0; i < m; i++)
        off += model_in(st, i) * model_out(st, i);
    return off;
}

/* Where matrix m of `layer` starts: its buffer and offset, in elements
 * (int4 codes: bytes; their scales follow from it, gm_portable.h). With
 * int4 weights the weights tensor holds the embedding, each layer's two
 * norms and the final norm; an int4 LM head follows the last layer's
 * codes. */
loc model_loc(model_state *st, int m, uint64_t layer)
{
    if (m == M_LM && st->int4_head)
        return (loc){&st->buf[B_W4], st->L * st->int4_layer};
    if (m == M_LM && !st->tied)
        return (loc){&st->buf[B_LM], 0};
    if (!st->int4 && !st->nf4)
        return (loc){&st->buf[B_W], model_param(st, m, layer)};
    uint64_t base = st->V * st->h;
    if (m == M_EMB || m == M_LM)
        return (loc){&st->buf[B_W], 0};
    if (m == M_FINAL)
        return (loc){&st->buf[B_W], base + st->L * 2 * st->h};
    if (m == M_NORM1 || m == M_NORM2)
        return (loc){&st->buf[B_W], base + layer * 2 * st->h + (m == M_NORM2 ? st->h : 0)};
    if (st->nf4)    /* its codes (bytes) */
        return (loc){&st->buf[B_NF4C], model_nf4_at(st, m, layer).codes};
    uint64_t off = layer * st->int4_layer;
    for (int i = 0; i < m; i++)
        off += model_is_int4(st, i) ? model_in(st, i) * model_out(st, i) / 2 : 0;
    return (loc){&st->buf[B_W4], off};
}

/* The int8 scale of matrix m: its largest magnitude over 127. */
float model_scale(const model_state *st, int m) { return (st->add[m] + st->range[m]) / 127.0f; }

layer_locs model_locs(model_state *st, uint64_t l)
{
    uint64_t T = st->T, h = st->h;
    gm_buffer *b = st->buf;
    if (!st->train)
        return (layer_locs){
            .x_in = {&b[B_RES], 0}, .attn_in = {&b[B_NORM], 0}, .q = {&b[B_PHASE], 0}, .o = {&b[B_PHASE], T * st->ad},
            .k = {&b[B_KV], 2 * l * T * st->kd}, .v = {&b[B_KV], (2 * l + 1) * T * st->kd}, .lse = {NULL, 0},
            .mid = {&b[B_NORM], 0}, .mlp_in = {&b[B_RES], 0}, .gate = {&b[B_PHASE], 0},
            .up = {&b[B_PHASE], T * st->I}, .act = {&b[B_PHASE], 0}, .out = {&b[B_RES], 0},
            .stats = {&b[B_STATS], 0}};
    /* --recompute full: one layer's tensors, all layers' inputs;
     * selective: the log-sum-exp after the (max, sum) pairs in the logits'
     * space, until the LM head or in the backward (model_backward.c). */
    uint64_t k = st->recompute == GM_RECOMPUTE_FULL ? 0 : l;
    gm_buffer *stats = st->in_backward && st->es == 4 ? &b[B_FIN] : &b[B_LOGITS];
    loc lse = st->recompute == GM_RECOMPUTE_SELECTIVE ? (loc){stats, 2 * st->heads * T}
                                                       : (loc){&b[B_LSE], k * st->heads * T};
    unsigned adapted = st->lora ? st->lora_m : ~0u;
    uint64_t ka = lora_keeps(adapted, M_Q) ? k : 0, km = lora_keeps(adapted, M_GATE) ? k : 0;
    uint64_t kd = lora_keeps(adapted, M_DOWN) ? k : 0;
    return (layer_locs){
        .x_in = {&b[B_X], l * T * h}, .attn_in = {&b[B_AIN], ka * T * h}, .q = {&b[B_Q], k * T * st->ad},
        .o = {&b[B_O], k * T * st->ad}, .k = {&b[B_K], k * T * st->kd}, .v = {&b[B_V], k * T * st->kd},
        .lse = lse, .mid = {&b[B_MID], k * T * h}, .mlp_in = {&b[B_MIN], km * T * h},
        .gate = {&b[B_GATE], k * T * st->I}, .up = {&b[B_UP], k * T * st->I}, .act = {&b[B_ACT], kd * T * st->I},
        .out = l + 1 < st->L ? (loc){&b[B_X], (l + 1) * T * h} : (loc){&b[B_FIN], 0},
        .stats = {stats, 0}};
}

void block_model_work(const gm_shape *s, double *flops, double *bytes, double *tokens)
{
    const gm_arch *a = &s->arch;
    double T = (double)s->batch * (double)s->seq, h = (double)a->hidden, V = (double)a->vocab;
    double ad = (double)(a->heads * a->head_dim), kd = (double)(a->kv_heads * a->head_dim), I = (double)a->ffn;
    double L = (double)a->layers, e = (double)gm_precision_size(s->prec), P = (double)gm_arch_params(a);
    double ke = (double)gm_precision_size(gm_kv_prec(s)), wbytes = P * e;
    if (gm_weight_prec(s) == GM_INT4) {
        uint64_t packed, scales, other;
        gm_plan_int4_weights(a, gm_group_size(s), s->int4_lm_head, gm_precision_size(s->prec), &packed, &scales,
                             &other);
        wbytes = (double)packed + (double)scales + (double)other;
    }
    double pairs = ((double)s->seq + 1) / 2;       /* causal: keys per query */
    double head_rows = s->train ? T : (double)s->batch;
    *flops = L * (2 * T * (h * ad + 2 * h * kd + ad * h + 3 * h * I) + 4 * T * pairs * ad) + 2 * head_rows * h * V;
    if (s->tune == GM_PLAN_LORA || s->tune == GM_PLAN_QLORA) {
        /* LoRA and QLoRA: the frozen base's backward is dX alone, as many FLOPs as
         * its forward; each adapter's parameters 2 a token forward, and
         * dX and dW backward: 6 a token. */
        *flops = 2 * *flops + 6 * T * (double)model_lora_params(s);
    } else if (s->train) {   /* the backward: dX and dW of every product (model_backward.c) */
        *flops *= 3;
    }
    /* Weights read once; KV read by every query; AdamW reads and writes the
     * moments and master weights, reads the gradients, writes the weights
     * (and the backward writes the gradients; its activations not counted). */
    *bytes = wbytes + L * T * pairs * 2 * kd * ke + 4 * head_rows * V
             + (s->train ? P * (e + e + 16 + (e < 4 ? 8 : 0) + e) : 0)
             + (s->tune ? (double)model_lora_params(s) * (e + e + 16 + (e < 4 ? 8 : 0) + e) : 0);
    *tokens = T;
}


/* ---- LoRA's adapters and QLoRA's NF4 base: where they are ---- */

/* The gm_lora_target of matrix m, or -1. */
static int target_of(int m)
{
    switch (m) {
    case M_Q: return GM_LORA_Q;
    case M_K: return GM_LORA_K;
    case M_V: return GM_LORA_V;
    case M_O: return GM_LORA_O;
    case M_GATE: return GM_LORA_GATE;
    case M_UP: return GM_LORA_UP;
    case M_DOWN: return GM_LORA_DOWN;
    default: return -1;
    }
}

static gm_tune_opts tune_of(const gm_shape *s)
{
    gm_tune_opts t = {0};
    t.rank = s->lora_rank;
    t.alpha = s->lora_alpha;
    t.targets = s->lora_targets;
    return t;
}

bool model_lora_runs(const gm_shape *s)
{
    return (s->tune == GM_PLAN_LORA || (s->tune == GM_PLAN_QLORA && model_nf4_fits(&s->arch)))
           && gm_shape_has_arch(s) && !model_unsupported(&s->arch) && !s->checkpoint
           && (s->prec == GM_FP32 || s->prec == GM_FP16 || s->prec == GM_BF16);
}

static unsigned matrices_of(const gm_arch *a, const gm_tune_opts *t, uint64_t *count)
{
    unsigned targets = gm_lora_targets(a, t), mask = 0;
    *count = 0;
    for (int m = 0; m < N_LAYER_M; m++)
        if (target_of(m) >= 0 && (targets & (1u << target_of(m)))) {
            mask |= 1u << m;
            ++*count;
        }
    return mask;
}

unsigned model_lora_matrices(const gm_shape *s, uint64_t *count, uint64_t *rank, double *alpha)
{
    gm_tune_opts t = tune_of(s);
    *rank = gm_lora_rank(&t);
    *alpha = gm_lora_alpha(&t);
    return matrices_of(&s->arch, &t, count);
}

uint64_t model_lora_params(const gm_shape *s)
{
    gm_tune_opts t = tune_of(s);
    return gm_lora_params(&s->arch, &t);
}

bool model_lora_adapted(const model_state *st, int m) { return st->lora && m < N_LAYER_M && (st->lora_m >> m & 1u); }

uint64_t model_lora_param(const model_state *st, int m, uint64_t l)
{
    uint64_t per = 0, at = 0;
    for (int i = 0; i < N_LAYER_M; i++) {
        if (!model_lora_adapted(st, i))
            continue;
        if (i == m)
            at = per;
        per += st->rank * (model_in(st, i) + model_out(st, i));
    }
    return l * per + at;
}

loc model_lora_xa(model_state *st, int m, uint64_t l)
{
    uint64_t idx = 0, k = st->recompute == GM_RECOMPUTE_FULL ? 0 : l;   /* full: one layer's, recomputed */
    for (int i = 0; i < m; i++)
        idx += model_lora_adapted(st, i);
    return (loc){&st->buf[B_XA], (k * st->n_adapted + idx) * st->T * st->rank};
}

bool model_is_nf4(const model_state *st, int m)
{
    return st->nf4 && m < N_LAYER_M && m != M_NORM1 && m != M_NORM2;
}

gm_nf4_at model_nf4_at(const model_state *st, int m, uint64_t l)
{
    gm_nf4_at at = {0, 0, 0};
    for (uint64_t j = 0; j <= l; j++)
        for (int i = 0; i < N_LAYER_M; i++) {
            if (j == l && i == m)
                return at;
            if (!model_is_nf4(st, i))
                continue;
            uint64_t n = model_in(st, i) * model_out(st, i), blocks = n / GM_NF4_BLOCK;
            at.codes += n / 2;
            at.absmax += blocks;
            at.scales += (blocks + GM_NF4_SCALE_BLOCK - 1) / GM_NF4_SCALE_BLOCK;
        }
    return at;
}

bool model_nf4_fits(const gm_arch *a)
{
    uint64_t ad = a->heads * a->head_dim, kd = a->kv_heads * a->head_dim;
    return (a->hidden * ad) % GM_NF4_BLOCK == 0 && (a->hidden * kd) % GM_NF4_BLOCK == 0
           && (a->hidden * a->ffn) % GM_NF4_BLOCK == 0;
}
