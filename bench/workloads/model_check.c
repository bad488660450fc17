/* Device reads and CPU references of the whole model's check (bench/workloads/model_check.h). */
#include "bench/workloads/model_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t check_host_token(uint64_t t, uint32_t vocab)
{
    uint32_t h = (uint32_t)t * 0x9e3779b1u;
    h ^= h >> 13;
    h *= 0x85ebca77u;
    h ^= h >> 16;
    return h % vocab;
}


double check_stored(gm_precision p, double v, float scale)
{
    unsigned char tmp[4];
    gm_store(p, tmp, 0, (float)v, scale);
    return gm_load(p, tmp, 0, scale);
}

/* Reads n elements of `at` from element `first` as floats (through the staging buffer, in pieces). */
gm_status check_read(checker *c, loc at, uint64_t first, uint64_t n, size_t es, gm_precision p, float scale,
                            float *outp)
{
    return block_read_floats(c->st->dev, &c->stage, c->stage_bytes, at.buf, at.off, first, n, es, p, scale, outp);
}

/* The sampled rows of `at` (rows `width` apart, in precision p). */
gm_status check_read_rows_in(checker *c, loc at, uint64_t width, gm_precision p, float **outp)
{
    gm_status rc = GM_OK;
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK; r++)
        rc = check_read(c, at, c->rows[r] * width, width, gm_precision_size(p), p, ACT, outp[r]);
    return rc;
}

/* A norm's weight vector into c->w. */
gm_status check_fetch_norm(checker *c, int m, uint64_t layer)
{
    model_state *st = c->st;
    return check_read(c, model_loc(st, m, layer), 0, st->h, st->es, st->p, model_scale(st, m), c->w);
}

