/*
 * serve: one decode step of a serving engine (bench/workloads/serve_engine.h)
 * over `batch` running sequences of `seq` tokens, --mode serve. Set-up
 * prefills each sequence's first seq - 1 tokens in chunks of
 * --max-batched-tokens rows, their blocks taken from the pool in a seeded
 * shuffled order as a serving engine's allocator hands them out; one
 * iteration is the decode step of every sequence's token at position
 * seq - 1 (the token sampled after its prompt), run again at each
 * repetition. The memory model is the engine's (serve_tensors): the pool
 * holds the sequences' blocks (or --kv-blocks' worth, from the serve
 * suite's budget). The serve suite (bench/serve/) runs the engine under
 * load: admission, chunked prefill, decode at every batch, preemption.
 */
#include "bench/workloads/serve_engine.h"

#include "bench/model/precision_roles.h"

#include <stdlib.h>
#include <string.h>

/* The prefill's chunk where --max-batched-tokens is not given (vLLM's
 * default below 70GiB). */
#define DEFAULT_CHUNK 2048

typedef struct {
    serve_engine *e;
    gm_shape s;
} serve_state;

static uint64_t cdiv(uint64_t x, uint64_t y) { return x / y + (x % y != 0); }

/* The engine's dimensions for a point: `batch` sequences (one in an oom
 * probe's run, but the memory of all) of `seq` tokens. */
static serve_dims dims_of(const gm_shape *s)
{
    serve_dims d = {.a = s->arch, .p = s->prec, .kp = gm_kv_prec(s), .block_tokens = s->block_tokens};
    d.max_seqs = s->batch;
    d.max_tokens = s->max_batched_tokens ? s->max_batched_tokens : DEFAULT_CHUNK;
    if (d.max_tokens < d.max_seqs)
        d.max_tokens = d.max_seqs;
    d.max_blocks = cdiv(s->seq, d.block_tokens ? d.block_tokens : 1);
    d.pool_blocks = s->kv_blocks ? s->kv_blocks : s->batch * d.max_blocks;
    return d;
}

static int serve_impls(const gm_device *dev, const gm_shape *s, const char **out)
{
    (void)dev;
    (void)s;
    out[0] = "paged";
    return 1;
}

static int serve_tensors_of(const gm_shape *s, gm_tensor *out)
{
    serve_dims d = dims_of(s);
    return d.block_tokens ? serve_tensors(&d, out) : -1;
}

static void serve_teardown(void *state)
{
    serve_state *st = state;
    if (!st)
        return;
    serve_engine_close(st->e);
    free(st);
}

/* Prefills tokens [0, len) of sequences [0, n) (slots 0..n-1), whole
 * steps of rows, and commits each step's samples. */
static gm_status prefill(serve_engine *e, uint64_t n, uint64_t len)
{
    gm_status rc = GM_OK;
    uint64_t seq = 0, pos = 0;
    while (seq < n && pos < len && rc == GM_OK) {
        serve_step_begin(e);
        while (seq < n) {
            bool last = pos + 1 == len;
            if (!serve_step_add(e, (unsigned)seq, pos, serve_prompt_token(seq, pos, e->V), false, last))
                break;
            if (++pos == len) {
                pos = 0;
                seq++;
            }
        }
        rc = serve_step_upload(e);
        if (rc == GM_OK)
            rc = serve_step_enqueue(e);
        if (rc == GM_OK)
            rc = serve_step_commit(e, NULL);
    }
    return rc;
}

