/*
 * The CPU reference of a serving step (serve_step_verify,
 * bench/workloads/serve_engine.h). The step's logits are kept, then the
 * step is replayed stage by stage, untimed; for sampled rows each stage of
 * the checked layers is compared with a double-precision recomputation
 * from the device's own inputs to it: the embedding of the row's token
 * (for a decode row the token sampled at the step before), the norms, the
 * products against the weights' hashes (all columns up to CHECK_COLS,
 * else the first and last EDGE_COLS and a seeded sample), the keys and
 * values written into the pool at the row's block and offset, paged
 * attention over the sequence's keys and values as the host's copy of the
 * block table places them, SwiGLU, the logits, their fp32 copy and the
 * greedy sample. The replay's logits must equal the step's bit for bit
 * (the kernels are deterministic), every one of them: the step's whole
 * output is read back before the replay and compared with the replay's,
 * so a wrong bit anywhere in it is found (check_replay).
 *
 * Bounds: a product of k terms in fp32 in any order is within
 * 1.2 k 2^-23 sum |x w| of the exact sum, plus the output's rounding on
 * either side (2 ulp at the result, gm_tolerance); norms, attention and
 * SwiGLU as block_model.c's check bounds them.
 */
#include "bench/workloads/serve_layout.h"

#include "bench/workloads/block_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_ROWS 4
#define CHECK_COLS 1024
#define MIN_COLS 64
#define EDGE_COLS 32
#define MAX_CHECKED_LAYERS 4
/* The host's reference work a check spends, in multiply-adds (the whole
 * model's check, block_check.c, spends 4e7): a product's checked columns
 * are as many as PRODUCT_BUDGET allows over its rows (at least MIN_COLS,
 * at most CHECK_COLS), and a row's attention checks as many KV heads'
 * query groups as ATTN_BUDGET allows over the rows (at least one). A tiny
 * model is checked whole; Llama-3-8B at 64 columns a product and one
 * group a row (some 5e7 multiply-adds a step where 1024 columns and every
 * group cost 1.2e9 at 4096 tokens). */
#define PRODUCT_BUDGET 1e6
#define ATTN_BUDGET 2e7

typedef struct {
    serve_engine *e;
    gm_buffer stage;
    size_t stage_bytes;
    uint32_t rows[CHECK_ROWS];      /* the sampled rows of the step */
    int n;                          /* how many (fewer when the step has fewer rows) */
    float *in[CHECK_ROWS], *in2[CHECK_ROWS], *out[CHECK_ROWS];
    float *w;                       /* the checked columns of a matrix: [k][n_cols] */
    uint64_t *cols, n_cols, seed;
    double *want, *mag;
    float *kseq, *vseq;             /* one sequence's keys and values of one KV head */
    char *note;
    size_t note_len;
    bool ok;
} checker;

static double stored(gm_precision p, double v)
{
    unsigned char tmp[4];
    gm_store(p, tmp, 0, (float)v, 1.0f);
    return gm_load(p, tmp, 0, 1.0f);
}

static gm_status read_elems(checker *c, serve_loc at, uint64_t first, uint64_t n, gm_precision p, float *dst)
{
    return block_read_floats(c->e->dev, &c->stage, c->stage_bytes, at.buf, at.off, first, n, gm_precision_size(p), p,
                             1.0f, dst);
}

/* The sampled rows of `at` (rows `width` apart, in the activations' precision). */
static gm_status read_rows(checker *c, serve_loc at, uint64_t width, float **dst)
{
    gm_status rc = GM_OK;
    for (int r = 0; r < c->n && rc == GM_OK; r++)
        rc = read_elems(c, at, (uint64_t)c->rows[r] * width, width, c->e->d.p, dst[r]);
    return rc;
}

static void fail(checker *c, const char *what, uint64_t layer, uint64_t row, uint64_t j, double want, double got)
{
    snprintf(c->note, c->note_len, "layer %llu %s[row %llu][%llu]: expected %.7g, got %.7g",
             (unsigned long long)layer, what, (unsigned long long)row, (unsigned long long)j, want, got);
    c->ok = false;
}

