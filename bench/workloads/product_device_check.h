/*
 * Whole-output checksums of a matrix product on the device: the sibling of
 * product_check.h (which sums on the host) for products too large to read
 * back, such as every projection of a whole model. For C = A B (+ R) as a
 * gm_mm describes it (A [m, k], B [k, n] or stored [n, k], C and R [m, n];
 * kernels/abft.cl), the column sums of C - R over each block b of g rows
 * are compared with the same sums computed from the inputs, (e_b^T A) B:
 *   1. abft_block_sums: each block's column sums of A, s_b = e_b^T A, in
 *      fp32, written as the rows of a matrix S in the product's precision:
 *      fp32 one row (s_b itself); fp16 and bf16 two rows, hi = round(s_b)
 *      and lo = round(s_b - hi), whose sum misses s_b by |s_b - hi - lo|
 *      <= u^2 |s_b| (u the format's unit roundoff; the kernel measures the
 *      miss and the tolerance counts it);
 *   2. E = S B through the same product dispatch as the product itself
 *      (gm_mm_run: on a GPU the vendor GEMM at tensor-core speed), fp32
 *      result; want_bj = sum of block b's rows of E. int4 weights: S in
 *      fp32 and abft_expect's plain fp32 product (our dispatch has no fp32
 *      result for int4 weights);
 *   3. abft_compare: got_bj = sum over the block's rows of C_ij - R_ij,
 *      against want_bj within the tolerance T_bj below, one verdict for
 *      the product (gm_verdict_write: count and the first failing sum);
 *   4. where a sum fails, abft_locate recomputes the block's rows of that
 *      column element by element, naming the wrong element (not for a
 *      product added to C in place: R, C as it stood, is gone).
 * A stored transposed, [k, m] (the backward's dW = X^T dY), is read as
 * such by abft_block_sums and abft_locate (ABFT_A); the sums and bounds
 * are those of op(A), unchanged.
 *
 * Accumulation in place, C += A B (the backward's dX summed over
 * several products, LoRA's terms): R is C as it stood, which the product
 * overwrites. gm_abft_before, enqueued before the product, takes each
 * block's column sums of C and of |C| (fp32, abft_block_before); the
 * compare then takes got = sum_i C_ij - (those sums), and sum_i |R_ij|
 * from them. The bound below holds as it stands with R = C before: the
 * stored rounding of the new C is rho(C_ij) of the new value, the
 * addition's rounding u_acc |R_ij| (the product adds R in its own sums,
 * as for any r), and the two separate fp32 sums of g terms and their
 * difference, (g - 1) u32 sum |C| + (g - 1) u32 sum |R| + u32 (sum |C|
 * + sum |R|), stay within the (g + 2) u32 sum (|C| + |R|) of the one
 * running sum of C - R. No term is added.
 * Every output element enters one block's column sum, so one wrong element
 * anywhere moves a sum. The cost: (parts m / g) k n multiply-adds for E
 * (parts 1 in fp32, 2 in fp16, bf16 and fp8; g 64 in fp32 and fp16, 8 in
 * bf16, 1 in fp8: 1.6%, 3%, 25% and 200% of the product's: an fp8
 * output's rounding, 2^-4 of itself in e4m3 and 2^-3 in e5m2, would make
 * a wider block's tolerance too coarse to see a flip that divides a small
 * element by 256, so each element is recomputed), a pass over A and over C, and one
 * over B for its column norms; scratch is bounded (`limit`): the blocks
 * are taken in chunks.
 *
 * Tolerance. With P = A B exact (B as the product read it), u32 = 2^-24,
 * the product's sums' unit roundoff u_acc (2^-24 for fp32 sums, 2^-11 for
 * the vendor's fp16 sums, CLBlast's HGEMM) and the precision's u_p:
 *   |C_ij - (P_ij + R_ij)| <= rho(C_ij) + 2 k u_acc (|A| |B|)_ij + a_abs
 *                             + u_acc |R_ij|
 *     (rho = u_out |C| + out_abs, the stored rounding: half gm_tolerance,
 *     as product_check.h's callers; 2 k u the standard bound of a k-term
 *     sum in any order; a_abs = k 2^-24 for fp16 sums, whose products of
 *     fp16 inputs round below fp16's normal range; 0 otherwise),
 * the block's fp32 sums of g terms add (g + 2) u32 sum (|C| + |R|), and on
 * the expected side s_b's fp32 sum (g - 1) u32 (e_b^T |A|), the split's
 * miss |s_b - hi - lo| |B|, E's own k-term sums 2 k u_w (|hi| + |lo|) |B|
 * (u_w of the GEMM that computed it; |hi| + |lo| <= (1 + 2 u_p + g u32)
 * e_b^T |A|) and E's fp32 rounding u32 |E|. The magnitudes (e_b^T |A|) |B|_j
 * and (miss) |B|_j are bounded by Cauchy-Schwarz, ||e_b^T |A| ||_2 ||B_j||_2
 * (the column norms of B once per product: no second GEMM against |B|).
 * So column j of block b passes where |got - want| <= T_bj,
 *   T_bj = slack [ sum_i (u_out |C_ij| + out_abs + u_acc |R_ij|)
 *                  + (g + 2) u32 sum_i (|C_ij| + |R_ij|) + g a_abs
 *                  + (2 k u_acc + (g - 1) u32 + 1.02 (2 k u_w) + u_b)
 *                    ||e_b^T |A| ||_2 ||B_j||_2
 *                  + ||miss_b||_2 ||B_j||_2 + u32 (sum_p |E_pj| + |want|) ],
 * u_b = u_p where the product read B rounded to its precision and E did
 * not (int4 weights dequantised for the vendor), slack = 1.001 (1 + (k + 4)
 * u32): the norms' and the tolerance's own fp32 arithmetic. A correct
 * output never fails. A wrong element, off by d, is found where |d| > 2
 * T_bj; the flips and overwrites of output_fault.h move an element by
 * about 1.99 or more (in its own units), far above T_bj at the shapes the
 * tests run (tests/32-model-products.t). T_bj grows as g k^2 |a| |b|: a
 * larger model needs a larger fault before its checksums see it, which
 * the note of a failure states with the tolerance.
 *
 * Covered: fp32, fp16 and bf16 products (fp32 or 16-bit results, a
 * residual epilogue or accumulation in place, A or B transposed, int4 B
 * with group scales). Not batched products (op->batch > 1), rows with a
 * leading dimension (ld), int8: gm_abft_check says so and checks
 * nothing. int8 products are checked by product_device_check_int8.h (the
 * block sums of their codes held exactly, the expected sums exact in
 * int32). fp8 products (e4m3, e5m2) are, with blocks of one row.
 */
