/*
 * kvcache: decoding `seq` tokens. Every step appends each sequence's key
 * and value to its cache in every layer and attends over the cache so far.
 * `contiguous` reserves each sequence's whole cache; `paged` hands out
 * fixed-size blocks from a pool through a block table, in a shuffled
 * order as a serving engine's allocator would. One iteration is the whole
 * decode; the output of the last step and every cached key and value are
 * verified: the output whole on the device (kv_verify, kernels/kvcache.cl:
 * each query row recomputed from the cache with a plain two-pass softmax,
 * every element compared within the precision's tolerance), untimed, with
 * the host's double-precision check of every query row up to SAMPLE_SEQS,
 * else of a seeded sample, as its cross-check; every cached key and value
 * on the host, bit for bit against what was appended.
 */
#include "bench/model/precision_roles.h"
#include "bench/workloads/device_check.h"
#include "bench/workloads/runnable.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INT8_SCALE (1.0f / 127.0f)
#define SAMPLE_SEQS 32       /* the host's cross-check: every query row up to this many; beyond, a sample */
#define MAX_DIM 256          /* KV_VERIFY_MAX_DIM in kernels/kvcache.cl */

typedef struct {
    gm_device *dev;
    gm_shape s;
    bool paged, chunked;
    unsigned int n_seq, heads, capacity, block, dim, layers, tokens;
    unsigned int group, n_q;        /* GQA: query heads per KV head; query rows (n_seq * group) */
    gm_buffer table, k, v, query, out, scores;
    gm_buffer host_table, host_cache, host_out;
    gm_buffer verdict;              /* kv_verify's count and first index a work group */
    gm_program *prog;
    gm_kernel *append, *attend, *verify;
} kv_state;

static int kvcache_impls(const gm_device *dev, const gm_shape *s, const char **out)
{
    (void)dev;
    (void)s;
    out[0] = "contiguous";
    out[1] = "paged";
    return 2;
}

static void kvcache_adapt(gm_shape *s, const char *impl)
{
    s->paged = strcmp(impl, "paged") == 0;
}

/* Bit-identical to kv_value in kernels/kvcache.cl. */
static float kv_value(unsigned int seq_index, unsigned int token, unsigned int d, unsigned int which)
{
    unsigned int x = seq_index * 0x9e3779b9u ^ token * 0x85ebca6bu ^ d * 0xc2b2ae35u ^ which * 0x27d4eb2fu;
    x ^= x >> 15;
    x *= 0x2c1b3c6du;
    x ^= x >> 12;
    return (float)((int)(x & 511u) - 256) / 256.0f;
}

/* KV heads: a whole model's (GQA, --model PRESET), else one per query head. */
static uint64_t kv_heads_of(const gm_shape *s)
{
    return gm_shape_has_arch(s) && s->arch.kv_heads && s->heads % s->arch.kv_heads == 0 ? s->arch.kv_heads : s->heads;
}

static size_t kv_row(const kv_state *st, unsigned int layer, unsigned int s, unsigned int t)
{
    size_t base = (size_t)layer * st->n_seq * st->capacity * st->dim;
    if (!st->paged)
        return base + ((size_t)s * st->capacity + t) * st->dim;
    unsigned int b = s / st->heads, h = s % st->heads, per_seq = st->capacity / st->block;
    size_t phys = (size_t)((const int *)st->host_table.host)[(size_t)b * per_seq + t / st->block];
    return base + ((phys * st->heads + h) * st->block + t % st->block) * st->dim;
}

static void kvcache_teardown(void *state)
{
    kv_state *st = state;
    if (!st)
        return;
    gm_buffer *bufs[] = {&st->table, &st->k, &st->v, &st->query, &st->out, &st->scores, &st->host_table, &st->host_cache,
                         &st->host_out, &st->verdict};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        gm_device_free(st->dev, bufs[i]);
    if (st->append)
        st->dev->backend->kernel_release(st->dev, st->append);
    if (st->attend)
        st->dev->backend->kernel_release(st->dev, st->attend);
    if (st->verify)
        st->dev->backend->kernel_release(st->dev, st->verify);
    if (st->prog)
        st->dev->backend->program_release(st->dev, st->prog);
    free(st);
}

/* A seeded shuffle of the pool's blocks into the table. */
static void shuffle_table(int *table, size_t n)
{
    for (size_t i = 0; i < n; i++)
        table[i] = (int)i;
    uint64_t x = 0x2545f4914f6cdd1dull;
    for (size_t i = n; i > 1; i--) {
        gm_xorshift(&x);
        size_t j = (size_t)(x % i);
        int tmp = table[i - 1];
        table[i - 1] = table[j];
        table[j] = tmp;
    }
}

