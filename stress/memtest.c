/*
 * memtest: fills --fill of free device memory (in chunks of at most
 * 256MiB and the device's largest allocation) and runs the classic
 * patterns over every chunk, verified on the device (kernels/memtest.cl):
 * walking ones and zeros (32 passes each), own address and its inverse,
 * moving inversions with four seeded random patterns, modulo-20 (20
 * offsets) and a seeded random pattern. Reports the error count, the
 * first failing addresses (chunk and byte offset) and the bit positions
 * that flipped. Every check reads every word of the chunk on the device
 * (memtest_check, memtest_invert): nothing is sampled. Fault flip-bits
 * flips one bit of the first chunk between a fill and its check; the
 * output faults (corrupt-output, flip-output-bit: bench/output_fault.h)
 * strike one word of every chunk, drawn from the seed over the whole
 * chunk, between the last pass's fill and its check.
 */
#include "bench/bench.h"
#include "lib/interrupt.h"
#include "stress/stress.h"
#include "stress/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB ((uint64_t)1 << 20)
#define MAX_CHUNKS 1024                  /* 256GiB in 256MiB chunks */
#define MAX_FAILS 8                      /* MEMTEST_MAX_FAILS */
#define REPORT_WORDS (2 + 2 * MAX_FAILS)

enum { CONSTANT, ADDRESS, RANDOM, MODULO };

typedef struct {
    gm_stress *s;
    gm_program *prog;
    gm_kernel *fill, *check, *invert;
    bool chunked;
    gm_buffer report, report_host;
    uint64_t errors, bits, passes, bytes_verified;
    char fails[MAX_FAILS][48];
    int n_fails;
} tester;

static gm_status launch(tester *t, gm_kernel *k, gm_buffer *buf, unsigned int mode, uint32_t p, unsigned int off,
                        bool with_report)
{
    gm_device *dev = t->s->dev;
    const uint64_t n = buf->bytes / 4;
    gm_arg args[] = {gm_arg_buf(buf), gm_arg_u64(&n), gm_arg_u32(&mode), gm_arg_u32(&p), gm_arg_u32(&off),
                     gm_arg_buf(&t->report)};
    size_t global, local;
    gm_launch_geometry(dev, t->chunked, (size_t)n, &global, &local);
    return dev->backend->launch(dev, 0, k, global, local, args, with_report ? 6 : 5);
}

/* Reads and clears the report of the checks since the last read. */
static gm_status collect(tester *t, int chunk)
{
    gm_device *dev = t->s->dev;
    gm_status rc = dev->backend->copy(dev, 0, &t->report_host, 0, &t->report, 0, REPORT_WORDS * 4, false);
    if (rc != GM_OK)
        return rc;
    uint32_t *r = t->report_host.host;
    t->errors += r[0];
    t->bits |= r[1];
    for (uint32_t i = 0; i < r[0] && i < MAX_FAILS && t->n_fails < MAX_FAILS; i++) {
        uint64_t index = (uint64_t)r[2 + 2 * i] | (uint64_t)r[3 + 2 * i] << 32;
        snprintf(t->fails[t->n_fails++], sizeof t->fails[0], "chunk %d + 0x%llx", chunk,
                 (unsigned long long)(index * 4));
    }
    uint32_t zero = 0;
    return r[0] || r[1] ? dev->backend->fill(dev, 0, &t->report, 0, REPORT_WORDS * 4, &zero, 4) : GM_OK;
}

/* One fill-then-check pass over a chunk; `fault`: flip-bits' bit, or
 * where `strike` (the chunk's number + 1) an output fault's word. */
static gm_status pass(tester *t, gm_buffer *buf, unsigned int mode, uint32_t p, unsigned int off, bool fault,
                      int strike)
{
    gm_status rc = launch(t, t->fill, buf, mode, p, off, false);
    if (rc == GM_OK && fault)
        rc = gm_stress_flip_bit(t->s->dev, buf);
    if (rc == GM_OK && strike) {
        /* The check compares words exactly: every bit of one is seen
         * (low_bit 0). The salt names the chunk. */
        char point[48];
        snprintf(point, sizeof point, "memtest chunk %d", strike - 1);
        rc = gm_output_fault_strike(&t->s->output_fault, t->s->dev, buf, 0, buf->bytes / 4, 4,
                                    gm_output_fault_salt(point), 0, 0, NULL);
    }
    if (rc == GM_OK)
        rc = launch(t, t->check, buf, mode, p, off, true);
    t->passes++;
    t->bytes_verified += buf->bytes;
    return rc;
}

static gm_status test_chunk(tester *t, gm_buffer *buf, int chunk)
{
    uint64_t x = t->s->seed * 0x9e3779b97f4a7c15ull + (uint64_t)chunk + 1;
    bool fault = t->s->fault == GM_STRESS_FAULT_FLIP_BITS && chunk == 0;
    gm_status rc = GM_OK;
    for (unsigned int k = 0; k < 32 && rc == GM_OK && !gm_interrupted(); k++) {
        rc = pass(t, buf, CONSTANT, 1u << k, 0, fault && k == 3, 0);          /* walking ones */
        if (rc == GM_OK)
            rc = pass(t, buf, CONSTANT, ~(1u << k), 0, false, 0);             /* walking zeros */
    }
    if (rc == GM_OK)
        rc = pass(t, buf, ADDRESS, 0, 0, false, 0);
    if (rc == GM_OK)
        rc = pass(t, buf, ADDRESS, ~0u, 0, false, 0);
    for (int i = 0; i < 4 && rc == GM_OK && !gm_interrupted(); i++) {                           /* moving inversions */
        uint32_t p = (uint32_t)gm_xorshift(&x);
        rc = launch(t, t->fill, buf, CONSTANT, p, 0, false);
        if (rc == GM_OK)
            rc = launch(t, t->invert, buf, CONSTANT, p, 0, true);
        if (rc == GM_OK)
            rc = launch(t, t->invert, buf, CONSTANT, ~p, 0, true);
        if (rc == GM_OK)
            rc = launch(t, t->check, buf, CONSTANT, p, 0, true);
        t->passes += 3;
        t->bytes_verified += 3 * buf->bytes;
    }
    uint32_t p = (uint32_t)gm_xorshift(&x);
    for (unsigned int off = 0; off < 20 && rc == GM_OK && !gm_interrupted(); off++)
        rc = pass(t, buf, MODULO, p, off, false, 0);
    if (rc == GM_OK)
        rc = pass(t, buf, RANDOM, (uint32_t)gm_xorshift(&x), 0, false, chunk + 1);
    return rc == GM_OK ? collect(t, chunk) : rc;
}