/* Matrix m's checked columns, from the weights' hashes, into c->w. */
static void host_columns(checker *c, int m, uint64_t layer)
{
    serve_engine *e = c->e;
    uint64_t k = serve_m_in(e, m), n = serve_m_out(e, m), base = serve_m_param(e, m, layer);
    uint64_t x = c->seed ^ ((uint64_t)(m + 1) << 40) ^ (layer + 1) * 0x9e3779b97f4a7c15ull;
    double fit = PRODUCT_BUDGET / ((double)k * (c->n > 1 ? c->n : 1));
    uint64_t want = fit < MIN_COLS ? MIN_COLS : fit > CHECK_COLS ? CHECK_COLS : (uint64_t)fit;
    uint64_t edge = want / 4 < EDGE_COLS ? want / 4 : EDGE_COLS;     /* the first and last columns */
    c->n_cols = n <= want ? n : want;
    for (uint64_t j = 0; j < c->n_cols; j++)
        c->cols[j] = n <= want || j < edge ? j
                     : j < 2 * edge       ? n - 2 * edge + j
                                          : 2 * edge + gm_xorshift(&x) % (n - 4 * edge);
    for (uint64_t kk = 0; kk < k; kk++)
        for (uint64_t j = 0; j < c->n_cols; j++)
            c->w[kk * c->n_cols + j] = (float)stored(e->d.p, serve_weight(e, m, base + kk * n + c->cols[j]));
}

/* got[r][j] = stored(in[r] x W_m (+ res[r]))[j] on the checked columns. */
static void check_product(checker *c, const char *what, int m, uint64_t layer, float **in, float **res, float **got)
{
    serve_engine *e = c->e;
    host_columns(c, m, layer);
    uint64_t k = serve_m_in(e, m), nc = c->n_cols;
    for (int r = 0; r < c->n && c->ok; r++) {
        block_ref_columns(in[r], c->w, k, nc, c->want, c->mag);
        for (uint64_t jj = 0; jj < nc && c->ok; jj++) {
            uint64_t j = c->cols[jj];
            double pre = c->want[jj] + (res ? res[r][j] : 0.0), mag = c->mag[jj] + (res ? fabs(res[r][j]) : 0.0);
            double want = stored(e->d.p, pre);
            double tol = 2.0 * gm_tolerance(e->d.p, want, 1.0f) + 1.2 * (double)k * 0x1p-23 * mag + 1e-30;
            if (!(fabs(got[r][j] - want) <= tol))
                fail(c, what, layer, c->rows[r], j, want, got[r][j]);
        }
    }
}

static void check_norm(checker *c, int m, uint64_t layer, float **x, float **y)
{
    serve_engine *e = c->e;
    uint64_t base = serve_m_param(e, m, layer);
    for (int r = 0; r < c->n && c->ok; r++) {
        double ss = 0.0;
        for (uint64_t j = 0; j < e->h; j++)
            ss += (double)x[r][j] * x[r][j];
        double inv = 1.0 / sqrt(ss / (double)e->h + SERVE_RMS_EPS);
        for (uint64_t j = 0; j < e->h && c->ok; j++) {
            double want = stored(e->d.p, x[r][j] * inv * stored(e->d.p, serve_weight(e, m, base + j)));
            double tol = 2.0 * gm_tolerance(e->d.p, want, 1.0f) + 1e-5 * fabs(want) + 1e-30;
            if (!(fabs(y[r][j] - want) <= tol))
                fail(c, m == M_FINAL ? "final_norm" : m == M_NORM1 ? "attn_norm" : "mlp_norm", layer, c->rows[r], j,
                     want, y[r][j]);
        }
    }
}

/* Element offset in the pool of (layer, K or V, KV head g, token t) of the
 * sequence in `slot`, through the host's copy of the block table. */
static uint64_t pool_at(const serve_engine *e, uint32_t slot, uint64_t t, uint64_t layer, int kv, uint64_t g)
{
    const serve_dims *d = &e->d;
    uint64_t page = d->a.kv_heads * d->block_tokens * d->a.head_dim;
    uint64_t phys = (uint64_t)e->table[(size_t)slot * d->max_blocks + t / d->block_tokens];
    return ((phys * e->L + layer) * 2 + (uint64_t)kv) * page
           + (g * d->block_tokens + t % d->block_tokens) * d->a.head_dim;
}

