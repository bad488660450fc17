/*
 * The block workload's CPU reference. After an iteration it checks, for
 * the last micro-batch, every stage of the layers it samples (all when
 * there are at most four) on a set of token rows (all while the host work
 * stays under a budget, else the first and last token and a seeded
 * sample): each stage against a double-precision recomputation from the
 * device's own inputs to that stage, and the KV cache bit for bit against
 * qkv (converted to the cache's precision). With --checkpoint a layer's
 * activations are recomputed on the device first (untimed). The KV cache
 * of earlier micro-batches is checked at layer 0, from the reproducible
 * input. int4 weights: each checked layer's codes and scales are read
 * back and checked against the host's quantisation of the same hashes
 * (block_int4_matches), then the products use them.
 *
 * The block's output (the last layer's, block_inputs [layers]) is checked
 * whole besides: the last layer's down projection and residual,
 * output = resid + mlp W_down, through row and column checksums
 * (check_output_sums, bench/workloads/product_check.h) against the
 * device's mlp and resid, so that a wrong element anywhere in the output
 * is found whatever the token rows sampled; the stages before it are
 * checked on the sampled rows only (a wrong activation on a row not
 * sampled flows on into the output consistently, and is not found).
 */
#include "bench/workloads/block_private.h"
#include "bench/workloads/product_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_BUDGET 4e7        /* multiply-adds of reference work per check */
#define MAX_CHECKED_LAYERS 4
#define MAX_EARLIER_BATCHES 8

typedef struct {
    block_state *st;
    gm_buffer stage;            /* host staging for one read */
    float *x, *qkv, *attn, *resid, *mlp, *next, *k, *v;    /* rows as float */
    double *want, *mag;
    /* int4: one layer of each weight as the device holds it (checked). */
    gm_buffer codes[N_WEIGHTS], scales[N_WEIGHTS];
    int64_t int4_layer[N_WEIGHTS];
    char *note;
    size_t note_len;
} checker;

/* int4: reads layer `layer` of weight w back (from the host copy with
 * --offload) and checks it against the host's quantisation. */
static gm_status load_int4(checker *c, int w, uint64_t layer, bool *ok)
{
    block_state *st = c->st;
    if (c->int4_layer[w] == (int64_t)layer)
        return GM_OK;
    size_t bytes = (size_t)block_layer_bytes(st, w), sbytes = (size_t)block_layer_scale_bytes(st, w);
    const gm_buffer *src = st->offload ? &st->host_w[w] : &st->w[w];
    const gm_buffer *ssrc = st->offload ? &st->host_ws[w] : &st->ws[w];
    gm_status rc = st->dev->backend->copy(st->dev, 0, &c->codes[w], 0, src, (size_t)layer * bytes, bytes, false);
    if (rc == GM_OK)
        rc = st->dev->backend->copy(st->dev, 0, &c->scales[w], 0, ssrc, (size_t)layer * sbytes, sbytes, false);
    if (rc != GM_OK)
        return rc;
    char what[48];
    snprintf(what, sizeof what, "layer %llu %s", (unsigned long long)layer, block_weight_name(w));
    uint64_t k = block_weight_in(st, w), n = block_weight_out(st, w);
    *ok = block_int4_matches(c->codes[w].host, c->scales[w].host, k, n, st->group, layer * k * n,
                             BLOCK_SEED_WEIGHT + (unsigned)w, st->w_range[w], 0x243f6a8885a308d3ull ^ layer, what,
                             c->note, c->note_len);
    c->int4_layer[w] = *ok ? (int64_t)layer : -1;
    return GM_OK;
}

/* Weight kk, j of layer `layer` of w as the device holds it (int8 clamps
 * the hash's -128 to -127; int4: the codes load_int4 read). */
static float weight(const checker *c, int w, uint64_t layer, uint64_t kk, uint64_t j)
{
    const block_state *st = c->st;
    uint64_t k = block_weight_in(st, w), n = block_weight_out(st, w);
    if (st->wp == GM_INT4)
        return gm_int4_load(c->codes[w].host, c->scales[w].host, (size_t)n, (size_t)st->group, (size_t)kk, (size_t)j);
    unsigned char tmp[4];
    float scale = st->w_range[w] / 128.0f;
    gm_store(st->wp, tmp, 0, gm_hashed_value((layer * k + kk) * n + j, BLOCK_SEED_WEIGHT + (unsigned)w, st->w_range[w]),
             scale);
    return gm_load(st->wp, tmp, 0, scale);
}

