/*
 * block (a shape without --model):  `layers` transformer blocks over [batch, seq, hidden]: per layer
 * qkv = x Wqkv, K and V appended to the KV cache, causal-or-not attention
 * over the cache (streaming softmax), resid = x + attn Wo,
 * mlp = GELU(resid Wup), next x = resid + mlp Wdown. Weights and the input
 * are reproducible hashes (gm_hashed_value), so the CPU reference needs no
 * copy of them.
 *
 * One iteration is the forward pass over the batch in micro-batches of
 * --micro-batch sequences; with --checkpoint each micro-batch's forward
 * keeps only the block inputs and is followed by the recomputation of
 * every layer's activations, as the backward pass of activation
 * checkpointing does (gradients themselves are not computed).
 *
 * --offload keeps the weights in pinned host memory and streams them into
 * two device slots, layer by layer: while layer l computes on queue 0, the
 * next layer's weights copy on queue 1 (double buffering).
 *
 * Precisions per role (bench/model/precision_roles.h): one for every tensor, or
 * fp16/bf16 activations with int4 weights (codes two a byte and an fp16
 * scale per --group-size rows of a column, quantised on the device from
 * the same hashes, dequantised on load by linear.cl) and/or an fp8 KV
 * cache (K and V converted as they are stored, read by attention as they
 * are).
 */
#include "bench/workloads/block_private.h"
#include "bench/workloads/kernel_calls.h"
#include "bench/model/precision_roles.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int block_impls(const gm_device *dev, const gm_shape *s, const char **out)
{
    (void)dev;
    (void)s;
    out[0] = "tiled";
    return 1;
}

void block_adapt(gm_shape *s, const char *impl)
{
    (void)impl;
    s->naive = false;
}

void block_teardown_shape(void *state)
{
    block_state *st = state;
    if (!st)
        return;
    for (int i = 0; i < N_WEIGHTS; i++) {
        gm_device_free(st->dev, &st->w[i]);
        gm_device_free(st->dev, &st->ws[i]);
        gm_device_free(st->dev, &st->host_w[i]);
        gm_device_free(st->dev, &st->host_ws[i]);
    }
    for (int i = 0; i < N_ACTS; i++)
        gm_device_free(st->dev, &st->act[i]);
    gm_device_free(st->dev, &st->kv);
    gm_device_free(st->dev, &st->inputs);
    gm_device_free(st->dev, &st->stats);
    gm_kernel *kernels[] = {st->k_linear, st->k_attn, st->k_init, st->k_kv, st->k_scales, st->k_pack};
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (kernels[i])
            st->dev->backend->kernel_release(st->dev, kernels[i]);
    gm_program *progs[] = {st->p_linear, st->p_attn, st->p_block};
    for (size_t i = 0; i < 3; i++)
        if (progs[i])
            st->dev->backend->program_release(st->dev, progs[i]);
    free(st);
}

/* Fills n elements of t from gm_hashed_value(base + i, seed, range). */
static gm_status enqueue_init(block_state *st, gm_buffer *t, uint64_t n, uint64_t base, unsigned int seed,
                              float range, float scale)
{
    gm_arg args[] = {gm_arg_buf(t), gm_arg_u64(&n), gm_arg_u64(&base), gm_arg_u32(&seed), gm_arg_f32(&range),
                     gm_arg_f32(&scale)};
    size_t global, local;
    gm_launch_geometry(st->dev, st->chunked, (size_t)n, &global, &local);
    return st->dev->backend->launch(st->dev, 0, st->k_init, global, local, args, 6);
}

static gm_status build(block_state *st)
{
    gm_device *dev = st->dev;
    char lin[48], kv[48];
    gm_role_variant(st->s.prec, st->wp, st->s.prec, st->chunked, lin, sizeof lin);
    gm_role_variant(st->s.prec, st->s.prec, st->kp, st->chunked, kv, sizeof kv);
    gm_status rc = gm_build_layer_kernels(dev, lin, kv, st->chunked, &st->p_linear, &st->k_linear, &st->p_attn,
                                          &st->k_attn);
    if (rc == GM_OK)
        rc = dev->backend->program_build(dev, "block", kv, NULL, &st->p_block);
    static const char *const names[] = {"block_init", "block_kv_store", "block_int4_scales", "block_int4_pack"};
    gm_kernel **ks[] = {&st->k_init, &st->k_kv, &st->k_scales, &st->k_pack};
    for (size_t i = 0; i < sizeof names / sizeof names[0] && rc == GM_OK; i++)
        rc = dev->backend->kernel_get(dev, st->p_block, names[i], ks[i]);
    return rc;
}

