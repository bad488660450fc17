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
 * Set-up (model_nf4_setup.c) writes each projection's weights (the hashes every precision
 * starts from) into the dequantisation buffer, reads them back, quantises
 * them on the host (train_ref.h's gm_ref_nf4_quantize) and uploads the
 * codes. Every product with a projection dequantises it first into that
 * buffer (train.cl's train_nf4_dequant), in the forward and again in the
 * backward's dX, as bitsandbytes' MatMul4Bit does.
 *
 * Layout: layer by layer, the matrices q, k, v, o, gate, up, down each
 * with its codes (n / 2 bytes), absmax codes (n / 64 bytes) and scales
 * (ceil(n / 64 / 256) floats) after the previous one's in their buffers
 * (model_layout.c's model_nf4_at).
 */
#include "bench/workloads/model_private.h"
#include "bench/workloads/train_ref.h"
#include "bench/model/train_plan.h"

#include <stdlib.h>

void model_nf4_code_map(float *code2)
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
    model_nf4_code_map(code2);
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
