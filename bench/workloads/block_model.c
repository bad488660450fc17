/*
 * block with a whole architecture (bench/workloads/block_model.h): the decoder of a
 * Llama-family model (model_type llama, mistral, qwen2 without biases,
 * phi3) as its modelling code runs it:
 *   x = embed(tokens)
 *   per layer:  a = RMSNorm(x) w1;  q = a Wq, k = a Wk, v = a Wv (GQA:
 *               kv_heads key/value heads, heads / kv_heads queries each);
 *               o = causal softmax(q k^T / sqrt(d)) v;  mid = x + o Wo;
 *               n = RMSNorm(mid) w2;  x = mid + (silu(n Wg) * (n Wu)) Wd
 *   logits = RMSNorm(x) wf  W_lm  (fp32; W_lm the embedding when tied)
 * Rotary position embeddings are not applied (they move no memory).
 *
 * Precisions per role (inference): one for every tensor, or fp16/bf16
 * activations with int4 weights and/or an fp8 KV cache. int4 weights are
 * mem_plan's: every layer matrix's codes back to back (weights_int4, in
 * the order q, k, v, o, gate, up, down of each layer), their fp16 scales
 * in the same order (weight_scales_fp16), quantised on the device from
 * the same hashes (block.cl); the embedding, norms and LM head stay in
 * the activations' precision (weights, lm_head), but for an untied head
 * with --int4-lm-head (gm_shape.int4_lm_head): its codes and scales then
 * follow the layers' (model.cl's model_lm_head_int4 dequantises them on
 * load). An fp8 KV cache: K and V
 * are projected into the phase buffer (free between Q and the attention
 * output) and converted into the cache, one at a time.
 *
 * Inference (prefill of b sequences of s tokens) holds exactly the tensors
 * of bench/mem_plan's inference plan: the weights, the KV cache (K and V
 * go straight into it), the live layer (residual stream, norm output, and
 * one phase buffer for Q and the attention output, then gate and up), the
 * last tokens' fp32 logits and the attention row statistics.
 *
 * --mode train holds the plan's training tensors: weights, fp32 master
 * weights for 16-bit, gradients, AdamW moments, every layer's activations
 * kept for backward (mem_plan.c, gm_layer_train_activations: x, the norm
 * outputs and inputs, q, k, v, the attention output, its fp32 log-sum-exp
 * per row and head, gate, up and the down projection's input), the final
 * norm's input and output and the fp32 logits of every token. One
 * iteration is the AdamW step over every parameter, from the gradient
 * buffer, followed by the forward pass: the step a training loop takes
 * after the backward pass of the iteration before. The backward pass is
 * not computed: the gradients are a deterministic pattern written each
 * iteration, and every row says so (GM_TRAIN_NOTE). The attention's
 * (max, sum) pairs of one head pass through the logits buffer, which is
 * free until the LM head.
 *
 * Checks: the iteration's output (sampled logits rows) is kept, then the
 * forward pass is replayed stage by stage, untimed, and each stage of the
 * checked layers compared on sampled token rows with a double-precision
 * recomputation from the device's own inputs; the replay's logits must
 * equal the iteration's bit for bit (the kernels are deterministic). In
 * train mode a seeded sample of parameters is checked against a CPU AdamW
 * run over the same steps.
 */
#include "bench/workloads/block_model.h"
#include "bench/workloads/block_private.h"
#include "bench/workloads/kernel_calls.h"
#include "bench/model/mem_plan.h"
#include "bench/model/precision_roles.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ACT BLOCK_ACT_SCALE
#define SEED_W 401u
#define SEED_GRAD 509u
#define RMS_EPS 1e-5f
#define LR 1e-4f
#define BETA1 0.9f
#define BETA2 0.999f
#define ADAM_EPS 1e-8f
#define WEIGHT_DECAY 0.01f
#define GRAD_RANGE 0.125f
#define CHECK_ROWS 4            /* token rows per stage */
#define CHECK_PARAMS 256        /* AdamW sample */
#define MAX_CHECKED_LAYERS 4
/* Output columns of a product checked per sampled row: every one up to
 * this many, else the first and last EDGE_COLS and a seeded sample. */
#define CHECK_COLS 1024
#define EDGE_COLS 32

/* Matrices of one layer, in their order in the weights tensor, then the
 * model-wide ones. */
enum { M_NORM1, M_Q, M_K, M_V, M_O, M_NORM2, M_GATE, M_UP, M_DOWN, N_LAYER_M, M_EMB = N_LAYER_M, M_FINAL, M_LM, N_M };

/* Tensors, in the memory model's order. */
enum {
    B_W4, B_WS,                                                           /* int4 weights: codes, scales */
    B_W, B_LM, B_MASTER, B_GRAD, B_MOM,                                   /* train state (B_W, B_LM also inference) */
    B_KV, B_RES, B_NORM, B_PHASE, B_STATS,                                /* inference */
    B_X, B_AIN, B_Q, B_K, B_V, B_O, B_LSE, B_MID, B_MIN, B_GATE, B_UP, B_ACT, B_FIN, B_FOUT, /* train */
    B_LOGITS, N_B
};

typedef struct {
    bool model;                     /* true: this is not a block_state (block.c) */
    gm_device *dev;
    gm_shape s;
    gm_arch a;
    gm_precision p, kp;             /* the activations' (and weights' but int4) and the KV cache's */
    size_t es, kes;
    bool int4;                      /* the layer matrices in int4 (B_W4, B_WS) */
    bool int4_head;                 /* the LM head too, after them */
    uint64_t group;                 /* int4: rows of a column per scale */
    uint64_t int4_layer;            /* int4: bytes of one layer's codes */
    bool chunked, train, master, blas, tied;
    uint64_t h, ad, kd, d, I, V, L, heads, kv_heads, b, seq, T;
    /* Sequences, tokens of each, and tokens an iteration runs: the batch
     * (b, seq, T), or for an oom probe (gm_shape.probe) the first
     * GM_PROBE_TOKENS tokens (at most) of its first sequence; the tensors
     * are laid out for the whole batch either way. */
    uint64_t run_b, run_seq, run_T;
    uint64_t per_layer, p_main, p_total;    /* elements: one layer, the weights tensor, all parameters */
    float range[N_M], add[N_M];
    unsigned steps;                 /* AdamW steps taken */
    gm_buffer buf[N_B];
    gm_program *p_linear, *p_attn, *p_model, *p_block;
    gm_kernel *k_linear, *k_attn, *k_init, *k_fill, *k_master, *k_embed, *k_norm, *k_swiglu, *k_lse, *k_lm, *k_lm4,
        *k_adamw;
    gm_kernel *k_kv, *k_scales, *k_pack;        /* block.cl: an fp8 KV cache, int4 weights */
} model_state;

typedef struct {
    gm_buffer *buf;
    uint64_t off;
} loc;

typedef struct {
    loc x_in, attn_in, q, k, v, o, lse, mid, mlp_in, gate, up, act, out, stats;
} layer_locs;

/* ---- the memory model ---- */

/* Is the architecture one this file runs? NULL, or why not. */
static const char *unsupported(const gm_arch *a)
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

static uint64_t layer_elems(const gm_arch *a)
{
    uint64_t h = a->hidden, ad = a->heads * a->head_dim, kd = a->kv_heads * a->head_dim;
    return 2 * h + h * ad + 2 * h * kd + ad * h + 3 * h * a->ffn;
}

/* The tensor list, with each tensor's buffer index in ids. Inference: the
 * items of gm_plan_model (mem_plan.c), same bytes; train: its items split
 * into the tensors the forward pass writes. */
