/*
 * The whole model's products checked whole on the device during the
 * verify's replay (product_device_check.h: column checksums over blocks of
 * rows; int8 products: product_device_check_int8.h), and the product faults that prove it (output_fault.h:
 * corrupt-product, flip-product-bit). bench/workloads/model_private.h.
 */
#include "bench/workloads/model_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The matrices of gm_output_fault_products, in its order. */
static const int fault_matrix[GM_OUTPUT_FAULT_PRODUCTS] = {M_Q, M_K, M_V, M_O, M_GATE, M_UP, M_DOWN, M_LM};

/* Scratch of the checksums: 1/64 of what the workload holds, within
 * [1 MiB, 64 MiB] (but one block of rows, product_device_check.h). */
#define SCRATCH_MIN ((uint64_t)1 << 20)
#define SCRATCH_MAX ((uint64_t)64 << 20)

const char *model_product_name(int m)
{
    for (int i = 0; i < GM_OUTPUT_FAULT_PRODUCTS; i++)
        if (fault_matrix[i] == m)
            return gm_output_fault_products[i];
    return "product";
}

gm_status model_product_fault_setup(model_state *st)
{
    gm_output_fault f;
    st->pfault.kind = GM_OUTPUT_FAULT_NONE;
    if (gm_output_fault_parse(getenv("GPUMEM_FAULT"), getenv("GPUMEM_FAULT_SEED"), &f) != 0
        || f.site != GM_OUTPUT_FAULT_SITE_PRODUCT || f.kind == GM_OUTPUT_FAULT_NONE)
        return GM_OK;
    int product = f.product >= 0 ? f.product
                                 : (int)gm_output_fault_index(&f, gm_output_fault_salt("model product"), 0,
                                                              GM_OUTPUT_FAULT_PRODUCTS);
    uint64_t layer = f.layer >= 0 ? (uint64_t)f.layer
                                  : (uint64_t)gm_output_fault_index(&f, gm_output_fault_salt("model layer"), 0,
                                                                    (size_t)st->L);
    if (fault_matrix[product] != M_LM && layer >= st->L)
        return gm_device_fail(st->dev, GM_ERR_INVALID, 0, "GPUMEM_FAULT names layer %llu of a %llu-layer model",
                              (unsigned long long)layer, (unsigned long long)st->L);
    st->pfault = f;
    st->pfault_m = fault_matrix[product];
    st->pfault_layer = fault_matrix[product] == M_LM ? st->L : layer;
    return GM_OK;
}

/* "layer L NAME", or the head's name. */
static void product_label(int m, uint64_t layer, char *buf, size_t len)
{
    if (m == M_LM)
        snprintf(buf, len, "%s", model_product_name(m));
    else
        snprintf(buf, len, "layer %llu %s", (unsigned long long)layer, model_product_name(m));
}

