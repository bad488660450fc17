/*
 * The swap suite, transfers: host-to-device, device-to-host and both at
 * once (on two queues), for each block size, by three host-memory paths:
 *   pageable  malloc'd memory, through the driver's write/read calls
 *   pinned    page-locked memory the device copies engine reaches directly
 *   mapped    the device buffer mapped into the host and copied with
 *             memcpy, then unmapped (OpenCL map/unmap; CUDA mapped
 *             pinned memory the device copies through, see the backend's
 *             map), timed on the host's clock
 * Every repetition is timed and its payload checked by checksum after the
 * round trip; a corrupted payload is a `mismatch` row. A point whose
 * buffers would not fit is `skipped` before anything is allocated.
 */
#include "bench/swap/parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { H2D, D2H, BIDIR, N_DIRECTIONS };
static const char *const direction_names[N_DIRECTIONS] = {"h2d", "d2h", "bidir"};
enum { PAGEABLE, PINNED, MAPPED, N_PATHS };
static const char *const path_names[N_PATHS] = {"pageable", "pinned", "mapped"};
static const uint64_t default_blocks[] = {4096, 65536, 1u << 20, 16u << 20, 256u << 20, 1u << 30};

static void blocks_of(const gm_bench *b, const uint64_t **v, size_t *n)
{
    *v = b->opts->blocks ? b->opts->blocks : default_blocks;
    *n = b->opts->blocks ? b->opts->n_blocks : sizeof default_blocks / sizeof default_blocks[0];
}

int gm_swap_transfer_count(gm_bench *b)
{
    const uint64_t *v;
    size_t n;
    blocks_of(b, &v, &n);
    return (int)n * N_PATHS * N_DIRECTIONS;
}

typedef struct {
    gm_device *dev;
    gm_buffer host_src, host_dst, dev_a, dev_b;   /* dev_b: the second stream's device side */
    size_t bytes;
    int direction, path;
} transfer;

/* Enqueues the timed copies (async, so both directions overlap). */
static gm_status enqueue_transfer(void *ctx)
{
    transfer *t = ctx;
    const gm_backend *be = t->dev->backend;
    gm_status rc = GM_OK;
    if (t->direction == H2D || t->direction == BIDIR)
        rc = be->copy(t->dev, 0, &t->dev_a, 0, &t->host_src, 0, t->bytes, true);
    if (rc == GM_OK && (t->direction == D2H || t->direction == BIDIR))
        rc = be->copy(t->dev, t->direction == BIDIR ? 1 : 0, &t->host_dst, 0, &t->dev_b, 0, t->bytes, true);
    return rc;
}

/* The mapped path: map, memcpy, unmap, one direction after the other. */
static gm_status mapped_transfer(transfer *t)
{
    const gm_backend *be = t->dev->backend;
    void *p = NULL;
    gm_status rc = GM_OK;
    if (t->direction != D2H) {
        rc = be->map(t->dev, 0, &t->dev_a, 0, t->bytes, true, &p);
        if (rc == GM_OK) {
            memcpy(p, t->host_src.host, t->bytes);
            rc = be->unmap(t->dev, 0, &t->dev_a, p);
        }
    }
    if (rc == GM_OK && t->direction != H2D) {
        rc = be->map(t->dev, 0, &t->dev_b, 0, t->bytes, false, &p);
        if (rc == GM_OK) {
            memcpy(t->host_dst.host, p, t->bytes);
            rc = be->unmap(t->dev, 0, &t->dev_b, p);
        }
    }
    return rc;
}

/* Device events time queue 0; for both directions queue 1 is waited for
 * as well, so the time covers both copies. The mapped path is host work:
 * wall clock. */
static gm_status timed_transfer(transfer *t, double *ms)
{
    if (t->path == MAPPED) {
        double t0 = gm_now();
        gm_status rc = mapped_transfer(t);
        *ms = (gm_now() - t0) * 1e3;
        return rc;
    }
    gm_status rc = gm_time_on_queue(t->dev, 0, enqueue_transfer, t, ms);
    if (rc == GM_OK && t->direction == BIDIR) {
        double wall0 = gm_now();
        rc = t->dev->backend->synchronize(t->dev, 1);
        *ms += (gm_now() - wall0) * 1e3;   /* the part of d2h that outlasted h2d */
    }
    return rc;
}

/* After a repetition: what went to the device comes back intact (h2d,
 * read back through dev_a) and what came from it matches what was put
 * there (d2h). */
