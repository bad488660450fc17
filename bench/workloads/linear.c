/*
 * linear: a dense layer, Y[batch*seq, out] = X[batch*seq, hidden] * W[hidden, out].
 * Implementations: `tiled` (local-memory tiles, for GPUs), `blocked`
 * (register blocks, no barriers, for CPUs), and the vendor GEMM in each
 * precision its library has (backend.h, gm_gemm): cuBLAS in fp32, fp16,
 * bf16 and int8, cuBLASLt in fp8, CLBlast in fp32 and fp16; where the
 * library, the device or the shape does not allow it, an `unsupported`
 * row says why (never a silent fallback). W may have its own precision
 * (--weight-precision): int4 weights are packed two a byte with an fp16
 * scale per group of rows (w_scales); the vendor takes W in the
 * activations' precision only.
 *
 * int8: x and w hold codes at per-tensor scales sx and sw. Our kernel
 * requantises each fp32 result to an int8 code at sy; the vendor's int8
 * GEMM (cuBLAS, compute type 32I) writes y as the int32 accumulator
 * instead, the exact sum of the products of the same codes (the value
 * y / (sx * sw)), which the check compares exactly. Its y is then 4 bytes
 * an element (gm_shape.int32_out, set by linear_adapt for the memory model).
 */
#include "bench/workloads/kernel_calls.h"
#include "bench/model/precision_roles.h"
#include "bench/workloads/product_check.h"
#include "bench/workloads/runnable.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Inputs repeat with this period in elements (rows of a power-of-two
 * width from 8 up do not line up with it): hashed once, then copied. Making a
 * large input element by element took most of an oom probe's time; the
 * check reads the same host copy, so it checks what was computed. */
#define INPUT_PERIOD (((size_t)1 << 20) + 6)

/* Outputs up to this many are all checked against their dot products
 * (no more work than the sample); beyond, every one through the
 * checksums, and a seeded sample against its dot products. */
#define FULL_CHECK_MAX 4096
#define SAMPLE 1024

typedef struct {
    gm_device *dev;
    gm_shape s;
    size_t m, n, k;
    int impl;                   /* IMPL_* */
    float sx, sw, sy;           /* int8 scales */
    gm_precision wp;            /* the weights' precision */
    size_t group;               /* int4: rows per scale */
    gm_gemm gemm;               /* the vendor's plan (IMPL_BLAS): W's layout, the accumulation */
    size_t out_es;              /* bytes per element of y */
    gm_buffer x, w, ws, y, host_x, host_w, host_ws, out;
    gm_program *prog;
    gm_kernel *kern;
    gm_product_expect sums;     /* the checksums y must have (computed at the first check) */
} linear_state;

enum { IMPL_TILED, IMPL_BLOCKED, IMPL_BLAS };

/* Our kernel for the device type, then the vendor's GEMM where its
 * library has the precision (blas_impl names it); both by default. */
static int linear_impls(const gm_device *dev, const gm_shape *s, const char **out)
{
    const char *vendor = dev->backend->blas_impl ? dev->backend->blas_impl(s->prec) : NULL;
    return gm_impls_pick(s, gm_device_prefers_chunked(dev) ? "blocked" : "tiled", vendor, NULL, out);
}

static bool is_vendor(const char *impl)
{
    return strcmp(impl, "tiled") != 0 && strcmp(impl, "blocked") != 0;
}

/* The vendor's int8 GEMM writes y as int32 accumulators. */
static void linear_adapt(gm_shape *s, const char *impl)
{
    s->int32_out = is_vendor(impl) && s->prec == GM_INT8;
}

/* The vendor GEMM's plan for the point: GM_ERR_UNSUPPORTED, with the
 * reason, where the weights' precision differs or the backend refuses
 * the precision or the shape. */
static gm_status vendor_plan(linear_state *st, const char *impl)
{
    gm_device *dev = st->dev;
    gm_precision p = st->s.prec;
    if (st->wp != p)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: %s weights only, not %s", impl, gm_precision_name(p),
                              gm_precision_name(st->wp));
    if (!dev->backend->blas_plan)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "%s: this backend has no vendor GEMM", impl);
    st->gemm = (gm_gemm){.prec = p, .m = st->m, .n = st->n, .k = st->k};
    gm_status rc = dev->backend->blas_plan(dev, &st->gemm);
    if (rc == GM_ERR_UNSUPPORTED && st->gemm.tn_only) {
        /* The library's "TN" kernels: W held transposed, [out, hidden]. */
        st->gemm.b_nk = true;
        rc = dev->backend->blas_plan(dev, &st->gemm);
    }
    return rc;
}

