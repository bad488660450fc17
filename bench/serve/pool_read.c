/* The decode roofline's read of the KV pool: pool_read.h. */
#include "bench/serve/pool_read.h"

#include "bench/bench.h"
#include "device/device.h"

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
    const float scale = 1.0f;   /* the partial sums are not used: only int8 scales them */
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
    return gm_time_work(r->dev, 0, enqueue_read, &l, ms);
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