static int model_tensors(const gm_shape *s, gm_tensor *out, int *ids)
{
    gm_tensor_list l = {out, 0, false};
    const gm_arch *a = &s->arch;
    uint64_t e = gm_precision_size(s->prec), h = a->hidden, V = a->vocab, L = a->layers;
    uint64_t ad = a->heads * a->head_dim, kd = a->kv_heads * a->head_dim, I = a->ffn;
    uint64_t T = gm_tensor_mul(&l, s->batch, s->seq);
    uint64_t P = gm_arch_params(a), lm = a->tied ? 0 : h * V;
    gm_precision wp = gm_weight_prec(s);
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
    } else {
        ADD(B_W, "weights", GM_ROLE_WEIGHT, P - lm, e);
    }
    if (lm)
        ADD(B_LM, "lm_head", GM_ROLE_WEIGHT, lm, e);
    if (!s->train) {
        ADD(B_KV, "kv_cache", GM_ROLE_KV_CACHE, gm_tensor_mul(&l, 2 * L, gm_tensor_mul(&l, T, kd)),
            gm_precision_size(gm_kv_prec(s)));
        ADD(B_RES, "residual", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, h), e);
        ADD(B_NORM, "normed", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, h), e);
        /* Q and the attention output, then gate and up (mem_plan.c live_layer). */
        uint64_t phase = 2 * (ad > I ? ad : I);
        ADD(B_PHASE, "phase", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, phase), e);
        ADD(B_LOGITS, "logits_last", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, s->batch, V), 4);
        ADD(B_STATS, "attention_row_stats", GM_ROLE_WORKSPACE, gm_tensor_mul(&l, gm_tensor_mul(&l, a->heads, T), 2), 4);
        return l.overflow ? -1 : n;
    }
    if (e < 4)
        ADD(B_MASTER, "master_weights_fp32", GM_ROLE_WEIGHT, P, 4);
    ADD(B_GRAD, "gradients", GM_ROLE_WEIGHT, P, e);
    ADD(B_MOM, "adamw_moments", GM_ROLE_WEIGHT, gm_tensor_mul(&l, P, 2), 4);
    uint64_t LT = gm_tensor_mul(&l, L, T);
    ADD(B_X, "saved_x", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, h), e);
    ADD(B_AIN, "saved_attn_in", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, h), e);
    ADD(B_Q, "saved_q", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, ad), e);
    ADD(B_K, "saved_k", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, kd), e);
    ADD(B_V, "saved_v", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, kd), e);
    ADD(B_O, "saved_attn_out", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, ad), e);
    ADD(B_LSE, "saved_lse", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, a->heads), 4);
    ADD(B_MID, "saved_mid", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, h), e);
    ADD(B_MIN, "saved_mlp_in", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, h), e);
    ADD(B_GATE, "saved_gate", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, I), e);
    ADD(B_UP, "saved_up", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, I), e);
    ADD(B_ACT, "saved_down_in", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, LT, I), e);
    ADD(B_FIN, "final_norm_in", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, h), e);
    ADD(B_FOUT, "final_norm_out", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, h), e);
    ADD(B_LOGITS, "logits_fp32", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, V), 4);
#undef ADD
    return l.overflow ? -1 : n;
}

int block_model_tensors(const gm_shape *s, gm_tensor *out)
{
    int ids[GM_MAX_TENSORS];
    return model_tensors(s, out, ids);
}

/* ---- weights ---- */

static uint64_t m_in(const model_state *st, int m)
{
    switch (m) {
    case M_O: return st->ad;
    case M_DOWN: return st->I;
    case M_EMB: return st->V;
    case M_NORM1: case M_NORM2: case M_FINAL: return 1;
    default: return st->h;
    }
}

static uint64_t m_out(const model_state *st, int m)
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
static bool m_int4(const model_state *st, int m)
{
    return (st->int4 && m < N_LAYER_M && m != M_NORM1 && m != M_NORM2) || (m == M_LM && st->int4_head);
}

/* The index of matrix m's first parameter in the model (embedding, the
 * layers, the final norm, then the LM head): its weights' hashes start
 * there in every precision. */
static uint64_t m_param(const model_state *st, int m, uint64_t layer)
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
        off += m_in(st, i) * m_out(st, i);
    return off;
}

/* Where matrix m of `layer` starts: its buffer and offset, in elements
 * (int4 codes: bytes; their scales follow from it, gm_portable.h). With
 * int4 weights the weights tensor holds the embedding, each layer's two
 * norms and the final norm; an int4 LM head follows the last layer's
 * codes. */
static loc m_loc(model_state *st, int m, uint64_t layer)
{
    if (m == M_LM && st->int4_head)
        return (loc){&st->buf[B_W4], st->L * st->int4_layer};
    if (m == M_LM && !st->tied)
        return (loc){&st->buf[B_LM], 0};
    if (!st->int4)
        return (loc){&st->buf[B_W], m_param(st, m, layer)};
    uint64_t base = st->V * st->h;
    if (m == M_EMB || m == M_LM)
        return (loc){&st->buf[B_W], 0};
    if (m == M_FINAL)
        return (loc){&st->buf[B_W], base + st->L * 2 * st->h};
    if (m == M_NORM1 || m == M_NORM2)
        return (loc){&st->buf[B_W], base + layer * 2 * st->h + (m == M_NORM2 ? st->h : 0)};
    uint64_t off = layer * st->int4_layer;
    for (int i = 0; i < m; i++)
        off += m_int4(st, i) ? m_in(st, i) * m_out(st, i) / 2 : 0;
    return (loc){&st->buf[B_W4], off};
}

/* The int8 scale of matrix m: its largest magnitude over 127. */
static float m_scale(const model_state *st, int m) { return (st->add[m] + st->range[m]) / 127.0f; }

/* ---- kernels ---- */

static gm_status launch(model_state *st, gm_kernel *k, size_t items, gm_arg *args, int n)
{
    size_t global, local;
    gm_launch_geometry(st->dev, st->chunked, items, &global, &local);
    return st->dev->backend->launch(st->dev, 0, k, global, local, args, n);
}

static gm_status init_region(model_state *st, loc at, uint64_t n, uint64_t base, unsigned seed, float range, float add,
                             float scale)
{
    gm_arg args[] = {gm_arg_buf(at.buf), gm_arg_u64(&at.off), gm_arg_u64(&n), gm_arg_u64(&base), gm_arg_u32(&seed),
                     gm_arg_f32(&range), gm_arg_f32(&add), gm_arg_f32(&scale)};
    return launch(st, st->k_init, (size_t)n, args, 8);
}

static gm_status init_matrix(model_state *st, int m, uint64_t layer)
{
    loc at = m_loc(st, m, layer);
    uint64_t n = m_in(st, m) * m_out(st, m);
    /* The hash runs over the parameter's index in the model (lm_head after the weights tensor). */
    uint64_t base = m_param(st, m, layer);
    if (m_int4(st, m))
        return gm_int4_init_enqueue(st->dev, st->k_scales, st->k_pack, st->chunked, at.buf, at.off, &st->buf[B_WS],
                                    m_in(st, m), m_out(st, m), st->group, base, SEED_W, st->range[m]);
    return init_region(st, at, n, base, SEED_W, st->range[m], st->add[m], m_scale(st, m));
}

static gm_status linear(model_state *st, int m, uint64_t layer, uint64_t rows, loc x, loc y, const loc *r)
{
    loc w = m_loc(st, m, layer);
    gm_linear_call c = {x.buf, w.buf, y.buf, r ? r->buf : NULL, rows, m_out(st, m), m_in(st, m), ACT,
                        m_scale(st, m), ACT, ACT, x.off, w.off, y.off, r ? r->off : 0,
                        r ? GM_LINEAR_RESIDUAL : GM_LINEAR_PLAIN};
    if (m_int4(st, m))
        return gm_linear_enqueue_int4(st->dev, 0, st->k_linear, st->chunked, &c, &st->buf[B_WS],
                                      (unsigned int)st->group);
    return gm_linear_enqueue(st->dev, 0, st->k_linear, st->chunked, &c);
}

/* K or V (m) of `layer` into the KV cache at `to`: straight from the
 * projection, or through the phase buffer after Q when the cache has its
 * own precision (block.cl converts). Like every stage, over the tokens
 * the iteration runs (run_T: an oom probe's first tokens), not over the
 * whole batch the tensors are laid out for. */
static gm_status kv_projection(model_state *st, int m, uint64_t layer, loc in, loc to)
{
    uint64_t T = st->run_T;
    if (st->kp == st->p)
        return linear(st, m, layer, T, in, to, NULL);
    loc staged = {&st->buf[B_PHASE], st->T * st->ad};
    gm_status rc = linear(st, m, layer, T, in, staged, NULL);
    return rc == GM_OK ? gm_kv_store_enqueue(st->dev, st->k_kv, st->chunked, staged.buf, to.buf, T,
                                             (unsigned int)st->kd, st->kd, staged.off, to.off, ACT)
                       : rc;
}

static gm_status rmsnorm(model_state *st, int m, uint64_t layer, uint64_t rows, loc x, uint64_t first, uint64_t step,
                         loc y)
{
    loc w = m_loc(st, m, layer);
    unsigned int width = (unsigned int)st->h;
    float eps = RMS_EPS, sx = ACT, sw = m_scale(st, m);
    gm_arg args[] = {gm_arg_buf(x.buf), gm_arg_buf(y.buf), gm_arg_buf(w.buf), gm_arg_u64(&rows), gm_arg_u32(&width),
                     gm_arg_u64(&x.off), gm_arg_u64(&first), gm_arg_u64(&step), gm_arg_u64(&y.off),
                     gm_arg_u64(&w.off), gm_arg_f32(&eps), gm_arg_f32(&sx), gm_arg_f32(&sx), gm_arg_f32(&sw)};
    return launch(st, st->k_norm, (size_t)rows, args, 14);
}

