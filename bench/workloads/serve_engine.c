/*
 * The serving engine (bench/workloads/serve_engine.h): its tensors, the
 * weights, the step's rows and its forward pass.
 *
 * Weights: the weights tensor holds the embedding [V][h], each layer's
 * attention norm, qkv_proj [h][a*d + 2*k*d] (q, k, v side by side in a
 * row, as vLLM fuses them), o [a*d][h], MLP norm, gate_up_proj [h][2I]
 * and down [I][h], then the final norm; the LM head [h][V] is its own
 * tensor. Weight i of
 * the model (its index over every parameter) is add + gm_hashed_value(i,
 * SERVE_SEED, range): uniform in [-r, r) with r the power of two nearest
 * 1/sqrt(fan-in), the norms in [0.75, 1.25), the embedding in [-1, 1).
 *
 * One step of T rows, residual stream in A (SB_RES) and B (SB_HID) by
 * turns so that no product writes the buffer it reads:
 *   A = embed(tokens)
 *   per layer:  B = norm1(A);  [q | k | v] = B Wqkv (phase);
 *               k, v -> pool;  o = attention(q, pool) (phase);
 *               B = o Wo + A;  A = norm2(B);  [g | u] = A Wgu (phase);
 *               act = silu(g) u (phase);  A = act Wd + B
 *   B = final_norm(A);  logits = B[logit rows] W_lm;  sample
 */
#include "bench/workloads/serve_layout.h"

#include "bench/model/precision_roles.h"
#include "bench/workloads/block_private.h"
#include "bench/workloads/kernel_calls.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVE_SEED 401u
#define SCALE 1.0f               /* int8 scale: the engine runs no int8 */

/* ---- the memory model ---- */

uint64_t serve_phase_width(const gm_arch *a)
{
    uint64_t ad = a->heads * a->head_dim, kd = a->kv_heads * a->head_dim;
    uint64_t attn = ad + 2 * kd + ad + a->hidden, mlp = 3 * a->ffn;
    return attn > mlp ? attn : mlp;
}

uint64_t serve_block_bytes(const serve_dims *d)
{
    return 2 * d->a.layers * d->a.kv_heads * d->block_tokens * d->a.head_dim * gm_precision_size(d->kp);
}

int serve_tensors(const serve_dims *d, gm_tensor *out)
{
    gm_tensor_list l = {out, 0, false};
    const gm_arch *a = &d->a;
    uint64_t e = gm_precision_size(d->p), h = a->hidden, V = a->vocab, T = d->max_tokens;
    uint64_t rows = d->max_tokens < d->max_seqs ? d->max_tokens : d->max_seqs;
    uint64_t lm = a->tied ? 0 : h * V;
    gm_tensor_list_add(&l, "weights", GM_ROLE_WEIGHT, gm_arch_params(a) - lm, e);
    gm_tensor_list_add(&l, "lm_head", GM_ROLE_WEIGHT, lm, e);
    gm_tensor_list_add(&l, "kv_pool", GM_ROLE_KV_CACHE, gm_tensor_mul(&l, d->pool_blocks, serve_block_bytes(d)), 1);
    gm_tensor_list_add(&l, "residual", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, h), e);
    gm_tensor_list_add(&l, "hidden", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, h), e);
    gm_tensor_list_add(&l, "phase", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, T, serve_phase_width(a)), e);
    gm_tensor_list_add(&l, "logits", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, rows, V), e);
    gm_tensor_list_add(&l, "logits_fp32", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, rows, V), 4);
    gm_tensor_list_add(&l, "block_table", GM_ROLE_WORKSPACE, gm_tensor_mul(&l, d->max_seqs, d->max_blocks), 4);
    gm_tensor_list_add(&l, "step_rows", GM_ROLE_WORKSPACE, gm_tensor_mul(&l, T, SERVE_ROW_WORDS) + rows, 4);
    gm_tensor_list_add(&l, "tokens", GM_ROLE_WORKSPACE, gm_tensor_mul(&l, 2, d->max_seqs), 4);
    return gm_tensor_list_finish(&l);
}