static gm_status kvcache_setup(gm_device *dev, gm_pattern *pat, const gm_shape *s, const char *impl, void **state)
{
    *state = NULL;
    if (s->batch * s->heads > 0x7fffffffu || s->seq > 0x7fffffffu || s->layers > 4096)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "shape too large for 32-bit indices");
    if (s->head_dim == 0 || s->head_dim > MAX_DIM)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "head_dim must be 1 to %d", MAX_DIM);
    kv_state *st = calloc(1, sizeof *st);
    if (!st)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    st->dev = dev;
    st->s = *s;
    st->paged = strcmp(impl, "paged") == 0;
    st->chunked = gm_device_prefers_chunked(dev);
    st->heads = (unsigned int)kv_heads_of(s);
    st->n_seq = (unsigned int)(s->batch * st->heads);
    st->group = (unsigned int)(s->heads / st->heads);
    st->n_q = st->n_seq * st->group;
    st->dim = (unsigned int)s->head_dim;
    st->layers = (unsigned int)s->layers;
    st->tokens = (unsigned int)s->seq;
    st->block = (unsigned int)s->block_tokens;
    unsigned int per_seq = (st->tokens + st->block - 1) / st->block;
    st->capacity = st->paged ? per_seq * st->block : st->tokens;
    size_t es = gm_precision_size(s->prec), kes = gm_precision_size(gm_kv_prec(s));
    size_t cache = (size_t)st->layers * st->n_seq * st->capacity * st->dim * kes;
    size_t table_bytes = (size_t)s->batch * per_seq * sizeof(int);
    gm_status rc = GM_OK;
    /* The memory model's order: block table (paged), caches, query, output, scores. */
    if (st->paged)
        rc = gm_pattern_alloc(pat, table_bytes, &st->table);
    if (rc == GM_OK)
        rc = gm_pattern_alloc(pat, cache, &st->k);
    if (rc == GM_OK)
        rc = gm_pattern_alloc(pat, cache, &st->v);
    if (rc == GM_OK)
        rc = gm_pattern_alloc(pat, (size_t)st->n_q * st->dim * es, &st->query);
    if (rc == GM_OK)
        rc = gm_pattern_alloc(pat, (size_t)st->n_q * st->dim * es, &st->out);
    if (rc == GM_OK)
        rc = gm_pattern_alloc(pat, (size_t)st->n_q * st->capacity * sizeof(float), &st->scores);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_HOST, cache, &st->host_cache);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_HOST, st->out.bytes, &st->host_out);
    if (rc == GM_OK && st->paged) {
        rc = gm_device_alloc(dev, GM_MEM_HOST, table_bytes, &st->host_table);
        if (rc == GM_OK) {
            shuffle_table(st->host_table.host, table_bytes / sizeof(int));
            rc = dev->backend->copy(dev, 0, &st->table, 0, &st->host_table, 0, table_bytes, false);
        }
    }
    if (rc == GM_OK) {
        char variant[32];
        rc = dev->backend->program_build(dev, "kvcache",
                                         gm_role_variant(s->prec, s->prec, gm_kv_prec(s), st->chunked, variant,
                                                         sizeof variant),
                                         NULL, &st->prog);
    }
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, st->prog, "kv_append", &st->append);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, st->prog, "kv_attend", &st->attend);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, st->prog, "kv_verify", &st->verify);
    if (rc != GM_OK) {
        gm_error saved = dev->err;
        kvcache_teardown(st);
        dev->err = saved;
        return rc;
    }
    *state = st;
    return GM_OK;
}