gm_status check_read_rows(checker *c, loc at, uint64_t width, float **outp)
{
    return check_read_rows_in(c, at, width, c->st->p, outp);
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
    if (!block_int4_matches(c->codes.host, c->scales.host, k, n, st->group, model_param(st, m, layer), SEED_W,
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
gm_status check_fetch_columns(checker *c, int m, uint64_t layer)
{
    model_state *st = c->st;
    bool tied = m == M_LM && st->tied;
    int sm = tied ? M_EMB : m;
    uint64_t k = model_in(st, m), n = model_out(st, m);
    gm_status rc = GM_OK;
    loc at = model_weight(st, m, layer, &rc);    /* NF4: dequantised as the products see it */
    float scale = model_scale(st, sm);
    uint64_t x = c->seed ^ ((uint64_t)(m + 1) << 40) ^ (layer + 1) * 0x9e3779b97f4a7c15ull;
    c->n_cols = n <= CHECK_COLS ? n : CHECK_COLS;
    /* Training rotates q and k (model_rope): each checked column comes
     * with its partner in the rotation (c +- head_dim / 2 in its head). */
    c->rope_on = st->train && (m == M_Q || m == M_K);
    uint64_t picks = c->rope_on && n > CHECK_COLS ? c->n_cols / 2 : c->n_cols, half = st->d / 2;
    for (uint64_t j = 0; j < picks; j++)
        c->cols[j] = n <= CHECK_COLS || j < EDGE_COLS ? j
                     : j < 2 * EDGE_COLS               ? n - 2 * EDGE_COLS + j
                                                       : 2 * EDGE_COLS + gm_xorshift(&x) % (n - 4 * EDGE_COLS);
    for (uint64_t j = 0; c->rope_on && j < c->n_cols; j++) {
        if (picks < c->n_cols && j >= picks)
            c->cols[j] = c->cols[j - picks] % st->d < half ? c->cols[j - picks] + half : c->cols[j - picks] - half;
        c->partner[j] = picks < c->n_cols ? (j < picks ? j + picks : j - picks)
                        : c->cols[j] % st->d < half ? j + half : j - half;
    }
    if (rc != GM_OK)
        return rc;
    if (model_is_int4(st, m))
        return fetch_int4_columns(c, m, layer, k, n, at);
    if (tied) {
        for (uint64_t j = 0; j < c->n_cols && rc == GM_OK; j++) {
            rc = check_read(c, at, c->cols[j] * k, k, st->es, st->p, scale, c->column);
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

bool check_fail(checker *c, const char *what, uint64_t layer, uint64_t t, uint64_t j, double want, double got)
{
    snprintf(c->note, c->note_len, "layer %llu %s[%llu][%llu]: expected %.7g, got %.7g", (unsigned long long)layer,
             what, (unsigned long long)t, (unsigned long long)j, want, got);
    c->ok = false;
    return false;
}

/*
 * Checks got[r][j] = check_stored(in[r] x W (+ res[r]))[j] for every sampled row
 * and every column j that fetch_columns took of W (k inputs). The bound:
 * fp32 accumulation of k products in any order, gamma_k * sum |x w| with
 * gamma_k = 1.2 k 2^-23 (fp8 and dequantised int4 operands are exact in
 * fp32), plus the output's rounding on either side, 2 * gm_tolerance (2 ulp
 * at the result: u = 2^-10 fp16, 2^-7 bf16, 2^-3 fp8e4m3, 2^-2 fp8e5m2; the
 * int8 step); none for fp32 logits. `kv`: K or V converted on into an
 * fp8 KV cache, a second rounding there: 2 * gm_tolerance(kp) more.
 */
void check_product(checker *c, const char *what, uint64_t layer, uint64_t k, float **in, float **res,
                          float **got, bool fp32_out, bool kv)
{
    model_state *st = c->st;
    uint64_t nc = c->n_cols, half = st->d / 2;
    double *stored = malloc(nc * sizeof *stored), *tols = malloc(nc * sizeof *tols);
    if (!stored || !tols) {
        snprintf(c->note, c->note_len, "out of host memory for the check of %s", what);
        c->ok = false;
    }
    for (int r = 0; r < CHECK_ROWS && c->ok; r++) {
        block_ref_columns(in[r], c->w, k, nc, c->want, c->mag);
        /* what the product stores in each checked column, and its tolerance */
        for (uint64_t jj = 0; jj < nc; jj++) {
            uint64_t j = c->cols[jj];
            double pre = c->want[jj] + (res ? res[r][j] : 0.0), mag = c->mag[jj] + (res ? fabs(res[r][j]) : 0.0);
            double base = pre;
            if (c->lora_on) {
                pre += c->lora_add[(size_t)r * nc + jj];
                mag += c->lora_mag[(size_t)r * nc + jj];
            }
            stored[jj] = fp32_out ? pre : check_stored(st->p, pre, ACT);
            tols[jj] = (fp32_out ? 0.0 : 2.0 * gm_tolerance(st->p, stored[jj], ACT)) + 1.2 * (double)k * 0x1p-23 * mag
                       + 1e-30;
            /* LoRA: x W is stored before the adapter's part is added to it. */
            if (c->lora_on)
                tols[jj] += 2.0 * gm_tolerance(st->p, base, ACT);
        }
        for (uint64_t jj = 0; jj < nc && c->ok; jj++) {
            uint64_t j = c->cols[jj];
            double want = stored[jj], tol = tols[jj];
            if (c->rope_on) {
                /* The rotary embedding of the stored pair (model_rope), as
                 * gm_train_rope_table rounds its tables. */
                uint64_t ch = j % st->d, pos = c->rows[r] % st->run_seq, q = c->partner[jj];
                double angle = (double)pos * pow(st->a.rope_theta, -2.0 * (double)(ch % half) / (double)st->d);
                double cs = (float)cos(angle), sn = (float)sin(angle);
                double y = ch < half ? stored[jj] * cs - stored[q] * sn : stored[jj] * cs + stored[q] * sn;
                want = check_stored(st->p, y, ACT);
                tol = fabs(cs) * tols[jj] + fabs(sn) * tols[q] + 2.0 * gm_tolerance(st->p, want, ACT) + 1e-30;
            }
            if (kv) {
                want = check_stored(st->kp, want, ACT);
                tol += 2.0 * gm_tolerance(st->kp, want, ACT);
            }
            if (!(fabs(got[r][j] - want) <= tol))
                check_fail(c, what, layer, c->rows[r], j, want, got[r][j]);
        }
    }
    free(stored);
    free(tols);
    c->lora_on = false;
    c->rope_on = false;
}

gm_status check_lora_term(checker *c, int m, uint64_t layer, float **in)
{
    model_state *st = c->st;
    c->lora_on = model_lora_adapted(st, m);
    if (!c->lora_on)
        return GM_OK;
    uint64_t k = model_in(st, m), n = model_out(st, m), r = st->rank, p = model_lora_param(st, m, layer);
    float *a = malloc((size_t)(k * r) * sizeof *a), *b = malloc((size_t)(r * n) * sizeof *b);
    float *xa = malloc((size_t)r * sizeof *xa);
    gm_status rc = a && b && xa ? GM_OK : gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    loc ad = {&st->buf[B_AD], 0}, kept = model_lora_xa(st, m, layer);
    if (rc == GM_OK)
        rc = check_read(c, ad, p, k * r, st->es, st->p, 1.0f, a);
    if (rc == GM_OK)
        rc = check_read(c, ad, p + k * r, r * n, st->es, st->p, 1.0f, b);
    for (int row = 0; row < CHECK_ROWS && rc == GM_OK && c->ok; row++) {
        rc = check_read(c, kept, c->rows[row] * r, r, st->es, st->p, ACT, xa);
        for (uint64_t j = 0; j < r && rc == GM_OK && c->ok; j++) {
            double sum = 0, mag = 0;
            for (uint64_t i = 0; i < k; i++) {
                sum += (double)in[row][i] * a[i * r + j];
                mag += fabs((double)in[row][i] * a[i * r + j]);
            }
            /* x A stored, then scaled and stored again */
            double want = check_stored(st->p, st->lora_scale * sum, ACT);
            double tol = 3.0 * gm_tolerance(st->p, want, ACT) + 1.2 * (double)k * 0x1p-23 * mag * st->lora_scale
                         + 1e-30;
            if (!(fabs(xa[j] - want) <= tol))
                check_fail(c, "lora_xa", layer, c->rows[row], j, want, xa[j]);
        }
        for (uint64_t jj = 0; jj < c->n_cols && c->ok; jj++) {
            double sum = 0, mag = 0;
            for (uint64_t j = 0; j < r; j++) {
                sum += (double)xa[j] * b[j * n + c->cols[jj]];
                mag += fabs((double)xa[j] * b[j * n + c->cols[jj]]);
            }
            c->lora_add[(size_t)row * c->n_cols + jj] = sum;
            c->lora_mag[(size_t)row * c->n_cols + jj] = mag;
        }
    }
    free(a);
    free(b);
    free(xa);
    return rc;
}

void check_norm(checker *c, int m, uint64_t layer, float **x, float **y)
{
    model_state *st = c->st;
    for (int r = 0; r < CHECK_ROWS && c->ok; r++) {
        double ss = 0.0;
        for (uint64_t j = 0; j < st->h; j++)
            ss += (double)x[r][j] * x[r][j];
        double inv = 1.0 / sqrt(ss / (double)st->h + RMS_EPS);
        for (uint64_t j = 0; j < st->h && c->ok; j++) {
            double want = check_stored(st->p, x[r][j] * inv * c->w[j], ACT);
            double tol = 2.0 * gm_tolerance(st->p, want, ACT) + 1e-5 * fabs(want) + 1e-30;
            if (!(fabs(y[r][j] - want) <= tol))
                check_fail(c, m == M_FINAL ? "final_norm" : m == M_NORM1 ? "attn_norm" : "mlp_norm", layer, c->rows[r], j,
                     want, y[r][j]);
        }
    }
}

/* Query heads of token rows against the sequence's K and V (GQA), and in
 * train mode the saved log-sum-exp. */
gm_status check_attention(checker *c, uint64_t l, float **q, float **o)
{
    model_state *st = c->st;
    layer_locs lc = model_locs(st, l);
    gm_status rc = GM_OK;
    for (int r = 0; r < CHECK_ROWS && rc == GM_OK && c->ok; r++) {
        uint64_t t = c->rows[r], first = t - t % st->seq, n = t % st->seq + 1;
        rc = check_read(c, lc.k, first * st->kd, n * st->kd, st->kes, st->kp, ACT, c->kseq);
        if (rc == GM_OK)
            rc = check_read(c, lc.v, first * st->kd, n * st->kd, st->kes, st->kp, ACT, c->vseq);
        for (uint64_t j = 0; j < st->heads && rc == GM_OK && c->ok; j++) {
            uint64_t g = j / (st->heads / st->kv_heads);
            double mx = -INFINITY, sum = 0.0, vmax = 0.0, qk_mag = 0.0;
            for (uint64_t i = 0; i < n; i++) {
                double s = 0.0, mag = 0.0;
                for (uint64_t d = 0; d < st->d; d++) {
                    double pr = (double)q[r][j * st->d + d] * c->kseq[i * st->kd + g * st->d + d];
                    s += pr;
                    mag += fabs(pr);
                }
                c->want[i] = s / sqrt((double)st->d);
                mx = fmax(mx, c->want[i]);
                qk_mag = fmax(qk_mag, mag / sqrt((double)st->d));
            }
            for (uint64_t i = 0; i < n; i++)
                sum += c->want[i] = exp(c->want[i] - mx);
            /* The vendor path (st->attn_gemm): scores summed in fp32 by a
             * GEMM (each off by at most e = 1.2 d 2^-24 sum |q k| / sqrt(d),
             * a probability by 2e relatively), probabilities rounded to the
             * activations' precision (u; fp16's subnormals 2^-24 apart) and
             * summed against V in fp32 (1.2 n 2^-24): each a bound on
             * sum p |v| times its relative error. */
            double e_score = st->attn_gemm ? 1.2 * (double)st->d * 0x1p-24 * qk_mag : 0.0;
            double rel = st->attn_gemm ? 2.0 * e_score + gm_unit_roundoff(st->p) + 1.2 * (double)n * 0x1p-24 : 0.0;
            for (uint64_t d = 0; d < st->d && c->ok; d++) {
                double want = 0.0, pv_mag = 0.0;
                for (uint64_t i = 0; i < n; i++) {
                    double v = c->vseq[i * st->kd + g * st->d + d];
                    want += c->want[i] / sum * v;
                    pv_mag += c->want[i] / sum * fabs(v);
                    vmax = fmax(vmax, fabs(v));
                }
                want = check_stored(st->p, want, ACT);
                double tol = 2.0 * gm_tolerance(st->p, want, ACT) + 1e-5 * (1.0 + sqrt((double)n)) * vmax
                             + rel * pv_mag + (st->attn_gemm && st->p == GM_FP16 ? (double)n * 0x1p-24 * vmax : 0.0);
                if (!(fabs(o[r][j * st->d + d] - want) <= tol))
                    check_fail(c, "attn", l, t, j * st->d + d, want, o[r][j * st->d + d]);
            }
            if (st->train && c->ok) {
                float lse;
                rc = check_read(c, lc.lse, j * st->T + t, 1, 4, GM_FP32, 1.0f, &lse);
                double want = mx + log(sum);
                if (rc == GM_OK && !(fabs(lse - want) <= 1e-5 * (1.0 + fabs(want)) + 2.0 * e_score))
                    check_fail(c, "lse", l, t, j, want, lse);
            }
        }
    }
    return rc;
}

void check_swiglu(checker *c, uint64_t l, float **g, float **u, float **act)
{
    model_state *st = c->st;
    for (int r = 0; r < CHECK_ROWS && c->ok; r++)
        for (uint64_t j = 0; j < st->I && c->ok; j++) {
            double gv = g[r][j], want = check_stored(st->p, gv / (1.0 + exp(-gv)) * u[r][j], ACT);
            double tol = 2.0 * gm_tolerance(st->p, want, ACT) + 1e-6 * (1.0 + fabs(want));
            if (!(fabs(act[r][j] - want) <= tol))
                check_fail(c, "swiglu", l, c->rows[r], j, want, act[r][j]);
        }
}

