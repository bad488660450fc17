/*
 * attention: softmax(q k^T / sqrt(head_dim)) v over [batch, heads, seq,
 * head_dim], `naive` (the fp32 score matrix materialised: memory grows
 * with seq^2) or `tiled` (keys streamed with an online softmax: memory
 * grows with seq). --causal masks keys after the query.
 *
 * The output is checked whole on the device after every repetition
 * (attention_verify, kernels/attention.cl: each row recomputed with a
 * plain two-pass softmax, every element compared within the precision's
 * tolerance), untimed; the host's double-precision check of every row up
 * to FULL_CHECK_ROWS, beyond that of the first, middle and last and a
 * seeded sample, cross-checks the verifier.
 */
#include "bench/workloads/device_check.h"
#include "bench/workloads/kernel_calls.h"
#include "bench/workloads/runnable.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIM 256          /* GM_ATTN_MAX_DIM in kernels/attention.cl */
#define FULL_CHECK_ROWS 512  /* the host's cross-check: every row up to this many; beyond, a sample */
#define SAMPLE_ROWS 64
#define INT8_SCALE (1.0f / 127.0f)

typedef struct {
    gm_device *dev;
    gm_shape s;
    bool naive, chunked;
    unsigned int bh, seq, dim;
    gm_buffer q, k, v, o, work;      /* work: scores (naive) or softmax stats (tiled) */
    gm_buffer host_q, host_k, host_v, out;
    gm_buffer verdict;               /* attention_verify's count and first index a work group */
    gm_program *prog;
    gm_kernel *scores, *softmax, *pv, *tiled, *verify;
} attn_state;

static int attention_impls(const gm_device *dev, const gm_shape *s, const char **out)
{
    (void)dev;
    (void)s;
    out[0] = "naive";
    out[1] = "tiled";
    return 2;
}

static void attention_adapt(gm_shape *s, const char *impl)
{
    s->naive = strcmp(impl, "naive") == 0;
}

static void attention_teardown(void *state)
{
    attn_state *st = state;
    if (!st)
        return;
    gm_buffer *bufs[] = {&st->q,      &st->k,      &st->v,      &st->o,   &st->work,
                         &st->host_q, &st->host_k, &st->host_v, &st->out, &st->verdict};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        gm_device_free(st->dev, bufs[i]);
    gm_kernel *kernels[] = {st->scores, st->softmax, st->pv, st->tiled, st->verify};
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
        if (kernels[i])
            st->dev->backend->kernel_release(st->dev, kernels[i]);
    if (st->prog)
        st->dev->backend->program_release(st->dev, st->prog);
    free(st);
}

static gm_status fill_input(attn_state *st, gm_buffer *host, gm_buffer *dev_buf, unsigned which)
{
    size_t n = (size_t)st->bh * st->seq * st->dim;
    for (size_t i = 0; i < n; i++)
        gm_store(st->s.prec, host->host, i, gm_input_value(i, which), INT8_SCALE);
    return st->dev->backend->copy(st->dev, 0, dev_buf, 0, host, 0, host->bytes, false);
}

static gm_status attention_setup(gm_device *dev, gm_pattern *pat, const gm_shape *s, const char *impl, void **state)
{
    *state = NULL;
    if (s->head_dim > MAX_DIM || s->heads * s->head_dim == 0)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "head_dim must be 1 to %d", MAX_DIM);
    if (s->batch * s->heads > 0xffffffffu || s->seq > 0xffffffffu)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "batch * heads and seq must fit 32 bits");
    attn_state *st = calloc(1, sizeof *st);
    if (!st)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    st->dev = dev;
    st->s = *s;
    st->naive = strcmp(impl, "naive") == 0;
    st->chunked = gm_device_prefers_chunked(dev);
    st->bh = (unsigned int)(s->batch * s->heads);
    st->seq = (unsigned int)s->seq;
    st->dim = (unsigned int)s->head_dim;
    size_t es = gm_precision_size(s->prec), rows = (size_t)st->bh * st->seq;
    size_t qkv = rows * st->dim * es;
    size_t work = st->naive ? rows * st->seq * sizeof(float) : rows * 2 * sizeof(float);
    gm_status rc = GM_OK;
    gm_buffer *dbufs[5] = {&st->q, &st->k, &st->v, &st->o, &st->work};
    for (int i = 0; i < 5 && rc == GM_OK; i++)
        rc = gm_pattern_alloc(pat, i < 4 ? qkv : work, dbufs[i]);
    gm_buffer *hbufs[4] = {&st->host_q, &st->host_k, &st->host_v, &st->out};
    for (int i = 0; i < 4 && rc == GM_OK; i++)
        rc = gm_device_alloc(dev, GM_MEM_HOST, qkv, hbufs[i]);
    for (unsigned i = 0; i < 3 && rc == GM_OK; i++)
        rc = fill_input(st, hbufs[i], dbufs[i], i);
    if (rc == GM_OK) {
        char variant[32];
        rc = dev->backend->program_build(dev, "attention", gm_kernel_variant(s->prec, st->chunked, variant, sizeof variant),
                                         NULL, &st->prog);
    }
    if (rc == GM_OK && st->naive) {
        rc = dev->backend->kernel_get(dev, st->prog, "attention_scores", &st->scores);
        if (rc == GM_OK)
            rc = dev->backend->kernel_get(dev, st->prog, "attention_softmax", &st->softmax);
        if (rc == GM_OK)
            rc = dev->backend->kernel_get(dev, st->prog, "attention_pv", &st->pv);
    } else if (rc == GM_OK) {
        rc = dev->backend->kernel_get(dev, st->prog, "attention_tiled", &st->tiled);
    }
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, st->prog, "attention_verify", &st->verify);
    if (rc != GM_OK) {
        gm_error saved = dev->err;
        attention_teardown(st);
        dev->err = saved;
        return rc;
    }
    *state = st;
    return GM_OK;
}


