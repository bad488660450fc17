/*
 * The memory model of each workload: the tensors it holds at once, with
 * exact byte counts. Storage tensors use the precision's element size;
 * softmax statistics and score matrices are fp32 (the accumulation type).
 */
#include "bench/workload.h"

#include <stdio.h>
#include <string.h>

const char *gm_tensor_role_name(gm_tensor_role r)
{
    static const char *const names[] = {"weight", "activation", "kv-cache", "workspace"};
    return r <= GM_ROLE_WORKSPACE ? names[r] : "?";
}

void gm_shape_complete(gm_shape *s)
{
    if (!s->head_dim && s->heads && s->hidden)
        s->head_dim = s->hidden / s->heads;
    if (!s->heads && s->head_dim && s->hidden)
        s->heads = s->hidden / s->head_dim;
    if (!s->hidden)
        s->hidden = s->heads * s->head_dim;
    if (!s->out)
        s->out = s->hidden;
    if (!s->ffn)
        s->ffn = 4 * s->hidden;
    if (!s->layers)
        s->layers = 1;
    if (!s->micro_batch || s->micro_batch > s->batch)
        s->micro_batch = s->batch;
    if (!s->block_tokens)
        s->block_tokens = 16;
}

/* A product of element counts that refuses to wrap. */
typedef struct {
    bool overflow;
} guard;

static uint64_t mul(guard *g, uint64_t a, uint64_t b)
{
    uint64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
        g->overflow = true;
        return 0;
    }
    return r;
}

typedef struct {
    gm_tensor *t;
    int n;
    guard g;
} tensor_list;

static void add(tensor_list *l, const char *name, gm_tensor_role role, uint64_t elems, uint64_t elem_size)
{
    if (l->n >= GM_MAX_TENSORS) {
        l->g.overflow = true;
        return;
    }
    gm_tensor *t = &l->t[l->n++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->role = role;
    t->bytes = mul(&l->g, elems, elem_size);
}

static int finish(tensor_list *l) { return l->g.overflow ? -1 : l->n; }

/* linear: Y[B*S, out] = X[B*S, hidden] * W[hidden, out]. */
static int linear_tensors(const gm_shape *s, gm_tensor *out)
{
    tensor_list l = {out, 0, {false}};
    uint64_t es = gm_precision_size(s->prec), rows = mul(&l.g, s->batch, s->seq);
    add(&l, "x", GM_ROLE_ACTIVATION, mul(&l.g, rows, s->hidden), es);
    add(&l, "w", GM_ROLE_WEIGHT, mul(&l.g, s->hidden, s->out), es);
    add(&l, "y", GM_ROLE_ACTIVATION, mul(&l.g, rows, s->out), es);
    return finish(&l);
}

/* attention over [B, heads, S, head_dim]: q, k, v, o; naive adds the
 * S x S score matrix per (batch, head); tiled keeps a running max and sum
 * per query row. */
static void attention_into(tensor_list *l, const gm_shape *s, uint64_t batch, const char *prefix)
{
    uint64_t es = gm_precision_size(s->prec);
    uint64_t rows = mul(&l->g, mul(&l->g, batch, s->heads), s->seq);
    uint64_t qkv = mul(&l->g, rows, s->head_dim);
    char name[32];
    static const char *const parts[] = {"q", "k", "v", "o"};
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%s%s", prefix, parts[i]);
        add(l, name, GM_ROLE_ACTIVATION, qkv, es);
    }
    snprintf(name, sizeof name, "%s%s", prefix, s->naive ? "scores" : "softmax_stats");
    add(l, name, GM_ROLE_WORKSPACE, s->naive ? mul(&l->g, rows, s->seq) : mul(&l->g, rows, 2), 4);
}

static int attention_tensors(const gm_shape *s, gm_tensor *out)
{
    tensor_list l = {out, 0, {false}};
    attention_into(&l, s, s->batch, "");
    return finish(&l);
}

/*
 * block: `layers` transformer blocks (attention + MLP), every weight
 * resident; a KV cache per layer for the whole batch; activations kept for
 * every layer as training keeps them for the backward pass: per layer qkv,
 * the attention output, the residual stream after attention and the MLP's
 * hidden layer. With --checkpoint only each block's input is kept, and one
 * layer's activations are recomputed into a workspace. Activations scale
 * with the micro-batch, not the batch. Attention is the streaming (tiled)
 * kind: its workspace is the running max and sum per query row. With
 * --offload the weights live in host memory and the device holds two
 * layers of them (double buffering).
 */
