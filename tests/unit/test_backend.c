/*
 * The OpenCL backend's ops, for real on the first OpenCL device (PoCL on
 * the CPU in CI), through the gm_device layer: every memory kind, fill,
 * copies in every direction (sync and async), kernel build and launch,
 * events, the memory cap, and the error codes of failures.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "device/device.h"
#include "lib/host_memory.h"
#include "opencl_fixture.h"

static void alloc_ok(gm_mem_kind kind, size_t bytes, gm_buffer *b)
{
    gm_status st = gm_device_alloc(&dev, kind, bytes, b);
    if (st != GM_OK)
        fail_msg("alloc %s: %s", gm_mem_kind_name(kind), dev.err.msg);
}

static void test_memory_kinds_and_copies(void **state)
{
    (void)state;
    const size_t n = 1 << 20;
    gm_buffer host, pinned, d1, d2, back;
    alloc_ok(GM_MEM_HOST, n, &host);
    alloc_ok(GM_MEM_PINNED, n, &pinned);
    alloc_ok(GM_MEM_DEVICE, n, &d1);
    alloc_ok(GM_MEM_DEVICE, n, &d2);
    alloc_ok(GM_MEM_HOST, n, &back);
    assert_int_equal(dev.live_bytes, 2 * n);           /* only device memory counts */
    for (size_t i = 0; i < n; i++)
        ((unsigned char *)host.host)[i] = (unsigned char)(i * 7 + 3);
    const gm_backend *be = dev.backend;
    assert_int_equal(be->copy(&dev, 0, &d1, 0, &host, 0, n, false), GM_OK);           /* H2D */
    assert_int_equal(be->copy(&dev, 1, &d2, 0, &d1, 0, n, true), GM_OK);             /* D2D async */
    assert_int_equal(be->synchronize(&dev, 1), GM_OK);
    assert_int_equal(be->copy(&dev, 0, &pinned, 0, &d2, 0, n, true), GM_OK);         /* D2H pinned */
    assert_int_equal(be->synchronize(&dev, -1), GM_OK);
    assert_memory_equal(pinned.host, host.host, n);
    assert_int_equal(be->copy(&dev, 0, &back, 0, &pinned, 0, n, false), GM_OK);      /* H2H */
    assert_memory_equal(back.host, host.host, n);
    /* Offsets: the second half of d1 into the first half of back. */
    memset(back.host, 0, n);
    assert_int_equal(be->copy(&dev, 0, &back, 0, &d1, n / 2, n / 2, false), GM_OK);
    assert_memory_equal(back.host, (char *)host.host + n / 2, n / 2);
    assert_int_equal(be->copy(&dev, 0, &back, 1, &d1, 0, n, false), GM_ERR_INVALID);  /* out of bounds */
    gm_buffer *all[] = {&host, &pinned, &d1, &d2, &back};
    for (int i = 0; i < 5; i++)
        gm_device_free(&dev, all[i]);
    assert_int_equal(dev.live_bytes, 0);
    /* Trim hands back what a stream-ordered pool caches: nothing to do
     * here, and it succeeds, counted by the shim like every op. */
    long trims = dev.shim.calls[GM_OP_TRIM];
    assert_int_equal(be->trim(&dev), GM_OK);
    assert_int_equal(gm_device_trim(&dev), GM_OK);
    assert_int_equal(dev.shim.calls[GM_OP_TRIM], trims + 2);
}