const char *serve_unsupported(const serve_dims *d)
{
    const gm_arch *a = &d->a;
    if (!a->layers)
        return "a whole model (--model PRESET or a config.json)";
    if (a->experts || a->layernorm || !a->gated_mlp || a->qkv_bias || a->o_bias || a->mlp_bias || a->positions
        || a->tied || !strcmp(a->model_type, "gemma"))
        return "a Llama-family decoder with an untied LM head (RMSNorm, SwiGLU, no biases)";
    if (d->p != GM_FP32 && d->p != GM_FP16 && d->p != GM_BF16)
        return "fp32, fp16 or bf16";
    if (d->kp != d->p)
        return "a KV pool in the activations' precision";
    if (a->heads % a->kv_heads || a->heads / a->kv_heads > SERVE_MAX_GROUP || a->head_dim > SERVE_MAX_DIM
        || a->head_dim % 8)
        return "at most 8 query heads a KV head and head_dim a multiple of 8, at most 256";
    if (d->block_tokens > SERVE_MAX_BLOCK)
        return "--block-tokens at most 128";
    if (d->max_tokens * serve_phase_width(a) > UINT32_MAX || d->max_tokens * a->vocab > UINT32_MAX
        || d->max_seqs * a->vocab > UINT32_MAX || d->pool_blocks > INT32_MAX)
        return "a step's activations and the pool's blocks within 32-bit indices";
    return NULL;
}

/* ---- weights ---- */

uint64_t serve_m_in(const serve_engine *e, int m)
{
    switch (m) {
    case M_O: return e->ad;
    case M_DOWN: return e->I;
    case M_EMB: return e->V;
    case M_NORM1: case M_NORM2: case M_FINAL: return 1;
    default: return e->h;
    }
}

uint64_t serve_m_out(const serve_engine *e, int m)
{
    switch (m) {
    case M_QKV: return e->ad + 2 * e->kd;
    case M_GATEUP: return 2 * e->I;
    case M_LM: return e->V;
    default: return e->h;
    }
}

uint64_t serve_m_param(const serve_engine *e, int m, uint64_t layer)
{
    if (m == M_EMB)
        return 0;
    if (m == M_LM)
        return e->p_main;
    uint64_t base = e->V * e->h;
    if (m == M_FINAL)
        return base + e->L * e->per_layer;
    uint64_t off = base + layer * e->per_layer;
    for (int i = 0; i < m; i++)
        off += serve_m_in(e, i) * serve_m_out(e, i);
    return off;
}

gm_buffer *serve_m_buf(serve_engine *e, int m) { return &e->buf[m == M_LM ? SB_LM : SB_WEIGHTS]; }

uint64_t serve_m_off(const serve_engine *e, int m, uint64_t layer)
{
    return m == M_LM ? 0 : serve_m_param(e, m, layer);
}

float serve_weight(const serve_engine *e, int m, uint64_t i)
{
    return e->add[m] + gm_hashed_value(i, SERVE_SEED, e->range[m]);
}

/* ---- kernels ---- */

static gm_status launch(serve_engine *e, gm_kernel *k, size_t items, gm_arg *args, int n)
{
    size_t global, local;
    gm_launch_geometry(e->dev, e->chunked, items, &global, &local);
    return e->dev->backend->launch(e->dev, 0, k, global, local, args, n);
}

static gm_status init_matrix(serve_engine *e, int m, uint64_t layer)
{
    uint64_t n = serve_m_in(e, m) * serve_m_out(e, m), off = serve_m_off(e, m, layer);
    uint64_t base = serve_m_param(e, m, layer);
    float range = e->range[m], add = e->add[m], scale = SCALE;
    unsigned int seed = SERVE_SEED;
    gm_arg args[] = {gm_arg_buf(serve_m_buf(e, m)), gm_arg_u64(&off), gm_arg_u64(&n), gm_arg_u64(&base),
                     gm_arg_u32(&seed), gm_arg_f32(&range), gm_arg_f32(&add), gm_arg_f32(&scale)};
    return launch(e, e->k_init, (size_t)n, args, 8);
}

