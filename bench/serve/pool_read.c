/* The decode roofline's read of the KV pool: pool_read.h. */
#include "bench/serve/pool_read.h"

#include "bench/bench.h"
#include "device/device.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* One launch of the read over the pool's first `n` elements. */
typedef struct {
    serve_pool_read *r;
    unsigned long n;
    size_t global, local;
} pool_read_launch;

static gm_status enqueue_read(void *ctx)
{
    const pool_read_launch *l = ctx;
    const float scale = 1.0f;   /* elements as stored (serve_pool_read_check loads them so) */
    gm_arg args[] = {gm_arg_buf(l->r->pool), gm_arg_buf(&l->r->partials),
                     (gm_arg){GM_ARG_VALUE, NULL, &l->n, sizeof l->n}, gm_arg_f32(&scale)};
    return l->r->dev->backend->launch(l->r->dev, 0, l->r->read, l->global, l->local, args, 4);
}

gm_status serve_pool_read_open(serve_pool_read *r, serve_engine *e)
{
    memset(r, 0, sizeof *r);
    r->dev = e->dev;
    r->pool = &e->buf[SB_POOL];
    r->p = e->d.kp;
    r->chunked = e->chunked;
    char variant[64];
    gm_kernel_variant(r->p, r->chunked, variant, sizeof variant);
    gm_status st = r->dev->backend->program_build(r->dev, "stream", variant, NULL, &r->prog);
    if (st == GM_OK)
        st = r->dev->backend->kernel_get(r->dev, r->prog, "stream_read", &r->read);
    /* The most groups any read of the pool launches: one partial each. */
    size_t global = 0, local = 1;
    gm_stream_geometry(r->dev, r->chunked, r->pool->bytes / 16, &global, &local);
    if (st == GM_OK)
        st = gm_device_alloc(r->dev, GM_MEM_DEVICE, (global / local) * sizeof(float), &r->partials);
    if (st != GM_OK)
        serve_pool_read_close(r);
    return st;
}

gm_status serve_pool_read_time(serve_pool_read *r, double bytes, double *read, double *ms)
{
    size_t vectors = r->pool->bytes / 16;
    if (bytes < (double)vectors * 16)
        vectors = (size_t)(bytes / 16);
    if (vectors == 0)
        vectors = 1;
    pool_read_launch l = {r, (unsigned long)(vectors * 16 / gm_precision_size(r->p)), 0, 1};
    gm_stream_geometry(r->dev, r->chunked, vectors, &l.global, &l.local);
    *read = (double)vectors * 16;
    r->last_n = l.n;
    r->last_global = l.global;
    r->last_local = l.local;
    return gm_time_work(r->dev, 0, enqueue_read, &l, ms);
}

/* The host's sum of the pool's first n elements and of their magnitudes. */
static gm_status host_sum(serve_pool_read *r, double *sum, double *mag)
{
    gm_buffer h = {0};
    size_t bytes = (size_t)r->last_n * gm_precision_size(r->p);
    gm_status st = gm_device_alloc(r->dev, GM_MEM_HOST, bytes, &h);
    if (st == GM_OK)
        st = r->dev->backend->copy(r->dev, 0, &h, 0, r->pool, 0, bytes, false);
    *sum = *mag = 0;
    for (unsigned long i = 0; st == GM_OK && i < r->last_n; i++) {
        double x = gm_load(r->p, h.host, i, 1.0f);
        *sum += x;
        *mag += fabs(x);
    }
    gm_device_free(r->dev, &h);
    return st;
}

gm_status serve_pool_read_check(serve_pool_read *r, bool *ok, char *why, size_t len)
{
    *ok = true;
    const size_t groups = r->last_global / r->last_local, pbytes = groups * sizeof(float);
    gm_buffer h = {0};
    gm_status st = gm_device_alloc(r->dev, GM_MEM_HOST, 2 * pbytes, &h);
    if (st == GM_OK)
        st = r->dev->backend->copy(r->dev, 0, &h, 0, &r->partials, 0, pbytes, false);
    pool_read_launch l = {r, r->last_n, r->last_global, r->last_local};
    if (st == GM_OK)
        st = enqueue_read(&l);
    if (st == GM_OK)
        st = r->dev->backend->copy(r->dev, 0, &h, pbytes, &r->partials, 0, pbytes, false);
    const float *first = h.host, *second = first + groups;
    double total = 0;
    for (size_t g = 0; st == GM_OK && g < groups && *ok; g++) {
        if (memcmp(&first[g], &second[g], sizeof(float)) != 0) {
            *ok = false;
            snprintf(why, len, "the KV pool read's partial sum of group %zu differs between two runs (%.9g, then %.9g)",
                     g, first[g], second[g]);
        }
        total += first[g];
    }
    gm_device_free(r->dev, &h);
    double want = 0, mag = 0;
    const bool by_host = (size_t)r->last_n * gm_precision_size(r->p) <= POOL_READ_HOST_CHECK;
    if (st == GM_OK && *ok && by_host)
        st = host_sum(r, &want, &mag);
    const double bound = 2.0 * (double)r->last_n * ldexp(1.0, -24) * mag;
    if (st == GM_OK && *ok && by_host && !(fabs(total - want) <= bound) && !(isnan(want) && isnan(total))) {
        *ok = false;
        snprintf(why, len, "the KV pool read's sum over %lu elements is %.9g, the host's %.9g (bound %.3g)",
                 r->last_n, total, want, bound);
    }
    return st;
}

void serve_pool_read_close(serve_pool_read *r)
{
    if (r->read)
        r->dev->backend->kernel_release(r->dev, r->read);
    if (r->prog)
        r->dev->backend->program_release(r->dev, r->prog);
    if (r->dev)
        gm_device_free(r->dev, &r->partials);
    memset(r, 0, sizeof *r);
}