/* The keys and values of every sampled row in the pool: those the stage
 * read from qkv_proj's rows (qkv: [row][q | k | v]), bit for bit. */
static gm_status check_kv(checker *c, uint64_t l, float **qkv)
{
    serve_engine *e = c->e;
    uint64_t dim = e->d.a.head_dim;
    gm_status rc = GM_OK;
    for (int r = 0; r < c->n && rc == GM_OK && c->ok; r++) {
        const uint32_t *row = &e->rows[(size_t)c->rows[r] * SERVE_ROW_WORDS];
        for (uint64_t g = 0; g < e->d.a.kv_heads && rc == GM_OK && c->ok; g++)
            for (int kv = 0; kv < 2 && rc == GM_OK && c->ok; kv++) {
                rc = read_elems(c, (serve_loc){&e->buf[SB_POOL], 0}, pool_at(e, row[0], row[1], l, kv, g), dim,
                                e->d.kp, c->kseq);
                for (uint64_t d = 0; d < dim && rc == GM_OK && c->ok; d++) {
                    double want = stored(e->d.kp, qkv[r][e->ad + (kv ? e->kd : 0) + g * dim + d]);
                    if (!(c->kseq[d] == want))
                        fail(c, kv ? "pool_v" : "pool_k", l, c->rows[r], g * dim + d, want, c->kseq[d]);
                }
            }
    }
    return rc;
}

/* The query heads of the sampled rows against their sequence's keys and
 * values 0..position, gathered from the pool through the block table:
 * every KV head's group where ATTN_BUDGET allows, else as many groups a
 * row as it allows (at least one): the first row's from the first group,
 * the second's from the last, the others' from a seeded one. */
static gm_status check_attention(checker *c, uint64_t l, float **q, float **o)
{
    serve_engine *e = c->e;
    uint64_t dim = e->d.a.head_dim, heads = e->d.a.heads, kvh = e->d.a.kv_heads, group = heads / kvh;
    gm_status rc = GM_OK;
    uint64_t x = c->seed ^ (l + 1) * 0xbf58476d1ce4e5b9ull;
    for (int r = 0; r < c->n && rc == GM_OK && c->ok; r++) {
        const uint32_t *row = &e->rows[(size_t)c->rows[r] * SERVE_ROW_WORDS];
        uint64_t n = (uint64_t)row[1] + 1;
        uint64_t block = e->d.block_tokens;
        double fit = ATTN_BUDGET / ((double)c->n * (double)group * (double)n * (double)dim);
        uint64_t n_groups = fit >= (double)kvh ? kvh : fit < 1 ? 1 : (uint64_t)fit;
        uint64_t first = n_groups == kvh || r == 0 ? 0 : r == 1 ? kvh - n_groups : gm_xorshift(&x) % kvh;
        for (uint64_t gi = 0; gi < n_groups && rc == GM_OK && c->ok; gi++) {
            uint64_t g = (first + gi) % kvh;
            /* A block's tokens of one KV head are contiguous: a read a block. */
            for (uint64_t t = 0; t < n && rc == GM_OK; t += block) {
                uint64_t nb = n - t < block ? n - t : block;
                rc = read_elems(c, (serve_loc){&e->buf[SB_POOL], 0}, pool_at(e, row[0], t, l, 0, g), nb * dim,
                                e->d.kp, c->kseq + t * dim);
                if (rc == GM_OK)
                    rc = read_elems(c, (serve_loc){&e->buf[SB_POOL], 0}, pool_at(e, row[0], t, l, 1, g), nb * dim,
                                    e->d.kp, c->vseq + t * dim);
            }
            for (uint64_t j = g * group; j < (g + 1) * group && rc == GM_OK && c->ok; j++) {
                double mx = -INFINITY, sum = 0.0, vmax = 0.0;
                for (uint64_t t = 0; t < n; t++) {
                    double s = 0.0;
                    for (uint64_t d = 0; d < dim; d++)
                        s += (double)q[r][j * dim + d] * c->kseq[t * dim + d];
                    c->want[t] = s / sqrt((double)dim);
                    mx = fmax(mx, c->want[t]);
                }
                for (uint64_t t = 0; t < n; t++)
                    sum += c->want[t] = exp(c->want[t] - mx);
                for (uint64_t d = 0; d < dim && c->ok; d++) {
                    double want = 0.0;
                    for (uint64_t t = 0; t < n; t++) {
                        want += c->want[t] / sum * c->vseq[t * dim + d];
                        vmax = fmax(vmax, fabs(c->vseq[t * dim + d]));
                    }
                    want = stored(e->d.p, want);
                    double tol = 2.0 * gm_tolerance(e->d.p, want, 1.0f) + 1e-5 * (1.0 + sqrt((double)n)) * vmax;
                    if (!(fabs(o[r][j * dim + d] - want) <= tol))
                        fail(c, "attention", l, c->rows[r], j * dim + d, want, o[r][j * dim + d]);
                }
            }
        }
    }
    return rc;
}

