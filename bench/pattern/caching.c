#include "bench/pattern/caching.h"

#include <stdlib.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)

/* Blocks of a region, in address order, covering it exactly. */
struct gm_cache_block {
    uint64_t offset, size;
    bool used;
    gm_cache_block *next;
};

struct gm_cache_region {
    gm_buffer buf;
    bool small;                 /* pool: a segment of the small-request pool */
    gm_cache_block *blocks;
    gm_cache_region *next;
};

static uint64_t round_to(uint64_t v, uint64_t unit) { return (v + unit - 1) / unit * unit; }

void gm_cache_init(gm_cache *c, gm_device *dev, gm_cache_policy policy, uint64_t prealloc)
{
    memset(c, 0, sizeof *c);
    c->dev = dev;
    c->policy = policy;
    c->prealloc = prealloc / GM_VIEW_ALIGN * GM_VIEW_ALIGN;
}

static bool is_small(const gm_cache *c, uint64_t bytes) { return c->policy == GM_CACHE_POOL && bytes < MIB; }

/* The size of a new region for a request of `bytes`. */
static uint64_t region_size(gm_cache *c, uint64_t bytes)
{
    switch (c->policy) {
    case GM_CACHE_POOL:
        return bytes < MIB ? 2 * MIB : bytes < 10 * MIB ? 20 * MIB : round_to(bytes, 2 * MIB);
    case GM_CACHE_GROWTH: {
        uint64_t next = c->last_region ? 2 * c->last_region : 2 * MIB;
        return next > bytes ? next : round_to(bytes, 2 * MIB);
    }
    case GM_CACHE_PREALLOC:
        break;
    }
    return c->prealloc;
}

/* Emulates a fresh POOL or GROWTH cache handing out blocks of
 * bytes[0..n) in order, none freed, with `budget` bytes of device memory:
 * true when every request is served; *reserved gets the regions' bytes
 * (up to the first request that fails). */
static bool emulate(gm_cache_policy policy, const uint64_t *bytes, int n, uint64_t budget, uint64_t *reserved)
{
    /* The free blocks the regions would have, as gm_cache_alloc leaves them. */
    struct { uint64_t size; bool small; } blocks[128];
    int n_blocks = 0;
    gm_cache c = {.policy = policy};
    *reserved = 0;
    if (n < 0 || n > 64)
        return false;
    for (int i = 0; i < n; i++) {
        if (bytes[i] > UINT64_MAX / 2)
            return false;
        if (bytes[i] == 0)
            continue;           /* never allocated */
        uint64_t need = round_to(bytes[i], GM_VIEW_ALIGN);
        bool small = is_small(&c, need);
        int best = -1;
        for (int k = 0; k < n_blocks; k++)
            if (blocks[k].small == small && blocks[k].size >= need && (best < 0 || blocks[k].size < blocks[best].size))
                best = k;
        if (best < 0) {
            uint64_t size = region_size(&c, need);
            if (size > budget - *reserved && policy == GM_CACHE_GROWTH)
                size = round_to(need, 2 * MIB);         /* doubling failed: just enough */
            if (size > budget - *reserved)
                return false;
            *reserved += size;
            c.last_region = size;
            best = n_blocks++;
            blocks[best].size = size;
            blocks[best].small = small;
        }
        /* As split(): the remainder stays a free block when it is worth one. */
        uint64_t rest = blocks[best].size - need;
        if (rest < GM_VIEW_ALIGN || (policy == GM_CACHE_POOL && !small && rest < MIB))
            blocks[best] = blocks[--n_blocks];
        else
            blocks[best].size = rest;
    }
    return true;
}

uint64_t gm_cache_pool_reserve(const uint64_t *bytes, int n)
{
    uint64_t reserved;
    return emulate(GM_CACHE_POOL, bytes, n, UINT64_MAX, &reserved) ? reserved : 0;
}

bool gm_cache_growth_fits(const uint64_t *bytes, int n, uint64_t budget)
{
    uint64_t reserved;
    return emulate(GM_CACHE_GROWTH, bytes, n, budget, &reserved);
}

static gm_status add_region(gm_cache *c, uint64_t size, bool small)
{
    gm_cache_region *r = calloc(1, sizeof *r);
    gm_cache_block *b = calloc(1, sizeof *b);
    if (!r || !b) {
        free(r);
        free(b);
        return gm_device_fail(c->dev, GM_ERR_OOM, 0, "out of host memory");
    }
    gm_status st = gm_device_alloc(c->dev, GM_MEM_DEVICE, (size_t)size, &r->buf);
    if (st != GM_OK) {
        free(r);
        free(b);
        return st;
    }
    b->size = size;
    r->blocks = b;
    r->small = small;
    r->next = c->regions;
    c->regions = r;
    c->reserved += size;
    c->last_region = size;
    c->regions_made++;
    return GM_OK;
}