static layer_locs locs_of(model_state *st, uint64_t l)
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
    return (layer_locs){
        .x_in = {&b[B_X], l * T * h}, .attn_in = {&b[B_AIN], l * T * h}, .q = {&b[B_Q], l * T * st->ad},
        .o = {&b[B_O], l * T * st->ad}, .k = {&b[B_K], l * T * st->kd}, .v = {&b[B_V], l * T * st->kd},
        .lse = {&b[B_LSE], l * st->heads * T}, .mid = {&b[B_MID], l * T * h}, .mlp_in = {&b[B_MIN], l * T * h},
        .gate = {&b[B_GATE], l * T * st->I}, .up = {&b[B_UP], l * T * st->I}, .act = {&b[B_ACT], l * T * st->I},
        .out = l + 1 < st->L ? (loc){&b[B_X], (l + 1) * T * h} : (loc){&b[B_FIN], 0},
        .stats = {&b[B_LOGITS], 0}};
}

enum { S_NORM1, S_QKV, S_ATTN, S_OPROJ, S_NORM2, S_GATEUP, S_SWIGLU, S_DOWN, N_STAGES };

static gm_status stage(model_state *st, uint64_t l, int s)
{
    layer_locs c = locs_of(st, l);
    uint64_t T = st->run_T;
    gm_status rc = GM_OK;
    switch (s) {
    case S_NORM1:
        return rmsnorm(st, M_NORM1, l, T, c.x_in, 0, 1, c.attn_in);
    case S_QKV:
        rc = linear(st, M_Q, l, T, c.attn_in, c.q, NULL);
        if (rc == GM_OK)
            rc = kv_projection(st, M_K, l, c.attn_in, c.k);
        return rc == GM_OK ? kv_projection(st, M_V, l, c.attn_in, c.v) : rc;
    case S_ATTN: {
        /* One launch over every query head: head j reads KV head
         * j / (heads / kv_heads). */
        gm_attention_call a = {c.q.buf, c.k.buf, c.v.buf, c.o.buf, c.stats.buf,
                               (unsigned int)(st->run_b * st->heads), (unsigned int)st->run_seq, (unsigned int)st->d,
                               1u, (unsigned int)st->heads, ACT, ACT, st->seq * st->ad, st->ad, st->seq * st->kd,
                               st->kd, st->seq * st->ad, st->ad, c.q.off, c.k.off, c.v.off, c.o.off,
                               (unsigned int)(st->heads / st->kv_heads)};
        rc = gm_attention_enqueue(st->dev, st->k_attn, st->chunked, &a);
        if (rc == GM_OK && st->train) {
            /* lse: [heads][T] per layer */
            uint64_t rows = st->run_b * st->heads * st->run_seq;
            unsigned int heads = (unsigned int)st->heads;
            gm_arg args[] = {gm_arg_buf(c.stats.buf), gm_arg_buf(c.lse.buf), gm_arg_u64(&rows),
                             gm_arg_u64(&c.lse.off), gm_arg_u32(&heads), gm_arg_u64(&st->run_seq),
                             gm_arg_u64(&st->seq), gm_arg_u64(&st->T)};
            rc = launch(st, st->k_lse, (size_t)rows, args, 8);
        }
        return rc;
    }
    case S_OPROJ:
        return linear(st, M_O, l, T, c.o, c.mid, &c.x_in);
    case S_NORM2:
        return rmsnorm(st, M_NORM2, l, T, c.mid, 0, 1, c.mlp_in);
    case S_GATEUP:
        rc = linear(st, M_GATE, l, T, c.mlp_in, c.gate, NULL);
        return rc == GM_OK ? linear(st, M_UP, l, T, c.mlp_in, c.up, NULL) : rc;
    case S_SWIGLU: {
        uint64_t n = T * st->I;
        float sc = ACT;
        gm_arg args[] = {gm_arg_buf(c.gate.buf), gm_arg_buf(c.up.buf), gm_arg_buf(c.act.buf), gm_arg_u64(&n),
                         gm_arg_u64(&c.gate.off), gm_arg_u64(&c.up.off), gm_arg_u64(&c.act.off), gm_arg_f32(&sc)};
        return launch(st, st->k_swiglu, (size_t)n, args, 8);
    }
    case S_DOWN:
        return linear(st, M_DOWN, l, T, c.act, c.out, &c.mid);
    }
    return GM_OK;
}

static gm_status embed(model_state *st)
{
    loc x = locs_of(st, 0).x_in;
    unsigned int hidden = (unsigned int)st->h, vocab = (unsigned int)st->V;
    float sw = m_scale(st, M_EMB), sx = ACT;
    gm_arg args[] = {gm_arg_buf(&st->buf[B_W]), gm_arg_buf(x.buf), gm_arg_u64(&st->run_T), gm_arg_u32(&hidden),
                     gm_arg_u32(&vocab), gm_arg_u64(&x.off), gm_arg_f32(&sw), gm_arg_f32(&sx)};
    return launch(st, st->k_embed, (size_t)(st->run_T * st->h), args, 8);
}

/* The rows the head computes logits for: each sequence's last token
 * (inference) or every token (train). */
static uint64_t head_rows(const model_state *st) { return st->train ? st->run_T : st->run_b; }
static loc head_in(model_state *st) { return st->train ? (loc){&st->buf[B_FOUT], 0} : (loc){&st->buf[B_NORM], 0}; }

static gm_status final_norm(model_state *st)
{
    if (st->train)
        return rmsnorm(st, M_FINAL, 0, st->run_T, (loc){&st->buf[B_FIN], 0}, 0, 1, head_in(st));
    return rmsnorm(st, M_FINAL, 0, st->run_b, (loc){&st->buf[B_RES], 0}, st->run_seq - 1, st->seq, head_in(st));
}

static gm_status lm_head(model_state *st)
{
    uint64_t rows = head_rows(st);
    loc x = head_in(st), w = m_loc(st, M_LM, 0);
    if (st->blas) {
        gm_gemm g = {.prec = GM_FP32, .m = (size_t)rows, .n = (size_t)st->V, .k = (size_t)st->h};
        gm_status rc = st->dev->backend->blas_plan(st->dev, &g);
        if (rc == GM_OK)
            rc = st->dev->backend->blas_gemm(st->dev, 0, &g, x.buf, w.buf, &st->buf[B_LOGITS]);
        if (rc != GM_ERR_UNSUPPORTED)
            return rc;
        st->blas = false;       /* the library is missing: our kernel from now on */
    }
    unsigned int hidden = (unsigned int)st->h, vocab = (unsigned int)st->V, tied = st->tied;
    float sx = ACT, sw = m_scale(st, st->tied ? M_EMB : M_LM);
    if (st->int4_head) {
        unsigned int group = (unsigned int)st->group;
        gm_arg args[] = {gm_arg_buf(x.buf), gm_arg_buf(w.buf), gm_arg_buf(&st->buf[B_WS]),
                         gm_arg_buf(&st->buf[B_LOGITS]), gm_arg_u64(&rows), gm_arg_u32(&hidden), gm_arg_u32(&vocab),
                         gm_arg_u64(&x.off), gm_arg_u64(&w.off), gm_arg_u32(&group), gm_arg_f32(&sx)};
        return launch(st, st->k_lm4, (size_t)(rows * st->V), args, 11);
    }
    gm_arg args[] = {gm_arg_buf(x.buf), gm_arg_buf(w.buf), gm_arg_buf(&st->buf[B_LOGITS]), gm_arg_u64(&rows),
                     gm_arg_u32(&hidden), gm_arg_u32(&vocab), gm_arg_u64(&x.off), gm_arg_u64(&w.off),
                     gm_arg_u32(&tied), gm_arg_f32(&sx), gm_arg_f32(&sw)};
    return launch(st, st->k_lm, (size_t)(rows * st->V), args, 11);
}

static gm_status forward(model_state *st)
{
    gm_status rc = embed(st);
    for (uint64_t l = 0; l < st->L && rc == GM_OK; l++)
        for (int s = 0; s < N_STAGES && rc == GM_OK; s++)
            rc = stage(st, l, s);
    if (rc == GM_OK)
        rc = final_norm(st);
    return rc == GM_OK ? lm_head(st) : rc;
}

/* AdamW over the weights tensor, then the LM head's (after it in the
 * gradients, master weights and moments). */