/* act[r][j] = silu(gate) * up from gate_up_proj's row gu[r] = [gate | up]. */
static void check_swiglu(checker *c, uint64_t l, float **gu, float **act)
{
    serve_engine *e = c->e;
    for (int r = 0; r < c->n && c->ok; r++)
        for (uint64_t j = 0; j < e->I && c->ok; j++) {
            double gv = gu[r][j], want = stored(e->d.p, gv / (1.0 + exp(-gv)) * gu[r][e->I + j]);
            double tol = 2.0 * gm_tolerance(e->d.p, want, 1.0f) + 1e-6 * (1.0 + fabs(want));
            if (!(fabs(act[r][j] - want) <= tol))
                fail(c, "swiglu", l, c->rows[r], j, want, act[r][j]);
        }
}

/* Runs stage s of layer l; with `check`, compares it on the sampled rows. */
static gm_status checked_stage(checker *c, uint64_t l, int s, bool check)
{
    serve_engine *e = c->e;
    serve_layer_locs lc = serve_locs(e);
    uint64_t h = e->h, ad = e->ad, qkv = e->ad + 2 * e->kd, I = e->I;
    gm_status rc = GM_OK;
    if (check) {
        switch (s) {
        case S_NORM1: rc = read_rows(c, lc.a, h, c->in); break;
        case S_QKV: case S_GATEUP: rc = read_rows(c, s == S_QKV ? lc.b : lc.a, h, c->in); break;
        case S_ATTN: rc = read_rows(c, lc.qkv, qkv, c->in); break;
        case S_OPROJ:
            rc = read_rows(c, lc.o, ad, c->in);
            if (rc == GM_OK)
                rc = read_rows(c, lc.a, h, c->in2);
            break;
        case S_NORM2: rc = read_rows(c, lc.b, h, c->in); break;
        case S_SWIGLU: rc = read_rows(c, lc.gu, 2 * I, c->in); break;
        case S_DOWN:
            rc = read_rows(c, lc.act, I, c->in);
            if (rc == GM_OK)
                rc = read_rows(c, lc.b, h, c->in2);
            break;
        default: break;
        }
    }
    if (rc == GM_OK)
        rc = serve_stage(e, l, s);
    if (rc == GM_OK)
        rc = e->dev->backend->synchronize(e->dev, 0);
    if (rc != GM_OK || !check)
        return rc;
    switch (s) {
    case S_NORM1:
    case S_NORM2:
        rc = read_rows(c, s == S_NORM1 ? lc.b : lc.a, h, c->out);
        if (rc == GM_OK)
            check_norm(c, s == S_NORM1 ? M_NORM1 : M_NORM2, l, c->in, c->out);
        break;
    case S_QKV:
        rc = read_rows(c, lc.qkv, qkv, c->out);
        if (rc == GM_OK)
            check_product(c, "qkv", M_QKV, l, c->in, NULL, c->out);
        break;
    case S_KV:
        if (serve_kv_fused(e))
            break;      /* written by the attention's launch: checked after it */
        rc = read_rows(c, lc.qkv, qkv, c->in);
        if (rc == GM_OK)
            rc = check_kv(c, l, c->in);
        break;
    case S_ATTN:
        if (serve_kv_fused(e))
            rc = check_kv(c, l, c->in);
        if (rc == GM_OK && c->ok)
            rc = read_rows(c, lc.o, ad, c->out);
        if (rc == GM_OK && c->ok)
            rc = check_attention(c, l, c->in, c->out);
        break;
    case S_OPROJ:
        rc = read_rows(c, lc.b, h, c->out);
        if (rc == GM_OK)
            check_product(c, "attn_resid", M_O, l, c->in, c->in2, c->out);
        break;
    case S_GATEUP:
        rc = read_rows(c, lc.gu, 2 * I, c->out);
        if (rc == GM_OK)
            check_product(c, "gate_up", M_GATEUP, l, c->in, NULL, c->out);
        break;
    case S_SWIGLU:
        rc = read_rows(c, lc.act, I, c->out);
        if (rc == GM_OK)
            check_swiglu(c, l, c->in, c->out);
        break;
    case S_DOWN:
        rc = read_rows(c, lc.a, h, c->out);
        if (rc == GM_OK)
            check_product(c, "block_output", M_DOWN, l, c->in, c->in2, c->out);
        break;
    }
    return rc;
}

