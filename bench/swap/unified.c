/*
 * The swap suite, unified memory (CUDA managed, OpenCL fine-grained SVM):
 * for each working set (--unified-sizes), pages written by the host, then
 *   fault     a kernel touching every page (on-demand migration)
 *   resident  the same kernel again, pages already on the device
 *   evict     the host reading every page back (and checking it)
 *   prefetch  after the host rewrote them: an explicit prefetch to the
 *             device, then the kernel (`unsupported` without one)
 * Kernels are timed by device events, host reads and prefetches by the
 * host's clock. Rows per working set: latency, latency per 4KiB page and
 * bandwidth. After every step the host checks every page against the
 * payload regenerated page by page (no reference copy is held, so a
 * working set costs no host memory of its own). A working set past free
 * memory is `skipped` unless --allow-oversubscribe; so is the
 * oversubscription sweep (working sets of 50%, 100% and 150% of device
 * memory, or of the cap): managed memory past the device's can hang a
 * GPU. The cap still holds with the opt-in.
 */
#include "bench/swap/parts.h"
#include "bench/swap/touch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096u

static const uint64_t default_sizes[] = {16u << 20, 64u << 20};
static const double oversubscribe_shares[] = {0.5, 1.0, 1.5};
enum { FAULT, RESIDENT, EVICT, PREFETCH, N_STEPS };
static const char *const step_names[N_STEPS] = {"fault", "resident", "evict", "prefetch"};

static void sizes_of(const gm_bench *b, const uint64_t **v, size_t *n)
{
    *v = b->opts->unified_sizes ? b->opts->unified_sizes : default_sizes;
    *n = b->opts->unified_sizes ? b->opts->n_unified_sizes : sizeof default_sizes / sizeof default_sizes[0];
}

int gm_swap_unified_count(gm_bench *b)
{
    const uint64_t *v;
    size_t n;
    sizes_of(b, &v, &n);
    return (int)n + 1;
}

typedef struct {
    gm_device *dev;
    gm_buffer buf;
    size_t words;
    uint64_t seed;             /* buf holds the payload of this seed, */
    unsigned touches;          /* touched this many times since */
    gm_touch touch;
} unified;

static gm_status enqueue_touch(void *ctx)
{
    unified *u = ctx;
    return gm_touch_enqueue(&u->touch, 0, &u->buf, u->words, 1);
}

/* Runs the kernel (timed). */
static gm_status touch(unified *u, double *ms)
{
    gm_status rc = gm_time_on_queue(u->dev, 0, enqueue_touch, u, ms);
    if (rc == GM_OK)
        u->touches++;
    return rc;
}

/* The host writes a fresh payload over every page. */
static void host_write(unified *u, uint64_t seed)
{
    gm_swap_fill(u->buf.host, u->words * 4, seed);
    u->seed = seed;
    u->touches = 0;
}

/* The host reads every word (timed: the eviction back to the host), with
 * independent sums so that the read, not the arithmetic, sets the pace. */
static void host_read(unified *u, double *ms)
{
    const uint32_t *w = u->buf.host;
    uint64_t s[4] = {0};
    double t0 = gm_now();
    size_t i = 0;
    for (; i + 4 <= u->words; i += 4)
        for (int k = 0; k < 4; k++)
            s[k] += w[i + k];
    for (; i < u->words; i++)
        s[0] += w[i];
    *ms = (gm_now() - t0) * 1e3;
    volatile uint64_t sink = s[0] + s[1] + s[2] + s[3];
    (void)sink;
}

/* Every page holds the payload with the kernel applied `touches` times:
 * each page regenerated and the kernel's reference applied to it. The
 * test-only fault flips a byte first. */
static bool host_check(unified *u, bool fault)
{
    if (fault)
        ((volatile unsigned char *)u->buf.host)[u->words * 2] ^= 0x5a;
    uint32_t page[GM_TOUCH_PAGE_WORDS];
    gm_swap_stream st;
    gm_swap_stream_init(&st, u->seed);
    const uint32_t *have = u->buf.host;
    for (size_t first = 0; first < u->words; first += GM_TOUCH_PAGE_WORDS) {
        size_t n = u->words - first < GM_TOUCH_PAGE_WORDS ? u->words - first : GM_TOUCH_PAGE_WORDS;
        gm_swap_stream_next(&st, (unsigned char *)page, n * 4);
        for (unsigned t = 0; t < u->touches; t++)
            gm_touch_reference(page, n, 1);
        if (memcmp(page, have + first, n * 4) != 0)
            return false;
    }
    return true;
}