/* Uploads W as the kernel reads it: [k, n] as the host copy holds it, or
 * transposed to [n, k] where the vendor's plan asks (b_nk), in 32 x 32
 * tiles. The host copy stays [k, n] for the check. */
static gm_status upload_weights(linear_state *st, size_t bytes)
{
    gm_device *dev = st->dev;
    if (st->impl != IMPL_BLAS || !st->gemm.b_nk)
        return dev->backend->copy(dev, 0, &st->w, 0, &st->host_w, 0, bytes, false);
    size_t es = gm_precision_size(st->wp), k = st->k, n = st->n;
    unsigned char *t = malloc(bytes);
    if (!t)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    const unsigned char *w = st->host_w.host;
    for (size_t k0 = 0; k0 < k; k0 += 32)
        for (size_t j0 = 0; j0 < n; j0 += 32)
            for (size_t kk = k0; kk < k && kk < k0 + 32; kk++)
                for (size_t j = j0; j < n && j < j0 + 32; j++)
                    memcpy(t + (j * k + kk) * es, w + (kk * n + j) * es, es);
    gm_buffer src = {.kind = GM_MEM_HOST, .bytes = bytes, .host = t};
    gm_status rc = dev->backend->copy(dev, 0, &st->w, 0, &src, 0, bytes, false);
    free(t);
    return rc;
}

/* dst[i] = gm_input_value(i mod INPUT_PERIOD, which), stored at scale. */
static void fill_input(gm_precision p, void *dst, size_t n, unsigned which, float scale)
{
    size_t es = gm_precision_size(p), first = n < INPUT_PERIOD ? n : INPUT_PERIOD;
    for (size_t i = 0; i < first; i++)
        gm_store(p, dst, i, gm_input_value(i, which), scale);
    /* Doubling copies of whole periods: element j is then element j mod first. */
    for (size_t done = first; done < n;) {
        size_t len = done < n - done ? done : n - done;
        memcpy((char *)dst + done * es, dst, len * es);
        done += len;
    }
}

static void linear_teardown(void *state)
{
    linear_state *st = state;
    if (!st)
        return;
    gm_buffer *bufs[] = {&st->x, &st->w, &st->ws, &st->y, &st->host_x, &st->host_w, &st->host_ws, &st->out};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        gm_device_free(st->dev, bufs[i]);
    if (st->kern)
        st->dev->backend->kernel_release(st->dev, st->kern);
    if (st->prog)
        st->dev->backend->program_release(st->dev, st->prog);
    gm_product_expect_release(&st->sums);
    free(st);
}