static gm_status launch(attn_state *st, gm_kernel *k, size_t items, const gm_arg *args, int n)
{
    size_t global, local;
    gm_launch_geometry(st->dev, st->chunked, items, &global, &local);
    return st->dev->backend->launch(st->dev, 0, k, global, local, args, n);
}

static gm_status attention_enqueue(void *state)
{
    attn_state *st = state;
    const unsigned int causal = st->s.causal, rows = st->bh * st->seq;
    const float scale = INT8_SCALE;
    size_t n_rows = (size_t)st->bh * st->seq;
    if (!st->naive) {
        /* Head-major: one "head" per row of bh, rows dim apart. */
        const uint64_t per_head = (uint64_t)st->seq * st->dim;
        gm_attention_call c = {&st->q, &st->k, &st->v, &st->o, &st->work, st->bh, st->seq, st->dim, causal, 1,
                               scale, scale, per_head, st->dim, per_head, st->dim, per_head, st->dim, 0, 0, 0, 0, 1};
        return gm_attention_enqueue(st->dev, st->tiled, st->chunked, &c);
    }
    gm_arg s1[] = {gm_arg_buf(&st->q), gm_arg_buf(&st->k), gm_arg_buf(&st->work), gm_arg_u32(&st->bh), gm_arg_u32(&st->seq), gm_arg_u32(&st->dim),
                   gm_arg_u32(&causal), gm_arg_f32(&scale)};
    gm_status rc = launch(st, st->scores, n_rows * st->seq, s1, 8);
    gm_arg s2[] = {gm_arg_buf(&st->work), gm_arg_u32(&rows), gm_arg_u32(&st->seq)};
    if (rc == GM_OK)
        rc = launch(st, st->softmax, n_rows, s2, 3);
    gm_arg s3[] = {gm_arg_buf(&st->work), gm_arg_buf(&st->v), gm_arg_buf(&st->o), gm_arg_u32(&st->bh), gm_arg_u32(&st->seq), gm_arg_u32(&st->dim),
                   gm_arg_f32(&scale), gm_arg_f32(&scale)};
    if (rc == GM_OK)
        rc = launch(st, st->pv, n_rows * st->dim, s3, 8);
    return rc;
}

/* Strikes any element of o, flipping a bit the check must see. */
static gm_status attention_corrupt(void *state, const gm_output_fault *f, unsigned rep)
{
    attn_state *st = state;
    unsigned low, high;
    gm_output_fault_visible_bits(st->s.prec, &low, &high);
    return gm_output_fault_strike_bits(f, st->dev, &st->o, 0, (size_t)st->bh * st->seq * st->dim,
                                       gm_precision_size(st->s.prec), gm_output_fault_salt("attention o"), rep, low,
                                       high, NULL);
}