static double stored(gm_precision p, double v)
{
    unsigned char tmp[4];
    gm_store(p, tmp, 0, (float)v, BLOCK_ACT_SCALE);
    return gm_load(p, tmp, 0, BLOCK_ACT_SCALE);
}

/* Reads n elements of buf (in precision p) from element `at` into out (as float). */
static gm_status read_row(checker *c, gm_buffer *buf, gm_precision p, uint64_t at, uint64_t n, float *out)
{
    block_state *st = c->st;
    size_t es = gm_precision_size(p);
    gm_status rc = st->dev->backend->copy(st->dev, 0, &c->stage, 0, buf, (size_t)(at * es), (size_t)(n * es), false);
    for (uint64_t i = 0; rc == GM_OK && i < n; i++)
        out[i] = gm_load(p, c->stage.host, (size_t)i, BLOCK_ACT_SCALE);
    return rc;
}

/* want[j] = sum_k in[k] * W[layer][k][j], mag[j] = sum |in[k] * W|. */
static void product(const checker *c, int w, uint64_t layer, const float *in, double *want, double *mag)
{
    uint64_t k = block_weight_in(c->st, w), n = block_weight_out(c->st, w);
    for (uint64_t j = 0; j < n; j++)
        want[j] = mag[j] = 0.0;
    for (uint64_t kk = 0; kk < k; kk++)
        for (uint64_t j = 0; j < n; j++) {
            double p = (double)in[kk] * weight(c, w, layer, kk, j);
            want[j] += p;
            mag[j] += fabs(p);
        }
}

static double gelu(double v) { return 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v))); }

/*
 * Compares got[j] with the stored want[j] (+ residual[j]) over n outputs.
 * The bound: fp32 accumulation of k products in any order, gamma_k * sum
 * |x w| with gamma_k = 1.2 k 2^-23 (dequantised int4 and fp8 weights are
 * exact in fp32), plus the output's rounding on either side, 2 *
 * gm_tolerance(p) (2 ulp: unit roundoff u = 2^-23 fp32, 2^-10 fp16, 2^-7
 * bf16, 2^-3 fp8e4m3, 2^-2 fp8e5m2 at the result's magnitude, the
 * subnormal spacing below the least normal; the int8 step). `kv`: the
 * value went on into the KV cache (kp), rounded there a second time:
 * that format's 2 * gm_tolerance(kp) more.
 */
static bool compare(checker *c, const char *what, uint64_t layer, uint64_t t, const float *got, const float *residual,
                    bool apply_gelu, uint64_t n, uint64_t k, bool kv)
{
    gm_precision p = c->st->s.prec, kp = c->st->kp;
    for (uint64_t j = 0; j < n; j++) {
        double pre = c->want[j] + (residual ? residual[j] : 0.0);
        double mag = c->mag[j] + (residual ? fabs(residual[j]) : 0.0);
        double want = stored(p, apply_gelu ? gelu(pre) : pre);
        double tol = 2.0 * gm_tolerance(p, want, BLOCK_ACT_SCALE) + 1.2 * (double)k * 0x1p-23 * mag
                     + (apply_gelu ? 1e-6 * fabs(pre) : 0.0);
        if (kv) {
            want = stored(kp, want);
            tol += 2.0 * gm_tolerance(kp, want, BLOCK_ACT_SCALE);
        }
        if (!(fabs(got[j] - want) <= tol)) {
            snprintf(c->note, c->note_len, "layer %llu %s[%llu][%llu]: expected %.7g, got %.7g",
                     (unsigned long long)layer, what, (unsigned long long)t, (unsigned long long)j, want,
                     (double)got[j]);
            return false;
        }
    }
    return true;
}