static gm_status linear_setup(gm_device *dev, gm_pattern *pat, const gm_shape *s, const char *impl, void **state)
{
    *state = NULL;
    linear_state *st = calloc(1, sizeof *st);
    if (!st)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    st->dev = dev;
    st->s = *s;
    st->m = (size_t)(s->batch * s->seq);
    st->n = (size_t)s->out;
    st->k = (size_t)s->hidden;
    st->impl = !strcmp(impl, "tiled") ? IMPL_TILED : !strcmp(impl, "blocked") ? IMPL_BLOCKED : IMPL_BLAS;
    st->out_es = s->int32_out ? sizeof(int32_t) : gm_precision_size(s->prec);
    st->sx = st->sw = 1.0f / 127.0f;
    st->sy = (float)(sqrt((double)st->k) / 127.0);   /* |y| rarely exceeds sqrt(k) */
    st->wp = gm_weight_prec(s);
    st->group = (size_t)gm_group_size(s);
    st->gemm.acc = GM_ACC_FP32;                      /* our kernels sum in fp32 */
    if (st->impl == IMPL_BLAS && vendor_plan(st, impl) != GM_OK) {
        free(st);
        return dev->err.code;
    }
    bool int4 = st->wp == GM_INT4;
    size_t es = gm_precision_size(s->prec);
    gm_status rc = GM_OK;
    /* Device tensors first, in the memory model's order: x, w, (w_scales), y. */
    size_t sizes[4] = {st->m * st->k * es,
                       int4 ? (size_t)gm_int4_packed_bytes(st->k, st->n) : st->k * st->n * gm_precision_size(st->wp),
                       int4 ? (size_t)gm_int4_scale_bytes(st->k, st->n, st->group) : 0, st->m * st->n * st->out_es};
    gm_buffer *dbufs[4] = {&st->x, &st->w, &st->ws, &st->y};
    for (int i = 0; i < 4 && rc == GM_OK; i++)
        if (i != 2 || int4)
            rc = gm_pattern_alloc(pat, sizes[i], dbufs[i]);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_HOST, sizes[0], &st->host_x);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_HOST, sizes[1], &st->host_w);
    if (rc == GM_OK && int4)
        rc = gm_device_alloc(dev, GM_MEM_HOST, sizes[2], &st->host_ws);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_HOST, sizes[3], &st->out);
    if (rc == GM_OK) {
        fill_input(s->prec, st->host_x.host, st->m * st->k, 0, st->sx);
        if (int4) {
            float *wf = malloc(st->k * st->n * sizeof *wf);
            if (!wf)
                rc = gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
            for (size_t i = 0; wf && i < st->k * st->n; i++)
                wf[i] = gm_input_value(i % INPUT_PERIOD, 1);
            if (wf)
                gm_int4_quantize(wf, st->k, st->n, st->group, st->host_w.host, st->host_ws.host);
            free(wf);
        } else {
            fill_input(st->wp, st->host_w.host, st->k * st->n, 1, st->sw);
        }
    }
    if (rc == GM_OK)
        rc = dev->backend->copy(dev, 0, &st->x, 0, &st->host_x, 0, sizes[0], false);
    if (rc == GM_OK)
        rc = upload_weights(st, sizes[1]);
    if (rc == GM_OK && int4)
        rc = dev->backend->copy(dev, 0, &st->ws, 0, &st->host_ws, 0, sizes[2], false);
    if (rc == GM_OK && st->impl != IMPL_BLAS) {
        char variant[48];
        gm_role_variant(s->prec, st->wp, s->prec, st->impl == IMPL_BLOCKED, variant, sizeof variant);
        rc = dev->backend->program_build(dev, "linear", variant, NULL, &st->prog);
        if (rc == GM_OK)
            rc = dev->backend->kernel_get(dev, st->prog, st->impl == IMPL_TILED ? "linear_tiled" : "linear_blocked",
                                          &st->kern);
    }
    if (rc != GM_OK) {
        gm_error saved = dev->err;
        linear_teardown(st);
        dev->err = saved;
        return rc;
    }
    *state = st;
    return GM_OK;
}

static gm_status linear_enqueue(void *state)
{
    linear_state *st = state;
    gm_device *dev = st->dev;
    if (st->impl == IMPL_BLAS)
        return dev->backend->blas_gemm(dev, 0, &st->gemm, &st->x, &st->w, &st->y);
    gm_linear_call c = {&st->x, &st->w, &st->y, NULL, st->m, st->n, st->k, st->sx, st->sw, st->sy, 0.0f,
                        0, 0, 0, 0, GM_LINEAR_PLAIN};
    if (st->wp == GM_INT4)
        return gm_linear_enqueue_int4(dev, 0, st->kern, st->impl == IMPL_BLOCKED, &c, &st->ws, (unsigned int)st->group);
    return gm_linear_enqueue(dev, 0, st->kern, st->impl == IMPL_BLOCKED, &c);
}

/* Strikes any element of y; a flip where the check has a tolerance flips
 * a bit it must see (gm_output_fault_visible_bits); the int32 sums are
 * checked exactly, so any of their bits. */
static gm_status linear_corrupt(void *state, const gm_output_fault *f, unsigned rep)
{
    linear_state *st = state;
    unsigned low = 0, high = 32;
    if (!st->s.int32_out)
        gm_output_fault_visible_bits(st->s.prec, &low, &high);
    return gm_output_fault_strike_bits(f, st->dev, &st->y, 0, st->m * st->n, st->out_es,
                                       gm_output_fault_salt("linear y"), rep, low, high, NULL);
}

