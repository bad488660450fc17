/*
 * soak: the touch kernel over --fill of free device memory (in chunks of
 * at most 1GiB and the device's largest allocation), again and again for
 * --duration, its throughput recorded second by second (a row per
 * second). The chunks start from memtest.cl's seeded random pattern,
 * written on the device; sixty-four sampled pages keep a host reference
 * and are read back and checked every second and at the end. Fails when
 * any output is wrong, or when the median throughput of the last third of
 * the seconds falls more than --throttle below that of the first third
 * (throttling). Fault flip-bits flips a bit of a sampled page after the
 * first second; fault throttle makes every iteration of the second half
 * of the duration take four times as long (the host waits three times
 * the iteration's time), as a throttled device would.
 */
#include "bench/bench.h"
#include "lib/interrupt.h"
#include "lib/stats.h"
#include "stress/stress.h"
#include "bench/swap/touch.h"
#include "stress/verify.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB ((uint64_t)1 << 20)
#define SAMPLE_PAGES 64
#define MAX_SECONDS 86400
#define MAX_CHUNKS 1024                  /* 1TiB in 1GiB chunks */
#define CHUNK_MAX (1024 * MIB)

typedef struct {
    int chunk;
    size_t first, words;                 /* the page's first word in its chunk, its length */
    uint32_t want[GM_TOUCH_PAGE_WORDS];
} sample;

typedef struct {
    gm_stress *s;
    gm_buffer chunks[MAX_CHUNKS], page;
    int n;
    uint64_t bytes;
    sample samples[SAMPLE_PAGES];
} soaker;

/* The seed of chunk c's random pattern. */
static uint32_t chunk_seed(const gm_stress *s, int c) { return (uint32_t)s->seed * 0x9e3779b1u + (uint32_t)c; }

/* Sleeps `seconds` (fault throttle). */
static void wait_for(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Allocates the chunks (as much of `target` as the device gives) and
 * writes each one's random pattern with memtest_fill. */
static gm_status set_up(soaker *k, uint64_t target)
{
    gm_device *dev = k->s->dev;
    uint64_t chunk_max = dev->info.max_alloc && dev->info.max_alloc < CHUNK_MAX ? dev->info.max_alloc : CHUNK_MAX;
    while (k->bytes + 4096 <= target && k->n < MAX_CHUNKS) {
        uint64_t size = (target - k->bytes < chunk_max ? target - k->bytes : chunk_max) / 4096 * 4096;
        if (gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)size, &k->chunks[k->n]) != GM_OK)
            break;
        k->bytes += size;
        k->n++;
    }
    if (k->n == 0)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "no memory could be allocated to soak");
    gm_program *prog = NULL;
    gm_kernel *fill = NULL;
    char variant[32];
    bool chunked = gm_device_prefers_chunked(dev);
    gm_status rc = dev->backend->program_build(dev, "memtest", gm_kernel_variant(GM_FP32, chunked, variant,
                                                                                 sizeof variant),
                                               NULL, &prog);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, prog, "memtest_fill", &fill);
    for (int c = 0; c < k->n && rc == GM_OK; c++) {
        const uint64_t n = k->chunks[c].bytes / 4;
        const unsigned int mode = 2, off = 0;
        const uint32_t p = chunk_seed(k->s, c);
        gm_arg args[] = {gm_arg_buf(&k->chunks[c]), gm_arg_u64(&n), gm_arg_u32(&mode), gm_arg_u32(&p),
                         gm_arg_u32(&off)};
        size_t global, local;
        gm_launch_geometry(dev, chunked, (size_t)n, &global, &local);
        rc = dev->backend->launch(dev, 0, fill, global, local, args, 5);
    }
    if (rc == GM_OK)
        rc = dev->backend->synchronize(dev, 0);
    if (fill)
        dev->backend->kernel_release(dev, fill);
    if (prog)
        dev->backend->program_release(dev, prog);
    /* The sampled pages: the first, the last, and seeded others. */
    uint64_t x = k->s->seed * 0x9e3779b97f4a7c15ull + 5;
    for (int i = 0; i < SAMPLE_PAGES && rc == GM_OK; i++) {
        sample *sp = &k->samples[i];
        sp->chunk = i == 0 ? 0 : i == 1 ? k->n - 1 : (int)(gm_xorshift(&x) % (uint64_t)k->n);
        size_t words = k->chunks[sp->chunk].bytes / 4, pages = (words + GM_TOUCH_PAGE_WORDS - 1) / GM_TOUCH_PAGE_WORDS;
        size_t page = i == 0 ? 0 : i == 1 ? pages - 1 : (size_t)(gm_xorshift(&x) % pages);
        sp->first = page * GM_TOUCH_PAGE_WORDS;
        sp->words = words - sp->first < GM_TOUCH_PAGE_WORDS ? words - sp->first : GM_TOUCH_PAGE_WORDS;
        for (size_t w = 0; w < sp->words; w++)
            sp->want[w] = gm_stress_random_word(sp->first + w, chunk_seed(k->s, sp->chunk));
    }
    return rc;
}

/* Reads the sampled pages back and compares them with their references;
 * counts the wrong ones in *wrong. */
static gm_status check_pages(soaker *k, int *wrong)
{
    gm_device *dev = k->s->dev;
    gm_status rc = GM_OK;
    for (int i = 0; i < SAMPLE_PAGES && rc == GM_OK; i++) {
        const sample *sp = &k->samples[i];
        rc = dev->backend->copy(dev, 0, &k->page, 0, &k->chunks[sp->chunk], sp->first * 4, sp->words * 4, false);
        if (rc == GM_OK && memcmp(k->page.host, sp->want, sp->words * 4) != 0)
            (*wrong)++;
    }
    return rc;
}