static gm_status adamw(model_state *st)
{
    st->steps++;
    float lr = LR, b1 = BETA1, b2 = BETA2, eps = ADAM_EPS, wd = WEIGHT_DECAY;
    float bc1 = 1.0f - powf(BETA1, (float)st->steps), bc2 = 1.0f - powf(BETA2, (float)st->steps);
    unsigned int has_master = st->master;
    gm_buffer *master = st->master ? &st->buf[B_MASTER] : &st->buf[B_MOM];
    gm_status rc = GM_OK;
    for (int part = 0; part < 2 && rc == GM_OK; part++) {
        if (part == 1 && st->tied)
            break;
        uint64_t n = part ? st->h * st->V : st->p_main, p_off = part ? st->p_main : 0;
        gm_arg args[] = {gm_arg_buf(&st->buf[part ? B_LM : B_W]), gm_arg_buf(&st->buf[B_GRAD]), gm_arg_buf(master),
                         gm_arg_buf(&st->buf[B_MOM]), gm_arg_u64(&n), gm_arg_u64(&p_off), gm_arg_u64(&st->p_total),
                         gm_arg_u32(&has_master), gm_arg_f32(&lr), gm_arg_f32(&b1), gm_arg_f32(&b2),
                         gm_arg_f32(&eps), gm_arg_f32(&wd), gm_arg_f32(&bc1), gm_arg_f32(&bc2)};
        rc = launch(st, st->k_adamw, (size_t)n, args, 15);
    }
    return rc;
}

static gm_status synthetic_gradients(model_state *st)
{
    return init_region(st, (loc){&st->buf[B_GRAD], 0}, st->p_total, 0, SEED_GRAD, GRAD_RANGE, 0.0f, 1.0f);
}

gm_status block_model_enqueue(void *state)
{
    model_state *st = state;
    gm_status rc = GM_OK;
    if (st->train) {
        rc = synthetic_gradients(st);
        if (rc == GM_OK)
            rc = adamw(st);
    }
    return rc == GM_OK ? forward(st) : rc;
}

/* ---- set-up ---- */

void block_model_teardown(void *state)
{
    model_state *st = state;
    if (!st)
        return;
    for (int i = 0; i < N_B; i++)
        gm_device_free(st->dev, &st->buf[i]);
    gm_kernel *ks[] = {st->k_linear, st->k_attn, st->k_init, st->k_fill,   st->k_master, st->k_embed,
                       st->k_norm,   st->k_swiglu, st->k_lse, st->k_lm,  st->k_lm4,    st->k_adamw,
                       st->k_kv,     st->k_scales, st->k_pack};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (ks[i])
            st->dev->backend->kernel_release(st->dev, ks[i]);
    gm_program *ps[] = {st->p_linear, st->p_attn, st->p_model, st->p_block};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        if (ps[i])
            st->dev->backend->program_release(st->dev, ps[i]);
    free(st);
}

static gm_status build(model_state *st)
{
    gm_device *dev = st->dev;
    char variant[32], lin[48], kv[48];
    gm_kernel_variant(st->p, st->chunked, variant, sizeof variant);
    gm_role_variant(st->p, st->int4 ? GM_INT4 : st->p, st->p, st->chunked, lin, sizeof lin);
    gm_role_variant(st->p, st->p, st->kp, st->chunked, kv, sizeof kv);
    gm_status rc = gm_build_layer_kernels(dev, lin, kv, st->chunked, &st->p_linear, &st->k_linear, &st->p_attn,
                                          &st->k_attn);
    if (rc == GM_OK)
        rc = dev->backend->program_build(dev, "model", variant, NULL, &st->p_model);
    /* block.cl: the conversion into an fp8 KV cache and the int4 quantiser. */
    if (rc == GM_OK && (st->int4 || st->kp != st->p)) {
        rc = dev->backend->program_build(dev, "block", kv, NULL, &st->p_block);
        static const char *const bnames[] = {"block_kv_store", "block_int4_scales", "block_int4_pack"};
        gm_kernel **bks[] = {&st->k_kv, &st->k_scales, &st->k_pack};
        for (size_t i = 0; i < sizeof bnames / sizeof bnames[0] && rc == GM_OK; i++)
            rc = dev->backend->kernel_get(dev, st->p_block, bnames[i], bks[i]);
    }
    static const char *const names[] = {"model_init", "model_fill_f32", "model_master_init", "model_embed",
                                        "model_rmsnorm", "model_swiglu", "model_lse", "model_lm_head",
                                        "model_lm_head_int4", "model_adamw"};
    gm_kernel **ks[] = {&st->k_init, &st->k_fill, &st->k_master, &st->k_embed, &st->k_norm,
                        &st->k_swiglu, &st->k_lse, &st->k_lm, &st->k_lm4, &st->k_adamw};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && rc == GM_OK; i++)
        rc = dev->backend->kernel_get(dev, st->p_model, names[i], ks[i]);
    return rc;
}

/* Weights (and in train mode master weights, moments, gradients): every
 * tensor of the training state is written here. */
static gm_status initialise(model_state *st)
{
    gm_status rc = GM_OK;
    for (uint64_t l = 0; l < st->L && rc == GM_OK; l++)
        for (int m = 0; m < N_LAYER_M && rc == GM_OK; m++)
            rc = init_matrix(st, m, l);
    if (rc == GM_OK)
        rc = init_matrix(st, M_EMB, 0);
    if (rc == GM_OK)
        rc = init_matrix(st, M_FINAL, 0);
    if (rc == GM_OK && !st->tied)
        rc = init_matrix(st, M_LM, 0);
    if (!st->train || rc != GM_OK)
        return rc;
    uint64_t n2 = 2 * st->p_total, zero_off = 0;
    float zero = 0.0f;
    gm_arg f[] = {gm_arg_buf(&st->buf[B_MOM]), gm_arg_u64(&zero_off), gm_arg_u64(&n2), gm_arg_f32(&zero)};
    rc = launch(st, st->k_fill, (size_t)n2, f, 4);
    for (int part = 0; part < 2 && rc == GM_OK && st->master; part++) {
        if (part == 1 && st->tied)
            break;
        uint64_t n = part ? st->h * st->V : st->p_main, off = part ? st->p_main : 0;
        gm_arg a[] = {gm_arg_buf(&st->buf[part ? B_LM : B_W]), gm_arg_buf(&st->buf[B_MASTER]), gm_arg_u64(&off),
                      gm_arg_u64(&n)};
        rc = launch(st, st->k_master, (size_t)n, a, 4);
    }
    return rc == GM_OK ? synthetic_gradients(st) : rc;
}