static gm_status kvcache_enqueue(void *state)
{
    kv_state *st = state;
    const gm_backend *be = st->dev->backend;
    const unsigned int paged = st->paged;
    const float scale = INT8_SCALE;
    /* Contiguous caches have no table; the kernels never read it then, and
     * any buffer stands in for the argument. */
    const gm_buffer *table = st->paged ? &st->table : &st->scores;
    size_t g1, l1, g2, l2;
    gm_launch_geometry(st->dev, st->chunked, (size_t)st->n_seq * st->dim, &g1, &l1);
    gm_launch_geometry(st->dev, st->chunked, st->n_q, &g2, &l2);
    if (!st->chunked) {
        /* kv_attend on GPUs: a group of KV_GROUP (kernels/kvcache.cl) per query row. */
        size_t groups = st->n_q, cap = (size_t)(st->dev->info.compute_units > 0 ? st->dev->info.compute_units : 1) * 16;
        l2 = 128;
        g2 = (groups < cap ? groups : cap) * l2;
    }
    gm_status rc = GM_OK;
    for (unsigned int t = 0; t < st->tokens && rc == GM_OK; t++)
        for (unsigned int layer = 0; layer < st->layers && rc == GM_OK; layer++) {
            gm_arg a[] = {gm_arg_buf(&st->k), gm_arg_buf(&st->v), gm_arg_buf(&st->query), gm_arg_buf(table), gm_arg_u32(&paged), gm_arg_u32(&st->n_seq), gm_arg_u32(&st->heads),
                          gm_arg_u32(&st->capacity), gm_arg_u32(&st->block), gm_arg_u32(&st->dim), gm_arg_u32(&t), gm_arg_u32(&layer),
                          {GM_ARG_VALUE, NULL, &scale, sizeof scale}, gm_arg_u32(&st->group)};
            rc = be->launch(st->dev, 0, st->append, g1, l1, a, 14);
            gm_arg b[] = {gm_arg_buf(&st->k), gm_arg_buf(&st->v), gm_arg_buf(&st->query), gm_arg_buf(table), gm_arg_buf(&st->scores), gm_arg_buf(&st->out), gm_arg_u32(&paged),
                          gm_arg_u32(&st->n_seq), gm_arg_u32(&st->heads), gm_arg_u32(&st->capacity), gm_arg_u32(&st->block), gm_arg_u32(&st->dim),
                          gm_arg_u32(&t), gm_arg_u32(&layer), {GM_ARG_VALUE, NULL, &scale, sizeof scale},
                          gm_arg_u32(&st->group)};
            if (rc == GM_OK)
                rc = be->launch(st->dev, 0, st->attend, g2, l2, b, 16);
        }
    return rc;
}

/* Strikes any element of the last step's output (n_q rows of dim),
 * flipping a bit the check must see. */
static gm_status kvcache_corrupt(void *state, const gm_output_fault *f, unsigned rep)
{
    kv_state *st = state;
    unsigned low, high;
    gm_output_fault_visible_bits(st->s.prec, &low, &high);
    return gm_output_fault_strike_bits(f, st->dev, &st->out, 0, (size_t)st->n_q * st->dim,
                                       gm_precision_size(st->s.prec), gm_output_fault_salt("kvcache out"), rep, low,
                                       high, NULL);
}

/* The last step's output of query row q (last layer) against a
 * double-precision reference over the cached values the host expects
 * (its KV head's: sequence q / group). */
static bool check_output(const kv_state *st, unsigned int q, double *w, char *note, size_t len)
{
    gm_precision p = st->s.prec, kp = gm_kv_prec(&st->s);
    unsigned int s = q / st->group;
    unsigned int t = st->tokens - 1, layer = st->layers - 1, seq_index = layer * st->n_seq + s;
    unsigned int q_index = seq_index * st->group + q % st->group;
    unsigned char tmp[4];
    double m = -INFINITY, l = 0.0;
    for (unsigned int j = 0; j <= t; j++) {
        double acc = 0.0;
        for (unsigned int d = 0; d < st->dim; d++) {
            gm_store(p, tmp, 0, kv_value(q_index, t, d, 0), INT8_SCALE);
            double qv = gm_load(p, tmp, 0, INT8_SCALE);
            gm_store(kp, tmp, 0, kv_value(seq_index, j, d, 1), INT8_SCALE);
            acc += qv * gm_load(kp, tmp, 0, INT8_SCALE);
        }
        w[j] = acc / sqrt((double)st->dim);
        m = fmax(m, w[j]);
    }
    for (unsigned int j = 0; j <= t; j++)
        l += w[j] = exp(w[j] - m);
    for (unsigned int d = 0; d < st->dim; d++) {
        double want = 0.0;
        for (unsigned int j = 0; j <= t; j++) {
            gm_store(kp, tmp, 0, kv_value(seq_index, j, d, 2), INT8_SCALE);
            want += w[j] / l * gm_load(kp, tmp, 0, INT8_SCALE);
        }
        gm_store(p, tmp, 0, (float)want, INT8_SCALE);
        double stored = gm_load(p, tmp, 0, INT8_SCALE);
        double got = gm_load(p, st->host_out.host, (size_t)q * st->dim + d, INT8_SCALE);
        double tol = 2.0 * gm_tolerance(p, stored, INT8_SCALE) + 1e-5 * (1.0 + sqrt((double)t + 1));
        if (!(fabs(got - stored) <= tol)) {
            snprintf(note, len, "out[%u][%u]: expected %.7g, got %.7g", q, d, stored, got);
            return false;
        }
    }
    return true;
}