gm_status model_product_done(model_state *st, int m, uint64_t layer, const gm_mm *op, bool half_sums,
                             bool b_rounded)
{
    gm_status rc = GM_OK;
    char label[64];
    product_label(m, layer, label, sizeof label);
    if (st->pfault.kind != GM_OUTPUT_FAULT_NONE && m == st->pfault_m && (m == M_LM || layer == st->pfault_layer)) {
        size_t es = op->c_fp32 ? 4 : st->es;
        rc = gm_output_fault_strike_product(&st->pfault, st->dev, (gm_buffer *)op->c.buf, (size_t)op->c.off * es,
                                            (size_t)(op->m * op->n), es, op->c_fp32 ? GM_FP32 : st->p,
                                            gm_output_fault_salt(label), label, NULL);
    }
    model_pcheck *pc = st->pcheck;
    if (rc != GM_OK || !pc || !pc->on || pc->failed)
        return rc;
    gm_abft_finding f;
    gm_error before = st->dev->err;
    if (op->prec == GM_INT8) {
        rc = st->abft8.dev ? GM_OK : gm_abft_i8_init(&st->abft8, st->dev, st->chunked, pc->limit);
        if (rc != GM_OK)
            return rc;
        rc = gm_abft_i8_check(&st->abft8, op, &f);
    } else {
        gm_abft *x = op->b_scales ? &st->abft4 : &st->abft;
        if (!x->dev) {
            rc = gm_abft_init(x, st->dev, st->p, op->b_scales ? GM_INT4 : st->p, st->chunked, pc->limit);
            if (rc != GM_OK)
                return rc;
        }
        rc = gm_abft_check(x, &st->mm, op, half_sums, b_rounded, &f);
    }
    if (rc == GM_ERR_OOM) {
        /* No room for the scratch (an oom probe at the edge): the sampled
         * checks stand alone for the rest of the replay. */
        st->dev->err = before;
        pc->on = false;
        snprintf(pc->off, sizeof pc->off, "%s", f.why);
        return GM_OK;
    }
    if (rc != GM_OK)
        return rc;
    if (!f.checked) {
        pc->on = false;
        snprintf(pc->off, sizeof pc->off, "%s", f.why);
        return GM_OK;
    }
    pc->checked++;
    if (f.ok)
        return GM_OK;
    pc->failed = true;
    int n = snprintf(pc->note, pc->note_len,
                     "%s rows [%llu, %llu) column %llu: block sum off by %.7g (tolerance %.3g), found by the device "
                     "checksums", label, (unsigned long long)f.row_first, (unsigned long long)f.row_last + 1,
                     (unsigned long long)f.col, f.diff, f.tol);
    if (f.located && n > 0 && (size_t)n < pc->note_len)
        snprintf(pc->note + n, pc->note_len - (size_t)n, "; element [%llu][%llu] is wrong",
                 (unsigned long long)f.row, (unsigned long long)f.col);
    return GM_OK;
}

void model_pcheck_begin(model_state *st, model_pcheck *pc, char *note, size_t len)
{
    uint64_t held = 0;
    for (int i = 0; i < N_B; i++)
        held += st->buf[i].bytes;
    uint64_t limit = held / 64;
    limit = limit < SCRATCH_MIN ? SCRATCH_MIN : limit > SCRATCH_MAX ? SCRATCH_MAX : limit;
    *pc = (model_pcheck){.on = true, .note = note, .note_len = len, .limit = limit};
    const char *mode = getenv("GPUMEM_PRODUCT_CHECK");
    if (st->p != GM_FP32 && st->p != GM_FP16 && st->p != GM_BF16 && st->p != GM_INT8) {
        pc->on = false;
        snprintf(pc->off, sizeof pc->off, "no device checksums for %s products", gm_precision_name(st->p));
    } else if (mode && strcmp(mode, "sampled") == 0) {
        pc->on = false;
        snprintf(pc->off, sizeof pc->off, "GPUMEM_PRODUCT_CHECK=sampled");
    }
    st->abft.limit = st->abft4.limit = st->abft8.limit = limit;
    st->pcheck = pc;
}

void model_pcheck_end(model_state *st, model_pcheck *pc)
{
    st->pcheck = NULL;
    if (st->abft.dev)
        gm_abft_free_scratch(&st->abft);
    if (st->abft4.dev)
        gm_abft_free_scratch(&st->abft4);
    if (st->abft8.dev)
        gm_abft_i8_free_scratch(&st->abft8);
    if (pc->off[0])
        snprintf(st->pcheck_note, sizeof st->pcheck_note, "products checked on sampled rows (%s)", pc->off);
    else
        snprintf(st->pcheck_note, sizeof st->pcheck_note,
                 "every product checked whole on the device (%llu: column checksums over blocks of rows)",
                 (unsigned long long)pc->checked);
}

void model_pcheck_release(model_state *st)
{
    gm_abft_release(&st->abft);
    gm_abft_release(&st->abft4);
    gm_abft_i8_release(&st->abft8);
}