/* Checks query row r (of bh * seq) against a double-precision reference. */
static bool check_row(const attn_state *st, size_t r, double *scores, char *note, size_t len)
{
    gm_precision p = st->s.prec;
    size_t h = r / st->seq, i = r % st->seq, last = st->s.causal ? i + 1 : st->seq;
    double m = -INFINITY, l = 0.0;
    for (size_t j = 0; j < last; j++) {
        double s = 0.0;
        for (size_t d = 0; d < st->dim; d++)
            s += (double)gm_load(p, st->host_q.host, r * st->dim + d, INT8_SCALE)
                 * (double)gm_load(p, st->host_k.host, (h * st->seq + j) * st->dim + d, INT8_SCALE);
        scores[j] = s / sqrt((double)st->dim);
        m = fmax(m, scores[j]);
    }
    for (size_t j = 0; j < last; j++)
        l += scores[j] = exp(scores[j] - m);
    for (size_t d = 0; d < st->dim; d++) {
        double want = 0.0;
        for (size_t j = 0; j < last; j++)
            want += scores[j] / l * (double)gm_load(p, st->host_v.host, (h * st->seq + j) * st->dim + d, INT8_SCALE);
        unsigned char tmp[4];
        gm_store(p, tmp, 0, (float)want, INT8_SCALE);
        double stored = gm_load(p, tmp, 0, INT8_SCALE);
        double got = gm_load(p, st->out.host, r * st->dim + d, INT8_SCALE);
        /* Two roundings of the output format, plus fp32 exp and sums. */
        double tol = 2.0 * gm_tolerance(p, stored, INT8_SCALE) + 1e-5 * (1.0 + sqrt((double)last));
        if (!(fabs(got - stored) <= tol)) {
            snprintf(note, len, "o[%zu][%zu]: expected %.7g, got %.7g", r, d, stored, got);
            return false;
        }
    }
    return true;
}

/* The host's check of rows[0..n) (double precision); stops at the first
 * wrong row, its note in note. */
static bool host_check(const attn_state *st, const size_t *rows, size_t n, char *note, size_t len)
{
    double *scores = malloc(st->seq * sizeof *scores);
    if (!scores) {
        snprintf(note, len, "out of host memory for the CPU check");
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++)
        ok = check_row(st, rows[i], scores, note, len);
    free(scores);
    return ok;
}

/* The rows the host cross-checks: every row up to FULL_CHECK_ROWS, else the
 * first, last and middle and SAMPLE_ROWS seeded ones. Returns how many. */
static size_t host_rows(const attn_state *st, unsigned rep, size_t *rows)
{
    size_t n = (size_t)st->bh * st->seq;
    if (n <= FULL_CHECK_ROWS) {
        for (size_t r = 0; r < n; r++)
            rows[r] = r;
        return n;
    }
    rows[0] = 0;
    rows[1] = n - 1;
    rows[2] = n / 2;
    uint64_t x = 0x9e3779b97f4a7c15ull ^ ((uint64_t)rep << 24);
    for (int s = 0; s < SAMPLE_ROWS; s++) {
        gm_xorshift(&x);
        rows[3 + s] = (size_t)(x % n);
    }
    return 3 + SAMPLE_ROWS;
}

/*
 * Every element of o on the device (attention_verify), then the host's
 * cross-check. Tolerance of the output format, from the host's
 * gm_tolerance: 2 gm_tolerance(p, want) <= out_rel |want| + out_abs.
 */