/* Attention of token t's queries over keys 0..last of its sequence. */
static bool check_attention(checker *c, uint64_t layer, uint64_t t)
{
    block_state *st = c->st;
    gm_precision p = st->s.prec;
    uint64_t h = st->h, D = st->dim, i = t % st->seq, last = st->s.causal ? i + 1 : st->seq;
    double *w = c->want;      /* scores, at least seq long */
    for (uint64_t hh = 0; hh < st->heads; hh++) {
        double m = -INFINITY, l = 0.0, vmax = 0.0;
        for (uint64_t j = 0; j < last; j++) {
            double s = 0.0;
            for (uint64_t d = 0; d < D; d++)
                s += (double)c->qkv[hh * D + d] * c->k[j * h + hh * D + d];
            w[j] = s / sqrt((double)D);
            m = fmax(m, w[j]);
        }
        for (uint64_t j = 0; j < last; j++)
            l += w[j] = exp(w[j] - m);
        for (uint64_t d = 0; d < D; d++) {
            double want = 0.0;
            for (uint64_t j = 0; j < last; j++) {
                want += w[j] / l * c->v[j * h + hh * D + d];
                vmax = fmax(vmax, fabs(c->v[j * h + hh * D + d]));
            }
            want = stored(p, want);
            double got = c->attn[hh * D + d];
            /* The output's rounding (2 * gm_tolerance, as compare), and the
             * fp32 softmax-weighted sum of `last` values. */
            double tol = 2.0 * gm_tolerance(p, want, BLOCK_ACT_SCALE) + 1e-5 * (1.0 + sqrt((double)last)) * vmax;
            if (!(fabs(got - want) <= tol)) {
                snprintf(c->note, c->note_len, "layer %llu attn[%llu][%llu]: expected %.7g, got %.7g",
                         (unsigned long long)layer, (unsigned long long)t, (unsigned long long)(hh * D + d), want,
                         got);
                return false;
            }
        }
    }
    return true;
}

/* Every stage of `layer` at token row t of the last micro-batch. */
static gm_status check_token(checker *c, uint64_t layer, uint64_t t, bool *ok)
{
    block_state *st = c->st;
    uint64_t h = st->h, Tm = st->tokens_max, slot = st->s.checkpoint ? 0 : layer;
    uint64_t b = t / st->seq, i = t % st->seq;
    uint64_t k_at = (2 * layer * st->s.batch + st->last_b0 + b) * st->seq * h;
    uint64_t v_at = ((2 * layer + 1) * st->s.batch + st->last_b0 + b) * st->seq * h;
    gm_precision p = st->s.prec;
    gm_status rc = read_row(c, &st->inputs, p, (layer * Tm + t) * h, h, c->x);
    if (rc == GM_OK)
        rc = read_row(c, &st->act[A_QKV], p, (slot * Tm + t) * 3 * h, 3 * h, c->qkv);
    if (rc == GM_OK)
        rc = read_row(c, &st->act[A_ATTN], p, (slot * Tm + t) * h, h, c->attn);
    if (rc == GM_OK)
        rc = read_row(c, &st->act[A_RESID], p, (slot * Tm + t) * h, h, c->resid);
    if (rc == GM_OK)
        rc = read_row(c, &st->act[A_MLP], p, (slot * Tm + t) * st->ffn, st->ffn, c->mlp);
    if (rc == GM_OK)
        rc = read_row(c, &st->inputs, p, ((layer + 1) * Tm + t) * h, h, c->next);
    if (rc == GM_OK)
        rc = read_row(c, &st->kv, st->kp, k_at, st->seq * h, c->k);
    if (rc == GM_OK)
        rc = read_row(c, &st->kv, st->kp, v_at, st->seq * h, c->v);
    for (int w = 0; w < N_WEIGHTS && rc == GM_OK && *ok && st->wp == GM_INT4; w++)
        rc = load_int4(c, w, layer, ok);
    if (rc != GM_OK || !*ok)
        return rc;
    product(c, W_QKV, layer, c->x, c->want, c->mag);
    *ok = compare(c, "qkv", layer, t, c->qkv, NULL, false, 3 * h, h, false);
    /* The cache holds qkv's K and V converted to its precision, bit for bit. */
    for (uint64_t d = 0; d < h && *ok; d++)
        if (c->k[i * h + d] != (float)stored(st->kp, c->qkv[h + d])
            || c->v[i * h + d] != (float)stored(st->kp, c->qkv[2 * h + d])) {
            snprintf(c->note, c->note_len, "layer %llu kv_cache[%llu][%llu] is not qkv's value in %s",
                     (unsigned long long)layer, (unsigned long long)t, (unsigned long long)d,
                     gm_precision_name(st->kp));
            *ok = false;
        }
    *ok = *ok && check_attention(c, layer, t);
    if (*ok) {
        product(c, W_O, layer, c->attn, c->want, c->mag);
        *ok = compare(c, "attn_resid", layer, t, c->resid, c->x, false, h, h, false);
    }
    if (*ok) {
        product(c, W_UP, layer, c->resid, c->want, c->mag);
        *ok = compare(c, "mlp_hidden", layer, t, c->mlp, NULL, true, st->ffn, h, false);
    }
    if (*ok) {
        product(c, W_DOWN, layer, c->mlp, c->want, c->mag);
        *ok = compare(c, "block_output", layer, t, c->next, c->resid, false, h, st->ffn, false);
    }
    return GM_OK;
}