/* The smallest free block of at least `bytes` in a region of the right pool. */
static gm_cache_block *best_fit(gm_cache *c, uint64_t bytes, bool small, gm_cache_region **in)
{
    gm_cache_block *best = NULL;
    for (gm_cache_region *r = c->regions; r; r = r->next) {
        if (c->policy == GM_CACHE_POOL && r->small != small)
            continue;
        for (gm_cache_block *b = r->blocks; b; b = b->next)
            if (!b->used && b->size >= bytes && (!best || b->size < best->size)) {
                best = b;
                *in = r;
            }
    }
    return best;
}

/* Splits b so that it keeps `bytes`, when what is left is worth a block
 * (pool: large blocks keep a remainder under 1MiB, as PyTorch does). */
static void split(gm_cache *c, gm_cache_block *b, uint64_t bytes, bool small)
{
    uint64_t rest = b->size - bytes;
    if (rest < GM_VIEW_ALIGN || (c->policy == GM_CACHE_POOL && !small && rest < MIB))
        return;
    gm_cache_block *tail = calloc(1, sizeof *tail);
    if (!tail)
        return;                 /* the block stays whole: still correct */
    tail->offset = b->offset + bytes;
    tail->size = rest;
    tail->next = b->next;
    b->next = tail;
    b->size = bytes;
}

gm_status gm_cache_alloc(gm_cache *c, uint64_t bytes, gm_buffer *out, gm_cache_ticket *ticket)
{
    if (bytes == 0 || bytes > UINT64_MAX / 2)
        return gm_device_fail(c->dev, GM_ERR_OOM, 0, "a request of %llu bytes", (unsigned long long)bytes);
    uint64_t need = round_to(bytes, GM_VIEW_ALIGN);
    bool small = is_small(c, need);
    gm_cache_region *r = NULL;
    gm_cache_block *b = best_fit(c, need, small, &r);
    if (b) {
        c->cache_hits++;
    } else {
        gm_status st;
        if (c->policy == GM_CACHE_PREALLOC && c->regions)
            return gm_device_fail(c->dev, GM_ERR_OOM, 0, "the preallocated %llu bytes have no free block of %llu",
                                  (unsigned long long)c->prealloc, (unsigned long long)need);
        if (c->policy == GM_CACHE_PREALLOC && need > c->prealloc)
            return gm_device_fail(c->dev, GM_ERR_OOM, 0, "%llu bytes exceed the preallocation of %llu",
                                  (unsigned long long)need, (unsigned long long)c->prealloc);
        st = add_region(c, region_size(c, need), small);
        if (st == GM_ERR_OOM && c->policy == GM_CACHE_POOL) {
            gm_cache_trim(c);          /* as frameworks empty their cache on OOM */
            st = add_region(c, region_size(c, need), small);
        }
        if (st == GM_ERR_OOM && c->policy == GM_CACHE_GROWTH)
            st = add_region(c, round_to(need, 2 * MIB), small);   /* doubling failed: just enough */
        if (st != GM_OK)
            return st;
        r = c->regions;
        b = r->blocks;
    }
    split(c, b, need, small);
    gm_status st = gm_device_view(c->dev, &r->buf, (size_t)b->offset, (size_t)bytes, out);
    if (st != GM_OK)
        return st;
    b->used = true;
    c->in_use += b->size;
    ticket->region = r;
    ticket->offset = b->offset;
    return GM_OK;
}

void gm_cache_free(gm_cache *c, const gm_cache_ticket *ticket)
{
    gm_cache_region *r = ticket->region;
    for (gm_cache_block *b = r->blocks, *prev = NULL; b; prev = b, b = b->next) {
        if (b->offset != ticket->offset || !b->used)
            continue;
        b->used = false;
        c->in_use -= b->size;
        /* Coalesce with free neighbours. */
        if (b->next && !b->next->used) {
            gm_cache_block *n = b->next;
            b->size += n->size;
            b->next = n->next;
            free(n);
        }
        if (prev && !prev->used) {
            prev->size += b->size;
            prev->next = b->next;
            free(b);
        }
        return;
    }
}

static void drop_region(gm_cache *c, gm_cache_region **link)
{
    gm_cache_region *r = *link;
    *link = r->next;
    c->reserved -= r->buf.bytes;
    for (gm_cache_block *b = r->blocks, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    gm_device_free(c->dev, &r->buf);
    free(r);
}

void gm_cache_trim(gm_cache *c)
{
    for (gm_cache_region **link = &c->regions; *link;) {
        gm_cache_block *b = (*link)->blocks;
        if (!b->used && !b->next)
            drop_region(c, link);
        else
            link = &(*link)->next;
    }
}

void gm_cache_release(gm_cache *c)
{
    while (c->regions)
        drop_region(c, &c->regions);
    c->in_use = 0;
}