static gm_status attention_verify(void *state, unsigned rep, bool *correct, char *note, size_t len)
{
    attn_state *st = state;
    gm_precision p = st->s.prec;
    bool integer = p == GM_INT8;
    const float scale = INT8_SCALE, out_rel = integer ? 0.0f : (float)(2.0 * gm_tolerance(p, 1.0, INT8_SCALE));
    const float out_abs = (float)(2.0 * gm_tolerance(p, 0.0, INT8_SCALE));
    const unsigned int causal = st->s.causal;
    gm_arg args[] = {gm_arg_buf(&st->q),    gm_arg_buf(&st->k),    gm_arg_buf(&st->v),     gm_arg_buf(&st->o),
                     gm_arg_buf(&st->verdict), gm_arg_u32(&st->bh),   gm_arg_u32(&st->seq),  gm_arg_u32(&st->dim),
                     gm_arg_u32(&causal),   gm_arg_f32(&scale),    gm_arg_f32(&scale),     gm_arg_f32(&out_rel),
                     gm_arg_f32(&out_abs)};
    size_t rows = (size_t)st->bh * st->seq;
    gm_device_verdict v;
    gm_status rc = gm_device_check_run(st->dev, st->verify, st->chunked, rows, args,
                                       (int)(sizeof args / sizeof args[0]), 4, &st->verdict,
                                       (uint64_t)rows * st->dim, &v);
    if (rc == GM_OK)
        rc = st->dev->backend->copy(st->dev, 0, &st->out, 0, &st->o, 0, st->o.bytes, false);
    if (rc != GM_OK)
        return rc;
    size_t picks[3 + SAMPLE_ROWS > FULL_CHECK_ROWS ? 3 + SAMPLE_ROWS : FULL_CHECK_ROWS];
    size_t n_picks = host_rows(st, rep, picks);
    char host_note[160] = "";
    if (v.wrong) {
        /* The host's verdict on the row the device found wrong first. */
        size_t row = (size_t)(v.first / st->dim);
        bool host_ok = host_check(st, &row, 1, host_note, sizeof host_note);
        snprintf(note, len, "o: element %llu (o[%llu][%llu] = %.7g) wrong; %llu of %llu wrong (checked whole on the "
                 "device)%s%.159s",
                 (unsigned long long)v.first, (unsigned long long)row, (unsigned long long)(v.first % st->dim),
                 (double)gm_load(p, st->out.host, (size_t)v.first, INT8_SCALE), (unsigned long long)v.wrong,
                 (unsigned long long)v.of, host_ok ? "; the CPU finds that row right" : "; CPU check: ", host_note);
        *correct = false;
    } else if (!host_check(st, picks, n_picks, host_note, sizeof host_note)) {
        snprintf(note, len, "%.159s (the CPU check; the device's whole check found nothing wrong)", host_note);
        *correct = false;
    } else {
        *correct = true;
    }
    return GM_OK;
}

static gm_status attention_output(void *state, float *dst, size_t n)
{
    attn_state *st = state;
    size_t count = (size_t)st->bh * st->seq * st->dim;
    if (n != count)
        return gm_device_fail(st->dev, GM_ERR_INVALID, 0, "the output has %zu elements, not %zu", count, n);
    gm_status rc = st->dev->backend->copy(st->dev, 0, &st->out, 0, &st->o, 0, st->o.bytes, false);
    for (size_t i = 0; rc == GM_OK && i < n; i++)
        dst[i] = gm_load(st->s.prec, st->out.host, i, INT8_SCALE);
    return rc;
}

static void attention_work(const gm_shape *s, double *flops, double *bytes, double *tokens)
{
    double bh = (double)s->batch * (double)s->heads, n = (double)s->seq, d = (double)s->head_dim;
    double pairs = s->causal ? n * (n + 1) / 2 : n * n;
    *flops = 4.0 * bh * pairs * d;
    *bytes = 4.0 * bh * n * d * (double)gm_precision_size(s->prec);
    if (s->naive)
        *bytes += 4.0 * bh * n * n * 4.0;   /* scores: written, read and written by softmax, read */
    *tokens = (double)s->batch * n;
}

/* attention over [B, heads, S, head_dim]: q, k, v, o; naive adds the
 * S x S score matrix per (batch, head); tiled keeps a running max and sum
 * per query row. */
static void attention_into(gm_tensor_list *l, const gm_shape *s, uint64_t batch, const char *prefix)
{
    uint64_t es = gm_precision_size(s->prec);
    uint64_t rows = gm_tensor_mul(l, gm_tensor_mul(l, batch, s->heads), s->seq);
    uint64_t qkv = gm_tensor_mul(l, rows, s->head_dim);
    char name[32];
    static const char *const parts[] = {"q", "k", "v", "o"};
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof name, "%s%s", prefix, parts[i]);
        gm_tensor_list_add(l, name, GM_ROLE_ACTIVATION, qkv, es);
    }
    snprintf(name, sizeof name, "%s%s", prefix, s->naive ? "scores" : "softmax_stats");
    gm_tensor_list_add(l, name, GM_ROLE_WORKSPACE, s->naive ? gm_tensor_mul(l, rows, s->seq) : gm_tensor_mul(l, rows, 2), 4);
}

static int attention_tensors(const gm_shape *s, gm_tensor *out)
{
    gm_tensor_list l = {out, 0, false};
    attention_into(&l, s, s->batch, "");
    return gm_tensor_list_finish(&l);
}

const gm_workload gm_workload_attention = {
    .name = "attention",
    .summary = "scaled dot-product attention, naive or tiled",
    .uses_heads = true,
    .tensors = attention_tensors,
    .impls = attention_impls,
    .adapt = attention_adapt,
    .setup = attention_setup,
    .enqueue = attention_enqueue,
    .corrupt = attention_corrupt,
    .verify = attention_verify,
    .output = attention_output,
    .work = attention_work,
    .teardown = attention_teardown,
};