static void pick_rows(checker *c, uint32_t n, uint64_t *x)
{
    c->n = n < CHECK_ROWS ? (int)n : CHECK_ROWS;
    for (int r = 0; r < c->n; r++)
        c->rows[r] = r == 0 ? 0 : r == 1 ? n - 1 : (uint32_t)(gm_xorshift(x) % n);
}

/* The embedding of the sampled rows: the row's prompt token, or for a
 * decode row the token its slot sampled at the step before. */
static gm_status check_embedding(checker *c)
{
    serve_engine *e = c->e;
    gm_status rc = read_rows(c, serve_locs(e).a, e->h, c->out);
    for (int r = 0; r < c->n && rc == GM_OK && c->ok; r++) {
        const uint32_t *row = &e->rows[(size_t)c->rows[r] * SERVE_ROW_WORDS];
        uint32_t token = row[2];
        if (row[3] & SERVE_ROW_DECODE) {
            rc = e->dev->backend->copy(e->dev, 0, &c->stage, 0, &e->buf[SB_TOKENS], (size_t)row[0] * 4, 4, false);
            token = *(const uint32_t *)c->stage.host;
        }
        for (uint64_t j = 0; j < e->h && rc == GM_OK && c->ok; j++) {
            double want = stored(e->d.p, serve_weight(e, M_EMB, (uint64_t)token * e->h + j));
            if (!(c->out[r][j] == want))
                fail(c, "embedding", 0, c->rows[r], j, want, c->out[r][j]);
        }
    }
    return rc;
}

/*
 * The replay's logits (n_logits rows of V, in the activations' precision)
 * against the step's, kept in `kept` before the replay: every element bit
 * for bit. The note names the first that differs (its index in the
 * logits, its row and column) and how many do.
 */
static gm_status check_replay(checker *c, const unsigned char *kept)
{
    serve_engine *e = c->e;
    size_t es = gm_precision_size(e->d.p), n = (size_t)e->n_logits * e->V, per = c->stage_bytes / es;
    uint64_t differ = 0, first = 0;
    double step_v = 0.0, replay_v = 0.0;
    gm_status rc = GM_OK;
    for (size_t done = 0; done < n && rc == GM_OK;) {
        size_t k = n - done < per ? n - done : per;
        rc = e->dev->backend->copy(e->dev, 0, &c->stage, 0, &e->buf[SB_LOGITS], done * es, k * es, false);
        const unsigned char *now = c->stage.host;
        for (size_t i = 0; rc == GM_OK && i < k; i++)
            if (memcmp(now + i * es, kept + (done + i) * es, es) != 0 && differ++ == 0) {
                first = done + i;
                step_v = gm_load(e->d.p, kept, done + i, 1.0f);
                replay_v = gm_load(e->d.p, now, i, 1.0f);
            }
        done += k;
    }
    if (rc == GM_OK && differ) {
        snprintf(c->note, c->note_len, "logits of the step against its replay: element %llu (logit row %llu, column "
                 "%llu): %.7g, replayed %.7g; %llu of %llu differ (compared whole, bit for bit)",
                 (unsigned long long)first, (unsigned long long)(first / e->V), (unsigned long long)(first % e->V),
                 step_v, replay_v, (unsigned long long)differ, (unsigned long long)n);
        c->ok = false;
    }
    return rc;
}

