/*
 * soak: the touch kernel over --fill of free device memory, again and
 * again for --duration, its throughput recorded second by second (a row
 * per second). Sixty-four seeded pages keep a host reference and are read
 * back and checked every second and at the end. Fails when any output is
 * wrong, or when the median throughput of the last third of the seconds
 * falls more than --throttle below that of the first third (throttling).
 */
#include "bench.h"
#include "stats.h"
#include "stress.h"
#include "touch.h"
#include "verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)
#define SAMPLE_PAGES 64
#define MAX_SECONDS 86400
#define MAX_BYTES (1024 * MIB)

typedef struct {
    gm_stress *s;
    gm_buffer buf, page;
    size_t words;
    size_t pages[SAMPLE_PAGES];
    uint32_t want[SAMPLE_PAGES][GM_TOUCH_PAGE_WORDS];
} soaker;

static uint32_t initial_word(size_t i, uint64_t seed) { return (uint32_t)(i * 2654435761u) ^ (uint32_t)seed; }

/* Reads the sampled pages back and compares them with their references. */
static gm_status check_pages(soaker *k, int *wrong)
{
    gm_device *dev = k->s->dev;
    gm_status rc = GM_OK;
    for (int i = 0; i < SAMPLE_PAGES && rc == GM_OK; i++) {
        size_t first = k->pages[i] * GM_TOUCH_PAGE_WORDS;
        size_t n = k->words - first < GM_TOUCH_PAGE_WORDS ? k->words - first : GM_TOUCH_PAGE_WORDS;
        rc = dev->backend->copy(dev, 0, &k->page, 0, &k->buf, first * 4, n * 4, false);
        if (rc == GM_OK && memcmp(k->page.host, k->want[i], n * 4) != 0)
            (*wrong)++;
    }
    return rc;
}

static int soak(gm_stress *s, gm_stress_result *r)
{
    gm_device *dev = s->dev;
    soaker *k = calloc(1, sizeof *k);
    double *rate = calloc(MAX_SECONDS, sizeof *rate);
    gm_touch t = {0};
    gm_status rc = k && rate ? gm_touch_open(&t, dev) : gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    const char *source = "";
    uint64_t bytes = (uint64_t)((double)gm_stress_free_memory(dev, &source) * s->fill) / 4096 * 4096;
    bytes = bytes > MAX_BYTES ? MAX_BYTES : bytes < 4096 ? 4096 : bytes;
    if (rc == GM_OK) {
        k->s = s;
        k->words = (size_t)(bytes / 4);
        rc = gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)bytes, &k->buf);
    }
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_HOST, GM_TOUCH_PAGE_WORDS * 4, &k->page);
    /* A known start: every word from its index; the sampled pages' references. */
    if (rc == GM_OK) {
        gm_buffer init;
        rc = gm_device_alloc(dev, GM_MEM_HOST, (size_t)bytes, &init);
        for (size_t i = 0; rc == GM_OK && i < k->words; i++)
            ((uint32_t *)init.host)[i] = initial_word(i, s->seed);
        if (rc == GM_OK)
            rc = dev->backend->copy(dev, 0, &k->buf, 0, &init, 0, (size_t)bytes, false);
        gm_device_free(dev, &init);
        uint64_t x = s->seed * 0x9e3779b97f4a7c15ull + 5;
        size_t n_pages = (k->words + GM_TOUCH_PAGE_WORDS - 1) / GM_TOUCH_PAGE_WORDS;
        for (int i = 0; i < SAMPLE_PAGES; i++) {
            k->pages[i] = i == 0 ? 0 : i == 1 ? n_pages - 1 : (size_t)(gm_xorshift(&x) % n_pages);
            for (size_t w = 0; w < GM_TOUCH_PAGE_WORDS; w++)
                k->want[i][w] = initial_word(k->pages[i] * GM_TOUCH_PAGE_WORDS + w, s->seed);
        }
    }
    int seconds = 0, wrong = 0;
    uint64_t iterations = 0;
    double start = gm_now(), window = start, window_bytes = 0;
    while (rc == GM_OK && gm_now() - start < s->duration && seconds < MAX_SECONDS) {
        rc = gm_touch_enqueue(&t, 0, &k->buf, k->words, 1);
        if (rc == GM_OK)
            rc = dev->backend->synchronize(dev, 0);
        for (int i = 0; rc == GM_OK && i < SAMPLE_PAGES; i++) {
            size_t first = k->pages[i] * GM_TOUCH_PAGE_WORDS;
            gm_touch_reference(k->want[i], k->words - first < GM_TOUCH_PAGE_WORDS ? k->words - first
                                                                                   : GM_TOUCH_PAGE_WORDS, 1);
        }
        iterations++;
        window_bytes += (double)bytes;
        double now = gm_now();
        if (rc == GM_OK && now - window >= 1.0) {
            rate[seconds] = window_bytes / (now - window) / 1e9;
            if (gm_stress_row(s, "soak", "throughput", "GB/s", rate[seconds], (uint64_t)seconds) != 0)
                rc = GM_ERR_INVALID;
            seconds++;
            if (rc == GM_OK && s->fault == GM_STRESS_FAULT_FLIP_BITS && seconds == 1)
                rc = gm_stress_flip_bit_at(dev, &k->buf, k->pages[0] * GM_TOUCH_PAGE_WORDS * 4 + 8);
            if (rc == GM_OK)
                rc = check_pages(k, &wrong);
            window = gm_now();
            window_bytes = 0;
        }
    }
    if (rc == GM_OK)
        rc = check_pages(k, &wrong);
    gm_stats first = {0}, last = {0};
    int third = seconds / 3;
    if (third > 0) {
        gm_stats_compute(rate, (size_t)third, &first);
        gm_stats_compute(rate + seconds - third, (size_t)third, &last);
    }
    double drop = first.median > 0 ? 1.0 - last.median / first.median : 0.0;
    r->ok = rc == GM_OK && wrong == 0 && drop <= s->throttle && iterations > 0;
    gm_stress_diag(r, "bytes", "%llu (%s)", (unsigned long long)bytes, source);
    gm_stress_diag(r, "seconds", "%d", seconds);
    gm_stress_diag(r, "iterations", "%llu", (unsigned long long)iterations);
    double elapsed = gm_now() - start;
    gm_stress_diag(r, "throughput", "%.3f GB/s", elapsed > 0 ? (double)iterations * (double)bytes / elapsed / 1e9 : 0);
    if (third > 0) {
        gm_stress_diag(r, "throughput_first_third", "%.3f GB/s", first.median);
        gm_stress_diag(r, "throughput_last_third", "%.3f GB/s", last.median);
        gm_stress_diag(r, "drop", "%.1f%%", drop * 100);
    } else {
        gm_stress_diag(r, "drop", "not judged: fewer than 3 whole seconds");
    }
    gm_stress_diag(r, "wrong_pages", "%d", wrong);
    if (rc != GM_OK)
        gm_stress_fail(r, "%s", s->output_failed ? s->error : dev->err.msg);
    else if (wrong)
        gm_stress_fail(r, "%d sampled page checks found wrong output", wrong);
    else if (drop > s->throttle)
        gm_stress_fail(r, "throughput fell %.0f%% (more than %.0f%%): throttling", drop * 100, s->throttle * 100);
    if (k) {
        gm_device_free(dev, &k->buf);
        gm_device_free(dev, &k->page);
    }
    gm_touch_close(&t);
    free(k);
    free(rate);
    return s->output_failed || rc == GM_ERR_DEVICE_LOST ? -1 : 0;
}

const gm_stress_check gm_stress_soak = {"soak", "a workload near full memory for the duration", soak};