static int block_tensors(const gm_shape *s, gm_tensor *out)
{
    tensor_list l = {out, 0, {false}};
    uint64_t es = gm_precision_size(s->prec), h = s->hidden, L = s->layers;
    uint64_t tokens = mul(&l.g, s->micro_batch, s->seq);
    uint64_t wl = s->offload && L > 2 ? 2 : L;    /* layers of weights on the device */
    add(&l, "w_qkv", GM_ROLE_WEIGHT, mul(&l.g, wl, mul(&l.g, h, 3 * h)), es);
    add(&l, "w_o", GM_ROLE_WEIGHT, mul(&l.g, wl, mul(&l.g, h, h)), es);
    add(&l, "w_up", GM_ROLE_WEIGHT, mul(&l.g, wl, mul(&l.g, h, s->ffn)), es);
    add(&l, "w_down", GM_ROLE_WEIGHT, mul(&l.g, wl, mul(&l.g, s->ffn, h)), es);
    add(&l, "kv_cache", GM_ROLE_KV_CACHE, mul(&l.g, 2 * L, mul(&l.g, mul(&l.g, s->batch, s->seq), h)), es);
    add(&l, "block_inputs", GM_ROLE_ACTIVATION, mul(&l.g, L + 1, mul(&l.g, tokens, h)), es);
    uint64_t kept = s->checkpoint ? 1 : L;     /* layers whose activations are held */
    const char *scope = s->checkpoint ? "recompute_" : "";
    gm_tensor_role role = s->checkpoint ? GM_ROLE_WORKSPACE : GM_ROLE_ACTIVATION;
    static const char *const parts[] = {"qkv", "attn_out", "attn_resid", "mlp_hidden"};
    const uint64_t widths[] = {3 * h, h, h, s->ffn};
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s%s", scope, parts[i]);
        add(&l, name, role, mul(&l.g, kept, mul(&l.g, tokens, widths[i])), es);
    }
    uint64_t rows = mul(&l.g, mul(&l.g, s->micro_batch, s->heads), s->seq);
    add(&l, "attn_stats", GM_ROLE_WORKSPACE, mul(&l.g, rows, 2), 4);
    return finish(&l);
}

/*
 * kvcache: decoding up to `seq` tokens. Contiguous: K and V of
 * [B, heads, seq, head_dim] per layer, reserved whole. Paged: blocks of
 * block_tokens tokens, as many as the sequences need, and a block table.
 * The step's query, output and fp32 scores are workspace.
 */
static int kvcache_tensors(const gm_shape *s, gm_tensor *out)
{
    tensor_list l = {out, 0, {false}};
    uint64_t es = gm_precision_size(s->prec);
    uint64_t per_token = mul(&l.g, s->heads, s->head_dim);
    uint64_t tokens = s->seq;
    if (s->paged) {
        uint64_t blocks_per_seq = (s->seq + s->block_tokens - 1) / s->block_tokens;
        tokens = mul(&l.g, blocks_per_seq, s->block_tokens);
        add(&l, "block_table", GM_ROLE_WORKSPACE, mul(&l.g, s->batch, blocks_per_seq), 4);
    }
    uint64_t cache = mul(&l.g, mul(&l.g, s->layers, s->batch), mul(&l.g, tokens, per_token));
    add(&l, "k_cache", GM_ROLE_KV_CACHE, cache, es);
    add(&l, "v_cache", GM_ROLE_KV_CACHE, cache, es);
    add(&l, "query", GM_ROLE_ACTIVATION, mul(&l.g, s->batch, per_token), es);
    add(&l, "output", GM_ROLE_ACTIVATION, mul(&l.g, s->batch, per_token), es);
    add(&l, "scores", GM_ROLE_WORKSPACE, mul(&l.g, mul(&l.g, s->batch, s->heads), tokens), 4);
    return finish(&l);
}

static const gm_workload linear = {"linear", "dense layer [batch*seq, hidden] x [hidden, out]", linear_tensors};
static const gm_workload attention = {"attention", "scaled dot-product attention, naive or tiled", attention_tensors};
static const gm_workload block = {"block", "transformer blocks: weights, activations, KV cache, workspace", block_tensors};
static const gm_workload kvcache = {"kvcache", "decoding with a growing KV cache, contiguous or paged", kvcache_tensors};

const gm_workload *const gm_workloads[] = {&linear, &attention, &block, &kvcache, NULL};

const gm_workload *gm_workload_find(const char *name)
{
    for (int i = 0; gm_workloads[i]; i++)
        if (strcmp(gm_workloads[i]->name, name) == 0)
            return gm_workloads[i];
    return NULL;
}

uint64_t gm_tensors_total(const gm_tensor *t, int n)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        if (__builtin_add_overflow(total, t[i].bytes, &total))
            return UINT64_MAX;
    return total;
}