/* The final norm, the step's logits whole against the replay's
 * (check_replay), the logits of sampled logit rows against the host, their
 * fp32 copy and the sampled token. */
static gm_status check_head(checker *c, const unsigned char *kept, const uint32_t *kept_rows, int n_kept, uint64_t *x)
{
    serve_engine *e = c->e;
    serve_layer_locs lc = serve_locs(e);
    uint64_t V = e->V;
    pick_rows(c, e->n_rows, x);
    gm_status rc = read_rows(c, lc.a, e->h, c->in);
    if (rc == GM_OK)
        rc = serve_head(e);
    if (rc == GM_OK)
        rc = e->dev->backend->synchronize(e->dev, 0);
    if (rc == GM_OK)
        rc = read_rows(c, lc.b, e->h, c->out);
    if (rc == GM_OK)
        check_norm(c, M_FINAL, e->L, c->in, c->out);
    if (rc == GM_OK && c->ok)
        rc = check_replay(c, kept);
    for (int i = 0; i < n_kept && rc == GM_OK && c->ok; i++) {
        uint32_t lr = kept_rows[i];
        c->rows[0] = e->logit_row[lr];
        c->n = 1;
        rc = read_rows(c, lc.b, e->h, c->in);
        if (rc == GM_OK)
            rc = read_elems(c, (serve_loc){&e->buf[SB_LOGITS], 0}, (uint64_t)lr * V, V, e->d.p, c->out[0]);
        if (rc == GM_OK)
            check_product(c, "logits", M_LM, e->L, c->in, NULL, c->out);
        if (rc == GM_OK && c->ok)
            rc = read_elems(c, (serve_loc){&e->buf[SB_LOGITS32], 0}, (uint64_t)lr * V, V, GM_FP32, c->in2[0]);
        uint64_t best = 0;
        for (uint64_t j = 0; j < V && rc == GM_OK && c->ok; j++) {
            if (memcmp(&c->in2[0][j], &c->out[0][j], sizeof(float)) != 0)
                fail(c, "logits_fp32", e->L, c->rows[0], j, c->out[0][j], c->in2[0][j]);
            best = c->out[0][j] > c->out[0][best] ? j : best;
        }
        if (rc == GM_OK && c->ok) {
            size_t at = ((size_t)e->d.max_seqs + e->logit_slot[lr]) * 4;
            rc = e->dev->backend->copy(e->dev, 0, &c->stage, 0, &e->buf[SB_TOKENS], at, 4, false);
            uint32_t got = *(const uint32_t *)c->stage.host;
            if (rc == GM_OK && got != best) {
                snprintf(c->note, c->note_len, "sampled token of slot %u: expected %llu (the first largest logit), "
                         "got %u", e->logit_slot[lr], (unsigned long long)best, got);
                c->ok = false;
            }
        }
    }
    return rc;
}

