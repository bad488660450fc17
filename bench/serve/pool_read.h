/*
 * The decode roofline's yardstick: a read from device memory of the KV
 * pool, in its precision, by the stream suite's read kernel
 * (kernels/stream.cl stream_read), timed as a decode step is (gm_time_work)
 * right beside the steps, so that a step and the read it is measured
 * against meet the same load on a shared device.
 */
#ifndef GM_SERVE_POOL_READ_H
#define GM_SERVE_POOL_READ_H

#include "bench/workloads/serve_engine.h"

typedef struct {
    gm_device *dev;
    const gm_buffer *pool;      /* the engine's KV pool: what is read */
    gm_precision p;             /* the pool's precision */
    bool chunked;               /* the engine's access pattern */
    gm_program *prog;
    gm_kernel *read;
    gm_buffer partials;         /* one float a work group */
    unsigned long last_n;       /* the last timed read: elements and launch */
    size_t last_global, last_local;
} serve_pool_read;

/* Builds the read kernel for the engine's pool and its partial sums. On
 * failure returns the status with dev->err set and holds nothing. */
gm_status serve_pool_read_open(serve_pool_read *r, serve_engine *e);
/* Reads the pool's first `bytes` (the whole pool at most, in whole
 * 16-byte vectors; at least one), timed: *read the bytes read, *ms the
 * device time. */
gm_status serve_pool_read_time(serve_pool_read *r, double bytes, double *read, double *ms);
/* The read is a kernel's output like any other: checks the last timed
 * read. Its partial sums must equal a second, untimed run's bit for bit,
 * and where it read at most POOL_READ_HOST_CHECK bytes their total must
 * equal the host's double sum of the same elements within fp32
 * summation's bound (2 n 2^-24 sum |x|). *ok false names the difference
 * in why. Returns a device error, else GM_OK. */
#define POOL_READ_HOST_CHECK (64u << 20)
gm_status serve_pool_read_check(serve_pool_read *r, bool *ok, char *why, size_t len);
/* Releases what open holds (r zeroed before open, or opened). */
void serve_pool_read_close(serve_pool_read *r);

#endif