/* Layer 0's K and V of one token of an earlier micro-batch, from the input. */
static gm_status check_earlier(checker *c, uint64_t b, uint64_t i, bool *ok)
{
    block_state *st = c->st;
    uint64_t h = st->h;
    for (uint64_t k = 0; k < h; k++)
        c->x[k] = (float)stored(st->s.prec, gm_hashed_value((b * st->seq + i) * h + k, BLOCK_SEED_INPUT, 1.0f));
    gm_status rc = read_row(c, &st->kv, st->kp, (b * st->seq + i) * h, h, c->k);
    if (rc == GM_OK)
        rc = read_row(c, &st->kv, st->kp, ((st->s.batch + b) * st->seq + i) * h, h, c->v);
    for (int w = 0; w < N_WEIGHTS && rc == GM_OK && *ok && st->wp == GM_INT4; w++)
        rc = load_int4(c, w, 0, ok);
    if (rc != GM_OK || !*ok)
        return rc;
    product(c, W_QKV, 0, c->x, c->want, c->mag);
    memmove(c->want, c->want + h, 2 * h * sizeof *c->want);
    memmove(c->mag, c->mag + h, 2 * h * sizeof *c->mag);
    *ok = compare(c, "k_cache", 0, b * st->seq + i, c->k, NULL, false, h, h, true);
    if (*ok) {
        memmove(c->want, c->want + h, h * sizeof *c->want);
        memmove(c->mag, c->mag + h, h * sizeof *c->mag);
        *ok = compare(c, "v_cache", 0, b * st->seq + i, c->v, NULL, false, h, h, true);
    }
    return GM_OK;
}

static gm_status check_layer(checker *c, uint64_t layer, unsigned rep, bool *ok)
{
    block_state *st = c->st;
    gm_status rc = GM_OK;
    if (st->s.checkpoint) {
        rc = block_weights_for(st, layer);
        if (rc == GM_OK)
            rc = block_enqueue_layer(st, layer, 0, st->last_b0, st->last_nb, false);
        if (rc == GM_OK)
            rc = st->dev->backend->synchronize(st->dev, 0);
    }
    uint64_t T = st->last_nb * st->seq, h = st->h;
    double cost = 2.0 * (double)h * (4.0 * (double)h + 2.0 * (double)st->ffn) + 2.0 * (double)st->seq * (double)h;
    uint64_t rows = (uint64_t)(HOST_BUDGET / MAX_CHECKED_LAYERS / cost);
    rows = rows < 2 ? 2 : rows;
    if (rows >= T) {
        for (uint64_t t = 0; t < T && rc == GM_OK && *ok; t++)
            rc = check_token(c, layer, t, ok);
        return rc;
    }
    uint64_t x = 0x2545f4914f6cdd1dull ^ ((uint64_t)rep << 16) ^ layer;
    for (uint64_t r = 0; r < rows && rc == GM_OK && *ok; r++)
        rc = check_token(c, layer, r == 0 ? 0 : r == 1 ? T - 1 : gm_xorshift(&x) % T, ok);
    return rc;
}

/*
 * Rows of one activation (or the output) of the last micro-batch, read
 * from the device a window of rows at a time, as the checksums ask for
 * them in order.
 */
typedef struct {
    gm_buffer *buf;
    gm_precision p;
    uint64_t base, width;       /* element offset of row 0; elements a row */
    uint64_t first, count, cap; /* the rows held: [first, first + count); at most cap */
    float *rows;
} row_window;

typedef struct {
    checker *c;
    uint64_t layer, T;
    row_window mlp, resid, out;
    gm_status rc;               /* the first read that failed */
} output_sums;