/* Y[rows] = X[rows] W_m (+ R): the engine's one matrix product. */
static gm_status serve_linear(serve_engine *e, int m, uint64_t layer, uint64_t rows, serve_loc x, serve_loc y,
                       const serve_loc *r)
{
    gm_linear_call c = {x.buf, serve_m_buf(e, m), y.buf, r ? r->buf : NULL, rows, serve_m_out(e, m),
                        serve_m_in(e, m), SCALE, SCALE, SCALE, SCALE, x.off, serve_m_off(e, m, layer), y.off,
                        r ? r->off : 0, r ? GM_LINEAR_RESIDUAL : GM_LINEAR_PLAIN};
    return gm_linear_enqueue(e->dev, 0, e->k_linear, e->chunked, &c);
}

static gm_status serve_rmsnorm(serve_engine *e, int m, uint64_t layer, uint64_t rows, serve_loc x, serve_loc y)
{
    unsigned int width = (unsigned int)e->h;
    uint64_t first = 0, step = 1, w_off = serve_m_off(e, m, layer);
    float eps = SERVE_RMS_EPS, s = SCALE;
    gm_arg args[] = {gm_arg_buf(x.buf), gm_arg_buf(y.buf), gm_arg_buf(&e->buf[SB_WEIGHTS]), gm_arg_u64(&rows),
                     gm_arg_u32(&width), gm_arg_u64(&x.off), gm_arg_u64(&first), gm_arg_u64(&step),
                     gm_arg_u64(&y.off), gm_arg_u64(&w_off), gm_arg_f32(&eps), gm_arg_f32(&s), gm_arg_f32(&s),
                     gm_arg_f32(&s)};
    return launch(e, e->k_norm, (size_t)rows, args, 14);
}

serve_layer_locs serve_locs(serve_engine *e)
{
    uint64_t T = e->n_rows;
    gm_buffer *ph = &e->buf[SB_PHASE];
    return (serve_layer_locs){.a = {&e->buf[SB_RES], 0}, .b = {&e->buf[SB_HID], 0}, .qkv = {ph, 0},
                              .o = {ph, T * (e->ad + 2 * e->kd)}, .gu = {ph, 0}, .act = {ph, T * 2 * e->I}};
}

bool serve_kv_fused(const serve_engine *e) { return e->chunked && e->rows_distinct && e->n_decode == e->n_rows; }

gm_status serve_stage(serve_engine *e, uint64_t l, int s)
{
    serve_layer_locs c = serve_locs(e);
    unsigned int rows = e->n_rows, kvh = (unsigned int)e->d.a.kv_heads, dim = (unsigned int)e->d.a.head_dim;
    unsigned int heads = (unsigned int)e->d.a.heads, block = (unsigned int)e->d.block_tokens;
    unsigned int maxb = (unsigned int)e->d.max_blocks, layer = (unsigned int)l, layers = (unsigned int)e->L;
    uint64_t qkv_row = e->ad + 2 * e->kd, k_off = c.qkv.off + e->ad, v_off = k_off + e->kd;
    float sc = SCALE;
    switch (s) {
    case S_NORM1:
        return serve_rmsnorm(e, M_NORM1, l, rows, c.a, c.b);
    case S_QKV:
        return serve_linear(e, M_QKV, l, rows, c.b, c.qkv, NULL);
    case S_KV: {
        if (serve_kv_fused(e))
            return GM_OK;       /* the attention's launch writes them */
        gm_arg args[] = {gm_arg_buf(c.qkv.buf), gm_arg_u64(&k_off), gm_arg_u64(&v_off), gm_arg_u64(&qkv_row),
                         gm_arg_buf(&e->buf[SB_POOL]), gm_arg_buf(&e->buf[SB_TABLE]), gm_arg_buf(&e->buf[SB_ROWS]),
                         gm_arg_u32(&rows), gm_arg_u32(&kvh), gm_arg_u32(&dim), gm_arg_u32(&block),
                         gm_arg_u32(&maxb), gm_arg_u32(&layer), gm_arg_u32(&layers), gm_arg_f32(&sc)};
        return launch(e, e->k_kv, (size_t)rows * kvh, args, 15);
    }
    case S_ATTN: {
        unsigned int write_kv = serve_kv_fused(e);
        gm_arg args[] = {gm_arg_buf(c.qkv.buf), gm_arg_u64(&c.qkv.off), gm_arg_u64(&qkv_row), gm_arg_u64(&c.o.off),
                         gm_arg_buf(c.o.buf),
                         gm_arg_buf(&e->buf[SB_POOL]), gm_arg_buf(&e->buf[SB_TABLE]), gm_arg_buf(&e->buf[SB_ROWS]),
                         gm_arg_u32(&rows), gm_arg_u32(&heads), gm_arg_u32(&kvh), gm_arg_u32(&dim),
                         gm_arg_u32(&block), gm_arg_u32(&maxb), gm_arg_u32(&layer), gm_arg_u32(&layers),
                         gm_arg_f32(&sc), gm_arg_u32(&write_kv)};
        size_t items = (size_t)rows * kvh;
        if (e->chunked)
            return launch(e, e->k_attn, items, args, 18);
        /* One group of SERVE_WG items per (row, KV head) (kernels/serve.cl). */
        size_t cu = e->dev->info.compute_units > 0 ? (size_t)e->dev->info.compute_units : 1;
        size_t groups = items < cu * 32 ? items : cu * 32;
        return e->dev->backend->launch(e->dev, 0, e->k_attn, groups * SERVE_WG, SERVE_WG, args, 18);
    }
    case S_OPROJ:
        return serve_linear(e, M_O, l, rows, c.o, c.b, &c.a);
    case S_NORM2:
        return serve_rmsnorm(e, M_NORM2, l, rows, c.b, c.a);
    case S_GATEUP:
        return serve_linear(e, M_GATEUP, l, rows, c.a, c.gu, NULL);
    case S_SWIGLU: {
        unsigned int width = (unsigned int)e->I;
        gm_arg args[] = {gm_arg_buf(c.gu.buf), gm_arg_u64(&c.gu.off), gm_arg_u64(&c.act.off), gm_arg_u32(&rows),
                         gm_arg_u32(&width), gm_arg_f32(&sc)};
        /* CPU devices: a work item a run of rows (kernels/serve.cl). */
        return launch(e, e->k_swiglu, e->chunked ? (size_t)rows : (size_t)rows * e->I, args, 6);
    }
    case S_DOWN:
        return serve_linear(e, M_DOWN, l, rows, c.act, c.a, &c.b);
    }
    return GM_OK;
}

