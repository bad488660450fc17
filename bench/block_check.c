/*
 * The block workload's CPU reference. After an iteration it checks, for
 * the last micro-batch, every stage of the layers it samples (all when
 * there are at most four) on a set of token rows (all while the host work
 * stays under a budget, else the first and last token and a seeded
 * sample): each stage against a double-precision recomputation from the
 * device's own inputs to that stage, and the KV cache bit for bit against
 * qkv. With --checkpoint a layer's activations are recomputed on the
 * device first (untimed). The KV cache of earlier micro-batches is checked
 * at layer 0, from the reproducible input.
 */
#include "bench/block_private.h"

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
    char *note;
    size_t note_len;
} checker;

/* A weight as the device holds it (int8 clamps the hash's -128 to -127). */
static float weight(const block_state *st, int w, uint64_t idx)
{
    unsigned char tmp[4];
    float scale = st->w_range[w] / 128.0f;
    gm_store(st->s.prec, tmp, 0, gm_hashed_value(idx, BLOCK_SEED_WEIGHT + (unsigned)w, st->w_range[w]), scale);
    return gm_load(st->s.prec, tmp, 0, scale);
}

static double stored(gm_precision p, double v)
{
    unsigned char tmp[4];
    gm_store(p, tmp, 0, (float)v, BLOCK_ACT_SCALE);
    return gm_load(p, tmp, 0, BLOCK_ACT_SCALE);
}

/* Reads n elements of buf from element `at` into out (as float). */
static gm_status read_row(checker *c, gm_buffer *buf, uint64_t at, uint64_t n, float *out)
{
    block_state *st = c->st;
    size_t es = gm_precision_size(st->s.prec);
    gm_status rc = st->dev->backend->copy(st->dev, 0, &c->stage, 0, buf, (size_t)(at * es), (size_t)(n * es), false);
    for (uint64_t i = 0; rc == GM_OK && i < n; i++)
        out[i] = gm_load(st->s.prec, c->stage.host, (size_t)i, BLOCK_ACT_SCALE);
    return rc;
}

/* want[j] = sum_k in[k] * W[layer][k][j], mag[j] = sum |in[k] * W|. */
static void product(const block_state *st, int w, uint64_t layer, const float *in, double *want, double *mag)
{
    uint64_t k = block_weight_in(st, w), n = block_weight_out(st, w);
    for (uint64_t j = 0; j < n; j++)
        want[j] = mag[j] = 0.0;
    for (uint64_t kk = 0; kk < k; kk++)
        for (uint64_t j = 0; j < n; j++) {
            double p = (double)in[kk] * weight(st, w, (layer * k + kk) * n + j);
            want[j] += p;
            mag[j] += fabs(p);
        }
}

static double gelu(double v) { return 0.5 * v * (1.0 + tanh(0.7978845608 * (v + 0.044715 * v * v * v))); }

/* Compares got[j] with the stored want[j] (+ residual[j]) over n outputs;
 * the bound covers fp32 accumulation over k terms and two roundings. */