static const float *window_row(output_sums *o, row_window *w, uint64_t i)
{
    if (i < w->first || i >= w->first + w->count) {
        block_state *st = o->c->st;
        uint64_t n = o->T - i < w->cap ? o->T - i : w->cap;
        size_t es = gm_precision_size(w->p);
        gm_status rc = block_read_floats(st->dev, &o->c->stage, o->c->stage.bytes, w->buf, w->base, i * w->width,
                                         n * w->width, es, w->p, BLOCK_ACT_SCALE, w->rows);
        if (rc != GM_OK && o->rc == GM_OK)
            o->rc = rc;
        w->first = i;
        w->count = rc == GM_OK ? n : 0;
        if (rc != GM_OK)
            return NULL;
    }
    return w->rows + (i - w->first) * w->width;
}

/* Row i of w as doubles (zeros where the read failed: o->rc says so). */
static void window_row_doubles(output_sums *o, row_window *w, uint64_t i, double *row)
{
    const float *x = window_row(o, w, i);
    for (uint64_t j = 0; j < w->width; j++)
        row[j] = x ? x[j] : 0.0;
}

static void sums_a(const void *ctx, size_t i, double *row)
{
    output_sums *o = (output_sums *)ctx;
    window_row_doubles(o, &o->mlp, i, row);
}

static void sums_b(const void *ctx, size_t kk, double *row)
{
    const output_sums *o = ctx;
    for (uint64_t j = 0; j < o->c->st->h; j++)
        row[j] = weight(o->c, W_DOWN, o->layer, kk, j);
}

static void sums_c(const void *ctx, size_t i, double *row)
{
    output_sums *o = (output_sums *)ctx;
    window_row_doubles(o, &o->out, i, row);
}

static void sums_r(const void *ctx, size_t i, double *row)
{
    output_sums *o = (output_sums *)ctx;
    window_row_doubles(o, &o->resid, i, row);
}

/* Output element (i, j) against its own product (resid + mlp W_down, in
 * double), within compare()'s bound: *want and *tol; false when a read failed. */
static bool output_element(output_sums *o, uint64_t i, uint64_t j, double *want, double *tol)
{
    const float *a = window_row(o, &o->mlp, i), *r = window_row(o, &o->resid, i);
    if (!a || !r)
        return false;
    double sum = r[j], mag = fabs(r[j]);
    for (uint64_t kk = 0; kk < o->mlp.width; kk++) {
        double pr = (double)a[kk] * weight(o->c, W_DOWN, o->layer, kk, j);
        sum += pr;
        mag += fabs(pr);
    }
    gm_precision p = o->c->st->s.prec;
    *want = stored(p, sum);
    *tol = 2.0 * gm_tolerance(p, *want, BLOCK_ACT_SCALE) + 1.2 * (double)o->mlp.width * 0x1p-23 * mag;
    return true;
}

/* int8: a code saturated at +-127 may stand for any sum beyond it; it is
 * checked against its own product, its bound then its distance from the
 * product plus the sum's and half a step (NaN where that check fails). */
static double sums_saturated(const void *ctx, size_t i, size_t j, double c)
{
    output_sums *o = (output_sums *)ctx;
    double want, tol;
    if (!output_element(o, i, j, &want, &tol) || !(fabs(c - want) <= tol))
        return NAN;
    return fabs(c - want) + tol;
}

/*
 * The block's output whole: the last layer's output = resid + mlp W_down
 * over the last micro-batch's rows, through row and column checksums of
 * the product (product_check.h, the residual as its r_row). Bounds: the
 * output's rounding (half gm_tolerance, as the linear workload's
 * checksums; int8 half a step, saturated codes on their own), fp32
 * accumulation of ffn terms in any order and the residual's addition
 * (u_acc 1.2 * 2^-24: compare()'s 1.2 k 2^-23 for the sum, and 1.2 2^-24
 * |resid| for the addition). Where a sum fails, the rows and column it
 * points to are checked element by element (output_element) and the note
 * names the first wrong element, block_output[t][j] of the last layer,
 * with the checksums' finding.
 */