gm_status serve_step_verify(serve_engine *e, unsigned rep, bool *correct, char *note, size_t len)
{
    uint64_t wide = e->h > e->ad + 2 * e->kd ? e->h : e->ad + 2 * e->kd, n_ctx = 0;
    wide = wide > 2 * e->I ? wide : 2 * e->I;
    wide = wide > e->V ? wide : e->V;
    for (uint32_t r = 0; r < e->n_rows; r++) {
        uint64_t n = (uint64_t)e->rows[(size_t)r * SERVE_ROW_WORDS + 1] + 1;
        n_ctx = n > n_ctx ? n : n_ctx;
    }
    checker c = {.e = e, .note = note, .note_len = len, .ok = true, .seed = 0x3c6ef372fe94f82bull ^ rep};
    c.stage_bytes = (size_t)(wide < (1u << 18) ? (1u << 18) : wide) * 4;
    gm_status rc = gm_device_alloc(e->dev, GM_MEM_HOST, c.stage_bytes, &c.stage);
    bool have = true;
    for (int r = 0; r < CHECK_ROWS; r++) {
        have = (c.in[r] = malloc(wide * sizeof(float))) && have;
        have = (c.in2[r] = malloc(wide * sizeof(float))) && have;
        have = (c.out[r] = malloc(wide * sizeof(float))) && have;
    }
    /* The step's whole output, before the replay overwrites it. */
    gm_buffer kept = {0};
    size_t kept_bytes = (size_t)e->n_logits * e->V * gm_precision_size(e->d.p);
    if (rc == GM_OK && kept_bytes)
        rc = gm_device_alloc(e->dev, GM_MEM_HOST, kept_bytes, &kept);
    if (rc == GM_OK && kept_bytes)
        rc = e->dev->backend->copy(e->dev, 0, &kept, 0, &e->buf[SB_LOGITS], 0, kept_bytes, false);
    c.w = malloc((size_t)(wide * CHECK_COLS) * sizeof(float));
    c.cols = malloc(CHECK_COLS * sizeof *c.cols);
    c.want = malloc((size_t)(wide > n_ctx ? wide : n_ctx) * sizeof(double));
    c.mag = malloc((size_t)wide * sizeof(double));
    c.kseq = malloc((size_t)(n_ctx * e->d.a.head_dim) * sizeof(float));
    c.vseq = malloc((size_t)(n_ctx * e->d.a.head_dim) * sizeof(float));
    have = have && c.w && c.cols && c.want && c.mag && c.kseq && c.vseq;
    if (rc == GM_OK && !have)
        rc = gm_device_fail(e->dev, GM_ERR_OOM, 0, "out of host memory");
    /* The logit rows the host checks against the weights. */
    uint64_t x = 0x51ed270b27f4a7c1ull ^ rep;
    uint32_t kept_rows[CHECK_ROWS];
    int n_kept = e->n_logits < CHECK_ROWS ? (int)e->n_logits : CHECK_ROWS;
    for (int i = 0; i < n_kept; i++)
        kept_rows[i] = i == 0 ? 0 : i == 1 ? e->n_logits - 1 : (uint32_t)(gm_xorshift(&x) % e->n_logits);
    /* The replay: the embedding, every layer (each stage of the checked
     * ones compared), the head. */
    pick_rows(&c, e->n_rows, &x);
    if (rc == GM_OK)
        rc = serve_embed(e);
    if (rc == GM_OK)
        rc = e->dev->backend->synchronize(e->dev, 0);
    if (rc == GM_OK)
        rc = check_embedding(&c);
    uint64_t L = e->L, picks[MAX_CHECKED_LAYERS] = {L - 1, 0, 0, 0};
    for (int i = 1; i < MAX_CHECKED_LAYERS; i++)
        picks[i] = L <= MAX_CHECKED_LAYERS ? (uint64_t)i - 1 : gm_xorshift(&x) % L;
    for (uint64_t l = 0; l < L && rc == GM_OK && c.ok; l++) {
        bool check = L <= MAX_CHECKED_LAYERS;
        for (int i = 0; i < MAX_CHECKED_LAYERS; i++)
            check = check || picks[i] == l;
        pick_rows(&c, e->n_rows, &x);
        for (int s = 0; s < N_STAGES && rc == GM_OK && c.ok; s++)
            rc = checked_stage(&c, l, s, check);
    }
    if (rc == GM_OK && c.ok)
        rc = check_head(&c, kept.host, kept_rows, n_kept, &x);
    *correct = c.ok;
    for (int r = 0; r < CHECK_ROWS; r++) {
        free(c.in[r]);
        free(c.in2[r]);
        free(c.out[r]);
    }
    gm_device_free(e->dev, &kept);
    free(c.w);
    free(c.cols);
    free(c.want);
    free(c.mag);
    free(c.kseq);
    free(c.vseq);
    gm_device_free(e->dev, &c.stage);
    return rc;
}
