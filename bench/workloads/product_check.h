/*
 * Whole-output checksums of a matrix product on the host, in the manner
 * of algorithm-based fault tolerance (Huang and Abraham, "Algorithm-Based
 * Fault Tolerance for Matrix Operations", IEEE Trans. Computers C-33(6),
 * 1984): for C = A B (A m x k, B k x n, as the device read them; C m x n
 * as it stored it), the column sums e^T C are compared with (e^T A) B and
 * the row sums C e with A (B e). Every output element enters one column
 * sum and one row sum, so one wrong element anywhere moves both. The work
 * is O(mk + kn + mn), against the product's O(mnk): A is read twice, B and
 * C once, all from host copies the caller already holds.
 *
 * Tolerance. With P the exact product and acc_ij the device's sum before
 * it rounds it to C's type:
 *   |acc_ij - P_ij| <= 2 k u_acc sum_kk |A_ikk B_kkj| + acc_abs
 *     (the standard gamma_k <= 2 k u bound of a k-term dot product in any
 *     order, k u <= 1/2; acc_abs: a per-element absolute term, such as
 *     products rounded below a 16-bit sum's normal range),
 *   |C_ij - acc_ij| <= round(C_ij)
 *     (the caller's bound for an output stored as C_ij: its rounding, or
 *     0 for exact integer sums),
 * so column j's sums may differ by at most
 *   T_j = sum_i round(C_ij) + 2 k u_acc (e^T |A|) |B|_j + m acc_abs + eps_j
 * and row i's by R_i likewise (sums over j), where eps (a few units of
 * double rounding of the checksums themselves, 2^-50 (m + n + k) times the
 * sums' magnitudes) is far below every other term. A correct output never
 * fails. A wrong element, off by d, is found for certain where
 * |d| > 2 min(T_j, R_i), and found in most cases from about half that.
 */
#ifndef GM_PRODUCT_CHECK_H
#define GM_PRODUCT_CHECK_H

#include <stdbool.h>
#include <stddef.h>

typedef struct {
    size_t m, n, k;
    const void *ctx;                                      /* passed to the loaders */
    double (*a)(const void *ctx, size_t i, size_t kk);    /* A[i][kk] as the device read it */
    double (*b)(const void *ctx, size_t kk, size_t j);    /* B[kk][j] as the device read it */
    double (*c)(const void *ctx, size_t i, size_t j);     /* C[i][j] as stored */
    /* |C[i][j] - acc| for the stored c (>= 0); NaN: the element is wrong
     * by itself (a caller that checks some elements exactly says so). */
    double (*round_bound)(const void *ctx, size_t i, size_t j, double c);
    double u_acc;                                         /* the sums' unit roundoff (0: exact) */
    double acc_abs;                                       /* per-element absolute term */
    const char *name;                                     /* the output's name, for the note */
} gm_product_sums;

/*
 * Checks every element of C through its row and column sums (see above).
 * Returns 1 when every sum agrees, 0 when one does not (note: the worst
 * column and row, their excess over the tolerance, and the element they
 * meet at), -1 when host memory ran out (note says so).
 */
int gm_product_sums_check(const gm_product_sums *p, char *note, size_t len);

#endif
