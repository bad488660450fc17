/*
 * The whole model's one product through the dispatch (model_private.h):
 * the forward's LoRA terms and the backward call it, on their tallies,
 * each product checked whole while a verify checks (model_product_check.c).
 */
#include "bench/workloads/model_private.h"

gm_status model_product(model_state *st, model_site site, uint64_t m, uint64_t n, uint64_t k, loc a, bool ta, loc b,
                        bool tb, loc c, bool acc, gm_mm_tally *tally)
{
    gm_mm op = {.prec = st->p, .m = m, .n = n, .k = k};
    op.a = (gm_mm_operand){a.buf, a.off, 0, 0, ta};
    op.b = (gm_mm_operand){b.buf, b.off, 0, 0, tb};
    op.c = (gm_mm_operand){c.buf, c.off, 0, 0, false};
    if (acc) {
        op.r = c.buf;
        op.r_off = c.off;
    }
    gm_status rc = model_product_before(st, &op);
    if (rc == GM_OK)
        rc = gm_mm_run(&st->mm, &op, tally);
    return rc == GM_OK ? model_product_done(st, site, &op, st->mm.last_half_sums, false) : rc;
}