gm_status block_model_setup(gm_device *dev, gm_pattern *pat, const gm_shape *s, const char *impl, void **state)
{
    *state = NULL;
    const gm_arch *a = &s->arch;
    const char *why = unsupported(a);
    if (why)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: %s is not run on the device (plan counts it)", a->name, why);
    if (s->train && s->prec == GM_INT8)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "int8 training is not run (plan refuses it too)");
    gm_precision wp = gm_weight_prec(s), kp = gm_kv_prec(s);
    if (s->train && (wp != s->prec || kp != s->prec))
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "--mode train runs one precision for every role (plan "
                              "counts training so)");
    char head_why[300];
    if (gm_int4_lm_head_check("block", s, head_why, sizeof head_why))
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s", head_why);
    uint64_t group = gm_group_size(s), ad = a->heads * a->head_dim;
    if (wp == GM_INT4 && (a->hidden % group || ad % group || a->ffn % group || a->hidden % 2))
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: int4 weights need hidden (%llu), heads * head_dim "
                              "(%llu) and intermediate (%llu) multiples of --group-size %llu, hidden even", a->name,
                              (unsigned long long)a->hidden, (unsigned long long)ad, (unsigned long long)a->ffn,
                              (unsigned long long)group);
    if (s->checkpoint || s->offload || s->micro_batch != s->batch)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "--checkpoint, --offload and --micro-batch apply to "
                              "a block of the shape options, not to a whole model");
    /* Training keeps the attention's row statistics in the logits' space
     * (T * 2 * heads floats in T * vocab). */
    if (s->train && a->vocab < 2 * a->heads)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: --mode train needs a vocabulary of at least twice the "
                              "heads", a->name);
    uint64_t T = s->batch * s->seq, wide = a->heads * a->head_dim > a->ffn ? a->heads * a->head_dim : a->ffn;
    /* linear.cl indexes a product's operands in 32 bits (the LM head's
     * kernel and the vendor GEMM do not; offsets are 64-bit): the tokens
     * an iteration runs must fit. */
    uint64_t run_seq = s->probe ? gm_probe_tokens(s) : s->seq;
    uint64_t run_T = s->probe ? run_seq : T;
    if (run_T * 2 * wide > UINT32_MAX || run_T * a->hidden > UINT32_MAX || s->batch * a->heads > UINT32_MAX)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "a pass's activations must fit 32-bit indices");
    model_state *st = calloc(1, sizeof *st);
    if (!st)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    st->model = true;
    st->dev = dev;
    st->s = *s;
    st->a = *a;
    st->p = s->prec;
    st->es = gm_precision_size(s->prec);
    st->kp = kp;
    st->kes = gm_precision_size(kp);
    st->int4 = wp == GM_INT4;
    st->int4_head = st->int4 && s->int4_lm_head && !a->tied;
    st->group = group;
    st->chunked = gm_device_prefers_chunked(dev);
    st->train = s->train;
    st->master = s->train && st->es < 4;
    st->tied = a->tied;
    (void)impl;
    /* The LM head through the vendor GEMM where there is one (fp32, untied). */
    st->blas = s->prec == GM_FP32 && !a->tied && dev->backend->blas_gemm;
    st->h = a->hidden;
    st->d = a->head_dim;
    st->heads = a->heads;
    st->kv_heads = a->kv_heads;
    st->ad = a->heads * a->head_dim;
    st->kd = a->kv_heads * a->head_dim;
    st->I = a->ffn;
    st->V = a->vocab;
    st->L = a->layers;
    st->b = s->batch;
    st->seq = s->seq;
    st->T = T;
    st->run_b = s->probe ? 1 : s->batch;
    st->run_seq = run_seq;
    st->run_T = st->run_b * run_seq;
    st->per_layer = layer_elems(a);
    st->int4_layer = (st->per_layer - 2 * st->h) / 2;
    st->p_main = st->V * st->h + st->L * st->per_layer + st->h;
    st->p_total = gm_arch_params(a);
    gm_status rc = st->p_main + (st->tied ? 0 : st->h * st->V) == st->p_total
                       ? GM_OK
                       : gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: parameters other than a Llama layout's",
                                        a->name);
    /* Weights uniform in [-r, r) with r the power of two nearest
     * 1/sqrt(fan-in) (activations keep their scale), the embedding in
     * [-1, 1), norm weights in [0.75, 1.25). */
    for (int m = 0; m < N_M; m++) {
        uint64_t fan_in = m == M_EMB ? 1 : m == M_LM ? st->h : m_in(st, m);
        st->range[m] = ldexpf(1.0f, -(int)lround(0.5 * log2((double)fan_in)));
        st->add[m] = 0.0f;
    }
    st->range[M_NORM1] = st->range[M_NORM2] = st->range[M_FINAL] = 0.25f;
    st->add[M_NORM1] = st->add[M_NORM2] = st->add[M_FINAL] = 1.0f;
    gm_tensor t[GM_MAX_TENSORS];
    int ids[GM_MAX_TENSORS];
    int nt = model_tensors(s, t, ids);
    for (int i = 0; i < nt && rc == GM_OK; i++)
        rc = gm_pattern_alloc(pat, (size_t)t[i].bytes, &st->buf[ids[i]]);
    if (rc == GM_OK)
        rc = build(st);
    if (rc == GM_OK)
        rc = initialise(st);
    if (rc == GM_OK)
        rc = dev->backend->synchronize(dev, 0);
    if (rc != GM_OK) {
        gm_error saved = dev->err;
        block_model_teardown(st);
        dev->err = saved;
        return rc;
    }
    *state = st;
    return GM_OK;
}

gm_status block_model_corrupt(void *state)
{
    model_state *st = state;
    /* The first logit, which the check compares with its replay. */
    return gm_corrupt_bytes(st->dev, &st->buf[B_LOGITS], 0, 4);
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
    /* Weights read once; KV read by every query; AdamW reads and writes the
     * moments and master weights, reads the gradients, writes the weights
     * (and the synthetic gradients are written). */
    *bytes = wbytes + L * T * pairs * 2 * kd * ke + 4 * head_rows * V
             + (s->train ? P * (e + e + 16 + (e < 4 ? 8 : 0) + e) : 0);
    *tokens = T;
}

/* ---- the check ---- */

static uint32_t host_token(uint64_t t, uint32_t vocab)
{
    uint32_t h = (uint32_t)t * 0x9e3779b1u;
    h ^= h >> 13;
    h *= 0x85ebca77u;
    h ^= h >> 16;
    return h % vocab;
}

typedef struct {
    model_state *st;
    gm_buffer stage;                /* host staging */
    size_t stage_bytes;
    float *w;                       /* a norm's weights, or a matrix's checked columns: [k][n_cols] */
    uint64_t *cols, n_cols;         /* the checked columns of the last fetch_columns */
    uint64_t seed;                  /* of the column samples (the repetition's) */
    float *column;                  /* one row of the tied head's embedding (k floats) */
    float *in[CHECK_ROWS], *in2[CHECK_ROWS], *out[CHECK_ROWS], *out2[CHECK_ROWS], *out3[CHECK_ROWS];
    float *kseq, *vseq;
    double *want, *mag;
    gm_buffer codes, scales;        /* int4: one matrix as the device holds it */
    uint64_t rows[CHECK_ROWS];
    char *note;
    size_t note_len;
    bool ok;
} checker;

static double stored(gm_precision p, double v, float scale)
{
    unsigned char tmp[4];
    gm_store(p, tmp, 0, (float)v, scale);
    return gm_load(p, tmp, 0, scale);
}

/* Reads n elements of `at` from element `first` as floats (through the staging buffer, in pieces). */
static gm_status read_elems(checker *c, loc at, uint64_t first, uint64_t n, size_t es, gm_precision p, float scale,
                            float *outp)
{
    model_state *st = c->st;
    uint64_t per = c->stage_bytes / es;
    gm_status rc = GM_OK;
    for (uint64_t done = 0; done < n && rc == GM_OK;) {
        uint64_t k = n - done < per ? n - done : per;
        rc = st->dev->backend->copy(st->dev, 0, &c->stage, 0, at.buf, (size_t)((at.off + first + done) * es),
                                    (size_t)(k * es), false);
        for (uint64_t i = 0; rc == GM_OK && i < k; i++)
            outp[done + i] = es == 4 && p == GM_FP32 ? ((float *)c->stage.host)[i] : gm_load(p, c->stage.host, (size_t)i, scale);
        done += k;
    }
    return rc;
}

/* The sampled rows of `at` (rows `width` apart, in precision p). */
static gm_status read_rows_in(checker *c, loc at, uint64_t width, gm_precision p, float **outp)
{
    gm_status rc = GM_OK;
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK; r++)
        rc = read_elems(c, at, c->rows[r] * width, width, gm_precision_size(p), p, ACT, outp[r]);
    return rc;
}

/* A norm's weight vector into c->w. */
static gm_status fetch_norm(checker *c, int m, uint64_t layer)
{
    model_state *st = c->st;
    return read_elems(c, m_loc(st, m, layer), 0, st->h, st->es, st->p, m_scale(st, m), c->w);
}

static gm_status read_rows(checker *c, loc at, uint64_t width, float **outp)
{
    return read_rows_in(c, at, width, c->st->p, outp);
}

/* An int4 matrix's checked columns into c->w (as fetch_columns): its codes
 * and scales are read back whole, checked against the host's quantisation
 * of its hashes, and the checked columns dequantised. */
static gm_status fetch_int4_columns(checker *c, int m, uint64_t layer, uint64_t k, uint64_t n, loc at)
{
    model_state *st = c->st;
    size_t bytes = (size_t)(k * n / 2), sbytes = (size_t)(k / st->group * n * 2);
    gm_status rc = st->dev->backend->copy(st->dev, 0, &c->codes, 0, at.buf, (size_t)at.off, bytes, false);
    if (rc == GM_OK)
        rc = st->dev->backend->copy(st->dev, 0, &c->scales, 0, &st->buf[B_WS], (size_t)(2 * at.off / st->group) * 2,
                                    sbytes, false);
    if (rc != GM_OK)
        return rc;
    static const char *const names[N_M] = {[M_Q] = "q_proj", [M_K] = "k_proj", [M_V] = "v_proj", [M_O] = "o_proj",
                                           [M_GATE] = "gate_proj", [M_UP] = "up_proj", [M_DOWN] = "down_proj"};
    char what[48];
    if (m == M_LM)
        snprintf(what, sizeof what, "lm_head");
    else
        snprintf(what, sizeof what, "layer %llu %s", (unsigned long long)layer, names[m]);
    if (!block_int4_matches(c->codes.host, c->scales.host, k, n, st->group, m_param(st, m, layer), SEED_W,
                            st->range[m], 0x13198a2e03707344ull ^ layer ^ ((uint64_t)m << 32), what, c->note,
                            c->note_len)) {
        c->ok = false;
        return GM_OK;
    }
    for (uint64_t kk = 0; kk < k; kk++)
        for (uint64_t j = 0; j < c->n_cols; j++)
            c->w[kk * c->n_cols + j] = gm_int4_load(c->codes.host, c->scales.host, (size_t)n, (size_t)st->group,
                                                    (size_t)kk, (size_t)c->cols[j]);
    return GM_OK;
}