static gm_status build(tester *t)
{
    gm_device *dev = t->s->dev;
    char variant[32];
    gm_status rc = dev->backend->program_build(dev, "memtest", gm_kernel_variant(GM_FP32, t->chunked, variant,
                                                                                 sizeof variant),
                                               NULL, &t->prog);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, t->prog, "memtest_fill", &t->fill);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, t->prog, "memtest_check", &t->check);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, t->prog, "memtest_invert", &t->invert);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_DEVICE, REPORT_WORDS * 4, &t->report);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_HOST, REPORT_WORDS * 4, &t->report_host);
    uint32_t zero = 0;
    if (rc == GM_OK)
        rc = dev->backend->fill(dev, 0, &t->report, 0, REPORT_WORDS * 4, &zero, 4);
    return rc;
}

static int memtest(gm_stress *s, gm_stress_result *r)
{
    gm_device *dev = s->dev;
    tester t = {.s = s, .chunked = gm_device_prefers_chunked(dev)};
    gm_buffer *chunks = calloc(MAX_CHUNKS, sizeof *chunks);
    gm_status rc = chunks ? build(&t) : gm_device_fail(dev, GM_ERR_OOM, 0, "out of host memory");
    const char *source = "";
    uint64_t free_b = gm_stress_free_memory(dev, &source), target = (uint64_t)((double)free_b * s->fill), held = 0;
    uint64_t chunk_max = dev->info.max_alloc && dev->info.max_alloc < 256 * MIB ? dev->info.max_alloc : 256 * MIB;
    int n = 0;
    while (rc == GM_OK && held + 4096 <= target && n < MAX_CHUNKS) {
        uint64_t size = (target - held < chunk_max ? target - held : chunk_max) / 4096 * 4096;
        if (gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)size, &chunks[n]) != GM_OK)
            break;                       /* as much as the device gives */
        held += size;
        n++;
    }
    double t0 = gm_now();
    for (int i = 0; i < n && rc == GM_OK; i++)
        rc = test_chunk(&t, &chunks[i], i);
    double seconds = gm_now() - t0;
    r->ok = rc == GM_OK && t.errors == 0 && n > 0;
    gm_stress_diag(r, "bytes_tested", "%llu", (unsigned long long)held);
    gm_stress_diag(r, "fill", "%.0f%% of %llu free bytes (%s)", s->fill * 100, (unsigned long long)free_b, source);
    gm_stress_diag(r, "chunks", "%d", n);
    gm_stress_diag(r, "passes", "%llu", (unsigned long long)t.passes);
    gm_stress_diag(r, "errors", "%llu", (unsigned long long)t.errors);
    char bits[200] = "";
    for (int b = 0; b < 32; b++)
        if (t.bits & (1u << b))
            snprintf(bits + strlen(bits), sizeof bits - strlen(bits), "%s%d", bits[0] ? ", " : "", b);
    gm_stress_diag(r, "bit_positions", "[%s]", bits);
    char fails[600] = "";
    for (int i = 0; i < t.n_fails; i++)
        snprintf(fails + strlen(fails), sizeof fails - strlen(fails), "%s\"%s\"", i ? ", " : "", t.fails[i]);
    gm_stress_diag(r, "first_failures", "[%s]", fails);
    gm_stress_diag(r, "seconds", "%.2f", seconds);
    if (rc != GM_OK)
        gm_stress_fail(r, "%s", dev->err.msg);
    else if (n == 0)
        gm_stress_fail(r, "no memory could be allocated to test");
    else if (t.errors)
        gm_stress_fail(r, "%llu words differed from their pattern", (unsigned long long)t.errors);
    int out = gm_stress_row(s, "memtest", "errors", "count", (double)t.errors, held);
    if (out == 0)
        out = gm_stress_row(s, "memtest", "bandwidth", "GB/s",
                            seconds > 0 ? 2.0 * (double)t.bytes_verified / seconds / 1e9 : 0, held);
    for (int i = 0; i < n; i++)
        gm_device_free(dev, &chunks[i]);
    free(chunks);
    gm_device_free(dev, &t.report);
    gm_device_free(dev, &t.report_host);
    gm_kernel *ks[] = {t.fill, t.check, t.invert};
    for (int i = 0; i < 3; i++)
        if (ks[i])
            dev->backend->kernel_release(dev, ks[i]);
    if (t.prog)
        dev->backend->program_release(dev, t.prog);
    return rc == GM_ERR_DEVICE_LOST ? -1 : out;
}

const gm_stress_check gm_stress_memtest = {"memtest", "memory test patterns over a share of free memory", memtest};
