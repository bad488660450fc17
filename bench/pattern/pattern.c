#include "bench/pattern/pattern.h"

#include "bench/bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const gm_pattern_names[GM_PATTERN_COUNT] = {
    "per-tensor", "monolithic", "fragmented", "pool", "async-pool", "managed", "growth", "prealloc"};

/* The most allocations a fill makes (its list grows to this): 64KiB:16MiB
 * fragments average 2.9MiB, so half of a 141GB card takes some 25,000. */
#define MAX_FRAGMENTS (1 << 20)

static uint64_t align_up(uint64_t v) { return (v + GM_VIEW_ALIGN - 1) / GM_VIEW_ALIGN * GM_VIEW_ALIGN; }

uint64_t gm_arena_bytes(const gm_tensor *t, int n)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        if (t[i].bytes > UINT64_MAX - GM_VIEW_ALIGN || __builtin_add_overflow(total, align_up(t[i].bytes), &total))
            return 0;
    return total;
}

uint64_t gm_pattern_bytes(gm_pattern_kind kind, const gm_tensor *t, int n)
{
    if (kind == GM_PATTERN_MONOLITHIC) {
        uint64_t arena = gm_arena_bytes(t, n);
        return arena ? arena : UINT64_MAX;
    }
    if (kind == GM_PATTERN_POOL && n <= GM_MAX_TENSORS) {
        uint64_t sizes[GM_MAX_TENSORS];
        for (int i = 0; i < n; i++)
            sizes[i] = t[i].bytes;
        uint64_t reserve = gm_cache_pool_reserve(sizes, n);
        return reserve ? reserve : UINT64_MAX;
    }
    return gm_tensors_total(t, n);
}

bool gm_pattern_fits(gm_pattern_kind kind, const gm_tensor *t, int n, uint64_t budget, double prealloc_share)
{
    if (kind == GM_PATTERN_PREALLOC) {
        /* As gm_pattern_begin reserves it, and the blocks carved from it. */
        uint64_t region = (uint64_t)((double)budget * prealloc_share) / GM_VIEW_ALIGN * GM_VIEW_ALIGN;
        uint64_t arena = gm_arena_bytes(t, n);
        return arena && arena <= region;
    }
    if (kind == GM_PATTERN_GROWTH && n <= GM_MAX_TENSORS) {
        uint64_t sizes[GM_MAX_TENSORS];
        for (int i = 0; i < n; i++)
            sizes[i] = t[i].bytes;
        return gm_cache_growth_fits(sizes, n, budget);
    }
    return gm_pattern_bytes(kind, t, n) <= budget;
}

void gm_pattern_env_init(gm_pattern_env *e, gm_device *dev, const gm_bench_opts *o)
{
    memset(e, 0, sizeof *e);
    e->dev = dev;
    e->frag_fill = o->frag_fill;
    e->frag_free = o->frag_free;
    e->frag_min = o->frag_min;
    e->frag_max = o->frag_max;
    e->prealloc_share = o->prealloc_share;
    e->allow_oversubscribe = o->allow_oversubscribe;
    e->rng = 0x6a09e667f3bcc909ull;
}

void gm_pattern_env_release(gm_pattern_env *e)
{
    for (int i = 0; i < GM_CACHE_COUNT; i++)
        if (e->cache_ready[i])
            gm_cache_release(&e->caches[i]);
    memset(e->cache_ready, 0, sizeof e->cache_ready);
}

uint64_t gm_pattern_env_cached(const gm_pattern_env *e)
{
    uint64_t cached = 0;
    for (int i = 0; i < GM_CACHE_COUNT; i++)
        if (e->cache_ready[i])
            cached += e->caches[i].reserved - e->caches[i].in_use;
    return cached;
}

/* Device memory free now: under the cap, else as the driver says, else
 * the advertised total less what is live. */
static uint64_t free_now(gm_device *dev)
{
    uint64_t free_b;
    gm_device_free_memory(dev, GM_FREE_UNKNOWN_TOTAL_LIVE, &free_b);
    return free_b;
}

static gm_cache *cache_of(gm_pattern_env *e, gm_pattern_kind kind)
{
    int i = kind == GM_PATTERN_POOL ? 0 : kind == GM_PATTERN_GROWTH ? 1 : 2;
    if (!e->cache_ready[i]) {
        static const gm_cache_policy policies[] = {GM_CACHE_POOL, GM_CACHE_GROWTH, GM_CACHE_PREALLOC};
        uint64_t prealloc = (uint64_t)((double)free_now(e->dev) * e->prealloc_share);
        gm_cache_init(&e->caches[i], e->dev, policies[i], prealloc);
        e->cache_ready[i] = true;
    }
    return &e->caches[i];
}

/* Fills a share of free memory with seeded sizes, then frees a share of
 * those allocations in random order; the rest stay in p->fragments. The
 * fill stops short of its target only where the device is full first or
 * MAX_FRAGMENTS are made: p->fill_held against p->fill_target says so. */