/* The columns of matrix m (of `layer`) that check_product checks, into
 * c->w as [k][n_cols] floats: all n of them up to CHECK_COLS, else the
 * first and last EDGE_COLS and a sample seeded by the repetition, the
 * matrix and the layer. Rows of a [k, n] matrix are copied whole through
 * the staging buffer and only the checked columns converted; the tied
 * head's [n, k] embedding gives each column as one contiguous row. */
static gm_status fetch_columns(checker *c, int m, uint64_t layer)
{
    model_state *st = c->st;
    bool tied = m == M_LM && st->tied;
    int sm = tied ? M_EMB : m;
    uint64_t k = m_in(st, m), n = m_out(st, m);
    loc at = m_loc(st, m, layer);
    float scale = m_scale(st, sm);
    uint64_t x = c->seed ^ ((uint64_t)(m + 1) << 40) ^ (layer + 1) * 0x9e3779b97f4a7c15ull;
    c->n_cols = n <= CHECK_COLS ? n : CHECK_COLS;
    for (uint64_t j = 0; j < c->n_cols; j++)
        c->cols[j] = n <= CHECK_COLS || j < EDGE_COLS ? j
                     : j < 2 * EDGE_COLS               ? n - 2 * EDGE_COLS + j
                                                       : 2 * EDGE_COLS + gm_xorshift(&x) % (n - 4 * EDGE_COLS);
    gm_status rc = GM_OK;
    if (m_int4(st, m))
        return fetch_int4_columns(c, m, layer, k, n, at);
    if (tied) {
        for (uint64_t j = 0; j < c->n_cols && rc == GM_OK; j++) {
            rc = read_elems(c, at, c->cols[j] * k, k, st->es, st->p, scale, c->column);
            for (uint64_t kk = 0; kk < k && rc == GM_OK; kk++)
                c->w[kk * c->n_cols + j] = c->column[kk];
        }
        return rc;
    }
    uint64_t rows_per = c->stage_bytes / st->es / n;
    for (uint64_t r0 = 0; r0 < k && rc == GM_OK; r0 += rows_per) {
        uint64_t rows = k - r0 < rows_per ? k - r0 : rows_per;
        rc = st->dev->backend->copy(st->dev, 0, &c->stage, 0, at.buf, (size_t)((at.off + r0 * n) * st->es),
                                    (size_t)(rows * n * st->es), false);
        for (uint64_t r = 0; r < rows && rc == GM_OK; r++)
            for (uint64_t j = 0; j < c->n_cols; j++)
                c->w[(r0 + r) * c->n_cols + j] = gm_load(st->p, c->stage.host, (size_t)(r * n + c->cols[j]), scale);
    }
    return rc;
}

static bool fail(checker *c, const char *what, uint64_t layer, uint64_t t, uint64_t j, double want, double got)
{
    snprintf(c->note, c->note_len, "layer %llu %s[%llu][%llu]: expected %.7g, got %.7g", (unsigned long long)layer,
             what, (unsigned long long)t, (unsigned long long)j, want, got);
    c->ok = false;
    return false;
}

/*
 * Checks got[r][j] = stored(in[r] x W (+ res[r]))[j] for every sampled row
 * and every column j that fetch_columns took of W (k inputs). The bound:
 * fp32 accumulation of k products in any order, gamma_k * sum |x w| with
 * gamma_k = 1.2 k 2^-23 (fp8 and dequantised int4 operands are exact in
 * fp32), plus the output's rounding on either side, 2 * gm_tolerance (2 ulp
 * at the result: u = 2^-10 fp16, 2^-7 bf16, 2^-3 fp8e4m3, 2^-2 fp8e5m2; the
 * int8 step); none for fp32 logits. `kv`: K or V converted on into an
 * fp8 KV cache, a second rounding there: 2 * gm_tolerance(kp) more.
 */
static void check_product(checker *c, const char *what, uint64_t layer, uint64_t k, float **in, float **res,
                          float **got, bool fp32_out, bool kv)
{
    model_state *st = c->st;
    uint64_t nc = c->n_cols;
    for (int r = 0; r < CHECK_ROWS && c->ok; r++) {
        for (uint64_t jj = 0; jj < nc; jj++)
            c->want[jj] = c->mag[jj] = 0.0;
        for (uint64_t kk = 0; kk < k; kk++)
            for (uint64_t jj = 0; jj < nc; jj++) {
                double pr = (double)in[r][kk] * c->w[kk * nc + jj];
                c->want[jj] += pr;
                c->mag[jj] += fabs(pr);
            }
        for (uint64_t jj = 0; jj < nc && c->ok; jj++) {
            uint64_t j = c->cols[jj];
            double pre = c->want[jj] + (res ? res[r][j] : 0.0), mag = c->mag[jj] + (res ? fabs(res[r][j]) : 0.0);
            double want = fp32_out ? pre : stored(st->p, pre, ACT);
            double tol = (fp32_out ? 0.0 : 2.0 * gm_tolerance(st->p, want, ACT)) + 1.2 * (double)k * 0x1p-23 * mag
                         + 1e-30;
            if (kv) {
                want = stored(st->kp, want, ACT);
                tol += 2.0 * gm_tolerance(st->kp, want, ACT);
            }
            if (!(fabs(got[r][j] - want) <= tol))
                fail(c, what, layer, c->rows[r], j, want, got[r][j]);
        }
    }
}

static void check_norm(checker *c, int m, uint64_t layer, float **x, float **y)
{
    model_state *st = c->st;
    for (int r = 0; r < CHECK_ROWS && c->ok; r++) {
        double ss = 0.0;
        for (uint64_t j = 0; j < st->h; j++)
            ss += (double)x[r][j] * x[r][j];
        double inv = 1.0 / sqrt(ss / (double)st->h + RMS_EPS);
        for (uint64_t j = 0; j < st->h && c->ok; j++) {
            double want = stored(st->p, x[r][j] * inv * c->w[j], ACT);
            double tol = 2.0 * gm_tolerance(st->p, want, ACT) + 1e-5 * fabs(want) + 1e-30;
            if (!(fabs(y[r][j] - want) <= tol))
                fail(c, m == M_FINAL ? "final_norm" : m == M_NORM1 ? "attn_norm" : "mlp_norm", layer, c->rows[r], j,
                     want, y[r][j]);
        }
    }
}

/* Query heads of token rows against the sequence's K and V (GQA), and in
 * train mode the saved log-sum-exp. */
static gm_status check_attention(checker *c, uint64_t l, float **q, float **o)
{
    model_state *st = c->st;
    layer_locs lc = locs_of(st, l);
    gm_status rc = GM_OK;
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK && c->ok; r++) {
        uint64_t t = c->rows[r], first = t - t % st->seq, n = t % st->seq + 1;
        rc = read_elems(c, lc.k, first * st->kd, n * st->kd, st->kes, st->kp, ACT, c->kseq);
        if (rc == GM_OK)
            rc = read_elems(c, lc.v, first * st->kd, n * st->kd, st->kes, st->kp, ACT, c->vseq);
        for (uint64_t j = 0; j < st->heads && rc == GM_OK && c->ok; j++) {
            uint64_t g = j / (st->heads / st->kv_heads);
            double mx = -INFINITY, sum = 0.0, vmax = 0.0;
            for (uint64_t i = 0; i < n; i++) {
                double s = 0.0;
                for (uint64_t d = 0; d < st->d; d++)
                    s += (double)q[r][j * st->d + d] * c->kseq[i * st->kd + g * st->d + d];
                c->want[i] = s / sqrt((double)st->d);
                mx = fmax(mx, c->want[i]);
            }
            for (uint64_t i = 0; i < n; i++)
                sum += c->want[i] = exp(c->want[i] - mx);
            for (uint64_t d = 0; d < st->d && c->ok; d++) {
                double want = 0.0;
                for (uint64_t i = 0; i < n; i++) {
                    double v = c->vseq[i * st->kd + g * st->d + d];
                    want += c->want[i] / sum * v;
                    vmax = fmax(vmax, fabs(v));
                }
                want = stored(st->p, want, ACT);
                double tol = 2.0 * gm_tolerance(st->p, want, ACT) + 1e-5 * (1.0 + sqrt((double)n)) * vmax;
                if (!(fabs(o[r][j * st->d + d] - want) <= tol))
                    fail(c, "attn", l, t, j * st->d + d, want, o[r][j * st->d + d]);
            }
            if (st->train && c->ok) {
                float lse;
                rc = read_elems(c, lc.lse, j * st->T + t, 1, 4, GM_FP32, 1.0f, &lse);
                double want = mx + log(sum);
                if (rc == GM_OK && !(fabs(lse - want) <= 1e-5 * (1.0 + fabs(want))))
                    fail(c, "lse", l, t, j, want, lse);
            }
        }
    }
    return rc;
}