gm_status serve_embed(serve_engine *e)
{
    unsigned int rows = e->n_rows, hidden = (unsigned int)e->h;
    float s = SCALE;
    gm_arg args[] = {gm_arg_buf(&e->buf[SB_WEIGHTS]), gm_arg_buf(&e->buf[SB_RES]), gm_arg_buf(&e->buf[SB_ROWS]),
                     gm_arg_buf(&e->buf[SB_TOKENS]), gm_arg_u32(&rows), gm_arg_u32(&hidden), gm_arg_f32(&s),
                     gm_arg_f32(&s)};
    return launch(e, e->k_embed, (size_t)rows * e->h, args, 8);
}

/* The final norm of every row (A -> B), the LM head of the logit rows
 * (runs of consecutive rows in one product) and the sampler. */
gm_status serve_head(serve_engine *e)
{
    serve_layer_locs c = serve_locs(e);
    gm_status rc = serve_rmsnorm(e, M_FINAL, 0, e->n_rows, c.a, c.b);
    for (uint32_t i = 0; i < e->n_logits && rc == GM_OK;) {
        uint32_t j = i + 1;
        while (j < e->n_logits && e->logit_row[j] == e->logit_row[j - 1] + 1)
            j++;
        serve_loc x = {c.b.buf, (uint64_t)e->logit_row[i] * e->h}, y = {&e->buf[SB_LOGITS], (uint64_t)i * e->V};
        rc = serve_linear(e, M_LM, 0, j - i, x, y, NULL);
        i = j;
    }
    if (rc != GM_OK || !e->n_logits)
        return rc;
    unsigned int rows = e->n_logits, vocab = (unsigned int)e->V;
    float s = SCALE;
    /* The logit rows' slots follow the step's rows in SB_ROWS; sampled
     * tokens go to the second half of SB_TOKENS. */
    uint64_t slots_at = e->d.max_tokens * SERVE_ROW_WORDS, sampled_at = e->d.max_seqs;
    gm_arg args[] = {gm_arg_buf(&e->buf[SB_LOGITS]), gm_arg_buf(&e->buf[SB_LOGITS32]), gm_arg_buf(&e->buf[SB_ROWS]),
                     gm_arg_u64(&slots_at), gm_arg_buf(&e->buf[SB_TOKENS]), gm_arg_u64(&sampled_at),
                     gm_arg_u32(&rows), gm_arg_u32(&vocab), gm_arg_f32(&s)};
    if (e->chunked)
        return launch(e, e->k_sample, rows, args, 9);
    return e->dev->backend->launch(e->dev, 0, e->k_sample, (size_t)rows * SERVE_SAMPLE_WG, SERVE_SAMPLE_WG, args, 9);
}

