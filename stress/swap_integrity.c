/*
 * swap-integrity: with --fill of the free memory left after its own
 * buffers held by other allocations (in chunks of up to 64MiB),
 * checksummed payloads of 4KiB, 1MiB and 16MiB go host to device and back
 * (pinned memory, queue 1) while the touch kernel runs on queue 0 over
 * another buffer; every payload's checksum and the kernel's output are
 * checked. Fault corrupt-swap corrupts a payload on the device between
 * the two copies.
 */
#include "bench/bench.h"
#include "stress/stress.h"
#include "bench/swap/common.h"
#include "stress/verify.h"

#include <stdio.h>
#include <stdlib.h>

#define MIB ((uint64_t)1 << 20)
#define ROUNDS 8
#define MAX_BALLAST 4096                /* 256GiB in 64MiB chunks */

static const size_t sizes[] = {4096, MIB, 16 * MIB};

static int swap_integrity(gm_stress *s, gm_stress_result *r)
{
    gm_device *dev = s->dev;
    const gm_backend *be = dev->backend;
    gm_buffer out_h = {0}, back_h = {0}, on_dev = {0};
    gm_ballast ballast;
    bool have_ballast = gm_ballast_init(&ballast, MAX_BALLAST);
    gm_touch t = {0};
    gm_stress_words w = {0};
    gm_status rc = have_ballast ? gm_touch_open(&t, dev) : gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    if (rc == GM_OK)
        rc = gm_stress_words_init(s, &w, 4 * MIB, 11);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_PINNED, 16 * MIB, &out_h);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_PINNED, 16 * MIB, &back_h);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_DEVICE, 16 * MIB, &on_dev);
    const char *source = "";
    uint64_t free_b = gm_stress_free_memory(dev, &source), pressure = (uint64_t)((double)free_b * s->fill);
    if (rc == GM_OK)
        gm_ballast_fill(dev, &ballast, pressure, 64 * MIB, 4096);   /* as much as the device gives */
    int bad = 0, trips = 0;
    for (size_t i = 0; i < 3 && rc == GM_OK; i++)
        for (int round = 0; round < ROUNDS && rc == GM_OK; round++) {
            size_t n = sizes[i];
            gm_swap_fill(out_h.host, n, s->seed * 1000 + i * ROUNDS + (size_t)round);
            uint64_t sum = gm_swap_checksum(out_h.host, n);
            rc = gm_stress_words_touch(s, &t, &w, 0);            /* the concurrent kernel */
            if (rc == GM_OK)
                rc = be->copy(dev, 1, &on_dev, 0, &out_h, 0, n, true);
            if (rc == GM_OK)
                rc = be->synchronize(dev, 1);
            if (rc == GM_OK && s->fault == GM_STRESS_FAULT_CORRUPT_SWAP && i == 1 && round == 0)
                rc = gm_corrupt_bytes(dev, &on_dev, n / 2, 1);
            if (rc == GM_OK)
                rc = be->copy(dev, 1, &back_h, 0, &on_dev, 0, n, true);
            if (rc == GM_OK)
                rc = be->synchronize(dev, -1);
            if (rc == GM_OK && gm_swap_checksum(back_h.host, n) != sum && bad++ == 0)
                gm_stress_fail(r, "a %zu-byte payload came back with a different checksum (round %d)", n, round);
            trips++;
        }
    bool kernel_ok = false;
    if (rc == GM_OK)
        rc = gm_stress_words_check(s, &w, &kernel_ok);
    if (rc == GM_OK && !kernel_ok)
        gm_stress_fail(r, "the kernel running beside the copies gave a wrong output");
    if (rc != GM_OK)
        gm_stress_fail(r, "%s", dev->err.msg);
    r->ok = rc == GM_OK && bad == 0 && kernel_ok;
    gm_stress_diag(r, "round_trips", "%d", trips);
    gm_stress_diag(r, "corrupt_payloads", "%d", bad);
    gm_stress_diag(r, "pressure_bytes", "%llu held of %llu free (%s)", (unsigned long long)ballast.held,
                   (unsigned long long)free_b, source);
    int out = gm_stress_row(s, "swap-integrity", "corrupt_payloads", "count", bad, 0);
    gm_ballast_release(dev, &ballast);
    gm_device_free(dev, &out_h);
    gm_device_free(dev, &back_h);
    gm_device_free(dev, &on_dev);
    gm_stress_words_free(s, &w);
    gm_touch_close(&t);
    return rc == GM_ERR_DEVICE_LOST ? -1 : out;
}

const gm_stress_check gm_stress_swap_integrity = {"swap-integrity", "payloads round-tripped under pressure beside a kernel",
                                                  swap_integrity};