/* The stored (dequantised) weight W[kk, j]. */
static double weight(const linear_state *st, size_t kk, size_t j)
{
    if (st->wp == GM_INT4)
        return gm_int4_load(st->host_w.host, st->host_ws.host, st->n, st->group, kk, j);
    return gm_load(st->wp, st->host_w.host, kk * st->n + j, st->sw);
}

/*
 * Checks Y[i, j] against the double-precision dot product of the stored
 * inputs (the very values the device reads: fp8 and int4 weights
 * dequantised exactly as it does), rounded as the device rounds its
 * output. The bound: the output's rounding, 2 * gm_tolerance (each
 * format's unit roundoff u = 2^-mant at the result's magnitude, or the
 * subnormal spacing; fp8e4m3 u = 2^-3, fp8e5m2 2^-2, the int8 step), once
 * for each side, plus the accumulation of k products in any order,
 * 2 k u_acc * sum |x w| (the standard gamma_k <= 2 k u bound, k u <= 1/2):
 * u_acc = 2^-24 for fp32 sums (our kernels, cuBLAS's compute type 32F,
 * CLBlast's SGEMM; dequantisation products are exact in fp32: at most
 * 11 + 11 significant bits), 2^-11 for CLBlast's HGEMM, which multiplies
 * and sums in fp16, plus k * 2^-24 there for the products below fp16's
 * normal range (inputs are multiples of 2^-8: products of 2^-16 and up,
 * rounded to fp16's subnormal spacing 2^-24).
 */
static bool check(const linear_state *st, size_t i, size_t j, char *note, size_t len)
{
    gm_precision p = st->s.prec;
    double want = 0.0, mag = 0.0;
    for (size_t kk = 0; kk < st->k; kk++) {
        double prod = (double)gm_load(p, st->host_x.host, i * st->k + kk, st->sx) * weight(st, kk, j);
        want += prod;
        mag += fabs(prod);
    }
    unsigned char tmp[4];
    gm_store(p, tmp, 0, (float)want, st->sy);
    double stored = gm_load(p, tmp, 0, st->sy);
    double got = gm_load(p, st->out.host, i * st->n + j, st->sy);
    bool half_sums = st->gemm.acc == GM_ACC_FP16;
    double k = (double)st->k, u_acc = half_sums ? 0x1p-11 : 0x1p-24;
    double tol = 2.0 * gm_tolerance(p, stored, st->sy) + 2.0 * k * u_acc * mag + (half_sums ? k * 0x1p-24 : 0.0);
    if (fabs(got - stored) <= tol)
        return true;
    snprintf(note, len, "y[%zu][%zu]: expected %.7g, got %.7g", i, j, stored, got);
    return false;
}

/* The vendor's int8 GEMM: Y[i, j] must be exactly the sum of the products
 * of the stored codes (integers: no rounding anywhere). */
static bool check_int32(const linear_state *st, size_t i, size_t j, char *note, size_t len)
{
    const int8_t *x = st->host_x.host, *w = st->host_w.host;
    int64_t want = 0;
    for (size_t kk = 0; kk < st->k; kk++)
        want += (int64_t)x[i * st->k + kk] * w[kk * st->n + j];
    int32_t got;
    memcpy(&got, (const char *)st->out.host + (i * st->n + j) * sizeof got, sizeof got);
    if (got == want)
        return true;
    snprintf(note, len, "y[%zu][%zu]: expected %lld, got %ld (int32 accumulator)", i, j, (long long)want, (long)got);
    return false;
}

static bool check_output(const linear_state *st, size_t i, size_t j, char *note, size_t len)
{
    return st->s.int32_out ? check_int32(st, i, j, note, len) : check(st, i, j, note, len);
}

/* n elements of precision p from element `first` of src, as doubles. */
static void load_row(gm_precision p, const void *src, size_t first, size_t n, float scale, double *out)
{
    if (p == GM_FP32) {
        const float *f = (const float *)src + first;
        for (size_t j = 0; j < n; j++)
            out[j] = f[j];
        return;
    }
    for (size_t j = 0; j < n; j++)
        out[j] = gm_load(p, src, first + j, scale);
}