gm_status serve_step_enqueue(void *engine)
{
    serve_engine *e = engine;
    gm_status rc = serve_embed(e);
    for (uint64_t l = 0; l < e->L && rc == GM_OK; l++)
        for (int s = 0; s < N_STAGES && rc == GM_OK; s++)
            rc = serve_stage(e, l, s);
    return rc == GM_OK ? serve_head(e) : rc;
}

/* ---- the step's rows ---- */

uint32_t serve_prompt_token(uint64_t req, uint64_t pos, uint64_t vocab)
{
    uint64_t x = req * 0x9e3779b97f4a7c15ull ^ (pos + 1) * 0xc2b2ae3d27d4eb4full;
    x ^= x >> 31;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    return (uint32_t)(x % vocab);
}

void serve_table_set(serve_engine *e, unsigned slot, unsigned index, int32_t block)
{
    e->table[(size_t)slot * e->d.max_blocks + index] = block;
    e->table_dirty[slot] = true;
}

void serve_step_begin(serve_engine *e)
{
    e->n_rows = e->n_decode = e->n_logits = 0;
    e->rows_distinct = true;
    memset(e->slot_in_step, 0, (size_t)e->d.max_seqs * sizeof *e->slot_in_step);
}

bool serve_step_add(serve_engine *e, unsigned slot, uint64_t pos, uint32_t token, bool decode, bool logits)
{
    if (e->n_rows >= e->d.max_tokens || (logits && e->n_logits >= e->d.max_seqs) || slot >= e->d.max_seqs)
        return false;
    uint32_t *r = &e->rows[(size_t)e->n_rows * SERVE_ROW_WORDS];
    r[0] = slot;
    r[1] = (uint32_t)pos;
    r[2] = token;
    r[3] = decode ? SERVE_ROW_DECODE : 0;
    if (logits) {
        e->logit_row[e->n_logits] = e->n_rows;
        e->logit_slot[e->n_logits++] = slot;
    }
    e->n_decode += decode;
    e->rows_distinct = e->rows_distinct && !e->slot_in_step[slot];
    e->slot_in_step[slot] = true;
    e->n_rows++;
    return true;
}

gm_status serve_step_upload(serve_engine *e)
{
    const gm_backend *be = e->dev->backend;
    size_t rows_bytes = (size_t)e->d.max_tokens * SERVE_ROW_WORDS * 4;
    memcpy(e->stage.host, e->rows, (size_t)e->n_rows * SERVE_ROW_WORDS * 4);
    memcpy((char *)e->stage.host + rows_bytes, e->logit_slot, (size_t)e->n_logits * 4);
    gm_status rc = be->copy(e->dev, 0, &e->buf[SB_ROWS], 0, &e->stage, 0, (size_t)e->n_rows * SERVE_ROW_WORDS * 4,
                            false);
    if (rc == GM_OK && e->n_logits)
        rc = be->copy(e->dev, 0, &e->buf[SB_ROWS], rows_bytes, &e->stage, rows_bytes, (size_t)e->n_logits * 4, false);
    size_t row = (size_t)e->d.max_blocks * 4;
    for (uint64_t s = 0; s < e->d.max_seqs && rc == GM_OK; s++) {
        if (!e->table_dirty[s])
            continue;
        memcpy(e->stage.host, &e->table[s * e->d.max_blocks], row);
        rc = be->copy(e->dev, 0, &e->buf[SB_TABLE], (size_t)s * row, &e->stage, 0, row, false);
        e->table_dirty[s] = rc != GM_OK;
    }
    return rc;
}