static bool compare(checker *c, const char *what, uint64_t layer, uint64_t t, const float *got, const float *residual,
                    bool apply_gelu, uint64_t n, uint64_t k)
{
    gm_precision p = c->st->s.prec;
    for (uint64_t j = 0; j < n; j++) {
        double pre = c->want[j] + (residual ? residual[j] : 0.0);
        double mag = c->mag[j] + (residual ? fabs(residual[j]) : 0.0);
        double want = stored(p, apply_gelu ? gelu(pre) : pre);
        double tol = 2.0 * gm_tolerance(p, want, BLOCK_ACT_SCALE) + 1.2 * (double)k * 0x1p-23 * mag
                     + (apply_gelu ? 1e-6 * fabs(pre) : 0.0);
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
    gm_status rc = read_row(c, &st->inputs, (layer * Tm + t) * h, h, c->x);
    if (rc == GM_OK)
        rc = read_row(c, &st->act[A_QKV], (slot * Tm + t) * 3 * h, 3 * h, c->qkv);
    if (rc == GM_OK)
        rc = read_row(c, &st->act[A_ATTN], (slot * Tm + t) * h, h, c->attn);
    if (rc == GM_OK)
        rc = read_row(c, &st->act[A_RESID], (slot * Tm + t) * h, h, c->resid);
    if (rc == GM_OK)
        rc = read_row(c, &st->act[A_MLP], (slot * Tm + t) * st->ffn, st->ffn, c->mlp);
    if (rc == GM_OK)
        rc = read_row(c, &st->inputs, ((layer + 1) * Tm + t) * h, h, c->next);
    if (rc == GM_OK)
        rc = read_row(c, &st->kv, k_at, st->seq * h, c->k);
    if (rc == GM_OK)
        rc = read_row(c, &st->kv, v_at, st->seq * h, c->v);
    if (rc != GM_OK)
        return rc;
    product(st, W_QKV, layer, c->x, c->want, c->mag);
    *ok = compare(c, "qkv", layer, t, c->qkv, NULL, false, 3 * h, h);
    for (uint64_t d = 0; d < h && *ok; d++)
        if (c->k[i * h + d] != c->qkv[h + d] || c->v[i * h + d] != c->qkv[2 * h + d]) {
            snprintf(c->note, c->note_len, "layer %llu kv_cache[%llu][%llu] differs from qkv",
                     (unsigned long long)layer, (unsigned long long)t, (unsigned long long)d);
            *ok = false;
        }
    *ok = *ok && check_attention(c, layer, t);
    if (*ok) {
        product(st, W_O, layer, c->attn, c->want, c->mag);
        *ok = compare(c, "attn_resid", layer, t, c->resid, c->x, false, h, h);
    }
    if (*ok) {
        product(st, W_UP, layer, c->resid, c->want, c->mag);
        *ok = compare(c, "mlp_hidden", layer, t, c->mlp, NULL, true, st->ffn, h);
    }
    if (*ok) {
        product(st, W_DOWN, layer, c->mlp, c->want, c->mag);
        *ok = compare(c, "block_output", layer, t, c->next, c->resid, false, h, st->ffn);
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
    gm_status rc = read_row(c, &st->kv, (b * st->seq + i) * h, h, c->k);
    if (rc == GM_OK)
        rc = read_row(c, &st->kv, ((st->s.batch + b) * st->seq + i) * h, h, c->v);
    if (rc != GM_OK)
        return rc;
    product(st, W_QKV, 0, c->x, c->want, c->mag);
    memmove(c->want, c->want + h, 2 * h * sizeof *c->want);
    memmove(c->mag, c->mag + h, 2 * h * sizeof *c->mag);
    *ok = compare(c, "k_cache", 0, b * st->seq + i, c->k, NULL, false, h, h);
    if (*ok) {
        memmove(c->want, c->want + h, h * sizeof *c->want);
        memmove(c->mag, c->mag + h, h * sizeof *c->mag);
        *ok = compare(c, "v_cache", 0, b * st->seq + i, c->v, NULL, false, h, h);
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

gm_status block_verify(void *state, unsigned rep, bool *correct, char *note, size_t len)
{
    block_state *st = state;
    uint64_t h = st->h, widest = st->seq * h > 3 * h ? st->seq * h : 3 * h;
    widest = widest > st->ffn ? widest : st->ffn;
    uint64_t vec = 3 * h > st->ffn ? 3 * h : st->ffn;
    vec = vec > st->seq ? vec : st->seq;
    checker c = {st, {0}, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, note, len};
    gm_status rc = gm_device_alloc(st->dev, GM_MEM_HOST, (size_t)(widest * gm_precision_size(st->s.prec)), &c.stage);
    float **rows[] = {&c.x, &c.qkv, &c.attn, &c.resid, &c.mlp, &c.next};
    for (size_t i = 0; i < 6; i++)
        *rows[i] = malloc((size_t)vec * sizeof(float));
    c.k = malloc((size_t)(st->seq * h) * sizeof(float));
    c.v = malloc((size_t)(st->seq * h) * sizeof(float));
    c.want = malloc((size_t)vec * sizeof(double));
    c.mag = malloc((size_t)vec * sizeof(double));
    bool have = c.x && c.qkv && c.attn && c.resid && c.mlp && c.next && c.k && c.v && c.want && c.mag;
    if (rc == GM_OK && !have)
        rc = gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    *correct = true;
    /* The last layer first: it holds the iteration's output. */
    uint64_t L = st->layers, x = 0x9e3779b97f4a7c15ull ^ rep;
    for (uint64_t n = 0; rc == GM_OK && *correct && n < (L < MAX_CHECKED_LAYERS ? L : MAX_CHECKED_LAYERS); n++) {
        uint64_t layer = L <= MAX_CHECKED_LAYERS ? L - 1 - n : n == 0 ? L - 1 : n == 1 ? 0 : gm_xorshift(&x) % L;
        rc = check_layer(&c, layer, rep, correct);
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
    gm_device_free(st->dev, &c.stage);
    return rc;
}