static gm_status set_up(gm_bench *b, unified *u, uint64_t bytes)
{
    u->dev = b->dev;
    u->words = (size_t)(bytes / 4);
    gm_status rc = gm_device_alloc(b->dev, GM_MEM_MANAGED, u->words * 4, &u->buf);
    return rc == GM_OK ? gm_touch_open(&u->touch, b->dev) : rc;
}

static void tear_down(unified *u)
{
    if (u->dev)
        gm_touch_close(&u->touch);
    gm_device_free(u->dev, &u->buf);
}

static gm_row base_row(uint64_t bytes, const char *variant)
{
    gm_row row = {0};
    row.suite = "swap";
    row.workload = "unified";
    row.variant = variant;
    row.pattern = "managed";
    row.bytes = bytes;
    row.model_bytes = bytes;
    return row;
}

static int run_point(gm_bench *b, uint64_t bytes)
{
    char why[300];
    if (!b->opts->allow_oversubscribe && !gm_swap_fits(b, bytes, 0, why, sizeof why)) {
        char note[400];
        snprintf(note, sizeof note, "%s; managed memory past free memory needs --allow-oversubscribe", why);
        return gm_swap_emit_status(b, base_row(bytes, "fault"), GM_ROW_SKIPPED, note);
    }
    unified u = {0};
    gm_status rc = set_up(b, &u, bytes);
    unsigned reps = gm_swap_reps(b);
    double *ms[N_STEPS];
    for (int s = 0; s < N_STEPS; s++)
        ms[s] = calloc(reps, sizeof(double));
    bool ok = true, prefetch_ok = true;
    char note[200] = "", why_no_prefetch[300] = "";
    for (unsigned r = 0; rc == GM_OK && ok && r < reps + b->opts->warmup; r++) {
        double t[N_STEPS] = {0};
        host_write(&u, 2 * r);
        rc = touch(&u, &t[FAULT]);
        if (rc == GM_OK)
            rc = touch(&u, &t[RESIDENT]);
        if (rc == GM_OK)
            host_read(&u, &t[EVICT]);
        if (rc == GM_OK && !host_check(&u, b->output_fault.kind != GM_OUTPUT_FAULT_NONE)) {
            ok = false;
            snprintf(note, sizeof note, "managed pages of a %llu-byte working set changed between device and host",
                     (unsigned long long)bytes);
        }
        if (rc == GM_OK && ok && prefetch_ok) {
            host_write(&u, 2 * r + 1);
            double t0 = gm_now(), k_ms = 0;
            gm_status p = b->dev->backend->prefetch(b->dev, 0, &u.buf, true);
            double p_ms = (gm_now() - t0) * 1e3;
            if (p == GM_ERR_UNSUPPORTED) {
                prefetch_ok = false;
                snprintf(why_no_prefetch, sizeof why_no_prefetch, "%s", b->dev->err.msg);
            } else {
                rc = p;
            }
            if (rc == GM_OK && prefetch_ok)
                rc = touch(&u, &k_ms);
            if (rc == GM_OK && !host_check(&u, false)) {
                ok = false;
                snprintf(note, sizeof note, "prefetched managed pages changed between device and host");
            }
            t[PREFETCH] = p_ms + k_ms;
        }
        for (int s = 0; r >= b->opts->warmup && s < N_STEPS; s++)
            if (ms[s])
                ms[s][r - b->opts->warmup] = t[s];
    }
    int out = 0;
    if (rc != GM_OK || !ms[0] || !ms[1] || !ms[2] || !ms[3]) {
        if (rc == GM_ERR_DEVICE_LOST)
            b->device_lost = true;
        out = gm_swap_emit_status(b, base_row(bytes, "fault"), rc == GM_OK ? GM_ROW_ERROR : gm_row_status_of(rc),
                                  rc == GM_OK ? "out of host memory" : b->dev->err.msg);
    } else if (!ok) {
        out = gm_swap_emit_status(b, base_row(bytes, "evict"), GM_ROW_MISMATCH, note);
    } else {
        uint64_t pages = (bytes + PAGE - 1) / PAGE;
        for (int s = 0; s < N_STEPS && out == 0; s++) {
            if (s == PREFETCH && !prefetch_ok)
                out = gm_swap_emit_status(b, base_row(bytes, step_names[s]), GM_ROW_UNSUPPORTED, why_no_prefetch);
            else
                out = gm_swap_emit_latency(b, base_row(bytes, step_names[s]), ms[s], reps, (double)bytes,
                                           (unsigned)pages);
        }
    }
    for (int s = 0; s < N_STEPS; s++)
        free(ms[s]);
    tear_down(&u);
    return out;
}