static gm_status serve_setup(gm_device *dev, gm_pattern *pat, const gm_shape *s, const char *impl, void **state)
{
    (void)impl;
    *state = NULL;
    serve_dims d = dims_of(s);
    uint64_t run = s->probe ? 1 : s->batch, len = s->probe ? gm_probe_tokens(s) : s->seq;
    serve_state *st = calloc(1, sizeof *st);
    if (!st)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    st->s = *s;
    gm_status rc = serve_engine_open(dev, pat, &d, &st->e);
    if (rc == GM_OK && d.pool_blocks < run * d.max_blocks)
        rc = gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "--kv-blocks %llu hold fewer than the %llu blocks of %llu "
                            "sequences of %llu tokens", (unsigned long long)d.pool_blocks,
                            (unsigned long long)(run * d.max_blocks), (unsigned long long)run,
                            (unsigned long long)s->seq);
    if (rc == GM_OK) {
        /* Blocks in a seeded shuffled order. */
        uint64_t n = run * d.max_blocks, x = 0x2545f4914f6cdd1dull;
        int32_t *order = malloc(n * sizeof *order);
        if (!order)
            rc = gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
        for (uint64_t i = 0; order && i < n; i++)
            order[i] = (int32_t)i;
        for (uint64_t i = n; order && i > 1; i--) {
            uint64_t j = gm_xorshift(&x) % i;
            int32_t t = order[i - 1];
            order[i - 1] = order[j];
            order[j] = t;
        }
        for (uint64_t i = 0; order && i < n; i++)
            serve_table_set(st->e, (unsigned)(i / d.max_blocks), (unsigned)(i % d.max_blocks), order[i]);
        free(order);
    }
    if (rc == GM_OK && len > 1)
        rc = prefill(st->e, run, len - 1);
    if (rc == GM_OK) {
        serve_step_begin(st->e);
        for (uint64_t i = 0; i < run; i++)
            serve_step_add(st->e, (unsigned)i, len - 1, 0, true, true);
        rc = serve_step_upload(st->e);
    }
    if (rc == GM_OK)
        rc = dev->backend->synchronize(dev, 0);
    if (rc != GM_OK) {
        gm_error saved = dev->err;
        serve_teardown(st);
        dev->err = saved;
        return rc;
    }
    *state = st;
    return GM_OK;
}

static gm_status serve_enqueue(void *state) { return serve_step_enqueue(((serve_state *)state)->e); }

/* The serving engine's fault (serve_step_corrupt), as the serve suite
 * plants it: a seeded element of the step's logits. */
static gm_status serve_corrupt(void *state, const gm_output_fault *f, unsigned rep)
{
    return serve_step_corrupt(((serve_state *)state)->e, f, rep);
}

static gm_status serve_verify(void *state, unsigned rep, bool *correct, char *note, size_t len)
{
    return serve_step_verify(((serve_state *)state)->e, rep, correct, note, len);
}

/* A decode step: every weight read once (the embedding only at the rows'
 * tokens), each sequence's keys and values of its seq tokens read once;
 * 2 flops a weight and a row, 4 per key and query head. */
static void serve_work(const gm_shape *s, double *flops, double *bytes, double *tokens)
{
    const gm_arch *a = &s->arch;
    double B = (double)s->batch, n = (double)s->seq, e = (double)gm_precision_size(s->prec);
    double emb = (double)a->vocab * (double)a->hidden, P = (double)gm_arch_params(a) - emb;
    double kv = (double)gm_arch_kv_bytes_per_token(a, gm_precision_size(gm_kv_prec(s)));
    *flops = 2 * B * P + 4 * B * n * (double)(a->layers * a->heads * a->head_dim);
    *bytes = P * e + B * (double)a->hidden * e + B * n * kv;
    *tokens = B;
}

const gm_workload gm_workload_serve = {
    .name = "serve",
    .summary = "a serving engine's decode step over a paged KV pool (--mode serve)",
    .uses_heads = true,
    .runs_whole_model = true,
    .serves = true,
    .tensors = serve_tensors_of,
    .impls = serve_impls,
    .setup = serve_setup,
    .enqueue = serve_enqueue,
    .corrupt = serve_corrupt,
    .verify = serve_verify,
    .work = serve_work,
    .teardown = serve_teardown,
};
