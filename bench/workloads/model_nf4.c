/*
 * QLoRA's frozen base on the whole model's training step (bench/workloads/
 * model_private.h): every layer projection in NF4 (Dettmers et al. 2023,
 * section 3) as bitsandbytes stores it with compress_statistics: 4-bit
 * codes two a byte, an absmax a block of GM_NF4_BLOCK weights quantised to
 * 8 bits in blocks of GM_NF4_SCALE_BLOCK with an fp32 scale each, less
 * one fp32 offset a matrix (the mean absmax). The second quantisation's
 * map is linear over [-1, 1] (bitsandbytes uses its dynamic 8-bit map:
 * the same bytes). The embedding, norms and LM head stay in the compute
 * precision (base_other), as bitsandbytes quantises the nn.Linear layers
 * and skips the head.
 *
 * Set-up writes each projection's weights (the hashes every precision
 * starts from) into the dequantisation buffer, reads them back, quantises
 * them on the host (train_ref.h's gm_ref_nf4_quantize) and uploads the
 * codes. Every product with a projection dequantises it first into that
 * buffer (train.cl's train_nf4_dequant), in the forward and again in the
 * backward's dX, as bitsandbytes' MatMul4Bit does.
 *
 * Layout: layer by layer, the matrices q, k, v, o, gate, up, down each
 * with its codes (n / 2 bytes), absmax codes (n / 64 bytes) and scales
 * (ceil(n / 64 / 256) floats) after the previous one's in their buffers.
 */
#include "bench/workloads/model_private.h"
#include "bench/workloads/train_ref.h"
#include "bench/model/train_plan.h"

#include <stdlib.h>
#include <string.h>

bool model_is_nf4(const model_state *st, int m)
{
    return st->nf4 && m < N_LAYER_M && m != M_NORM1 && m != M_NORM2;
}

gm_nf4_at model_nf4_at(const model_state *st, int m, uint64_t l)
{
    gm_nf4_at at = {0, 0, 0};
    for (uint64_t j = 0; j <= l; j++)
        for (int i = 0; i < N_LAYER_M; i++) {
            if (j == l && i == m)
                return at;
            if (!model_is_nf4(st, i))
                continue;
            uint64_t n = model_in(st, i) * model_out(st, i), blocks = n / GM_NF4_BLOCK;
            at.codes += n / 2;
            at.absmax += blocks;
            at.scales += (blocks + GM_NF4_SCALE_BLOCK - 1) / GM_NF4_SCALE_BLOCK;
        }
    return at;
}

bool model_nf4_fits(const gm_arch *a)
{
    uint64_t ad = a->heads * a->head_dim, kd = a->kv_heads * a->head_dim;
    return (a->hidden * ad) % GM_NF4_BLOCK == 0 && (a->hidden * kd) % GM_NF4_BLOCK == 0
           && (a->hidden * a->ffn) % GM_NF4_BLOCK == 0;
}

/* The second quantisation's map: 256 ascending values over [-1, 1]. */
static void code_map(float *code2)
{
    for (int i = 0; i < 256; i++)
        code2[i] = -1.0f + 2.0f * (float)i / 255.0f;
}

loc model_weight(model_state *st, int m, uint64_t l, gm_status *rc)
{
    if (!model_is_nf4(st, m))
        return model_loc(st, m, l);
    uint64_t n = model_in(st, m) * model_out(st, m);
    /* GPUMEM_FAULT=nf4-dequant (tests): the planted error of dequantising
     * with each block's absmax off by the matrix's offset; the reference
     * dequantises the codes itself, so the check must catch it. */
    float offset = st->nf4_offset[l * N_LAYER_M + (uint64_t)m] * (st->nf4_fault ? 2.0f : 1.0f);
    *rc = gm_train_nf4_dequant(st->dev, &st->tk, &st->buf[B_NF4C], &st->buf[B_NF4A], &st->buf[B_NF4M],
                               &st->buf[B_NF4S], offset, &st->buf[B_DEQUANT], n, 0, model_nf4_at(st, m, l));
    return (loc){&st->buf[B_DEQUANT], 0};
}

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
    code_map(code2);
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
    code_map(code2);
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

gm_status model_nf4_host(model_state *st, int m, uint64_t l, double *out)
{
    uint64_t n = model_in(st, m) * model_out(st, m), blocks = n / GM_NF4_BLOCK;
    uint64_t groups = (blocks + GM_NF4_SCALE_BLOCK - 1) / GM_NF4_SCALE_BLOCK;
    size_t bytes[3] = {(size_t)n / 2, (size_t)blocks, (size_t)groups * 4};
    gm_nf4_at at = model_nf4_at(st, m, l);
    uint64_t from[3] = {at.codes, at.absmax, at.scales * 4};
    gm_buffer *src[3] = {&st->buf[B_NF4C], &st->buf[B_NF4A], &st->buf[B_NF4S]};
    gm_buffer host[3] = {{0}, {0}, {0}};
    gm_status rc = GM_OK;
    for (int i = 0; i < 3 && rc == GM_OK; i++) {
        rc = gm_device_alloc(st->dev, GM_MEM_HOST, bytes[i], &host[i]);
        if (rc == GM_OK)
            rc = st->dev->backend->copy(st->dev, 0, &host[i], 0, src[i], (size_t)from[i], bytes[i], false);
    }
    float code2[256];
    code_map(code2);
    if (rc == GM_OK)
        gm_ref_nf4_dequant(host[0].host, host[1].host, code2, host[2].host, st->nf4_offset[l * N_LAYER_M + (uint64_t)m],
                           out, (size_t)n);
    for (int i = 0; i < 3; i++)
        gm_device_free(st->dev, &host[i]);
    return rc;
}

void model_nf4_release(model_state *st)
{
    free(st->nf4_offset);
    st->nf4_offset = NULL;
}
