/*
 * Whole-output checksums of a matrix product on the host, in the manner
 * of algorithm-based fault tolerance (Huang and Abraham, "Algorithm-Based
 * Fault Tolerance for Matrix Operations", IEEE Trans. Computers C-33(6),
 * 1984): for C = A B (A m x k, B k x n, as the device read them; C m x n
 * as it stored it), the column sums e^T C are compared with (e^T A) B and
 * the row sums C e with A (B e). The column sums are taken over blocks of
 * `group` rows (e_b^T C against (e_b^T A) B for each block b), so that
 * their tolerance stays below what one wrong element moves them by in a
 * low precision. Every output element enters one block's column sum and
 * one row sum, so one wrong element anywhere moves both. The expected
 * sums depend on the inputs alone: they are computed once a point
 * (O(mk + kn + (m / group) k n): A read once, B twice), and each output
 * then costs one pass over C (O(mn)), against the product's O(mnk).
 *
 * Tolerance. With P the exact product and acc_ij the device's sum before
 * it rounds it to C's type:
 *   |acc_ij - P_ij| <= 2 k u_acc sum_kk |A_ikk B_kkj| + acc_abs
 *     (the standard gamma_k <= 2 k u bound of a k-term dot product in any
 *     order, k u <= 1/2; acc_abs: a per-element absolute term, such as
 *     products rounded below a 16-bit sum's normal range),
 *   |C_ij - acc_ij| <= rho(C_ij) = max(u_out |C_ij|, out_abs)
 *     (the rounding of the stored value; 0 for exact integer sums; a
 *     saturated value, |C_ij| >= sat, is the caller's to bound),
 * so column j's sums over block b may differ by at most
 *   T_bj = sum_{i in b} rho(C_ij) + 2 k u_acc (e_b^T |A|) |B|_j + g acc_abs + eps
 * (g the block's rows)
 * and row i's by R_i likewise (sums over j), where eps (2^-50 (m + n + k)
 * times the sums' magnitudes: a few units of the checksums' own double
 * rounding) is far below every other term. A correct output never fails.
 * A wrong element, off by d, is found for certain where
 * |d| > 2 min(T_bj, R_i), and in most cases from about half that.
 */
#ifndef GM_PRODUCT_CHECK_H
#define GM_PRODUCT_CHECK_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    size_t m, n, k;
    const void *ctx;                                          /* passed to the loaders */
    void (*a_row)(const void *ctx, size_t i, double *row);    /* A[i][0..k) as the device read it */
    void (*b_row)(const void *ctx, size_t kk, double *row);   /* B[kk][0..n) as the device read it */
    void (*c_row)(const void *ctx, size_t i, double *row);    /* C[i][0..n) as stored */
    /* NULL, or R[i][0..n): a residual the device added to the sum before
     * it rounded it, C = round(A B + R) (a residual epilogue). C - R is
     * then compared with A B: rho still of the stored c, and the
     * addition's rounding, u_acc |R_ij|, an element more. */
    void (*r_row)(const void *ctx, size_t i, double *row);
    double u_out, out_abs;                                    /* rho(c) = max(u_out |c|, out_abs) */
    /* > 0: a stored |c| >= sat is saturated, and saturated(ctx, i, j, c)
     * gives its bound instead of rho (NaN: the element is wrong by
     * itself, as an exact check of it found). */
    double sat;
    double (*saturated)(const void *ctx, size_t i, size_t j, double c);
    size_t group;                                             /* rows a column sum covers (0: all m) */
    double u_acc;                                             /* the sums' unit roundoff (0: exact) */
    double acc_abs;                                           /* per-element absolute term */
    const char *name;                                         /* the output's name, for the note */
} gm_product_sums;

/* The sums a correct C must have, from the inputs alone. */
typedef struct {
    size_t m, n, group;
    double *want_col, *mag_col;     /* per block of rows: (e_b^T A) B and (e_b^T |A|) |B| */
    double *want_row, *mag_row;     /* A (B e) and |A| (|B| e) */
} gm_product_expect;

/* Computes e's sums from p's inputs. Returns 0, or -1 when host memory
 * ran out (e then holds nothing). */
int gm_product_expect_init(gm_product_expect *e, const gm_product_sums *p);
void gm_product_expect_release(gm_product_expect *e);

/*
 * Checks every element of C through its row and column sums against e
 * (see above). Returns 1 when every sum agrees, 0 when one does not
 * (note: the worst failing column or row, its difference and tolerance,
 * and where both a column and a row fail, the element they meet at), -1
 * when host memory ran out (note says so).
 */
int gm_product_sums_check(const gm_product_sums *p, const gm_product_expect *e, char *note, size_t len);

/* Where a failed check points (gm_product_sums_check_at): the failing
 * column (n where only a row's sum failed) and the rows its failing sum
 * covers, first to last (one row where a row's sum failed too). */
typedef struct {
    size_t col, row_first, row_last;
} gm_product_where;

/* As gm_product_sums_check, and where it returns 0, *where (may be NULL)
 * says where to look for the wrong element. */
int gm_product_sums_check_at(const gm_product_sums *p, const gm_product_expect *e, char *note, size_t len,
                             gm_product_where *where);

/*
 * Rows a column sum covers for an output of m rows (product_check.h's
 * group) of a k-term product with n columns whose stored values round by
 * u_out |c| (int8_steps: in steps of an int8 scale instead): few enough
 * that a block's rounding, about group * u_out * |c|, stays near 2^-4 |c|,
 * below what a wrong element moves the sum by (a flip of the top exponent
 * bit moves an element by |c| or more, or by 1.99 or more:
 * output_fault.h): all rows in fp32, 64 in fp16, 8 in bf16, 1 in fp8
 * (every element then meets its own expected value); int8 32 (16 steps
 * against a flip's 128); exact sums (u_out 0, not int8) all rows. The
 * expected sums then cost (m / group) k n multiply-adds and 4 (m / group)
 * max(k, n) doubles; past 2^31 of the one or 2^22 of the other the blocks
 * grow to stay within them.
 */
size_t gm_product_group(size_t m, size_t k, size_t n, double u_out, int int8_steps);

#endif