/* Allocates the model's tensors in its order (src: bench/model/workload.c). */
static gm_status allocate(block_state *st, gm_pattern *pat)
{
    size_t es = gm_precision_size(st->s.prec);
    uint64_t L = st->layers, slots = st->s.checkpoint ? 1 : L, wl = st->offload && L > 2 ? 2 : L;
    gm_status rc = GM_OK;
    for (int i = 0; i < N_WEIGHTS && rc == GM_OK; i++) {
        rc = gm_pattern_alloc(pat, wl * block_layer_bytes(st, i), &st->w[i]);
        if (rc == GM_OK && st->wp == GM_INT4)
            rc = gm_pattern_alloc(pat, wl * block_layer_scale_bytes(st, i), &st->ws[i]);
    }
    if (rc == GM_OK)
        rc = gm_pattern_alloc(pat, 2 * L * st->s.batch * st->seq * st->h * gm_precision_size(st->kp), &st->kv);
    if (rc == GM_OK)
        rc = gm_pattern_alloc(pat, (L + 1) * st->tokens_max * st->h * es, &st->inputs);
    for (int i = 0; i < N_ACTS && rc == GM_OK; i++)
        rc = gm_pattern_alloc(pat, slots * st->tokens_max * block_act_width(st, i) * es, &st->act[i]);
    if (rc == GM_OK)
        rc = gm_pattern_alloc(pat, st->mb * st->heads * st->seq * 2 * sizeof(float), &st->stats);
    for (int i = 0; i < N_WEIGHTS && rc == GM_OK && st->offload; i++) {
        rc = gm_device_alloc(st->dev, GM_MEM_PINNED, (size_t)(L * block_layer_bytes(st, i)), &st->host_w[i]);
        if (rc == GM_OK && st->wp == GM_INT4)
            rc = gm_device_alloc(st->dev, GM_MEM_PINNED, (size_t)(L * block_layer_scale_bytes(st, i)), &st->host_ws[i]);
    }
    return rc;
}

/* --offload: every layer's weights written by the host, as the device
 * would have written them (int4: quantised a layer at a time). */
static gm_status fill_host_weights(block_state *st)
{
    for (int i = 0; i < N_WEIGHTS; i++) {
        uint64_t k = block_weight_in(st, i), n = block_weight_out(st, i);
        unsigned seed = BLOCK_SEED_WEIGHT + (unsigned)i;
        if (st->wp != GM_INT4) {
            for (size_t j = 0; j < (size_t)(st->layers * k * n); j++)
                gm_store(st->wp, st->host_w[i].host, j, gm_hashed_value(j, seed, st->w_range[i]),
                         st->w_range[i] / 128.0f);
            continue;
        }
        float *wf = malloc((size_t)(k * n) * sizeof *wf);
        if (!wf)
            return gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
        for (uint64_t l = 0; l < st->layers; l++) {
            for (size_t j = 0; j < (size_t)(k * n); j++)
                wf[j] = gm_hashed_value(l * k * n + j, seed, st->w_range[i]);
            gm_int4_quantize(wf, (size_t)k, (size_t)n, (size_t)st->group,
                             (uint8_t *)st->host_w[i].host + l * block_layer_bytes(st, i),
                             (uint16_t *)((char *)st->host_ws[i].host + l * block_layer_scale_bytes(st, i)));
        }
        free(wf);
    }
    return GM_OK;
}

/* Enqueues the copy of layer `layer`'s weights (and int4 scales) into its
 * slot on queue 1. */
static gm_status copy_layer(block_state *st, uint64_t layer)
{
    gm_status rc = GM_OK;
    for (int i = 0; i < N_WEIGHTS && rc == GM_OK; i++) {
        size_t bytes = (size_t)block_layer_bytes(st, i), sbytes = (size_t)block_layer_scale_bytes(st, i);
        rc = st->dev->backend->copy(st->dev, 1, &st->w[i], (size_t)(layer % 2) * bytes, &st->host_w[i],
                                    (size_t)layer * bytes, bytes, true);
        if (rc == GM_OK && sbytes)
            rc = st->dev->backend->copy(st->dev, 1, &st->ws[i], (size_t)(layer % 2) * sbytes, &st->host_ws[i],
                                        (size_t)layer * sbytes, sbytes, true);
    }
    st->loaded[layer % 2] = (int64_t)layer;
    return rc;
}