gm_status serve_step_commit(serve_engine *e, uint32_t *out)
{
    const gm_backend *be = e->dev->backend;
    size_t n = (size_t)e->d.max_seqs * 4;
    gm_status rc = be->copy(e->dev, 0, &e->buf[SB_TOKENS], 0, &e->buf[SB_TOKENS], n, n, false);
    if (rc == GM_OK && out && e->n_logits) {
        rc = be->copy(e->dev, 0, &e->stage, 0, &e->buf[SB_TOKENS], n, n, false);
        for (uint32_t i = 0; i < e->n_logits && rc == GM_OK; i++)
            out[i] = ((const uint32_t *)e->stage.host)[e->logit_slot[i]];
    }
    return rc;
}

gm_status serve_step_corrupt(serve_engine *e, const gm_output_fault *f, unsigned rep)
{
    return gm_output_fault_strike(f, e->dev, &e->buf[SB_LOGITS], 0, (size_t)e->n_logits * e->V,
                                  gm_precision_size(e->d.p), gm_output_fault_salt("serve logits"), rep, 0, NULL);
}

gm_status serve_block_out(serve_engine *e, int32_t block, gm_buffer *host, size_t off)
{
    size_t n = (size_t)serve_block_bytes(&e->d);
    return e->dev->backend->copy(e->dev, 0, host, off, &e->buf[SB_POOL], (size_t)block * n, n, true);
}

gm_status serve_block_in(serve_engine *e, int32_t block, gm_buffer *host, size_t off)
{
    size_t n = (size_t)serve_block_bytes(&e->d);
    return e->dev->backend->copy(e->dev, 0, &e->buf[SB_POOL], (size_t)block * n, host, off, n, true);
}

/* ---- set-up ---- */

void serve_engine_close(serve_engine *e)
{
    if (!e)
        return;
    for (int i = 0; i < SB_COUNT; i++)
        gm_device_free(e->dev, &e->buf[i]);
    gm_device_free(e->dev, &e->stage);
    gm_kernel *ks[] = {e->k_linear, e->k_init, e->k_norm, e->k_swiglu, e->k_embed, e->k_kv, e->k_attn, e->k_sample};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++)
        if (ks[i])
            e->dev->backend->kernel_release(e->dev, ks[i]);
    gm_program *ps[] = {e->p_linear, e->p_model, e->p_serve};
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
        if (ps[i])
            e->dev->backend->program_release(e->dev, ps[i]);
    free(e->table);
    free(e->table_dirty);
    free(e->slot_in_step);
    free(e->rows);
    free(e->logit_row);
    free(e->logit_slot);
    free(e);
}

static gm_status build(serve_engine *e)
{
    gm_device *dev = e->dev;
    char variant[32];
    gm_kernel_variant(e->d.p, e->chunked, variant, sizeof variant);
    gm_status rc = dev->backend->program_build(dev, "linear", variant, NULL, &e->p_linear);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, e->p_linear, e->chunked ? "linear_blocked" : "linear_tiled", &e->k_linear);
    if (rc == GM_OK)
        rc = dev->backend->program_build(dev, "model", variant, NULL, &e->p_model);
    /* CPU devices: the attention's head size and group fixed at build time. */
    char defines[64];
    snprintf(defines, sizeof defines, "-DSERVE_DIM=%llu -DSERVE_GROUP=%llu", (unsigned long long)e->d.a.head_dim,
             (unsigned long long)(e->d.a.heads / e->d.a.kv_heads));
    if (rc == GM_OK)
        rc = dev->backend->program_build(dev, "serve", variant, e->chunked ? defines : NULL, &e->p_serve);
    struct { gm_program *p; const char *name; gm_kernel **k; } ks[] = {
        {e->p_model, "model_init", &e->k_init},       {e->p_model, "model_rmsnorm", &e->k_norm},
        {e->p_serve, "serve_swiglu", &e->k_swiglu},   {e->p_serve, "serve_embed", &e->k_embed},
        {e->p_serve, "serve_kv_write", &e->k_kv},     {e->p_serve, "serve_attention", &e->k_attn},
        {e->p_serve, "serve_sample", &e->k_sample},
    };
    for (size_t i = 0; i < sizeof ks / sizeof ks[0] && rc == GM_OK; i++)
        rc = dev->backend->kernel_get(dev, ks[i].p, ks[i].name, ks[i].k);
    return rc;
}