/* Every cached key (which 1) or value (which 2) is the one appended. */
static bool check_cache(const kv_state *st, unsigned int which, char *note, size_t len)
{
    gm_precision p = gm_kv_prec(&st->s);
    unsigned char tmp[4];
    for (unsigned int layer = 0; layer < st->layers; layer++)
        for (unsigned int s = 0; s < st->n_seq; s++)
            for (unsigned int t = 0; t < st->tokens; t++) {
                size_t row = kv_row(st, layer, s, t);
                for (unsigned int d = 0; d < st->dim; d++) {
                    gm_store(p, tmp, 0, kv_value(layer * st->n_seq + s, t, d, which), INT8_SCALE);
                    size_t es = gm_precision_size(p);
                    if (memcmp((const char *)st->host_cache.host + (row + d) * es, tmp, es) != 0) {
                        snprintf(note, len, "%s cache: layer %u sequence %u token %u element %u differs",
                                 which == 1 ? "key" : "value", layer, s, t, d);
                        return false;
                    }
                }
            }
    return true;
}

/* The last step's output whole on the device (kv_verify); *v its verdict.
 * Tolerance of the output format, from the host's gm_tolerance:
 * 2 gm_tolerance(p, want) <= out_rel |want| + out_abs. */
static gm_status device_check(kv_state *st, gm_device_verdict *v)
{
    gm_precision p = st->s.prec;
    const float scale = INT8_SCALE, out_rel = p == GM_INT8 ? 0.0f : (float)(2.0 * gm_tolerance(p, 1.0, INT8_SCALE));
    const float out_abs = (float)(2.0 * gm_tolerance(p, 0.0, INT8_SCALE));
    const unsigned int paged = st->paged, t = st->tokens - 1, layer = st->layers - 1;
    const gm_buffer *table = st->paged ? &st->table : &st->scores;   /* unread when contiguous */
    gm_arg args[] = {gm_arg_buf(&st->k),       gm_arg_buf(&st->v),       gm_arg_buf(&st->query),
                     gm_arg_buf(table),        gm_arg_buf(&st->out),     gm_arg_buf(&st->verdict),
                     gm_arg_u32(&paged),       gm_arg_u32(&st->n_seq),   gm_arg_u32(&st->heads),
                     gm_arg_u32(&st->capacity), gm_arg_u32(&st->block),  gm_arg_u32(&st->dim),
                     gm_arg_u32(&t),           gm_arg_u32(&layer),       gm_arg_f32(&scale),
                     gm_arg_u32(&st->group),   gm_arg_f32(&out_rel),     gm_arg_f32(&out_abs)};
    return gm_device_check_run(st->dev, st->verify, st->chunked, st->n_q, args, (int)(sizeof args / sizeof args[0]), 5,
                               &st->verdict, (uint64_t)st->n_q * st->dim, v);
}

