/*
 * OOM probes: the questions the oom suite asks of the device, each
 * answered in a worker process (bench/oom/worker.c, src/cmd_worker.c) so that a
 * driver abort, the kernel's OOM killer or a hang costs one probe, not the
 * run. The same probes run in-process on the worker's side (probe_local.c).
 *   alloc  can `bytes` be allocated and touched now (then freed)?
 *   total  how much can be had in chunks, each touched (value: bytes)?
 *   free   the device's free memory under the cap (value: bytes)
 *   point  does the workload at this point allocate, run one iteration
 *          and verify? (value: the fragmented pattern's live fragment
 *          bytes; stats: GM_POINT_*: the bytes the point held and the free
 *          memory before it, and where the probe's time went)
 *   fragment  after the fragmented pattern's preparation (filling a given
 *          share of free memory: `fragment FILL`), the largest
 *          block still allocatable (value, to 1MiB) beside the free total
 *          (stats: free bytes, fragment bytes, fragments)
 *   latency  allocation and free latency by block size, for raw driver
 *          allocation, the caching pool or the driver's async pool, with
 *          the device filled to a share first
 */
#ifndef GM_PROBE_H
#define GM_PROBE_H

#include "bench/bench.h"
#include "bench/pattern/pattern.h"
#include "bench/workloads/registry.h"

#define GM_PROBE_STATS 32
/* Block sizes of the latency probe; its stats are 5 a size: the size, then
 * alloc p50, alloc p99, free p50, free p99 in microseconds. */
#define GM_LATENCY_SIZES 5
extern const uint64_t gm_latency_sizes[GM_LATENCY_SIZES];

typedef enum {
    GM_PROBE_FITS,      /* it worked */
    GM_PROBE_OOM,       /* the device (or the cap) said out of memory */
    GM_PROBE_FAILED,    /* any other failure: failed_as and note say what */
    GM_PROBE_CRASH,     /* the worker died: note names the signal or status */
    GM_PROBE_TIMEOUT,   /* the worker overran the watchdog and was killed */
} gm_probe_outcome;

typedef struct {
    gm_probe_outcome outcome;
    gm_row_status failed_as;      /* FAILED: mismatch, unsupported or error */
    bool device_lost;             /* FAILED: the device is gone */
    uint64_t value;               /* total: the bytes obtained */
    double stats[GM_PROBE_STATS]; /* fragment, latency: their figures */
    int n_stats;
    char note[300];
} gm_probe_result;

/* The stats of a point probe, in this order. HELD: the most device
 * memory the point held, by the driver's free memory (what allocation
 * granularity, a pool's segments and the context really took) or by the
 * bytes allocated, whichever is more; FREE: the free memory under the cap
 * before it; then seconds spent in setup (allocation, input fill, copies,
 * kernel builds), the run, verification, and release. */
enum {
    GM_POINT_HELD, GM_POINT_FREE, GM_POINT_SETUP_S, GM_POINT_RUN_S, GM_POINT_VERIFY_S, GM_POINT_RELEASE_S,
    GM_POINT_STATS
};

typedef struct {
    int workload;                 /* index into gm_workloads */
    char impl[32];
    gm_pattern_kind pattern;
    gm_precision prec;
    uint64_t batch, seq;
    bool train;                   /* --mode train's point */
    bool serve;                   /* --mode serve's point */
    unsigned tune;                /* --mode lora or qlora's point: its gm_plan_mode (0 otherwise) */
} gm_probe_point;

/* The shape of a probe point: the options' model shape at its precision,
 * sequence length and batch, adapted to its implementation. */
gm_shape gm_probe_shape(const gm_bench_opts *o, const gm_probe_point *p);

/* In this process, on dev. */
void gm_probe_alloc_local(gm_device *dev, uint64_t bytes, gm_probe_result *r);
void gm_probe_total_local(gm_device *dev, gm_probe_result *r);
void gm_probe_free_local(gm_device *dev, gm_probe_result *r);
void gm_probe_point_local(gm_device *dev, const gm_bench_opts *o, const gm_probe_point *p, gm_probe_result *r);
void gm_probe_fragment_local(gm_device *dev, const gm_bench_opts *o, double fill, gm_probe_result *r);
void gm_probe_latency_local(gm_device *dev, const gm_bench_opts *o, gm_pattern_kind kind, double fill,
                            gm_probe_result *r);

/* The wire format between the suite and its worker: one line each way. */
int gm_probe_format_point(const gm_probe_point *p, char *buf, size_t len);
int gm_probe_parse_point(const char *line, gm_probe_point *p);
int gm_probe_format_result(const gm_probe_result *r, char *buf, size_t len);
int gm_probe_parse_result(const char *line, gm_probe_result *r);

/* A worker process that answers probes for suite b, restarted after a
 * crash or a timeout. */
typedef struct gm_worker gm_worker;
gm_worker *gm_worker_new(gm_bench *b);
void gm_worker_alloc(gm_worker *w, uint64_t bytes, gm_probe_result *r);
void gm_worker_total(gm_worker *w, gm_probe_result *r);
void gm_worker_free_memory(gm_worker *w, gm_probe_result *r);
void gm_worker_point(gm_worker *w, const gm_probe_point *p, gm_probe_result *r);
void gm_worker_fragment(gm_worker *w, double fill, gm_probe_result *r);
void gm_worker_latency(gm_worker *w, gm_pattern_kind kind, double fill, gm_probe_result *r);
/* Ends the worker (and waits for it); w may be NULL. */
void gm_worker_free(gm_worker *w);

#endif
