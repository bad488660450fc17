/*
 * concurrency: every queue at once, each on its own buffer: a host to
 * device copy, the touch kernel, and again, enqueued interleaved across
 * the queues; then each buffer is read back and checked against its
 * reference. Four rounds.
 */
#include "bench/bench.h"
#include "stress/stress.h"
#include "bench/swap/common.h"
#include "stress/verify.h"

#include <stdio.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)
#define ROUNDS 4

static int concurrency(gm_stress *s, gm_stress_result *r)
{
    gm_device *dev = s->dev;
    gm_touch t = {0};
    gm_stress_words w[GM_MAX_QUEUES] = {0};
    gm_status rc = gm_touch_open(&t, dev);
    int wrong = 0;
    for (int q = 0; q < GM_MAX_QUEUES && rc == GM_OK; q++)
        rc = gm_stress_words_init(s, &w[q], 2 * MIB, 100 + (uint64_t)q);
    for (int round = 0; round < ROUNDS && rc == GM_OK; round++) {
        for (int q = 0; q < GM_MAX_QUEUES && rc == GM_OK; q++) {
            /* A fresh payload in, then the kernel, on this queue. */
            gm_swap_fill((unsigned char *)w[q].want, w[q].words * 4, s->seed + (uint64_t)(round * 16 + q));
            memcpy(w[q].host.host, w[q].want, w[q].words * 4);
            rc = dev->backend->copy(dev, q, &w[q].dev, 0, &w[q].host, 0, w[q].words * 4, true);
        }
        for (int q = 0; q < GM_MAX_QUEUES && rc == GM_OK; q++)
            rc = gm_stress_words_touch(s, &t, &w[q], q);
        for (int q = 0; q < GM_MAX_QUEUES && rc == GM_OK; q++)
            rc = gm_stress_words_touch(s, &t, &w[q], q);
        if (rc == GM_OK)
            rc = dev->backend->synchronize(dev, -1);
        for (int q = 0; q < GM_MAX_QUEUES && rc == GM_OK; q++) {
            bool ok;
            rc = gm_stress_words_check(s, &w[q], &ok);
            if (rc == GM_OK && !ok && wrong++ == 0)
                gm_stress_fail(r, "queue %d's buffer was wrong after round %d", q, round);
        }
    }
    if (rc != GM_OK)
        gm_stress_fail(r, "%s", dev->err.msg);
    r->ok = rc == GM_OK && wrong == 0;
    gm_stress_diag(r, "queues", "%d", GM_MAX_QUEUES);
    gm_stress_diag(r, "rounds", "%d", ROUNDS);
    gm_stress_diag(r, "wrong_buffers", "%d", wrong);
    int out = gm_stress_row(s, "concurrency", "wrong_buffers", "count", wrong, 0);
    for (int q = 0; q < GM_MAX_QUEUES; q++)
        gm_stress_words_free(s, &w[q]);
    gm_touch_close(&t);
    return rc == GM_ERR_DEVICE_LOST ? -1 : out;
}

const gm_stress_check gm_stress_concurrency = {"concurrency", "every queue copying and computing at once", concurrency};
