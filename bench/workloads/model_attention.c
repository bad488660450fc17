/*
 * The whole model's attention on the vendor path (bench/model/mem_plan.h,
 * gm_plan_attention_by_gemm): for each sequence and each chunk of
 * st->attn_rows query rows, S = Q K^T as GEMMs batched over the KV heads
 * (one call for each of a KV head's query heads: Q, K and O are token-major,
 * [token][head][dim], so a query head's rows are `heads * dim` apart and
 * the KV head it reads is the batch index), fp32 scores for every head of
 * the chunk in the score buffer; the softmax (attention.cl's
 * attention_softmax_rows: causal mask, scale 1/sqrt(dim), probabilities in
 * the activations' precision after the scores); then O = P V, batched the
 * same way. A chunk's keys end at its last query (causal), so the products
 * cover about half the score matrix, (chunks + 1) / (2 chunks) of it. The
 * products go through the dispatch (matmul.h): the vendor where it takes
 * them, else our strided kernel.
 */
#include "bench/workloads/model_private.h"

#include <math.h>

gm_status model_attention_gemm(model_state *st, uint64_t l)
{
    layer_locs c = model_locs(st, l);
    const uint64_t d = st->d, ad = st->ad, kd = st->kd, heads = st->heads, group = heads / st->kv_heads;
    const uint64_t chunk = st->attn_rows;
    gm_buffer *scores = &st->buf[B_SCORES];
    /* The probabilities follow the scores: element p_at of the activations' precision. */
    const uint64_t p_at = heads * chunk * st->seq * 4 / st->es;
    const float scale = (float)(1.0 / sqrt((double)d));
    gm_status rc = GM_OK;
    for (uint64_t b = 0; b < st->run_b && rc == GM_OK; b++)
        for (uint64_t q0 = 0; q0 < st->run_seq && rc == GM_OK; q0 += chunk) {
            const uint64_t rows = st->run_seq - q0 < chunk ? st->run_seq - q0 : chunk, keys = q0 + rows;
            const uint64_t tok = b * st->seq + q0, kv0 = b * st->seq;   /* first query token, first key */
            /* Head j = g * group + jj of the chunk: scores at j * rows * keys. */
            for (uint64_t jj = 0; jj < group && rc == GM_OK; jj++) {
                gm_mm qk = {.prec = st->p, .m = rows, .n = keys, .k = d, .batch = st->kv_heads, .c_fp32 = true,
                            .sa = ACT, .sb = ACT};
                qk.a = (gm_mm_operand){c.q.buf, c.q.off + tok * ad + jj * d, ad, group * d, false};
                qk.b = (gm_mm_operand){c.k.buf, c.k.off + kv0 * kd, kd, d, true};
                qk.c = (gm_mm_operand){scores, jj * rows * keys, keys, group * rows * keys, false};
                rc = gm_mm_run(&st->mm, &qk, &st->tally_attn);
                st->attn_half_sums = st->attn_half_sums || st->mm.last_half_sums;
            }
            if (rc == GM_OK) {
                unsigned int r32 = (unsigned int)rows, h32 = (unsigned int)heads, k32 = (unsigned int)keys;
                unsigned int first = (unsigned int)q0, has_lse = st->train;
                uint64_t lse_off = c.lse.off + kv0, lse_head = st->T;
                gm_arg args[] = {gm_arg_buf(scores),   gm_arg_buf(scores),    gm_arg_buf(c.lse.buf ? c.lse.buf : scores),
                                 gm_arg_u32(&r32),     gm_arg_u32(&h32),      gm_arg_u32(&k32),
                                 gm_arg_u32(&first),   gm_arg_f32(&scale),    gm_arg_u64(&p_at),
                                 gm_arg_u64(&lse_off), gm_arg_u64(&lse_head), gm_arg_u32(&has_lse)};
                size_t local = st->chunked ? 1 : 256, groups = (size_t)(heads * rows);
                rc = st->dev->backend->launch(st->dev, 0, st->k_softmax, groups * local, local, args, 12);
            }
            for (uint64_t jj = 0; jj < group && rc == GM_OK; jj++) {
                gm_mm pv = {.prec = st->p, .m = rows, .n = d, .k = keys, .batch = st->kv_heads, .sa = ACT, .sb = ACT,
                            .sc = ACT};
                pv.a = (gm_mm_operand){scores, p_at + jj * rows * keys, keys, group * rows * keys, false};
                pv.b = (gm_mm_operand){c.v.buf, c.v.off + kv0 * kd, kd, d, false};
                pv.c = (gm_mm_operand){c.o.buf, c.o.off + tok * ad + jj * d, ad, group * d, false};
                rc = gm_mm_run(&st->mm, &pv, &st->tally_attn);
                st->attn_half_sums = st->attn_half_sums || st->mm.last_half_sums;
            }
        }
    return rc;
}