static void test_views(void **state)
{
    (void)state;
    const size_t n = 4 * GM_VIEW_ALIGN;
    gm_buffer parent, view, h;
    alloc_ok(GM_MEM_DEVICE, n, &parent);
    alloc_ok(GM_MEM_HOST, n, &h);
    uint64_t live = dev.live_bytes;
    assert_int_equal(gm_device_view(&dev, &parent, 2 * GM_VIEW_ALIGN, GM_VIEW_ALIGN, &view), GM_OK);
    assert_true(view.is_view);
    assert_int_equal(dev.live_bytes, live);                   /* a view takes no memory */
    const uint32_t zero = 0, ones = 0x01010101;
    assert_int_equal(dev.backend->fill(&dev, 0, &parent, 0, n, &zero, 4), GM_OK);
    assert_int_equal(dev.backend->fill(&dev, 0, &view, 0, GM_VIEW_ALIGN, &ones, 4), GM_OK);
    assert_int_equal(dev.backend->copy(&dev, 0, &h, 0, &parent, 0, n, false), GM_OK);
    const unsigned char *b = h.host;
    assert_int_equal(b[2 * GM_VIEW_ALIGN - 1], 0);            /* before the view */
    assert_int_equal(b[2 * GM_VIEW_ALIGN], 1);                /* its first byte */
    assert_int_equal(b[3 * GM_VIEW_ALIGN - 1], 1);            /* its last */
    assert_int_equal(b[3 * GM_VIEW_ALIGN], 0);                /* after it */
    gm_buffer bad;
    assert_int_equal(gm_device_view(&dev, &parent, 100, 64, &bad), GM_ERR_INVALID);           /* misaligned */
    assert_int_equal(gm_device_view(&dev, &parent, 3 * GM_VIEW_ALIGN, n, &bad), GM_ERR_INVALID); /* past the end */
    gm_device_free(&dev, &view);
    gm_device_free(&dev, &parent);
    gm_device_free(&dev, &h);
    assert_int_equal(dev.live_bytes, 0);
}

static void test_fill(void **state)
{
    (void)state;
    const size_t n = 4096;
    gm_buffer d, h;
    alloc_ok(GM_MEM_DEVICE, n, &d);
    alloc_ok(GM_MEM_HOST, n, &h);
    const uint32_t pattern = 0xdeadbeef;
    const uint16_t small = 0x1234;
    assert_int_equal(dev.backend->fill(&dev, 0, &d, 0, n, &pattern, 4), GM_OK);
    assert_int_equal(dev.backend->fill(&dev, 0, &d, 8, 4, &small, 2), GM_OK);
    assert_int_equal(dev.backend->copy(&dev, 0, &h, 0, &d, 0, n, false), GM_OK);
    const uint32_t *w = h.host;
    assert_int_equal(w[0], 0xdeadbeef);
    assert_int_equal(w[1], 0xdeadbeef);
    assert_int_equal(w[2], 0x12341234);
    assert_int_equal(w[1023], 0xdeadbeef);
    assert_int_equal(dev.backend->fill(&dev, 0, &d, 2, 4, &pattern, 4), GM_ERR_INVALID);  /* misaligned */
    gm_device_free(&dev, &d);
    gm_device_free(&dev, &h);
}

static void test_managed(void **state)
{
    (void)state;
    gm_buffer m;
    gm_status st = gm_device_alloc(&dev, GM_MEM_MANAGED, 4096, &m);
    if (!dev.info.has_managed) {
        assert_int_equal(st, GM_ERR_UNSUPPORTED);
        return;
    }
    assert_int_equal(st, GM_OK);
    assert_non_null(m.host);
    memset(m.host, 0x5a, 4096);                     /* reachable from the host */
    assert_int_equal(dev.live_bytes, 4096);          /* counts against the device */
    gm_device_free(&dev, &m);
}

static void test_cap_is_oom(void **state)
{
    (void)state;
    gm_buffer a, b;
    alloc_ok(GM_MEM_DEVICE, 48u << 20, &a);
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, 32u << 20, &b), GM_ERR_OOM);
    assert_int_equal(dev.err.code, GM_ERR_OOM);
    assert_non_null(strstr(dev.err.msg, "memory limit"));
    uint64_t f, t;
    assert_int_equal(gm_device_mem_info(&dev, &f, &t), GM_OK);
    assert_true(t <= 64u << 20);
    assert_true(f <= 16u << 20);                     /* clipped to what the cap leaves */
    gm_device_free(&dev, &a);
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_DEVICE, 0, &b), GM_ERR_INVALID);
}

/* Pinned host memory past half of what the host has available is out of
 * memory, refused before anything is allocated. */
static void test_pinned_host_share(void **state)
{
    (void)state;
    gm_buffer b;
    uint64_t avail = gm_host_mem_available();
    if (!avail)
        skip();
    assert_int_equal(gm_device_alloc(&dev, GM_MEM_PINNED, (size_t)(avail / 2 + (64u << 20)), &b), GM_ERR_OOM);
    assert_non_null(strstr(dev.err.msg, "pinned host memory"));
    assert_null(b.host);
    alloc_ok(GM_MEM_PINNED, 1u << 20, &b);           /* a small one still is */
    gm_device_free(&dev, &b);
}

