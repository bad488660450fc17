/*
 * Allocation patterns: how a workload's tensors become device allocations.
 * Workloads ask the pattern for each device tensor (in their memory
 * model's order); any workload runs under any pattern.
 *   per-tensor  one allocation per tensor
 *   monolithic  one arena for the point, carved into the tensors, each
 *               starting at a multiple of GM_VIEW_ALIGN
 *   fragmented  first fragments the device: a seeded mix of allocation
 *               sizes (--frag-sizes) up to a share of free memory
 *               (--frag-fill), a share of them (--frag-free) then freed in
 *               random order; the rest stay live through the point; then
 *               one allocation per tensor
 *   pool        a PyTorch-like caching allocator (bench/pattern/caching.h)
 *   async-pool  the driver's stream-ordered pool (CUDA cuMemAllocAsync),
 *               one allocation per tensor; unsupported on OpenCL
 *   managed     unified memory per tensor (CUDA managed, OpenCL
 *               fine-grained SVM); never more than the device has free
 *               unless --allow-oversubscribe
 *   growth      a caching allocator that reserves on demand, doubling
 *               (TensorFlow's allow_growth)
 *   prealloc    a caching allocator that reserves --prealloc of free
 *               memory at its first request and never grows (JAX's and
 *               TensorFlow's default)
 * The caching allocators live in a gm_pattern_env, which outlives points:
 * blocks a point frees stay cached for the next.
 */
#ifndef GM_PATTERN_H
#define GM_PATTERN_H

#include "bench/pattern/caching.h"
#include "device/device.h"
#include "bench/options.h"
#include "bench/model/workload.h"

typedef enum {
    GM_PATTERN_PER_TENSOR,
    GM_PATTERN_MONOLITHIC,
    GM_PATTERN_FRAGMENTED,
    GM_PATTERN_POOL,
    GM_PATTERN_ASYNC_POOL,
    GM_PATTERN_MANAGED,
    GM_PATTERN_GROWTH,
    GM_PATTERN_PREALLOC,
    GM_PATTERN_COUNT
} gm_pattern_kind;

/* Names in gm_pattern_kind order (the values of --pattern). */
extern const char *const gm_pattern_names[GM_PATTERN_COUNT];

enum { GM_CACHE_COUNT = 3 };      /* pool, growth, prealloc */

/* What outlives a point: the caching allocators and the options. */
typedef struct {
    gm_device *dev;
    gm_cache caches[GM_CACHE_COUNT];
    bool cache_ready[GM_CACHE_COUNT];
    double frag_fill, frag_free, prealloc_share;
    uint64_t frag_min, frag_max;
    bool allow_oversubscribe;
    uint64_t rng;                 /* fragmented: the seeded sequence */
} gm_pattern_env;

void gm_pattern_env_init(gm_pattern_env *e, gm_device *dev, const gm_bench_opts *o);
/* Gives every cached region back. */
void gm_pattern_env_release(gm_pattern_env *e);
/* Device bytes the caches hold reserved but unused (free for a pattern). */
uint64_t gm_pattern_env_cached(const gm_pattern_env *e);

typedef struct gm_pattern {
    gm_pattern_env *env;
    gm_device *dev;
    gm_pattern_kind kind;
    gm_buffer arena;              /* monolithic */
    size_t used;                  /* monolithic: bytes handed out, with alignment */
    uint64_t requested;           /* bytes the tensors asked for */
    gm_cache *cache;              /* pool, growth, prealloc */
    gm_cache_ticket tickets[GM_MAX_TENSORS];
    int n_tickets;
    gm_buffer *fragments;         /* fragmented: the allocations left live */
    int n_fragments;
    uint64_t fragment_bytes;      /* fragmented: what the live ones hold */
    uint64_t fill_target, fill_held; /* fragmented: the fill's aim and what it made before the holes */
} gm_pattern;

/* Bytes the arena needs for these tensors (each rounded up to
 * GM_VIEW_ALIGN); 0 on overflow. */
uint64_t gm_arena_bytes(const gm_tensor *t, int n);

/* The device bytes pattern `kind` takes for tensors t[0..n) on a fresh
 * device, as far as they are known beforehand: monolithic its arena, pool
 * its segments (gm_cache_pool_reserve), the others the tensors' sum (what
 * the fragmented pattern's fragments, growth's doubling or prealloc's
 * reservation add is left to be measured). UINT64_MAX on overflow. */
uint64_t gm_pattern_bytes(gm_pattern_kind kind, const gm_tensor *t, int n);

/* Do tensors t[0..n) fit `budget` bytes of free device memory under
 * pattern `kind`, as far as known beforehand: growth by its doubling
 * regions (gm_cache_growth_fits), prealloc when their blocks fit the
 * share of it the region takes, the others when gm_pattern_bytes does. */
bool gm_pattern_fits(gm_pattern_kind kind, const gm_tensor *t, int n, uint64_t budget, double prealloc_share);

/* Starts a point for tensors t[0..n): monolithic reserves its arena,
 * fragmented fragments the device, managed checks the free memory. On
 * failure dev->err says why (GM_ERR_OOM if it did not fit); the pattern
 * must still be ended. */
gm_status gm_pattern_begin(gm_pattern *p, gm_pattern_env *env, gm_pattern_kind kind, const gm_tensor *t, int n);

/* A device tensor of `bytes`; release it with gm_device_free. */
gm_status gm_pattern_alloc(gm_pattern *p, size_t bytes, gm_buffer *out);

/* Ends the point, after its tensors were freed: frees the arena and the
 * fragments, returns blocks to their cache. */
void gm_pattern_end(gm_pattern *p);

#endif