static gm_status kvcache_verify(void *state, unsigned rep, bool *correct, char *note, size_t len)
{
    kv_state *st = state;
    const gm_backend *be = st->dev->backend;
    gm_device_verdict v;
    gm_status rc = device_check(st, &v);
    if (rc == GM_OK)
        rc = be->copy(st->dev, 0, &st->host_out, 0, &st->out, 0, st->out.bytes, false);
    double *w = malloc(st->tokens * sizeof *w);
    if (!w)
        return gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    *correct = true;
    if (rc == GM_OK && v.wrong) {
        /* The host's verdict on the query row the device found wrong first. */
        unsigned int row = (unsigned int)(v.first / st->dim);
        char host_note[160] = "";
        bool host_ok = check_output(st, row, w, host_note, sizeof host_note);
        snprintf(note, len, "out: element %llu (out[%u][%llu] = %.7g) wrong; %llu of %llu wrong (checked whole on the "
                 "device)%s%.159s",
                 (unsigned long long)v.first, row, (unsigned long long)(v.first % st->dim),
                 (double)gm_load(st->s.prec, st->host_out.host, (size_t)v.first, INT8_SCALE),
                 (unsigned long long)v.wrong, (unsigned long long)v.of,
                 host_ok ? "; the CPU finds that row right" : "; CPU check: ", host_note);
        *correct = false;
    }
    uint64_t x = 0x9e3779b97f4a7c15ull ^ ((uint64_t)rep << 24);
    unsigned int checks = st->n_q <= SAMPLE_SEQS ? st->n_q : SAMPLE_SEQS;
    for (unsigned int i = 0; rc == GM_OK && i < checks && *correct; i++) {
        gm_xorshift(&x);
        unsigned int s = st->n_q <= SAMPLE_SEQS ? i : (unsigned int)(x % st->n_q);
        *correct = check_output(st, s, w, note, len);
        if (!*correct) {
            size_t used = strlen(note);
            snprintf(note + used, len - used, " (the CPU check; the device's whole check found nothing wrong)");
        }
    }
    free(w);
    if (rc == GM_OK && *correct)
        rc = be->copy(st->dev, 0, &st->host_cache, 0, &st->k, 0, st->k.bytes, false);
    if (rc == GM_OK && *correct)
        *correct = check_cache(st, 1, note, len);
    if (rc == GM_OK && *correct)
        rc = be->copy(st->dev, 0, &st->host_cache, 0, &st->v, 0, st->v.bytes, false);
    if (rc == GM_OK && *correct)
        *correct = check_cache(st, 2, note, len);
    return rc;
}

static void kvcache_work(const gm_shape *s, double *flops, double *bytes, double *tokens)
{
    double n_seq = (double)s->batch * (double)s->heads * (double)s->layers, n = (double)s->seq;
    double d = (double)s->head_dim, pairs = n * (n + 1) / 2;
    *flops = 4.0 * n_seq * pairs * d;
    *bytes = n_seq * (2.0 * pairs * d + 2.0 * n * d) * (double)gm_precision_size(gm_kv_prec(s));
    *tokens = (double)s->batch * n;
}

/*
 * kvcache: decoding up to `seq` tokens. Contiguous: K and V of
 * [B, kv_heads, seq, head_dim] per layer, reserved whole (kv_heads: the
 * whole model's, GQA, or one per query head). Paged: blocks of
 * block_tokens tokens, as many as the sequences need, and a block table.
 * The step's query, output and fp32 scores are workspace.
 */
static int kvcache_tensors(const gm_shape *s, gm_tensor *out)
{
    gm_tensor_list l = {out, 0, false};
    uint64_t es = gm_precision_size(s->prec), kes = gm_precision_size(gm_kv_prec(s));
    uint64_t per_token = gm_tensor_mul(&l, kv_heads_of(s), s->head_dim);
    uint64_t per_query = gm_tensor_mul(&l, s->heads, s->head_dim);
    uint64_t tokens = s->seq;
    if (s->paged) {
        uint64_t blocks_per_seq = (s->seq + s->block_tokens - 1) / s->block_tokens;
        tokens = gm_tensor_mul(&l, blocks_per_seq, s->block_tokens);
        gm_tensor_list_add(&l, "block_table", GM_ROLE_WORKSPACE, gm_tensor_mul(&l, s->batch, blocks_per_seq), 4);
    }
    uint64_t cache = gm_tensor_mul(&l, gm_tensor_mul(&l, s->layers, s->batch), gm_tensor_mul(&l, tokens, per_token));
    gm_tensor_list_add(&l, "k_cache", GM_ROLE_KV_CACHE, cache, kes);
    gm_tensor_list_add(&l, "v_cache", GM_ROLE_KV_CACHE, cache, kes);
    gm_tensor_list_add(&l, "query", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, s->batch, per_query), es);
    gm_tensor_list_add(&l, "output", GM_ROLE_ACTIVATION, gm_tensor_mul(&l, s->batch, per_query), es);
    gm_tensor_list_add(&l, "scores", GM_ROLE_WORKSPACE, gm_tensor_mul(&l, gm_tensor_mul(&l, s->batch, s->heads), tokens), 4);
    return gm_tensor_list_finish(&l);
}

const gm_workload gm_workload_kvcache = {
    .name = "kvcache",
    .summary = "decoding with a growing KV cache, contiguous or paged",
    .uses_heads = true,
    .tensors = kvcache_tensors,
    .impls = kvcache_impls,
    .adapt = kvcache_adapt,
    .setup = kvcache_setup,
    .enqueue = kvcache_enqueue,
    .corrupt = kvcache_corrupt,
    .verify = kvcache_verify,
    .work = kvcache_work,
    .teardown = kvcache_teardown,
};