/* stream_write's arguments over the first n floats of c; the values the
 * arguments point to live beside them. */
typedef struct {
    unsigned long n;
    float scale;
    unsigned streaming;
    gm_arg args[4];
} write_args;

static void write_args_set(write_args *w, gm_buffer *c, unsigned long n, unsigned streaming)
{
    w->n = n;
    w->scale = 1.0f;
    w->streaming = streaming;
    w->args[0] = (gm_arg){GM_ARG_BUFFER, c, NULL, 0};
    w->args[1] = (gm_arg){GM_ARG_VALUE, NULL, &w->n, sizeof w->n};
    w->args[2] = (gm_arg){GM_ARG_VALUE, NULL, &w->scale, sizeof w->scale};
    w->args[3] = (gm_arg){GM_ARG_VALUE, NULL, &w->streaming, sizeof w->streaming};
}

/* stream_write of the fp32-grid stream program (built into *p). */
static gm_kernel *stream_write_kernel(gm_program **p)
{
    gm_kernel *k = NULL;
    assert_int_equal(dev.backend->program_build(&dev, "stream", "fp32-grid", NULL, p), GM_OK);
    assert_int_equal(dev.backend->kernel_get(&dev, *p, "stream_write", &k), GM_OK);
    return k;
}

static void test_kernels_and_events(void **state)
{
    (void)state;
    const gm_backend *be = dev.backend;
    gm_program *p = NULL;
    gm_kernel *k = stream_write_kernel(&p);
    gm_kernel *missing = NULL;
    assert_int_equal(be->kernel_get(&dev, p, "no_such_kernel", &missing), GM_ERR_BUILD);
    const size_t n = 1 << 16;
    gm_buffer c, h;
    alloc_ok(GM_MEM_DEVICE, n * 4, &c);
    alloc_ok(GM_MEM_HOST, n * 4, &h);
    write_args wa;
    write_args_set(&wa, &c, n, 1);
    const gm_arg *args = wa.args;
    gm_event *e0 = NULL, *e1 = NULL;
    assert_int_equal(be->event_record(&dev, 0, &e0), GM_OK);
    assert_int_equal(be->launch(&dev, 0, k, 4096, 256, args, 4), GM_OK);
    assert_int_equal(be->event_record(&dev, 0, &e1), GM_OK);
    double ms = -1;
    assert_int_equal(be->event_elapsed_ms(&dev, e0, e1, &ms), GM_OK);
    assert_true(ms >= 0.0);
    assert_int_equal(be->copy(&dev, 0, &h, 0, &c, 0, n * 4, false), GM_OK);
    const float *v = h.host;
    assert_true(v[0] == -1.0f && v[128] == 0.0f && v[n - 1] == 127.0f / 128.0f);
    /* Pageable host memory is no kernel argument. */
    gm_arg bad[] = {{GM_ARG_BUFFER, &h, NULL, 0}, args[1], args[2]};
    assert_int_equal(be->launch(&dev, 0, k, 256, 256, bad, 3), GM_ERR_INVALID);
    be->event_release(&dev, e0);
    be->event_release(&dev, e1);
    be->kernel_release(&dev, k);
    be->program_release(&dev, p);
    gm_device_free(&dev, &c);
    gm_device_free(&dev, &h);
}

/* Times stream_write over n floats of c with a sleep of `gap_ms` on the
 * host between the first event and the launch, the queue held (from
 * before the first event until the second is enqueued) or not. */