static gm_status fragment(gm_pattern *p)
{
    gm_pattern_env *e = p->env;
    int capacity = 1024;
    p->fragments = malloc((size_t)capacity * sizeof *p->fragments);
    if (!p->fragments)
        return gm_device_fail(p->dev, GM_ERR_OOM, 0, "out of host memory");
    uint64_t target = (uint64_t)((double)free_now(p->dev) * e->frag_fill), held = 0;
    double span = log((double)e->frag_max / (double)e->frag_min);
    while (held < target && p->n_fragments < MAX_FRAGMENTS) {
        if (p->n_fragments == capacity) {
            gm_buffer *grown = realloc(p->fragments, (size_t)capacity * 2 * sizeof *p->fragments);
            if (!grown)
                break;          /* out of host memory: the fill is what it is (fill_held says) */
            p->fragments = grown;
            capacity *= 2;
        }
        double u = (double)(gm_xorshift(&e->rng) >> 11) * 0x1p-53;
        uint64_t size = align_up((uint64_t)((double)e->frag_min * exp(u * span)));
        if (size > target - held)
            size = align_up(target - held);
        if (gm_device_alloc(p->dev, GM_MEM_DEVICE, (size_t)size, &p->fragments[p->n_fragments]) != GM_OK)
            break;              /* the device is full before the target: that is fragmenting enough */
        held += size;
        p->n_fragments++;
    }
    p->fill_target = target;
    p->fill_held = held;
    /* Free a share of them, chosen by a seeded shuffle. */
    int n = p->n_fragments, drop = (int)lround(e->frag_free * n);
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(gm_xorshift(&e->rng) % (uint64_t)(i + 1));
        gm_buffer t = p->fragments[i];
        p->fragments[i] = p->fragments[j];
        p->fragments[j] = t;
    }
    for (int i = 0; i < drop; i++)
        gm_device_free(p->dev, &p->fragments[n - 1 - i]);
    p->n_fragments = n - drop;
    for (int i = 0; i < p->n_fragments; i++)
        p->fragment_bytes += p->fragments[i].bytes;
    return GM_OK;
}

gm_status gm_pattern_begin(gm_pattern *p, gm_pattern_env *env, gm_pattern_kind kind, const gm_tensor *t, int n)
{
    memset(p, 0, sizeof *p);
    p->env = env;
    p->dev = env->dev;
    p->kind = kind;
    switch (kind) {
    case GM_PATTERN_MONOLITHIC: {
        uint64_t bytes = gm_arena_bytes(t, n);
        if (bytes == 0 || bytes > SIZE_MAX)
            return gm_device_fail(p->dev, GM_ERR_OOM, 0, "the arena's size overflows");
        return gm_device_alloc(p->dev, GM_MEM_DEVICE, (size_t)bytes, &p->arena);
    }
    case GM_PATTERN_FRAGMENTED:
        return fragment(p);
    case GM_PATTERN_MANAGED: {
        uint64_t want = gm_tensors_total(t, n), have = free_now(p->dev);
        if (want > have && !env->allow_oversubscribe)
            return gm_device_fail(p->dev, GM_ERR_OOM, 0,
                                  "managed memory beyond the device's free memory (%llu > %llu bytes) needs "
                                  "--allow-oversubscribe",
                                  (unsigned long long)want, (unsigned long long)have);
        return GM_OK;
    }
    case GM_PATTERN_POOL:
    case GM_PATTERN_GROWTH:
    case GM_PATTERN_PREALLOC:
        p->cache = cache_of(env, kind);
        return GM_OK;
    case GM_PATTERN_PER_TENSOR:
    case GM_PATTERN_ASYNC_POOL:
    case GM_PATTERN_COUNT:
        break;
    }
    return GM_OK;
}

gm_status gm_pattern_alloc(gm_pattern *p, size_t bytes, gm_buffer *out)
{
    gm_status st;
    switch (p->kind) {
    case GM_PATTERN_MONOLITHIC:
        if (bytes > p->arena.bytes - p->used)
            return gm_device_fail(p->dev, GM_ERR_INVALID, 0, "tensor of %zu bytes past the end of the arena", bytes);
        st = gm_device_view(p->dev, &p->arena, p->used, bytes, out);
        if (st == GM_OK)
            p->used += (size_t)align_up(bytes);
        break;
    case GM_PATTERN_POOL:
    case GM_PATTERN_GROWTH:
    case GM_PATTERN_PREALLOC:
        if (p->n_tickets >= GM_MAX_TENSORS)
            return gm_device_fail(p->dev, GM_ERR_INVALID, 0, "more tensors than the memory model allows");
        st = gm_cache_alloc(p->cache, bytes, out, &p->tickets[p->n_tickets]);
        if (st == GM_OK)
            p->n_tickets++;
        break;
    case GM_PATTERN_ASYNC_POOL:
        st = gm_device_alloc(p->dev, GM_MEM_ASYNC, bytes, out);
        break;
    case GM_PATTERN_MANAGED:
        st = gm_device_alloc(p->dev, GM_MEM_MANAGED, bytes, out);
        break;
    default:
        st = gm_device_alloc(p->dev, GM_MEM_DEVICE, bytes, out);
        break;
    }
    if (st == GM_OK)
        p->requested += bytes;
    return st;
}

void gm_pattern_end(gm_pattern *p)
{
    gm_device_free(p->dev, &p->arena);
    for (int i = 0; i < p->n_tickets; i++)
        gm_cache_free(p->cache, &p->tickets[i]);
    for (int i = 0; i < p->n_fragments; i++)
        gm_device_free(p->dev, &p->fragments[i]);
    free(p->fragments);
    p->fragments = NULL;
    p->n_tickets = p->n_fragments = 0;
    /* The point is over: what the stream-ordered pool cached goes back to
     * the device. A failure here is the next call's to report: the error
     * that ended the point stays in dev->err. */
    if (p->dev && p->dev->priv) {
        gm_error kept = p->dev->err;
        gm_device_trim(p->dev);
        p->dev->err = kept;
    }
}