static gm_status check_round_trip(transfer *t, uint64_t want_up, uint64_t want_down, bool fault, bool *ok)
{
    const gm_backend *be = t->dev->backend;
    gm_status rc = GM_OK;
    *ok = true;
    if (fault)
        rc = gm_corrupt_bytes(t->dev, t->direction == D2H ? &t->dev_b : &t->dev_a, t->bytes / 2, 1);
    if (rc == GM_OK && t->direction != D2H) {
        gm_buffer *scratch = &t->host_dst;
        if (t->direction == BIDIR)
            scratch = &t->host_src;   /* its payload is summed already */
        rc = be->copy(t->dev, 0, scratch, 0, &t->dev_a, 0, t->bytes, false);
        *ok = rc == GM_OK && gm_swap_checksum(scratch->host, t->bytes) == want_up;
    }
    if (rc == GM_OK && *ok && t->direction != H2D) {
        if (fault && t->direction == D2H)
            rc = be->copy(t->dev, 0, &t->host_dst, 0, &t->dev_b, 0, t->bytes, false);
        *ok = rc == GM_OK && gm_swap_checksum(t->host_dst.host, t->bytes) == want_down;
    }
    return rc;
}

static void release(transfer *t)
{
    gm_buffer *bufs[] = {&t->host_src, &t->host_dst, &t->dev_a, &t->dev_b};
    for (int i = 0; i < 4; i++)
        gm_device_free(t->dev, bufs[i]);
}

static int run_point(gm_bench *b, int path, size_t bytes, int direction)
{
    transfer t = {.dev = b->dev, .bytes = bytes, .direction = direction, .path = path};
    gm_row row = {0};
    row.suite = "swap";
    row.workload = "transfer";
    row.variant = direction_names[direction];
    row.pattern = path_names[path];
    row.bytes = bytes;
    row.model_bytes = direction == BIDIR ? 2 * (uint64_t)bytes : (uint64_t)bytes;
    char note[200] = "";
    /* Two device buffers, two host buffers; a mapping may take two more. */
    if (!gm_swap_fits(b, 2 * (uint64_t)bytes, (path == MAPPED ? 4 : 2) * (uint64_t)bytes, note, sizeof note))
        return gm_swap_emit_status(b, row, GM_ROW_SKIPPED, note);
    gm_mem_kind kind = path == PINNED ? GM_MEM_PINNED : GM_MEM_HOST;
    gm_status rc = gm_device_alloc(b->dev, kind, bytes, &t.host_src);
    if (rc == GM_OK)
        rc = gm_device_alloc(b->dev, kind, bytes, &t.host_dst);
    if (rc == GM_OK)
        rc = gm_device_alloc(b->dev, GM_MEM_DEVICE, bytes, &t.dev_a);
    if (rc == GM_OK)
        rc = gm_device_alloc(b->dev, GM_MEM_DEVICE, bytes, &t.dev_b);
    unsigned reps = gm_swap_reps(b);
    double *ms = rc == GM_OK ? calloc(reps, sizeof *ms) : NULL;
    bool ok = true;
    for (unsigned r = 0; rc == GM_OK && ms && r < reps + b->opts->warmup && ok; r++) {
        /* Fresh payloads each repetition: one to send, one waiting on the device. */
        gm_swap_fill(t.host_src.host, bytes, 2 * r);
        uint64_t up = gm_swap_checksum(t.host_src.host, bytes);
        gm_swap_fill(t.host_dst.host, bytes, 2 * r + 1);
        uint64_t down = gm_swap_checksum(t.host_dst.host, bytes);
        rc = b->dev->backend->copy(b->dev, 0, &t.dev_b, 0, &t.host_dst, 0, bytes, false);
        memset(t.host_dst.host, 0, bytes);
        double elapsed = 0;
        if (rc == GM_OK)
            rc = timed_transfer(&t, &elapsed);
        if (rc == GM_OK)
            rc = check_round_trip(&t, up, down, b->output_fault.kind != GM_OUTPUT_FAULT_NONE, &ok);
        if (r >= b->opts->warmup)
            ms[r - b->opts->warmup] = elapsed;
        if (!ok)
            snprintf(note, sizeof note, "%s payload of %zu bytes failed its checksum (repetition %u)",
                     direction_names[direction], bytes, r);
    }
    int out;
    if (rc != GM_OK) {
        if (rc == GM_ERR_DEVICE_LOST)
            b->device_lost = true;
        out = gm_swap_emit_status(b, row, gm_row_status_of(rc), b->dev->err.msg);
    } else if (!ms) {
        out = gm_swap_emit_status(b, row, GM_ROW_ERROR, "out of host memory");
    } else if (!ok) {
        out = gm_swap_emit_status(b, row, GM_ROW_MISMATCH, note);
    } else {
        out = gm_swap_emit_latency(b, row, ms, reps, (double)row.model_bytes, 1);
    }
    free(ms);
    release(&t);
    return out;
}

int gm_swap_transfer_run(gm_bench *b)
{
    const uint64_t *blocks;
    size_t n;
    blocks_of(b, &blocks, &n);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        for (int p = 0; p < N_PATHS && rc == 0; p++)
            for (int d = 0; d < N_DIRECTIONS && rc == 0; d++) {
                rc = gm_bench_resuming(b) ? 0 : run_point(b, p, (size_t)blocks[i], d);
                char label[96], sz[32];
                snprintf(label, sizeof label, "swap %s %s %s", direction_names[d], path_names[p],
                         gm_format_size(blocks[i], sz, sizeof sz));
                rc = gm_bench_point_finished(b, rc, label);
            }
    return rc;
}