/* The checksums' loaders: rows of x, W (dequantised) and y as the device
 * read and wrote them. */
static void sums_x(const void *ctx, size_t i, double *row)
{
    const linear_state *st = ctx;
    load_row(st->s.prec, st->host_x.host, i * st->k, st->k, st->sx, row);
}

static void sums_w(const void *ctx, size_t kk, double *row)
{
    const linear_state *st = ctx;
    if (st->wp != GM_INT4) {
        load_row(st->wp, st->host_w.host, kk * st->n, st->n, st->sw, row);
        return;
    }
    for (size_t j = 0; j < st->n; j++)
        row[j] = weight(st, kk, j);
}

static void sums_y(const void *ctx, size_t i, double *row)
{
    const linear_state *st = ctx;
    if (!st->s.int32_out) {
        load_row(st->s.prec, st->out.host, i * st->n, st->n, st->sy, row);
        return;
    }
    const int32_t *y = (const int32_t *)st->out.host + i * st->n;
    for (size_t j = 0; j < st->n; j++)
        row[j] = y[j];
}

/* A saturated int8 code (+-127) may stand for a sum anywhere beyond it:
 * such an element (a few in a thousand) is checked against its own dot
 * product, and its bound is then its distance from that product plus the
 * sum's and half a step (NaN where that check fails). */
static double sums_saturated(const void *ctx, size_t i, size_t j, double c)
{
    const linear_state *st = ctx;
    char note[160];
    if (!check(st, i, j, note, sizeof note))
        return NAN;
    double want = 0.0, mag = 0.0;
    for (size_t kk = 0; kk < st->k; kk++) {
        double prod = (double)gm_load(st->s.prec, st->host_x.host, i * st->k + kk, st->sx) * weight(st, kk, j);
        want += prod;
        mag += fabs(prod);
    }
    return fabs(c - want) + 2.0 * (double)st->k * 0x1p-24 * mag + 0.5 * gm_tolerance(GM_INT8, 0.0, st->sy);
}

/*
 * Every element of y through its row and column sums (product_check.h).
 * The rounding of a stored value c: half of gm_tolerance (2^-mant |c|, at
 * least the format's least normal's: twice the half unit in the last
 * place that rounding to nearest may cost); int8: half a step, a saturated
 * code as above; the vendor's int32 sums: exact. The sums' accumulation as
 * the exact check's: fp32 (our kernels, cuBLAS 32F, CLBlast SGEMM), fp16
 * (CLBlast HGEMM, with its products below fp16's normal range), exact
 * (int32).
 */
static int linear_sums(linear_state *st, char *note, size_t len)
{
    gm_precision p = st->s.prec;
    bool half_sums = st->gemm.acc == GM_ACC_FP16, int32 = st->s.int32_out;
    gm_product_sums ps = {.m = st->m, .n = st->n, .k = st->k, .ctx = st, .a_row = sums_x, .b_row = sums_w,
                          .c_row = sums_y, .u_acc = int32 ? 0.0 : half_sums ? 0x1p-11 : 0x1p-24,
                          .acc_abs = half_sums ? (double)st->k * 0x1p-24 : 0.0, .name = "y"};
    if (p == GM_INT8 && !int32) {
        ps.out_abs = 0.5 * gm_tolerance(p, 0.0, st->sy);
        ps.sat = 126.5 * (double)st->sy;
        ps.saturated = sums_saturated;
    } else if (!int32) {
        ps.u_out = 0.5 * gm_tolerance(p, 1.0, st->sy);
        ps.out_abs = 0.5 * gm_tolerance(p, 0.0, st->sy);
    }
    /* Rows a column sum covers (gm_product_group; a mismatch's note says
     * over which rows its sum failed). */
    ps.group = gm_product_group(st->m, st->k, st->n, ps.u_out, p == GM_INT8 && !int32);
    if (!st->sums.want_col && gm_product_expect_init(&st->sums, &ps) != 0) {
        snprintf(note, len, "y: out of host memory for its checksums");
        return -1;
    }
    return gm_product_sums_check(&ps, &st->sums, note, len);
}

/* Small outputs: every element against its dot product. Larger: every
 * element through the checksums, then the corners and a seeded sample
 * against their dot products (exact where the checksums have a
 * tolerance). */