static void check_swiglu(checker *c, uint64_t l, float **g, float **u, float **act)
{
    model_state *st = c->st;
    for (int r = 0; r < CHECK_ROWS && c->ok; r++)
        for (uint64_t j = 0; j < st->I && c->ok; j++) {
            double gv = g[r][j], want = stored(st->p, gv / (1.0 + exp(-gv)) * u[r][j], ACT);
            double tol = 2.0 * gm_tolerance(st->p, want, ACT) + 1e-6 * (1.0 + fabs(want));
            if (!(fabs(act[r][j] - want) <= tol))
                fail(c, "swiglu", l, c->rows[r], j, want, act[r][j]);
        }
}

/* Runs stage s of layer l, checking it when `check`. */
static gm_status checked_stage(checker *c, uint64_t l, int s, bool check)
{
    model_state *st = c->st;
    layer_locs lc = locs_of(st, l);
    gm_status rc = GM_OK;
    uint64_t h = st->h;
    if (check) {   /* the stage's inputs, before it overwrites any */
        switch (s) {
        case S_NORM1: rc = read_rows(c, lc.x_in, h, c->in); break;
        case S_QKV: rc = read_rows(c, lc.attn_in, h, c->in); break;
        case S_ATTN: rc = read_rows(c, lc.q, st->ad, c->in); break;
        case S_OPROJ:
            rc = read_rows(c, lc.o, st->ad, c->in);
            if (rc == GM_OK)
                rc = read_rows(c, lc.x_in, h, c->in2);
            break;
        case S_NORM2: rc = read_rows(c, lc.mid, h, c->in); break;
        case S_GATEUP: rc = read_rows(c, lc.mlp_in, h, c->in); break;
        case S_SWIGLU:
            rc = read_rows(c, lc.gate, st->I, c->in);
            if (rc == GM_OK)
                rc = read_rows(c, lc.up, st->I, c->in2);
            break;
        case S_DOWN:
            rc = read_rows(c, lc.act, st->I, c->in);
            if (rc == GM_OK)
                rc = read_rows(c, lc.mid, h, c->in2);
            break;
        }
    }
    if (rc == GM_OK)
        rc = stage(st, l, s);
    if (rc == GM_OK)
        rc = st->dev->backend->synchronize(st->dev, 0);
    if (rc != GM_OK || !check)
        return rc;
    switch (s) {
    case S_NORM1:
        rc = read_rows(c, lc.attn_in, h, c->out);
        if (rc == GM_OK)
            rc = fetch_norm(c, M_NORM1, l);
        if (rc == GM_OK)
            check_norm(c, M_NORM1, l, c->in, c->out);
        break;
    case S_QKV: {
        static const int ms[] = {M_Q, M_K, M_V};
        const loc outs[] = {lc.q, lc.k, lc.v};
        static const char *const names[] = {"q", "k", "v"};
        for (int i = 0; i < 3 && rc == GM_OK && c->ok; i++) {
            rc = read_rows_in(c, outs[i], m_out(st, ms[i]), i ? st->kp : st->p, c->out);
            if (rc == GM_OK)
                rc = fetch_columns(c, ms[i], l);
            if (rc == GM_OK && c->ok)
                check_product(c, names[i], l, h, c->in, NULL, c->out, false, i && st->kp != st->p);
        }
        break;
    }
    case S_ATTN:
        rc = read_rows(c, lc.o, st->ad, c->out);
        if (rc == GM_OK)
            rc = check_attention(c, l, c->in, c->out);
        break;
    case S_OPROJ:
        rc = read_rows(c, lc.mid, h, c->out);
        if (rc == GM_OK)
            rc = fetch_columns(c, M_O, l);
        if (rc == GM_OK)
            check_product(c, "attn_resid", l, st->ad, c->in, c->in2, c->out, false, false);
        break;
    case S_NORM2:
        rc = read_rows(c, lc.mlp_in, h, c->out);
        if (rc == GM_OK)
            rc = fetch_norm(c, M_NORM2, l);
        if (rc == GM_OK)
            check_norm(c, M_NORM2, l, c->in, c->out);
        break;
    case S_GATEUP:
        rc = read_rows(c, lc.gate, st->I, c->out);
        if (rc == GM_OK)
            rc = fetch_columns(c, M_GATE, l);
        if (rc == GM_OK)
            check_product(c, "gate", l, h, c->in, NULL, c->out, false, false);
        if (rc == GM_OK && c->ok)
            rc = read_rows(c, lc.up, st->I, c->out);
        if (rc == GM_OK && c->ok)
            rc = fetch_columns(c, M_UP, l);
        if (rc == GM_OK && c->ok)
            check_product(c, "up", l, h, c->in, NULL, c->out, false, false);
        break;
    case S_SWIGLU:
        rc = read_rows(c, lc.act, st->I, c->out);
        if (rc == GM_OK)
            check_swiglu(c, l, c->in, c->in2, c->out);
        break;
    case S_DOWN:
        rc = read_rows(c, lc.out, h, c->out);
        if (rc == GM_OK)
            rc = fetch_columns(c, M_DOWN, l);
        if (rc == GM_OK)
            check_product(c, "block_output", l, st->I, c->in, c->in2, c->out, false, false);
        break;
    }
    return rc;
}

static void pick_rows(checker *c, uint64_t n, uint64_t *x)
{
    c->rows[0] = 0;
    c->rows[1] = n - 1;
    for (int r = 2; r < CHECK_ROWS; r++)
        c->rows[r] = gm_xorshift(x) % n;
}

/* The embedding of the sampled rows, the layers (every stage of the
 * checked ones), the final norm and the logits. */
static gm_status replay(checker *c, unsigned rep)
{
    model_state *st = c->st;
    uint64_t x = 0x9e3779b97f4a7c15ull ^ rep, h = st->h;
    pick_rows(c, st->run_T, &x);
    gm_status rc = embed(st);
    if (rc == GM_OK)
        rc = st->dev->backend->synchronize(st->dev, 0);
    if (rc == GM_OK)
        rc = read_rows(c, locs_of(st, 0).x_in, h, c->out);
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK && c->ok; r++) {
        uint64_t tok = host_token(c->rows[r], (uint32_t)st->V);
        rc = read_elems(c, m_loc(st, M_EMB, 0), tok * h, h, st->es, st->p, m_scale(st, M_EMB), c->in[r]);
        for (uint64_t j = 0; j < h && rc == GM_OK && c->ok; j++) {
            double want = stored(st->p, c->in[r][j], ACT);
            if (!(fabs(c->out[r][j] - want) <= gm_tolerance(st->p, want, ACT)))
                fail(c, "embedding", 0, c->rows[r], j, want, c->out[r][j]);
        }
    }
    uint64_t L = st->L, picks[MAX_CHECKED_LAYERS] = {L - 1, 0, 0, 0};
    for (int i = 1; i < MAX_CHECKED_LAYERS; i++)
        picks[i] = L <= MAX_CHECKED_LAYERS ? (uint64_t)i - 1 : gm_xorshift(&x) % L;
    for (uint64_t l = 0; l < L && rc == GM_OK && c->ok; l++) {
        bool check = false;
        for (int i = 0; i < MAX_CHECKED_LAYERS; i++)
            check = check || picks[i] == l || L <= MAX_CHECKED_LAYERS;
        pick_rows(c, st->run_T, &x);
        for (int s = 0; s < N_STAGES && rc == GM_OK && c->ok; s++)
            rc = checked_stage(c, l, s, check);
    }
    if (rc != GM_OK || !c->ok)
        return rc;
    /* The final norm and the LM head, on sampled head rows. */
    uint64_t rows = head_rows(st);
    pick_rows(c, rows, &x);
    uint64_t src[CHECK_ROWS];
    for (int r = 0; r < CHECK_ROWS; r++)
        src[r] = st->train ? c->rows[r] : c->rows[r] * st->seq + st->run_seq - 1;
    loc fin = st->train ? (loc){&st->buf[B_FIN], 0} : (loc){&st->buf[B_RES], 0};
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK; r++)
        rc = read_elems(c, fin, src[r] * h, h, st->es, st->p, ACT, c->in[r]);
    if (rc == GM_OK)
        rc = final_norm(st);
    if (rc == GM_OK)
        rc = lm_head(st);
    if (rc == GM_OK)
        rc = st->dev->backend->synchronize(st->dev, 0);
    if (rc == GM_OK)
        rc = read_rows(c, head_in(st), h, c->out);
    if (rc == GM_OK)
        rc = fetch_norm(c, M_FINAL, 0);
    if (rc == GM_OK)
        check_norm(c, M_FINAL, L, c->in, c->out);
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK && c->ok; r++)
        rc = read_elems(c, (loc){&st->buf[B_LOGITS], 0}, c->rows[r] * st->V, st->V, 4, GM_FP32, 1.0f, c->out2[r]);
    if (rc == GM_OK && c->ok)
        rc = fetch_columns(c, M_LM, 0);
    if (rc == GM_OK && c->ok)
        check_product(c, "logits", L, h, c->out, NULL, c->out2, true, false);
    return rc;
}