/* One touch of every chunk, waited for; the references follow. */
static gm_status iterate(soaker *k, gm_touch *t)
{
    gm_device *dev = k->s->dev;
    gm_status rc = GM_OK;
    for (int c = 0; c < k->n && rc == GM_OK; c++)
        rc = gm_touch_enqueue(t, 0, &k->chunks[c], k->chunks[c].bytes / 4, 1);
    if (rc == GM_OK)
        rc = dev->backend->synchronize(dev, 0);
    for (int i = 0; rc == GM_OK && i < SAMPLE_PAGES; i++)
        gm_touch_reference(k->samples[i].want, k->samples[i].words, 1);
    return rc;
}

static void report(soaker *k, gm_stress_result *r, const double *rate, int seconds, uint64_t iterations,
                   double elapsed, const char *source, int wrong)
{
    gm_stats first = {0}, last = {0};
    int third = seconds / 3;
    if (third > 0) {
        gm_stats_compute(rate, (size_t)third, &first);
        gm_stats_compute(rate + seconds - third, (size_t)third, &last);
    }
    double drop = first.median > 0 ? 1.0 - last.median / first.median : 0.0;
    gm_stress_diag(r, "bytes", "%llu in %d chunks (%.0f%% of free memory, from the %s)", (unsigned long long)k->bytes,
                   k->n, k->s->fill * 100, source);
    gm_stress_diag(r, "seconds", "%d", seconds);
    gm_stress_diag(r, "iterations", "%llu", (unsigned long long)iterations);
    gm_stress_diag(r, "throughput", "%.3f GB/s",
                   elapsed > 0 ? (double)iterations * (double)k->bytes / elapsed / 1e9 : 0);
    if (third > 0) {
        gm_stress_diag(r, "throughput_first_third", "%.3f GB/s", first.median);
        gm_stress_diag(r, "throughput_last_third", "%.3f GB/s", last.median);
        gm_stress_diag(r, "drop", "%.1f%%", drop * 100);
    } else {
        gm_stress_diag(r, "drop", "not judged: fewer than 3 whole seconds");
    }
    gm_stress_diag(r, "wrong_pages", "%d", wrong);
    if (wrong)
        gm_stress_fail(r, "%d sampled page checks found wrong output", wrong);
    else if (drop > k->s->throttle)
        gm_stress_fail(r, "throughput fell %.0f%% (more than %.0f%%): throttling", drop * 100, k->s->throttle * 100);
}

static int soak(gm_stress *s, gm_stress_result *r)
{
    gm_device *dev = s->dev;
    soaker *k = calloc(1, sizeof *k);
    double *rate = calloc(MAX_SECONDS, sizeof *rate);
    gm_touch t = {0};
    gm_status rc = k && rate ? gm_touch_open(&t, dev) : gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    const char *source = "";
    if (rc == GM_OK) {
        k->s = s;
        rc = gm_device_alloc(dev, GM_MEM_HOST, GM_TOUCH_PAGE_WORDS * 4, &k->page);
    }
    if (rc == GM_OK)
        rc = set_up(k, (uint64_t)((double)gm_stress_free_memory(dev, &source) * s->fill));
    int seconds = 0, wrong = 0;
    uint64_t iterations = 0;
    double start = gm_now(), window = start, window_bytes = 0;
    while (rc == GM_OK && gm_now() - start < s->duration && seconds < MAX_SECONDS && !gm_interrupted()) {
        double t0 = gm_now();
        rc = iterate(k, &t);
        if (rc == GM_OK && s->fault == GM_STRESS_FAULT_THROTTLE && t0 - start >= s->duration / 2)
            wait_for(3 * (gm_now() - t0));
        iterations++;
        window_bytes += (double)k->bytes;
        double now = gm_now();
        if (rc == GM_OK && now - window >= 1.0) {
            rate[seconds] = window_bytes / (now - window) / 1e9;
            if (gm_stress_row(s, "soak", "throughput", "GB/s", rate[seconds], (uint64_t)seconds) != 0)
                rc = GM_ERR_INVALID;
            seconds++;
            if (rc == GM_OK && s->fault == GM_STRESS_FAULT_FLIP_BITS && seconds == 1)
                rc = gm_stress_flip_bit_at(dev, &k->chunks[0], 8);
            if (rc == GM_OK)
                rc = check_pages(k, &wrong);
            window = gm_now();
            window_bytes = 0;
        }
    }
    if (rc == GM_OK)
        rc = check_pages(k, &wrong);
    if (rc != GM_OK)
        gm_stress_fail(r, "%s", s->output_failed ? s->error : dev->err.msg);
    if (k)
        report(k, r, rate, seconds, iterations, gm_now() - start, source, wrong);
    r->ok = r->ok && rc == GM_OK && iterations > 0;
    if (k) {
        for (int c = 0; c < k->n; c++)
            gm_device_free(dev, &k->chunks[c]);
        gm_device_free(dev, &k->page);
    }
    gm_touch_close(&t);
    free(k);
    free(rate);
    return s->output_failed || rc == GM_ERR_DEVICE_LOST ? -1 : 0;
}

const gm_stress_check gm_stress_soak = {"soak", "a workload near full memory for the duration", soak};
