#include "bench/bench.h"

#include "bench/rounds.h"
#include "lib/interrupt.h"
#include "run/journal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void gm_suite_section(const char *suite, const gm_device *dev, char *buf, size_t len)
{
    snprintf(buf, len, "%s.%s", suite, dev->info.type == GM_DEV_CPU ? "cpu" : "gpu");
}

int gm_bench_point_finished(gm_bench *b, int rc, const char *label)
{
    gm_bench_point_done(b, label);
    return b->device_lost || gm_interrupted() ? -1 : rc;
}

bool gm_bench_resuming(const gm_bench *b) { return b->points_done < b->resume_from; }

int gm_bench_suite_end(gm_bench *b, int rc)
{
    if (b->device_lost && !b->error[0])
        snprintf(b->error, sizeof b->error, "device lost: %s", b->dev->err.msg);
    return rc;
}

void gm_launch_geometry(const gm_device *dev, bool chunked, size_t n, size_t *global, size_t *local)
{
    size_t cu = dev->info.compute_units > 0 ? (size_t)dev->info.compute_units : 1;
    if (chunked) {
        *local = 1;
        *global = cu * 64 < n ? cu * 64 : (n ? n : 1);
    } else {
        *local = 256;
        size_t want = (n + *local - 1) / *local, cap = cu * 2048 / *local * 4;
        *global = (want < cap ? (want ? want : 1) : cap) * *local;
    }
}

/* gm_stream_geometry: bench.h. */
void gm_stream_geometry(const gm_device *dev, bool chunked, size_t vectors, size_t *global, size_t *local)
{
    if (vectors == 0)
        vectors = 1;
    if (dev->info.type == GM_DEV_CPU || dev->info.type == GM_DEV_OTHER) {
        gm_launch_geometry(dev, chunked, vectors, global, local);
        return;
    }
    size_t cu = dev->info.compute_units > 0 ? (size_t)dev->info.compute_units : 1;
    size_t groups = (vectors + 255) / 256, cap = cu * (2048 / 256) * 4;
    *local = 256;
    *global = (groups < cap ? groups : cap) * 256;
}

/* gm_time_work (held) and gm_time_on_queue: bench.h. */
static gm_status time_between_events(gm_device *dev, int queue, gm_status (*enqueue)(void *ctx), void *ctx,
                                     double *ms, bool held)
{
    const gm_backend *be = dev->backend;
    gm_hold *hold = NULL;
    if (held && be->queue_hold) {
        gm_error before = dev->err;
        gm_status st = be->queue_hold(dev, queue, &hold);
        if (st == GM_ERR_UNSUPPORTED)
            dev->err = before;   /* timed unheld */
        else if (st != GM_OK)
            return st;
    }
    gm_event *e0 = NULL, *e1 = NULL;
    gm_status rc = be->event_record(dev, queue, &e0);
    if (rc == GM_OK)
        rc = enqueue(ctx);
    if (rc == GM_OK)
        rc = be->event_record(dev, queue, &e1);
    if (hold)
        be->queue_release(dev, hold);
    if (rc == GM_OK)
        rc = be->event_elapsed_ms(dev, e0, e1, ms);
    be->event_release(dev, e0);
    be->event_release(dev, e1);
    return rc;
}

gm_status gm_time_work(gm_device *dev, int queue, gm_status (*enqueue)(void *ctx), void *ctx, double *ms)
{
    return time_between_events(dev, queue, enqueue, ctx, ms, true);
}

gm_status gm_time_on_queue(gm_device *dev, int queue, gm_status (*enqueue)(void *ctx), void *ctx, double *ms)
{
    return time_between_events(dev, queue, enqueue, ctx, ms, false);
}

gm_status gm_corrupt_bytes(gm_device *dev, gm_buffer *buf, size_t offset, size_t len)
{
    unsigned char junk[4] = {0x5a, 0x7b, 0x5a, 0x7b};
    gm_buffer src = {.kind = GM_MEM_HOST, .bytes = sizeof junk, .host = junk};
    return dev->backend->copy(dev, 0, buf, offset, &src, 0, len < sizeof junk ? len : sizeof junk, false);
}

float gm_input_value(size_t i, unsigned which)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15ull + which * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    x *= 0x94d049bb133111ebull;
    return (float)((int)((x >> 40) & 511) - 256) / 256.0f;
}

uint64_t gm_xorshift(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

const char *gm_kernel_variant(gm_precision p, bool chunked, char *buf, size_t len)
{
    snprintf(buf, len, "%s-%s", gm_precision_name(p), chunked ? "chunked" : "grid");
    return buf;
}

double gm_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* gm_row_writer over gm_bench_write_row. */
static int write_row(void *b, const gm_row *row, const double *samples, size_t n)
{
    return gm_bench_write_row(b, row, samples, n);
}

int gm_bench_emit(gm_bench *b, const gm_row *row, const double *samples, size_t n)
{
    if (gm_interrupted()) {
        b->interrupted = gm_interrupted();
        return -1;
    }
    if (gm_bench_resuming(b))
        return 0;
    if (b->rounds <= 1)
        return gm_bench_write_row(b, row, samples, n);
    char err[300];
    int rc = gm_rounds_emit(b->pool, b->round, b->rounds, b->run, row, samples, n, write_row, b, err, sizeof err);
    if (rc > 0) {
        b->output_failed = true;
        snprintf(b->error, sizeof b->error, "%s", err);
        return -1;
    }
    return rc;
}

int gm_bench_write_row(gm_bench *b, const gm_row *row, const double *samples, size_t n)
{
    char err[300];
    if (gm_run_write(b->run, row, samples, n, err, sizeof err) != 0) {
        b->output_failed = true;
        snprintf(b->error, sizeof b->error, "%s", err);
        return -1;
    }
    if (b->summary)
        gm_summary_add(b->summary, row);
    return 0;
}

/* Journals point `index` as finished: all its rows are durable. */
static void journal_point(gm_bench *b, int index)
{
    if (b->journal_fd < 0 || b->output_failed || index < b->resume_from)
        return;
    if (gm_interrupted()) {
        /* Its rows may be cut short: the point is abandoned. */
        b->interrupted = gm_interrupted();
        return;
    }
    const gm_run *run = b->run;
    if (gm_journal_point(b->journal_fd, index, run->results_len, run->samples_len, run->rows_written) != 0) {
        b->output_failed = true;
        snprintf(b->error, sizeof b->error, "cannot write %.500s/points.journal: %s", run->dir, strerror(errno));
        return;
    }
    b->done_results_len = run->results_len;
    b->done_samples_len = run->samples_len;
    b->done_rows = run->rows_written;
    b->points_finished = index + 1;
}

void gm_bench_point_done(gm_bench *b, const char *label)
{
    journal_point(b, b->points_done);
    b->points_done++;
    if (!b->progress)
        return;
    double elapsed = gm_now() - b->started;
    double eta = b->points_done ? elapsed / b->points_done * (b->points_total - b->points_done) : 0;
    fprintf(stderr, "\r\033[K[%d/%d] %-40.40s %4.0fs elapsed, ETA %4.0fs", b->points_done,
            b->points_total, label, elapsed, eta);
    if (b->points_done >= b->points_total)
        fputc('\n', stderr);
    fflush(stderr);
}

gm_row_status gm_row_status_of(gm_status st)
{
    return st == GM_ERR_OOM ? GM_ROW_OOM : st == GM_ERR_UNSUPPORTED ? GM_ROW_UNSUPPORTED : GM_ROW_ERROR;
}