static gm_status check_output_sums(checker *c, bool *ok)
{
    block_state *st = c->st;
    uint64_t L = st->layers, layer = L - 1, T = st->last_nb * st->seq, h = st->h, ffn = st->ffn;
    uint64_t slot = st->s.checkpoint ? 0 : layer, Tm = st->tokens_max;
    gm_precision p = st->s.prec;
    uint64_t cap_h = (1u << 18) / h ? (1u << 18) / h : 1, cap_f = (1u << 18) / ffn ? (1u << 18) / ffn : 1;
    output_sums o = {.c = c, .layer = layer, .T = T,
                     .mlp = {&st->act[A_MLP], p, slot * Tm * ffn, ffn, 0, 0, cap_f, NULL},
                     .resid = {&st->act[A_RESID], p, slot * Tm * h, h, 0, 0, cap_h, NULL},
                     .out = {&st->inputs, p, L * Tm * h, h, 0, 0, cap_h, NULL}};
    o.mlp.rows = malloc((size_t)(cap_f * ffn) * sizeof(float));
    o.resid.rows = malloc((size_t)(cap_h * h) * sizeof(float));
    o.out.rows = malloc((size_t)(cap_h * h) * sizeof(float));
    gm_status rc = GM_OK;
    if (!o.mlp.rows || !o.resid.rows || !o.out.rows)
        rc = gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    if (rc == GM_OK && st->wp == GM_INT4)
        rc = load_int4(c, W_DOWN, layer, ok);
    gm_product_sums ps = {.m = (size_t)T, .n = (size_t)h, .k = (size_t)ffn, .ctx = &o, .a_row = sums_a,
                          .b_row = sums_b, .c_row = sums_c, .r_row = sums_r, .u_acc = 1.2 * 0x1p-24, .name = "block output"};
    if (p == GM_INT8) {
        ps.out_abs = 0.5 * gm_tolerance(p, 0.0, BLOCK_ACT_SCALE);
        ps.sat = 126.5 * (double)BLOCK_ACT_SCALE;
        ps.saturated = sums_saturated;
    } else {
        ps.u_out = 0.5 * gm_tolerance(p, 1.0, BLOCK_ACT_SCALE);
        ps.out_abs = 0.5 * gm_tolerance(p, 0.0, BLOCK_ACT_SCALE);
    }
    ps.group = gm_product_group(ps.m, ps.k, ps.n, ps.u_out, p == GM_INT8);
    gm_product_expect e = {0};
    int verdict = 1;
    char sums_note[256] = "";
    gm_product_where where = {0};
    if (rc == GM_OK && *ok && gm_product_expect_init(&e, &ps) != 0)
        rc = gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory for the output's checksums");
    if (rc == GM_OK && *ok && o.rc == GM_OK)
        verdict = gm_product_sums_check_at(&ps, &e, sums_note, sizeof sums_note, &where);
    if (rc == GM_OK)
        rc = o.rc;
    if (rc == GM_OK && verdict < 0)
        rc = gm_device_fail(st->dev, GM_ERR_OOM, 0, "%s", sums_note);
    if (rc == GM_OK && verdict == 0) {
        *ok = false;
        snprintf(c->note, c->note_len, "%.250s", sums_note);
        /* The element the failing sums point to. */
        bool found = false;
        for (uint64_t i = where.row_first; i <= where.row_last && !found && o.rc == GM_OK; i++)
            for (uint64_t j = where.col < h ? where.col : 0; j < (where.col < h ? where.col + 1 : h) && !found; j++) {
                const float *y = window_row(&o, &o.out, i);
                double want, tol;
                if (y && output_element(&o, i, j, &want, &tol) && !(fabs(y[j] - want) <= tol)) {
                    snprintf(c->note, c->note_len, "layer %llu block_output[%llu][%llu]: expected %.7g, got %.7g "
                             "(found by the output's checksums: %.250s)",
                             (unsigned long long)layer, (unsigned long long)i, (unsigned long long)j, want,
                             (double)y[j], sums_note);
                    found = true;
                }
            }
        rc = o.rc;
    }
    gm_product_expect_release(&e);
    free(o.mlp.rows);
    free(o.resid.rows);
    free(o.out.rows);
    return rc;
}