/* The CPU AdamW of parameter p over st->steps steps, against the device. */
static gm_status check_adamw(checker *c, unsigned rep)
{
    model_state *st = c->st;
    uint64_t x = 0x2545f4914f6cdd1dull ^ ((uint64_t)rep << 20);
    gm_status rc = GM_OK;
    for (int i = 0; i < CHECK_PARAMS && rc == GM_OK && c->ok; i++) {
        uint64_t p = i == 0 ? 0 : i == 1 ? st->p_total - 1 : gm_xorshift(&x) % st->p_total;
        bool in_lm = p >= st->p_main;
        loc wl = in_lm ? (loc){&st->buf[B_LM], 0} : (loc){&st->buf[B_W], 0};
        uint64_t wi = in_lm ? p - st->p_main : p;
        /* The initial weight: the hash of matrix containing p, as stored. */
        int m = M_LM;
        uint64_t layer = 0;
        if (!in_lm) {
            uint64_t base = st->V * st->h;
            if (p < base)
                m = M_EMB;
            else if (p >= base + st->L * st->per_layer)
                m = M_FINAL;
            else {
                layer = (p - base) / st->per_layer;
                uint64_t off = (p - base) % st->per_layer;
                for (m = 0; off >= m_in(st, m) * m_out(st, m); m++)
                    off -= m_in(st, m) * m_out(st, m);
            }
        }
        (void)layer;
        float w0 = (float)stored(st->p, st->add[m] + gm_hashed_value(p, SEED_W, st->range[m]), 1.0f);
        float g = (float)stored(st->p, gm_hashed_value(p, SEED_GRAD, GRAD_RANGE), 1.0f);
        float mm = 0.0f, vv = 0.0f, xw = w0;
        for (unsigned t = 1; t <= st->steps; t++) {
            float bc1 = 1.0f - powf(BETA1, (float)t), bc2 = 1.0f - powf(BETA2, (float)t);
            mm = BETA1 * mm + (1.0f - BETA1) * g;
            vv = BETA2 * vv + (1.0f - BETA2) * g * g;
            xw = xw - LR * WEIGHT_DECAY * xw - LR * (mm / bc1) / (sqrtf(vv / bc2) + ADAM_EPS);
            if (!st->master)
                xw = (float)stored(st->p, xw, 1.0f);
        }
        float got[4] = {0};
        rc = read_elems(c, (loc){&st->buf[B_MOM], 0}, p, 1, 4, GM_FP32, 1.0f, &got[0]);
        if (rc == GM_OK)
            rc = read_elems(c, (loc){&st->buf[B_MOM], 0}, st->p_total + p, 1, 4, GM_FP32, 1.0f, &got[1]);
        if (rc == GM_OK)
            rc = read_elems(c, wl, wi, 1, st->es, st->p, 1.0f, &got[2]);
        if (rc == GM_OK && st->master)
            rc = read_elems(c, (loc){&st->buf[B_MASTER], 0}, p, 1, 4, GM_FP32, 1.0f, &got[3]);
        double want[4] = {mm, vv, stored(st->p, xw, 1.0f), xw};
        static const char *const what[] = {"adamw_m", "adamw_v", "weight", "master_weight"};
        for (int k = 0; k < (st->master ? 4 : 3) && rc == GM_OK && c->ok; k++) {
            double tol = 1e-5 * fabs(want[k]) + 1e-6 * LR * st->steps + 1e-12
                         + (k == 2 ? gm_tolerance(st->p, want[k], 1.0f) : 0.0);
            if (!(fabs(got[k] - want[k]) <= tol)) {
                snprintf(c->note, c->note_len, "%s of parameter %llu after %u AdamW steps: expected %.9g, got %.9g",
                         what[k], (unsigned long long)p, st->steps, want[k], (double)got[k]);
                c->ok = false;
            }
        }
    }
    return rc;
}

gm_status block_model_verify(void *state, unsigned rep, bool *correct, char *note, size_t len)
{
    model_state *st = state;
    uint64_t wide = st->ad > st->I ? st->ad : st->I;
    wide = wide > st->V ? wide : st->V;
    wide = wide > st->seq * st->kd ? wide : st->seq * st->kd;
    /* c.w: a norm (h), or the checked columns of a product (at most h, ad or I inputs) */
    uint64_t inputs = st->h > st->ad ? st->h : st->ad;
    inputs = inputs > st->I ? inputs : st->I;
    uint64_t mat = inputs * CHECK_COLS, int4_mat = 0;
    /* int4: one whole matrix's codes and scales (fetch_int4_columns) */
    for (int m = 0; m < N_M && st->int4; m++)
        if (m_int4(st, m) && m_in(st, m) * m_out(st, m) > int4_mat)
            int4_mat = m_in(st, m) * m_out(st, m);
    checker c = {.st = st, .note = note, .note_len = len, .ok = true, .seed = 0x3c6ef372fe94f82bull ^ rep};
    c.stage_bytes = (size_t)(wide < (1u << 20) ? (1u << 20) : wide) * 4;
    gm_status rc = gm_device_alloc(st->dev, GM_MEM_HOST, c.stage_bytes, &c.stage);
    bool have = true;
    float **sets[] = {c.in, c.in2, c.out, c.out2, c.out3};
    for (size_t s = 0; s < 5; s++)
        for (int r = 0; r < CHECK_ROWS; r++)
            have = (sets[s][r] = malloc((size_t)wide * sizeof(float))) && have;
    c.w = malloc((size_t)mat * sizeof(float));
    c.cols = malloc(CHECK_COLS * sizeof *c.cols);
    c.column = malloc((size_t)wide * sizeof(float));
    c.kseq = malloc((size_t)(st->seq * st->kd) * sizeof(float));
    c.vseq = malloc((size_t)(st->seq * st->kd) * sizeof(float));
    c.want = malloc((size_t)(wide > st->seq ? wide : st->seq) * sizeof(double));
    c.mag = malloc((size_t)wide * sizeof(double));
    have = have && c.w && c.cols && c.column && c.kseq && c.vseq && c.want && c.mag;
    if (rc == GM_OK && st->int4)
        rc = gm_device_alloc(st->dev, GM_MEM_HOST, (size_t)(int4_mat / 2), &c.codes);
    if (rc == GM_OK && st->int4)
        rc = gm_device_alloc(st->dev, GM_MEM_HOST, (size_t)(int4_mat / st->group * 2), &c.scales);
    if (rc == GM_OK && !have)
        rc = gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    /* The iteration's logits (sampled rows) before the replay. */
    uint64_t x = 0x51ed270b27f4a7c1ull ^ rep;
    pick_rows(&c, head_rows(st), &x);
    uint64_t kept[CHECK_ROWS];
    memcpy(kept, c.rows, sizeof kept);
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK; r++)
        rc = read_elems(&c, (loc){&st->buf[B_LOGITS], 0}, kept[r] * st->V, st->V, 4, GM_FP32, 1.0f, c.out3[r]);
    if (rc == GM_OK && st->train)
        rc = check_adamw(&c, rep);
    if (rc == GM_OK && c.ok)
        rc = replay(&c, rep);
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK && c.ok; r++) {
        rc = read_elems(&c, (loc){&st->buf[B_LOGITS], 0}, kept[r] * st->V, st->V, 4, GM_FP32, 1.0f, c.out2[r]);
        for (uint64_t j = 0; j < st->V && rc == GM_OK && c.ok; j++)
            if (memcmp(&c.out2[r][j], &c.out3[r][j], sizeof(float)) != 0) {
                snprintf(note, len, "logits[%llu][%llu] of the iteration (%.7g) differ from its checked replay (%.7g)",
                         (unsigned long long)kept[r], (unsigned long long)j, (double)c.out3[r][j],
                         (double)c.out2[r][j]);
                c.ok = false;
            }
    }
    *correct = c.ok;
    for (size_t s = 0; s < 5; s++)
        for (int r = 0; r < CHECK_ROWS; r++)
            free(sets[s][r]);
    free(c.w);
    free(c.cols);
    free(c.column);
    free(c.kseq);
    free(c.vseq);
    free(c.want);
    free(c.mag);
    gm_device_free(st->dev, &c.codes);
    gm_device_free(st->dev, &c.scales);
    gm_device_free(st->dev, &c.stage);
    return rc;
}