static gm_status linear_verify(void *state, unsigned rep, bool *correct, char *note, size_t len)
{
    linear_state *st = state;
    gm_status rc = st->dev->backend->copy(st->dev, 0, &st->out, 0, &st->y, 0, st->y.bytes, false);
    if (rc != GM_OK)
        return rc;
    *correct = true;
    size_t outputs = st->m * st->n;
    if (outputs <= FULL_CHECK_MAX) {
        for (size_t i = 0; i < st->m && *correct; i++)
            for (size_t j = 0; j < st->n && *correct; j++)
                *correct = check_output(st, i, j, note, len);
        return GM_OK;
    }
    int sums = linear_sums(st, note, len);
    if (sums < 0)
        return gm_device_fail(st->dev, GM_ERR_OOM, 0, "%s", note);
    *correct = sums == 1;
    if (!*correct)
        return GM_OK;
    *correct = check_output(st, 0, 0, note, len) && check_output(st, st->m - 1, st->n - 1, note, len)
               && check_output(st, 0, st->n - 1, note, len) && check_output(st, st->m - 1, 0, note, len);
    uint64_t x = 0x853c49e6748fea9bull ^ ((uint64_t)rep << 20);
    for (int s = 0; s < SAMPLE && *correct; s++) {
        gm_xorshift(&x);
        size_t idx = (size_t)(x % outputs);
        *correct = check_output(st, idx / st->n, idx % st->n, note, len);
    }
    return GM_OK;
}

static void linear_work(const gm_shape *s, double *flops, double *bytes, double *tokens)
{
    double m = (double)s->batch * (double)s->seq, n = (double)s->out, k = (double)s->hidden;
    *flops = 2.0 * m * n * k;
    double wbytes = gm_weight_prec(s) == GM_INT4
                        ? (double)gm_int4_packed_bytes(s->hidden, s->out)
                              + (double)gm_int4_scale_bytes(s->hidden, s->out, gm_group_size(s))
                        : k * n * (double)gm_precision_size(gm_weight_prec(s));
    double out_es = s->int32_out ? (double)sizeof(int32_t) : (double)gm_precision_size(s->prec);
    *bytes = m * k * (double)gm_precision_size(s->prec) + m * n * out_es + wbytes;
    *tokens = m;
}

/* linear: Y[B*S, out] = X[B*S, hidden] * W[hidden, out]. */
static int linear_tensors(const gm_shape *s, gm_tensor *out)
{
    gm_tensor_list l = {out, 0, false};
    uint64_t es = gm_precision_size(s->prec), rows = gm_tensor_mul(&l, s->batch, s->seq);
    gm_tensor_list_add(&l, "x", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, rows, s->hidden), es);
    if (gm_weight_prec(s) == GM_INT4) {
        /* Packed nibbles, ceil(hidden * out / 2) bytes, and one fp16 scale
         * per group of rows of each column. */
        uint64_t packed = gm_int4_packed_bytes(s->hidden, s->out);
        uint64_t scales = gm_int4_scale_bytes(s->hidden, s->out, gm_group_size(s));
        l.overflow |= packed == UINT64_MAX || scales == UINT64_MAX;
        gm_tensor_list_add(&l, "w", GM_ROLE_WEIGHT, packed, 1);
        gm_tensor_list_add(&l, "w_scales", GM_ROLE_WEIGHT, scales, 1);
    } else {
        gm_tensor_list_add(&l, "w", GM_ROLE_WEIGHT, gm_tensor_mul(&l, s->hidden, s->out),
                           gm_precision_size(gm_weight_prec(s)));
    }
    gm_tensor_list_add(&l, "y", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, rows, s->out),
                       s->int32_out ? sizeof(int32_t) : es);
    return gm_tensor_list_finish(&l);
}

const gm_workload gm_workload_linear = {
    .name = "linear",
    .summary = "dense layer [batch*seq, hidden] x [hidden, out]",
    .uses_heads = false,
    .tensors = linear_tensors,
    .impls = linear_impls,
    .adapt = linear_adapt,
    .setup = linear_setup,
    .enqueue = linear_enqueue,
    .corrupt = linear_corrupt,
    .verify = linear_verify,
    .work = linear_work,
    .teardown = linear_teardown,
};