#ifndef GM_PRODUCT_DEVICE_CHECK_H
#define GM_PRODUCT_DEVICE_CHECK_H

#include "bench/workloads/matmul.h"

#include <stdbool.h>
#include <stdint.h>

/* The most rows a block's column sum covers (see above: the tolerance
 * grows with it, the expected sums' cost shrinks). */
#define GM_ABFT_GROUP_MAX 64

typedef struct {
    gm_device *dev;
    gm_precision prec, wprec;   /* the products' (activations') and their weights' (int4 or prec) */
    bool chunked;
    uint64_t limit;             /* scratch bytes at most (but one block's) */
    gm_program *prog;
    gm_kernel *k_sums, *k_norms, *k_cols, *k_expect, *k_compare, *k_locate, *k_before;
    gm_buffer s, e, abs_sum, split, norms, cn, diag, verdict;   /* scratch, grown as needed */
    gm_buffer pre;              /* gm_abft_before's sums of C (scratch) ... */
    gm_mm pre_for;              /* ... for this product (m 0: none) */
} gm_abft;

/* What one check found. */
typedef struct {
    bool checked;               /* false: not covered (why says why), nothing checked */
    bool ok;                    /* every sum agreed */
    uint64_t group;             /* rows a block covers */
    uint64_t row_first, row_last, col;   /* the first failing sum: its rows and column */
    double diff, tol;           /* its difference got - want and tolerance */
    bool in_place;              /* the product was added to C in place: nothing is located */
    bool located;               /* the block's rows of that column recomputed found ... */
    uint64_t row;               /* ... this row wrong */
    char why[160];
} gm_abft_finding;

/* Builds kernels/abft.cl for products in prec with weights in wprec (int4
 * or prec) on dev; scratch at most `limit` bytes. On failure returns the
 * status with dev->err set, and x holds nothing. */
gm_status gm_abft_init(gm_abft *x, gm_device *dev, gm_precision prec, gm_precision wprec, bool chunked,
                       uint64_t limit);
/* Frees the scratch (x stays usable: it is allocated again as needed). */
void gm_abft_free_scratch(gm_abft *x);
void gm_abft_release(gm_abft *x);

/*
 * Where op adds itself to C in place (r at c's own place), enqueues on
 * queue 0 the block column sums of C as it stands (abft_block_before:
 * 8 n ceil(m / g) bytes of scratch, beyond `limit`), for the
 * gm_abft_check of op that follows its product; else does nothing.
 * Returns the device's status.
 */
gm_status gm_abft_before(gm_abft *x, const gm_mm *op);

/*
 * Checks the output of op, which has run on queue 0 through mm (op may
 * have b_scales; a (or, stored transposed, a [k, m]: not with b_scales)
 * and c packed, one product; its r, where set, elsewhere or at c's own
 * place, the latter after gm_abft_before of this op, else nothing is
 * checked and why says so). half_sums: the product summed in fp16 (mm->last_half_sums
 * after gm_mm_run; false for a kernel of our own that sums in fp32),
 * b_rounded: it read B rounded to prec (int4 weights dequantised for the
 * vendor). Runs the expected product through mm (without counting it, and
 * leaving mm->refused as it was) and the kernels above, waits, and fills
 * *f. Returns the device's status (GM_ERR_OOM where the scratch could not
 * be allocated: *f then says nothing was checked).
 */
gm_status gm_abft_check(gm_abft *x, gm_mm_ctx *mm, const gm_mm *op, bool half_sums, bool b_rounded,
                        gm_abft_finding *f);

#endif
