/*
 * Whole-output checksums on the device of an int8 product (the int8
 * sibling of product_device_check.h, whose finding it fills). For
 * C = A B (+ R) as gm_mm runs int8 (A, B, R int8 codes with per-tensor
 * scales sa, sb, sr; C int8 codes of scale sc, or fp32 where c_fp32: the
 * model's logits), the column sums of C over each block of g rows are
 * compared with the same sums from the inputs, (e_b^T A) B:
 *   1. abft_i8_block_sums: each block's column sums of A's codes, s_b =
 *      e_b^T A, integers of at most 127 g, stored exactly as two int8 code
 *      rows of S, s_b = 128 hi + lo (lo in [-64, 63], |hi| <= g);
 *   2. abft_i8_expect: E = S B, the codes' products summed exactly in
 *      int32 (|S|, |B| <= 127: every partial sum within 127^2 k), so
 *      want_bj = 128 E_hi + E_lo is the block's exact sum of codes'
 *      products, sum_{i in b} sum_kk A_ik B_kj;
 *   3. abft_i8_compare: got_bj = sum_{i in b} (sc C_ij - sr R_ij) against
 *      sa sb want_bj within T_bj below; one verdict for the product;
 *   4. where a sum fails, abft_i8_locate recomputes the block's rows of
 *      that column exactly, naming the wrong element.
 * The model's int8 products all run our kernels (the vendor's int8 GEMM
 * writes int32 sums, not int8 codes: model_setup.c; CLBlast has no int8
 * GEMM), and so do the expected products: abft_i8_expect rather than the
 * dispatch's int32 product (matmul_strided, one work item an element,
 * 3.6 times the model's own product's time on PoCL, where abft_i8_expect,
 * reading a column of B once for 8 rows, takes 0.7 of it).
 *
 * Tolerance. The expected side is exact; the product's side is fp32: its
 * element is v = fl(sum_kk fl(sa A_ik) fl(sb B_kj)) + fl(sr R_ij), within
 * 2 (k + 3) u32 sa sb sum_kk |A_ik B_kj| + u32 (|v| + sr |R_ij|) of the
 * exact one (u32 = 2^-24: k products of rounded loads summed in any
 * order, then the residual's add), and its stored code is rint(fl(v /
 * sc)) clamped to [-127, 127]. An unsaturated code C_ij (|C_ij| < 127)
 * is within half a step of v / sc: |sc C_ij - v| <= sc / 2 + u32 sc
 * (|C_ij| + 1/2). A saturated code (+-127) says only that v / sc reached
 * 126.5 in its direction, bounding the element on one side: a sum
 * holding it bounds nothing on that side, so each saturated element is
 * recomputed exactly (k integer multiply-adds), taken out of both sides
 * of its block's sum, and must itself reach 126.5 sc within its fp32
 * error. With U unsaturated rows in the block, the column passes where
 *   |got - sa sb want| <= T_bj = slack [ U sc / 2
 *         + 1.02 (2 (k + 3) u32) ||sa e_b^T |A| ||_2 ||sb B_j||_2
 *         + 6 u32 (sc (sum |C| + U) + sr sum |R| + |sa sb want|) ],
 * the magnitudes sum_{i, kk} |A_ik B_kj| bounded by Cauchy-Schwarz as in
 * product_device_check.h (abft_block_norms and abft_col_norms), the last
 * term the fp32 evaluation of got and want, slack = 1.001 (1 + (k + 4)
 * u32). fp32 C (the logits): no rounding to codes nor saturation, and
 * the block's fp32 sum adds (g + 2) u32 sum |C| in place of the codes'
 * terms. A correct output never fails.
 *
 * What it finds. T_bj is about g / 2 steps of sc (the accumulation's
 * term is far below a step at the model's shapes): g = 16 (or m where
 * smaller), so a wrong code off by more than 2 T_bj, about 16 steps, is
 * always found: flip-product-bit's flip of bit 7 (gm_output_fault_visible_bits:
 * 128 steps) at any code, and corrupt-product's overwrite (code 0x5a,
 * 90) of any code more than about 16 steps from 90 (a value of 2.83 at
 * the model's activation scale, 4 / 127: the activations it strikes lie
 * well below). A smaller g finds smaller errors at a higher cost: E costs
 * 2 / g of the product's multiply-adds (12.5% at g = 16), plus the
 * saturated rows' recomputation (none where no output saturates).
 *
 * Covered: int8 products with int8 weights (B as stored [k, n] or
 * transposed [n, k]), an int8 residual epilogue (not in place), int8 or
 * fp32 results, k < 133,144 (an element's exact sum fits int32). Not
 * int8 activations with int4 weights (the model does not run them). fp8
 * products go through product_device_check.h with blocks of one row.
 */
#ifndef GM_PRODUCT_DEVICE_CHECK_INT8_H
#define GM_PRODUCT_DEVICE_CHECK_INT8_H

#include "bench/workloads/product_device_check.h"

/* The rows a block's column sum covers (see above). */
#define GM_ABFT_I8_GROUP 16

typedef struct {
    gm_device *dev;
    bool chunked;
    uint64_t limit;             /* scratch bytes at most (but one block's) */
    gm_program *prog;
    gm_kernel *k_sums, *k_norms, *k_cols, *k_expect, *k_compare, *k_locate;
    gm_buffer s, e, abs_sum, split, norms, cn, diag, verdict;   /* scratch, grown as needed */
} gm_abft_i8;

/* Builds kernels/abft.cl's int8 variant on dev; scratch at most `limit`
 * bytes. On failure returns the status with dev->err set, and x holds
 * nothing. */
gm_status gm_abft_i8_init(gm_abft_i8 *x, gm_device *dev, bool chunked, uint64_t limit);
/* Frees the scratch (x stays usable: it is allocated again as needed). */
void gm_abft_i8_free_scratch(gm_abft_i8 *x);
void gm_abft_i8_release(gm_abft_i8 *x);

/*
 * Checks the output of the int8 product op, which has run on queue 0
 * (op in int8, one product, a and c packed, no int4 weights, its r not
 * c's own place). Runs the kernels above, waits, and fills *f (f->checked false, why set, for a product
 * it does not cover). Returns the device's status (GM_ERR_OOM where the
 * scratch could not be allocated: *f then says nothing was checked).
 */
gm_status gm_abft_i8_check(gm_abft_i8 *x, const gm_mm *op, gm_abft_finding *f);

#endif