/* Every layer's weights: hashes stored in the weights' precision, or
 * quantised to int4 on the device a layer at a time (layer l's codes at
 * l * k * n / 2 bytes, its hashes from l * k * n, as block_init's). */
static gm_status init_weights(block_state *st)
{
    gm_status rc = GM_OK;
    for (int i = 0; i < N_WEIGHTS && rc == GM_OK; i++) {
        if (st->wp != GM_INT4) {
            rc = enqueue_init(st, &st->w[i], st->layers * block_weight_in(st, i) * block_weight_out(st, i), 0,
                              BLOCK_SEED_WEIGHT + (unsigned int)i, st->w_range[i], st->w_range[i] / 128.0f);
            continue;
        }
        uint64_t k = block_weight_in(st, i), n = block_weight_out(st, i);
        for (uint64_t l = 0; l < st->layers && rc == GM_OK; l++)
            rc = gm_int4_init_enqueue(st->dev, st->k_scales, st->k_pack, st->chunked, &st->w[i],
                                      l * block_layer_bytes(st, i), &st->ws[i], k, n, st->group, l * k * n,
                                      BLOCK_SEED_WEIGHT + (unsigned int)i, st->w_range[i]);
    }
    return rc;
}

gm_status block_weights_for(block_state *st, uint64_t layer)
{
    if (!st->offload || st->loaded[layer % 2] == (int64_t)layer)
        return GM_OK;
    gm_status rc = st->dev->backend->synchronize(st->dev, -1);
    if (rc == GM_OK)
        rc = copy_layer(st, layer);
    return rc == GM_OK ? st->dev->backend->synchronize(st->dev, 1) : rc;
}

gm_status block_setup_shape(gm_device *dev, gm_pattern *pat, const gm_shape *s, const char *impl, void **state)
{
    (void)impl;
    *state = NULL;
    if (s->heads * s->head_dim != s->hidden || s->head_dim > 256)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "hidden must be heads * head_dim, head_dim at most 256");
    uint64_t group = gm_group_size(s);
    if (gm_weight_prec(s) == GM_INT4 && (s->hidden % group || s->ffn % group || s->hidden % 2))
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "int4 weights: --hidden (%llu) and --ffn (%llu) must be "
                              "multiples of --group-size %llu, --hidden even", (unsigned long long)s->hidden,
                              (unsigned long long)s->ffn, (unsigned long long)group);
    if (s->micro_batch * s->seq * 3 * s->hidden > UINT32_MAX || s->micro_batch * s->heads > UINT32_MAX)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "a micro-batch's activations must fit 32-bit indices");
    block_state *st = calloc(1, sizeof *st);
    if (!st)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    st->dev = dev;
    st->s = *s;
    st->wp = gm_weight_prec(s);
    st->kp = gm_kv_prec(s);
    st->group = group;
    st->chunked = gm_device_prefers_chunked(dev);
    st->h = s->hidden;
    st->ffn = s->ffn;
    st->heads = s->heads;
    st->dim = s->head_dim;
    st->seq = s->seq;
    st->layers = s->layers;
    st->mb = s->micro_batch;
    st->tokens_max = st->mb * st->seq;
    st->offload = s->offload && s->layers > 2;
    st->loaded[0] = st->loaded[1] = -1;
    /* Weights uniform in [-2^-e, 2^-e) with 2^-e near 1/sqrt(fan-in): the
     * activations keep their scale from layer to layer. */
    for (int i = 0; i < N_WEIGHTS; i++)
        st->w_range[i] = ldexpf(1.0f, -(int)lround(0.5 * log2((double)block_weight_in(st, i))));
    gm_status rc = allocate(st, pat);
    if (rc == GM_OK)
        rc = build(st);
    if (rc == GM_OK)
        rc = st->offload ? fill_host_weights(st) : init_weights(st);
    if (rc == GM_OK)
        rc = dev->backend->synchronize(dev, 0);
    if (rc != GM_OK) {
        gm_error saved = dev->err;
        block_teardown_shape(st);
        dev->err = saved;
        return rc;
    }
    *state = st;
    return GM_OK;
}