static gm_status initialise(serve_engine *e)
{
    gm_status rc = GM_OK;
    for (uint64_t l = 0; l < e->L && rc == GM_OK; l++)
        for (int m = 0; m < N_LAYER_M && rc == GM_OK; m++)
            rc = init_matrix(e, m, l);
    int model_wide[] = {M_EMB, M_FINAL, M_LM};
    for (size_t i = 0; i < 3 && rc == GM_OK; i++)
        rc = init_matrix(e, model_wide[i], 0);
    /* Unused table entries point at block 0 (never read past a row's
     * position); the sampled tokens start at 0. */
    uint32_t zero = 0;
    if (rc == GM_OK)
        rc = e->dev->backend->fill(e->dev, 0, &e->buf[SB_TABLE], 0, e->buf[SB_TABLE].bytes, &zero, 4);
    if (rc == GM_OK)
        rc = e->dev->backend->fill(e->dev, 0, &e->buf[SB_TOKENS], 0, e->buf[SB_TOKENS].bytes, &zero, 4);
    return rc == GM_OK ? e->dev->backend->synchronize(e->dev, 0) : rc;
}

gm_status serve_engine_open(gm_device *dev, gm_pattern *pat, const serve_dims *d, serve_engine **out)
{
    *out = NULL;
    const char *why = serve_unsupported(d);
    if (why)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "the serving engine runs %s", why);
    serve_engine *e = calloc(1, sizeof *e);
    if (!e)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    const gm_arch *a = &d->a;
    e->dev = dev;
    e->d = *d;
    e->chunked = gm_device_prefers_chunked(dev);
    e->h = a->hidden;
    e->ad = a->heads * a->head_dim;
    e->kd = a->kv_heads * a->head_dim;
    e->I = a->ffn;
    e->V = a->vocab;
    e->L = a->layers;
    e->per_layer = 2 * e->h + e->h * e->ad + 2 * e->h * e->kd + e->ad * e->h + 3 * e->h * e->I;
    e->p_main = e->V * e->h + e->L * e->per_layer + e->h;
    for (int m = 0; m < N_M; m++) {
        uint64_t fan_in = m == M_EMB ? 1 : m == M_LM ? e->h : serve_m_in(e, m);
        e->range[m] = ldexpf(1.0f, -(int)lround(0.5 * log2((double)fan_in)));
    }
    e->range[M_NORM1] = e->range[M_NORM2] = e->range[M_FINAL] = 0.25f;
    e->add[M_NORM1] = e->add[M_NORM2] = e->add[M_FINAL] = 1.0f;
    gm_tensor t[GM_MAX_TENSORS];
    int nt = serve_tensors(d, t);
    gm_status rc = nt == SB_COUNT && e->p_main + e->h * e->V == gm_arch_params(a)
                       ? GM_OK
                       : gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: parameters other than a Llama layout's",
                                        a->name);
    for (int i = 0; i < nt && rc == GM_OK; i++)
        rc = gm_pattern_alloc(pat, (size_t)t[i].bytes, &e->buf[i]);
    size_t table = (size_t)(d->max_seqs * d->max_blocks), rows = (size_t)(d->max_tokens * SERVE_ROW_WORDS);
    size_t stage = rows * 4 + (size_t)d->max_seqs * 4;
    if (stage < table * 4)
        stage = table * 4;
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_HOST, stage, &e->stage);
    e->table = calloc(table, sizeof *e->table);
    e->table_dirty = calloc((size_t)d->max_seqs, sizeof *e->table_dirty);
    e->slot_in_step = calloc((size_t)d->max_seqs, sizeof *e->slot_in_step);
    e->rows = malloc(rows * 4);
    e->logit_row = malloc((size_t)d->max_seqs * 4);
    e->logit_slot = malloc((size_t)d->max_seqs * 4);
    if (rc == GM_OK && !(e->table && e->table_dirty && e->slot_in_step && e->rows && e->logit_row && e->logit_slot))
        rc = gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    if (rc == GM_OK)
        rc = build(e);
    if (rc == GM_OK)
        rc = initialise(e);
    if (rc != GM_OK) {
        gm_error saved = dev->err;
        serve_engine_close(e);
        dev->err = saved;
        return rc;
    }
    *out = e;
    return GM_OK;
}