/* Working sets around the device's memory (or the cap): first touch and
 * steady state, checked. */
static int oversubscribe(gm_bench *b)
{
    gm_row row = base_row(0, "oversubscribe");
    if (!b->opts->allow_oversubscribe)
        return gm_swap_emit_status(b, row, GM_ROW_SKIPPED,
                                   "the oversubscription sweep needs --allow-oversubscribe (managed memory past "
                                   "the device's can hang a GPU)");
    uint64_t memory = b->dev->mem_limit ? b->dev->mem_limit : b->dev->info.total_mem;
    int out = 0;
    for (size_t i = 0; i < sizeof oversubscribe_shares / sizeof oversubscribe_shares[0] && out == 0; i++) {
        uint64_t bytes = (uint64_t)((double)memory * oversubscribe_shares[i]) / PAGE * PAGE;
        row = base_row(bytes, i == 0 ? "oversubscribe-50%" : i == 1 ? "oversubscribe-100%" : "oversubscribe-150%");
        /* On a GPU the host must hold the whole working set: it writes
         * every page first (host_write), before the device faults in what
         * fits, and takes back what does not; on a CPU device the cap
         * decides at allocation. */
        char why[300];
        if (b->dev->info.type != GM_DEV_CPU && !gm_swap_fits(b, 0, bytes, why, sizeof why)) {
            out = gm_swap_emit_status(b, row, GM_ROW_SKIPPED, why);
            continue;
        }
        unified u = {0};
        gm_status rc = set_up(b, &u, bytes);
        double t[2] = {0};
        bool ok = true;
        if (rc == GM_OK) {
            host_write(&u, i);
            rc = touch(&u, &t[0]);
        }
        if (rc == GM_OK)
            rc = touch(&u, &t[1]);
        if (rc == GM_OK)
            ok = host_check(&u, false);
        if (rc != GM_OK)
            out = gm_swap_emit_status(b, row, gm_row_status_of(rc), b->dev->err.msg);
        else if (!ok)
            out = gm_swap_emit_status(b, row, GM_ROW_MISMATCH, "oversubscribed managed pages changed");
        else
            out = gm_swap_emit_latency(b, row, &t[1], 1, (double)bytes, (unsigned)(bytes / PAGE));
        tear_down(&u);
    }
    return out;
}

int gm_swap_unified_run(gm_bench *b)
{
    const uint64_t *sizes;
    size_t n;
    sizes_of(b, &sizes, &n);
    int rc = 0;
    if (!b->dev->info.has_managed) {
        for (size_t i = 0; i < n && rc == 0; i++) {
            rc = gm_swap_emit_status(b, base_row(sizes[i], "fault"), GM_ROW_UNSUPPORTED,
                                     "the device has no managed memory");
            rc = gm_bench_point_finished(b, rc, "swap unified");
        }
        return rc == 0 ? gm_bench_point_finished(b, 0, "swap oversubscribe") : rc;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = gm_bench_resuming(b) ? 0 : run_point(b, sizes[i]);
        char label[96], sz[32];
        snprintf(label, sizeof label, "swap unified %s", gm_format_size(sizes[i], sz, sizeof sz));
        rc = gm_bench_point_finished(b, rc, label);
    }
    if (rc == 0)
        rc = gm_bench_point_finished(b, gm_bench_resuming(b) ? 0 : oversubscribe(b), "swap oversubscribe");
    return rc;
}