static gm_status linear(block_state *st, int w, uint64_t layer, uint64_t m, const gm_buffer *x, uint64_t x_off,
                        const gm_buffer *y, uint64_t y_off, const gm_buffer *r, uint64_t r_off, unsigned int epilogue)
{
    uint64_t k = block_weight_in(st, w), n = block_weight_out(st, w);
    uint64_t slot = st->offload ? layer % 2 : layer;
    /* w_off in gm_w_t elements: bytes for int4 (its scales follow, gm_portable.h). */
    uint64_t w_off = slot * (st->wp == GM_INT4 ? block_layer_bytes(st, w) : k * n);
    gm_linear_call c = {x, &st->w[w], y, r, m, n, k, BLOCK_ACT_SCALE, st->w_range[w] / 128.0f, BLOCK_ACT_SCALE,
                        BLOCK_ACT_SCALE, x_off, w_off, y_off, r_off, epilogue};
    if (st->wp == GM_INT4)
        return gm_linear_enqueue_int4(st->dev, 0, st->k_linear, st->chunked, &c, &st->ws[w], (unsigned int)st->group);
    return gm_linear_enqueue(st->dev, 0, st->k_linear, st->chunked, &c);
}

gm_status block_enqueue_layer(block_state *st, uint64_t layer, uint64_t slot, uint64_t b0, uint64_t nb, bool full)
{
    const uint64_t T = nb * st->seq, Tm = st->tokens_max, h = st->h;
    const uint64_t x_off = layer * Tm * h, next_off = (layer + 1) * Tm * h;
    uint64_t off[N_ACTS];
    for (int a = 0; a < N_ACTS; a++)
        off[a] = slot * Tm * block_act_width(st, a);
    const uint64_t k_off = (2 * layer * st->s.batch + b0) * st->seq * h;
    const uint64_t v_off = ((2 * layer + 1) * st->s.batch + b0) * st->seq * h;
    gm_status rc = linear(st, W_QKV, layer, T, &st->inputs, x_off, &st->act[A_QKV], off[A_QKV], NULL, 0,
                          GM_LINEAR_PLAIN);
    /* K (part 0) and V of qkv's rows into the cache, in its precision. */
    for (int part = 0; part < 2 && rc == GM_OK && full; part++)
        rc = gm_kv_store_enqueue(st->dev, st->k_kv, st->chunked, &st->act[A_QKV], &st->kv, T, (unsigned int)h, 3 * h,
                                 off[A_QKV] + (uint64_t)(part + 1) * h, part ? v_off : k_off, BLOCK_ACT_SCALE);
    if (rc == GM_OK) {
        gm_attention_call c = {&st->act[A_QKV], &st->kv, &st->kv, &st->act[A_ATTN], &st->stats,
                               (unsigned int)(nb * st->heads), (unsigned int)st->seq, (unsigned int)st->dim,
                               st->s.causal, (unsigned int)st->heads, BLOCK_ACT_SCALE, BLOCK_ACT_SCALE,
                               st->seq * 3 * h, 3 * h, st->seq * h, h, st->seq * h, h,
                               off[A_QKV], k_off, v_off, off[A_ATTN], 1};
        rc = gm_attention_enqueue(st->dev, st->k_attn, st->chunked, &c);
    }
    if (rc == GM_OK)
        rc = linear(st, W_O, layer, T, &st->act[A_ATTN], off[A_ATTN], &st->act[A_RESID], off[A_RESID], &st->inputs,
                    x_off, GM_LINEAR_RESIDUAL);
    if (rc == GM_OK)
        rc = linear(st, W_UP, layer, T, &st->act[A_RESID], off[A_RESID], &st->act[A_MLP], off[A_MLP], NULL, 0,
                    GM_LINEAR_GELU);
    if (rc == GM_OK && full)
        rc = linear(st, W_DOWN, layer, T, &st->act[A_MLP], off[A_MLP], &st->inputs, next_off, &st->act[A_RESID],
                    off[A_RESID], GM_LINEAR_RESIDUAL);
    return rc;
}

/* The layers one iteration visits, in order: per micro-batch the forward
 * pass, then with --checkpoint the recomputation from the last layer down.
 * Calls visit(st, layer, slot, b0, nb, full, next) for each, `next` the
 * layer visited after it (-1 at the end); with_inputs: each micro-batch's
 * input is written first. */
typedef gm_status (*visit_fn)(block_state *st, uint64_t layer, uint64_t slot, uint64_t b0, uint64_t nb, bool full,
                              int64_t next);

