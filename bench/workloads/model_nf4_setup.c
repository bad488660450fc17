/*
 * QLoRA's NF4 base at set-up (bench/workloads/model_nf4.c says the format):
 * each projection's weights, the hashes every precision starts from,
 * written into the dequantisation buffer, read back, quantised on the host
 * (train_ref.h's gm_ref_nf4_quantize) and the codes uploaded.
 */
#include "bench/workloads/model_private.h"
#include "bench/workloads/train_ref.h"
#include "bench/model/train_plan.h"

#include <stdlib.h>
#include <string.h>

/* bytes from host to dst at dst_off through a host buffer. */
static gm_status upload(model_state *st, gm_buffer *dst, uint64_t dst_off, const void *src, size_t bytes)
{
    gm_buffer host = {0};
    gm_status rc = gm_device_alloc(st->dev, GM_MEM_HOST, bytes, &host);
    if (rc == GM_OK) {
        memcpy(host.host, src, bytes);
        rc = st->dev->backend->copy(st->dev, 0, dst, (size_t)dst_off, &host, 0, bytes, false);
    }
    gm_device_free(st->dev, &host);
    return rc;
}

/* Matrix m of layer l: its weights into the dequantisation buffer, read
 * back, quantised here, the codes uploaded. */
static gm_status quantise(model_state *st, int m, uint64_t l, gm_buffer *stage)
{
    uint64_t n = model_in(st, m) * model_out(st, m), blocks = n / GM_NF4_BLOCK;
    uint64_t groups = (blocks + GM_NF4_SCALE_BLOCK - 1) / GM_NF4_SCALE_BLOCK;
    double *w = malloc((size_t)n * sizeof *w);
    uint8_t *codes = malloc((size_t)n / 2), *absmax = malloc((size_t)blocks);
    float *scales = malloc((size_t)groups * sizeof *scales), code2[256];
    gm_status rc = w && codes && absmax && scales ? GM_OK : gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    loc at = {&st->buf[B_DEQUANT], 0};
    if (rc == GM_OK)
        rc = model_init_region(st, at, n, model_param(st, m, l), SEED_W, st->range[m], st->add[m], 1.0f);
    if (rc == GM_OK)
        rc = st->dev->backend->copy(st->dev, 0, stage, 0, at.buf, 0, (size_t)(n * st->es), false);
    for (uint64_t i = 0; rc == GM_OK && i < n; i++)
        w[i] = gm_load(st->p, stage->host, (size_t)i, 1.0f);
    model_nf4_code_map(code2);
    gm_nf4_at to = model_nf4_at(st, m, l);
    if (rc == GM_OK)
        gm_ref_nf4_quantize(w, (size_t)n, code2, codes, absmax, scales, &st->nf4_offset[l * N_LAYER_M + (uint64_t)m]);
    if (rc == GM_OK)
        rc = upload(st, &st->buf[B_NF4C], to.codes, codes, (size_t)n / 2);
    if (rc == GM_OK)
        rc = upload(st, &st->buf[B_NF4A], to.absmax, absmax, (size_t)blocks);
    if (rc == GM_OK)
        rc = upload(st, &st->buf[B_NF4S], to.scales * 4, scales, (size_t)groups * 4);
    free(w);
    free(codes);
    free(absmax);
    free(scales);
    return rc;
}

gm_status model_nf4_init(model_state *st)
{
    st->nf4_offset = calloc((size_t)(st->L * N_LAYER_M), sizeof *st->nf4_offset);
    if (!st->nf4_offset)
        return gm_device_fail(st->dev, GM_ERR_OOM, 0, "out of host memory");
    float code2[256];
    model_nf4_code_map(code2);
    gm_status rc = upload(st, &st->buf[B_NF4M], 0, code2, sizeof code2);
    uint64_t biggest = 0;
    for (int m = 0; m < N_LAYER_M; m++)
        if (model_is_nf4(st, m) && model_in(st, m) * model_out(st, m) > biggest)
            biggest = model_in(st, m) * model_out(st, m);
    gm_buffer stage = {0};
    if (rc == GM_OK)
        rc = gm_device_alloc(st->dev, GM_MEM_HOST, (size_t)(biggest * st->es), &stage);
    for (uint64_t l = 0; l < st->L && rc == GM_OK; l++)
        for (int m = 0; m < N_LAYER_M && rc == GM_OK; m++)
            if (model_is_nf4(st, m))
                rc = quantise(st, m, l, &stage);
    gm_device_free(st->dev, &stage);
    return rc;
}