static double timed_with_gap(gm_kernel *k, gm_buffer *c, unsigned long n, bool held, long gap_ms)
{
    const gm_backend *be = dev.backend;
    write_args wa;
    write_args_set(&wa, c, n, 0);
    gm_hold *h = NULL;
    if (held)
        assert_int_equal(be->queue_hold(&dev, 0, &h), GM_OK);
    gm_event *e0 = NULL, *e1 = NULL;
    assert_int_equal(be->event_record(&dev, 0, &e0), GM_OK);
    struct timespec gap = {gap_ms / 1000, (gap_ms % 1000) * 1000000L};
    nanosleep(&gap, NULL);
    assert_int_equal(be->launch(&dev, 0, k, 256, 256, wa.args, 4), GM_OK);
    assert_int_equal(be->event_record(&dev, 0, &e1), GM_OK);
    if (held)
        be->queue_release(&dev, h);
    double ms = -1;
    assert_int_equal(be->event_elapsed_ms(&dev, e0, e1, &ms), GM_OK);
    be->event_release(&dev, e0);
    be->event_release(&dev, e1);
    return ms;
}

/* A held queue (queue_hold): work enqueued behind it waits for the
 * release, so the host's time between the first event and the launch is
 * not between the events; unheld it is. While held, an op other than
 * launch and event_record (here a blocking copy, which waits for the
 * queue) releases the hold first instead of waiting forever, and the
 * caller's later release of that hold does nothing. */
static void test_queue_hold(void **state)
{
    (void)state;
    const gm_backend *be = dev.backend;
    gm_program *p = NULL;
    gm_kernel *k = stream_write_kernel(&p);
    const unsigned long n = 1024;
    gm_buffer c, h;
    alloc_ok(GM_MEM_DEVICE, n * 4, &c);
    alloc_ok(GM_MEM_HOST, n * 4, &h);
    double unheld = timed_with_gap(k, &c, n, false, 300);
    double held = timed_with_gap(k, &c, n, true, 300);
    print_message("# 4KiB write with 300 ms on the host after the first event: %.3f ms unheld, %.3f ms held\n",
                  unheld, held);
    assert_true(unheld >= 250.0);
    assert_true(held < 150.0);
    assert_int_equal(be->copy(&dev, 0, &h, 0, &c, 0, n * 4, false), GM_OK);
    const float *v = h.host;
    assert_true(v[0] == -1.0f && v[128] == 0.0f && v[n - 1] == 127.0f / 128.0f);

    /* The rule: a blocking copy while held, after a held launch over the
     * first half of c (zeroed first): the copy sees that launch's values,
     * and the second half still zero. */
    const unsigned zero = 0;
    assert_int_equal(be->fill(&dev, 0, &c, 0, n * 4, &zero, sizeof zero), GM_OK);
    gm_hold *hold = NULL;
    assert_int_equal(be->queue_hold(&dev, 0, &hold), GM_OK);
    write_args half;
    write_args_set(&half, &c, n / 2, 0);
    assert_int_equal(be->launch(&dev, 0, k, 256, 256, half.args, 4), GM_OK);
    memset(h.host, 0xff, n * 4);
    assert_int_equal(be->copy(&dev, 0, &h, 0, &c, 0, n * 4, false), GM_OK);
    assert_true(v[0] == -1.0f && v[n / 2 - 1] == 127.0f / 128.0f && v[n / 2] == 0.0f && v[n - 1] == 0.0f);
    be->queue_release(&dev, hold);   /* released already: nothing happens */
    be->kernel_release(&dev, k);
    be->program_release(&dev, p);
    gm_device_free(&dev, &c);
    gm_device_free(&dev, &h);
}

static void test_build_errors(void **state)
{
    (void)state;
    gm_program *p = NULL;
    const gm_backend *be = dev.backend;
    assert_int_equal(be->program_build(&dev, "no_such_program", "fp32", NULL, &p), GM_ERR_BUILD);
    /* No precision define: the portability header refuses to compile. */
    assert_int_equal(be->program_build(&dev, "stream", "grid", NULL, &p), GM_ERR_BUILD);
    assert_non_null(strstr(dev.err.msg, "precision define"));
    assert_int_equal(be->program_build(&dev, "stream", "fp32 grid", NULL, &p), GM_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_kinds_and_copies), cmocka_unit_test(test_views), cmocka_unit_test(test_fill),
        cmocka_unit_test(test_managed), cmocka_unit_test(test_cap_is_oom), cmocka_unit_test(test_pinned_host_share),
        cmocka_unit_test(test_kernels_and_events), cmocka_unit_test(test_queue_hold), cmocka_unit_test(test_build_errors),
    };
    return cmocka_run_group_tests_name("opencl backend", tests, open_device, close_device);
}