static gm_status each_visit(block_state *st, visit_fn visit, bool with_inputs)
{
    uint64_t L = st->layers, per_mb = st->s.checkpoint ? 2 * L : L, slots = st->s.checkpoint ? 1 : L;
    uint64_t n_mb = (st->s.batch + st->mb - 1) / st->mb;
    gm_status rc = GM_OK;
    for (uint64_t v = 0; v < n_mb * per_mb && rc == GM_OK; v++) {
        uint64_t mb = v / per_mb, i = v % per_mb, b0 = mb * st->mb;
        uint64_t nb = st->s.batch - b0 < st->mb ? st->s.batch - b0 : st->mb;
        uint64_t layer = i < L ? i : 2 * L - 1 - i;
        uint64_t w = v + 1, next_i = w % per_mb;
        int64_t next = w < n_mb * per_mb ? (int64_t)(next_i < L ? next_i : 2 * L - 1 - next_i) : -1;
        if (i == 0 && with_inputs)
            rc = enqueue_init(st, &st->inputs, nb * st->seq * st->h, b0 * st->seq * st->h, BLOCK_SEED_INPUT, 1.0f,
                              BLOCK_ACT_SCALE);
        if (rc == GM_OK)
            rc = visit(st, layer, i < L ? layer % slots : 0, b0, nb, i < L, next);
        st->last_b0 = b0;
        st->last_nb = nb;
    }
    return rc;
}

static gm_status compute_visit(block_state *st, uint64_t layer, uint64_t slot, uint64_t b0, uint64_t nb, bool full,
                               int64_t next)
{
    if (st->offload) {
        /* This layer's weights in: its copy was issued a visit ago. */
        gm_status rc = GM_OK;
        if (st->loaded[layer % 2] != (int64_t)layer) {
            rc = st->dev->backend->synchronize(st->dev, 0);
            if (rc == GM_OK)
                rc = copy_layer(st, layer);
        }
        if (rc == GM_OK)
            rc = st->dev->backend->synchronize(st->dev, 1);
        /* The next layer's, into the other slot, once the visit that used
         * that slot is done: it copies while this one computes. */
        if (rc == GM_OK && next >= 0 && next % 2 != (int64_t)(layer % 2) && st->loaded[next % 2] != next) {
            rc = st->dev->backend->synchronize(st->dev, 0);
            if (rc == GM_OK)
                rc = copy_layer(st, (uint64_t)next);
        }
        if (rc != GM_OK)
            return rc;
    }
    return block_enqueue_layer(st, layer, slot, b0, nb, full);
}

gm_status block_enqueue_shape(void *state)
{
    block_state *st = state;
    gm_status rc = each_visit(st, compute_visit, true);
    /* Queue 0's end event must follow the last weight copy too. */
    return rc == GM_OK && st->offload ? st->dev->backend->synchronize(st->dev, 1) : rc;
}

static gm_status copy_visit(block_state *st, uint64_t layer, uint64_t slot, uint64_t b0, uint64_t nb, bool full,
                            int64_t next)
{
    (void)slot, (void)b0, (void)nb, (void)full, (void)next;
    return st->loaded[layer % 2] == (int64_t)layer ? GM_OK : copy_layer(st, layer);
}

gm_status block_stream_weights(block_state *st)
{
    if (!st->offload)
        return GM_OK;
    gm_status rc = st->dev->backend->synchronize(st->dev, -1);
    if (rc == GM_OK)
        rc = each_visit(st, copy_visit, false);
    return rc == GM_OK ? st->dev->backend->synchronize(st->dev, 1) : rc;
}

/* Strikes any element of the last layer's output for the last micro-batch
 * (which the check reads first), flipping a bit the check must see. */
gm_status block_corrupt_shape(void *state, const gm_output_fault *f, unsigned rep)
{
    block_state *st = state;
    size_t es = gm_precision_size(st->s.prec);
    unsigned low, high;
    gm_output_fault_visible_bits(st->s.prec, &low, &high);
    return gm_output_fault_strike_bits(f, st->dev, &st->inputs, (size_t)(st->layers * st->tokens_max * st->h) * es,
                                       (size_t)(st->last_nb * st->seq * st->h), es,
                                       gm_output_fault_salt("block output"), rep, low, high, NULL);
}

