/* A device's dense peak for MFU (bench/workloads/peak.h). */
#include "bench/workloads/peak.h"

#include "bench/bench.h"
#include "bench/workloads/matmul.h"

#include <stdio.h>
#include <string.h>

/*
 * Dense peaks (no 2:4 sparsity) in TFLOP/s (TOPS for int8), as NVIDIA's
 * datasheets and architecture whitepapers give them; fp32 is the CUDA
 * cores' rate (no TF32), fp16 and bf16 with fp32 accumulation. A card is
 * known by compute capability and SM count, and where two share both, by
 * a word of its name. 0: no tensor-core rate in that precision (the card
 * is then measured).
 */
typedef struct {
    int cc, sms;
    const char *name_has;       /* NULL: any name */
    const char *card;
    double fp32, fp16, bf16, fp8, int8;
    const char *source;
} card_peak;

static const card_peak cards[] = {
    {90, 132, "H200", "H200 SXM", 66.9, 989.4, 989.4, 1978.9, 1978.9, "NVIDIA H200 datasheet (same GH100 clocks as H100 SXM5)"},
    {90, 132, "NVL", "H100 NVL", 60.0, 835.5, 835.5, 1670.5, 1670.5, "NVIDIA H100 NVL datasheet"},
    {90, 132, NULL, "H100 SXM5", 66.9, 989.4, 989.4, 1978.9, 1978.9, "NVIDIA H100 whitepaper, table 3"},
    {90, 114, NULL, "H100 PCIe", 51.2, 756.5, 756.5, 1513.0, 1513.0, "NVIDIA H100 whitepaper, table 3"},
    {89, 142, NULL, "L40S", 91.6, 362.05, 362.05, 733.0, 733.0, "NVIDIA L40S datasheet"},
    {89, 58, NULL, "L4", 30.3, 121.0, 121.0, 242.5, 242.5, "NVIDIA L4 datasheet"},
    {89, 128, "4090", "GeForce RTX 4090", 82.6, 165.2, 165.2, 330.3, 660.6, "NVIDIA Ada whitepaper, appendix A"},
    {86, 84, NULL, "A40", 37.4, 149.7, 149.7, 0, 299.3, "NVIDIA A40 datasheet"},
    {86, 72, NULL, "A10", 31.2, 125.0, 125.0, 0, 250.0, "NVIDIA A10 datasheet"},
    {80, 108, NULL, "A100", 19.5, 312.0, 312.0, 0, 624.0, "NVIDIA A100 datasheet"},
    {75, 40, NULL, "T4", 8.1, 65.0, 0, 0, 130.0, "NVIDIA T4 datasheet"},
    {70, 80, NULL, "V100 SXM2", 15.7, 125.0, 0, 0, 0, "NVIDIA V100 datasheet"},
};

static double rate(const card_peak *c, gm_precision p)
{
    switch (p) {
    case GM_FP32: return c->fp32;
    case GM_FP16: return c->fp16;
    case GM_BF16: return c->bf16;
    case GM_INT8: return c->int8;
    case GM_FP8E4M3: case GM_FP8E5M2: return c->fp8;
    default: return 0;
    }
}

double gm_peak_from_table(const gm_device_info *info, gm_precision p, char *basis, size_t len)
{
    for (size_t i = 0; i < sizeof cards / sizeof *cards; i++) {
        const card_peak *c = &cards[i];
        if (c->cc != info->compute_capability || c->sms != info->compute_units
            || (c->name_has && !strstr(info->name, c->name_has)))
            continue;
        double tf = rate(c, p);
        if (tf > 0)
            snprintf(basis, len, "%.1f TFLOP/s, the dense %s peak of an %s (%s)", tf, gm_precision_name(p), c->card,
                     c->source);
        return tf * 1e12;
    }
    return 0;
}

/* One measured product: the device's buffers and the dispatch. */
typedef struct {
    gm_mm_ctx *mm;
    gm_mm op;
} timed_product;

static gm_status run_product(void *ctx)
{
    timed_product *t = ctx;
    return gm_mm_run(t->mm, &t->op, NULL);
}