gm_status block_verify(void *state, unsigned rep, bool *correct, char *note, size_t len)
{
    block_state *st = state;
    uint64_t h = st->h, widest = st->seq * h > 3 * h ? st->seq * h : 3 * h;
    widest = widest > st->ffn ? widest : st->ffn;
    uint64_t vec = 3 * h > st->ffn ? 3 * h : st->ffn;
    vec = vec > st->seq ? vec : st->seq;
    checker c = {.st = st, .note = note, .note_len = len};
    size_t es = gm_precision_size(st->s.prec) > gm_precision_size(st->kp) ? gm_precision_size(st->s.prec)
                                                                           : gm_precision_size(st->kp);
    gm_status rc = gm_device_alloc(st->dev, GM_MEM_HOST, (size_t)(widest * es), &c.stage);
    float **rows[] = {&c.x, &c.qkv, &c.attn, &c.resid, &c.mlp, &c.next};
    for (size_t i = 0; i < 6; i++)
        *rows[i] = malloc((size_t)vec * sizeof(float));
    c.k = malloc((size_t)(st->seq * h) * sizeof(float));
    c.v = malloc((size_t)(st->seq * h) * sizeof(float));
    c.want = malloc((size_t)vec * sizeof(double));
    c.mag = malloc((size_t)vec * sizeof(double));
    bool have = c.x && c.qkv && c.attn && c.resid && c.mlp && c.next && c.k && c.v && c.want && c.mag;
    for (int w = 0; w < N_WEIGHTS && st->wp == GM_INT4 && rc == GM_OK; w++) {
        c.int4_layer[w] = -1;
        rc = gm_device_alloc(st->dev, GM_MEM_HOST, (size_t)block_layer_bytes(st, w), &c.codes[w]);
        if (rc == GM_OK)
            rc = gm_device_alloc(st->dev, GM_MEM_HOST, (size_t)block_layer_scale_bytes(st, w), &c.scales[w]);
    }
    if (rc == GM_OK && !have)
        rc = gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    *correct = true;
    /* The last layer first: it holds the iteration's output. */
    uint64_t L = st->layers, x = 0x9e3779b97f4a7c15ull ^ rep;
    for (uint64_t n = 0; rc == GM_OK && *correct && n < (L < MAX_CHECKED_LAYERS ? L : MAX_CHECKED_LAYERS); n++) {
        uint64_t layer = L <= MAX_CHECKED_LAYERS ? L - 1 - n : n == 0 ? L - 1 : n == 1 ? 0 : gm_xorshift(&x) % L;
        rc = check_layer(&c, layer, rep, correct);
        /* The output whole, while the last layer's activations are there
         * (--checkpoint recomputed them into slot 0). */
        if (n == 0 && rc == GM_OK && *correct)
            rc = check_output_sums(&c, correct);
    }
    uint64_t n_earlier = st->last_b0 / st->mb;
    for (uint64_t n = 0; rc == GM_OK && *correct && n < n_earlier && n < MAX_EARLIER_BATCHES; n++) {
        uint64_t mb = n_earlier <= MAX_EARLIER_BATCHES ? n : gm_xorshift(&x) % n_earlier;
        rc = check_earlier(&c, mb * st->mb + (rep + n) % st->mb, (rep * 7 + n) % st->seq, correct);
    }
    for (size_t i = 0; i < 6; i++)
        free(*rows[i]);
    free(c.k);
    free(c.v);
    free(c.want);
    free(c.mag);
    for (int w = 0; w < N_WEIGHTS; w++) {
        gm_device_free(st->dev, &c.codes[w]);
        gm_device_free(st->dev, &c.scales[w]);
    }
    gm_device_free(st->dev, &c.stage);
    return rc;
}

void block_ref_columns(const float *in, const float *w, uint64_t k, uint64_t nc, double *want, double *mag)
{
    for (uint64_t jj = 0; jj < nc; jj++)
        want[jj] = mag[jj] = 0.0;
    for (uint64_t kk = 0; kk < k; kk++)
        for (uint64_t jj = 0; jj < nc; jj++) {
            double pr = (double)in[kk] * w[kk * nc + jj];
            want[jj] += pr;
            mag[jj] += fabs(pr);
        }
}

gm_status block_read_floats(gm_device *dev, gm_buffer *stage, size_t stage_bytes, gm_buffer *src, uint64_t off,
                            uint64_t first, uint64_t n, size_t es, gm_precision p, float scale, float *out)
{
    uint64_t per = stage_bytes / es;
    gm_status rc = GM_OK;
    for (uint64_t done = 0; done < n && rc == GM_OK;) {
        uint64_t k = n - done < per ? n - done : per;
        rc = dev->backend->copy(dev, 0, stage, 0, src, (size_t)((off + first + done) * es), (size_t)(k * es), false);
        for (uint64_t i = 0; rc == GM_OK && i < k; i++)
            out[done + i] = es == 4 && p == GM_FP32 ? ((float *)stage->host)[i] : gm_load(p, stage->host, (size_t)i, scale);
        done += k;
    }
    return rc;
}