void block_work_shape(const gm_shape *s, double *flops, double *bytes, double *tokens)
{
    double h = (double)s->hidden, f = (double)s->ffn, n = (double)s->seq, L = (double)s->layers;
    double T = (double)s->batch * n, es = (double)gm_precision_size(s->prec);
    double kes = (double)gm_precision_size(gm_kv_prec(s));
    /* A layer's weights as stored: int4 codes half a byte each, one fp16
     * scale per group of rows. */
    double wes = gm_weight_prec(s) == GM_INT4 ? 0.5 + 2.0 / (double)gm_group_size(s)
                                              : (double)gm_precision_size(gm_weight_prec(s));
    double pairs = s->causal ? (n + 1) / 2 : n;                      /* keys per query */
    double proj = 2.0 * T * (4 * h * h + 2 * h * f), attn = 4.0 * T * pairs * h;
    double recompute = s->checkpoint ? 2.0 * T * (4 * h * h + h * f) + attn : 0.0;
    *flops = L * (proj + attn + recompute);
    double micro_batches = ceil((double)s->batch / (double)(s->micro_batch ? s->micro_batch : s->batch));
    double passes = s->checkpoint ? 2.0 : 1.0;
    /* Weights read once per pass of each micro-batch, activations written
     * once, K and V read by every query. */
    *bytes = L * (wes * micro_batches * passes * (4 * h * h + 2 * h * f) + es * T * (6 * h + f)
                  + kes * T * pairs * 2 * h);
    *tokens = T;
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
int block_tensors_shape(const gm_shape *s, gm_tensor *out)
{
    gm_tensor_list l = {out, 0, false};
    uint64_t es = gm_precision_size(s->prec), h = s->hidden, L = s->layers;
    uint64_t tokens = gm_tensor_mul(&l, s->micro_batch, s->seq);
    uint64_t wl = s->offload && L > 2 ? 2 : L;    /* layers of weights on the device */
    gm_precision wp = gm_weight_prec(s);
    for (int i = 0; i < N_WEIGHTS; i++) {
        uint64_t k = block_weight_in_of(h, s->ffn, i), n = block_weight_out_of(h, s->ffn, i);
        if (wp != GM_INT4) {
            gm_tensor_list_add(&l, block_weight_name(i), GM_ROLE_WEIGHT, gm_tensor_mul(&l, wl, gm_tensor_mul(&l, k, n)),
                               gm_precision_size(wp));
            continue;
        }
        /* Each layer's codes, k * n / 2 bytes, then its fp16 scales. */
        uint64_t packed = gm_int4_packed_bytes(k, n), scales = gm_int4_scale_bytes(k, n, gm_group_size(s));
        l.overflow |= packed == UINT64_MAX || scales == UINT64_MAX;
        char name[32];
        snprintf(name, sizeof name, "%s_scales", block_weight_name(i));
        gm_tensor_list_add(&l, block_weight_name(i), GM_ROLE_WEIGHT, gm_tensor_mul(&l, wl, packed), 1);
        gm_tensor_list_add(&l, name, GM_ROLE_WEIGHT, gm_tensor_mul(&l, wl, scales), 1);
    }
    uint64_t kv = gm_tensor_mul(&l, 2 * L, gm_tensor_mul(&l, gm_tensor_mul(&l, s->batch, s->seq), h));
    gm_tensor_list_add(&l, "kv_cache", GM_ROLE_KV_CACHE, kv, gm_precision_size(gm_kv_prec(s)));
    gm_tensor_list_add(&l, "block_inputs", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, L + 1, gm_tensor_mul(&l, tokens, h)), es);
    uint64_t kept = s->checkpoint ? 1 : L;     /* layers whose activations are held */
    const char *scope = s->checkpoint ? "recompute_" : "";
    gm_tensor_role role = s->checkpoint ? GM_ROLE_WORKSPACE : GM_ROLE_ACTIVATION;
    static const char *const parts[] = {"qkv", "attn_out", "attn_resid", "mlp_hidden"};
    const uint64_t widths[] = {3 * h, h, h, s->ffn};
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s%s", scope, parts[i]);
        gm_tensor_list_add(&l, name, role, gm_tensor_mul(&l, kept, gm_tensor_mul(&l, tokens, widths[i])), es);
    }
    uint64_t rows = gm_tensor_mul(&l, gm_tensor_mul(&l, s->micro_batch, s->heads), s->seq);
    gm_tensor_list_add(&l, "attn_stats", GM_ROLE_WORKSPACE, gm_tensor_mul(&l, rows, 2), 4);
    return gm_tensor_list_finish(&l);
}