/* The best of 3 timed n^3 products in p by the dispatch (the vendor first
 * when `vendor`), with its name in `what`. */
static gm_status measure(gm_device *dev, gm_precision p, bool vendor, size_t n, double *flops, char *what, size_t len)
{
    *flops = 0;
    gm_mm_ctx mm;
    gm_status rc = gm_mm_ctx_init(&mm, dev, p, p, vendor);
    if (rc != GM_OK)
        return rc;
    gm_buffer a = {0}, b = {0}, c = {0};
    size_t bytes = n * n * gm_precision_size(p);
    rc = gm_device_alloc(dev, GM_MEM_DEVICE, bytes, &a);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_DEVICE, bytes, &b);
    if (rc == GM_OK)
        rc = gm_device_alloc(dev, GM_MEM_DEVICE, bytes, &c);
    unsigned char zero = 0;
    if (rc == GM_OK)
        rc = dev->backend->fill(dev, 0, &a, 0, bytes, &zero, 1);
    if (rc == GM_OK)
        rc = dev->backend->fill(dev, 0, &b, 0, bytes, &zero, 1);
    timed_product t = {&mm, {.prec = p, .m = n, .n = n, .k = n, .sa = 1, .sb = 1, .sc = 1}};
    t.op.a = (gm_mm_operand){&a, 0, 0, 0, false};
    t.op.b = (gm_mm_operand){&b, 0, 0, 0, false};
    t.op.c = (gm_mm_operand){&c, 0, 0, 0, false};
    gm_mm_tally tally = {0};
    double ms = 0;
    if (rc == GM_OK)
        rc = gm_mm_run(&mm, &t.op, &tally);       /* warm-up: loads the code, plans the shape */
    for (int rep = 0; rep < 3 && rc == GM_OK; rep++) {
        rc = gm_time_on_queue(dev, 0, run_product, &t, &ms);
        if (rc == GM_OK && ms > 0 && 2.0 * (double)n * n * n / (ms / 1e3) > *flops)
            *flops = 2.0 * (double)n * n * n / (ms / 1e3);
    }
    if (rc == GM_OK)
        rc = dev->backend->synchronize(dev, 0);
    gm_mm_tally_describe(&mm, &tally, what, len);
    gm_device_free(dev, &a);
    gm_device_free(dev, &b);
    gm_device_free(dev, &c);
    gm_mm_ctx_release(&mm);
    return rc;
}

gm_status gm_peak(gm_device *dev, gm_precision p, double *flops, char *basis, size_t len)
{
    /* One measurement a process for each precision. */
    static struct {
        bool done;
        double flops;
        char basis[240];
    } cache[GM_PREC_COUNT];
    *flops = gm_peak_from_table(&dev->info, p, basis, len);
    if (*flops > 0 || p == GM_INT4)
        return GM_OK;
    if (cache[p].done) {
        *flops = cache[p].flops;
        snprintf(basis, len, "%s", cache[p].basis);
        return GM_OK;
    }
    bool cpu = dev->info.type == GM_DEV_CPU, vendor = !cpu;
    size_t n = cpu ? 512 : 8192;
    char what[64] = "";
    gm_error before = dev->err;
    gm_status rc = measure(dev, p, vendor, n, flops, what, sizeof what);
    if (rc == GM_ERR_OOM || rc == GM_ERR_UNSUPPORTED) {
        snprintf(basis, len, "no peak: measuring it at %zu^3 failed (%s)", n, dev->err.msg);
        dev->err = before;
        *flops = 0;
        return GM_OK;
    }
    if (rc != GM_OK)
        return rc;
    snprintf(basis, len, "%.1f GFLOP/s, the %s peak measured in this run: %s at %zu^3, best of 3%s", *flops / 1e9,
             gm_precision_name(p), what, n, cpu ? " (our kernel's rate, not the cores' FMA peak)" : "");
    cache[p].done = true;
    cache[p].flops = *flops;
    snprintf(cache[p].basis, sizeof cache[p].basis, "%s", basis);
    return GM_OK;
}
