/*
 * Test-only output faults (GPUMEM_FAULT), which prove that every check
 * can fail: after a point's timed launches and before its output is read
 * and verified, one element of the output, chosen at random from a seed,
 * is struck on the device.
 *
 *   GPUMEM_FAULT=corrupt-output    the element is overwritten with junk
 *                                  (0x5a7b5a7b..., a value far from any
 *                                  the suites produce);
 *   GPUMEM_FAULT=flip-output-bit   one bit of it is flipped.
 *   GPUMEM_FAULT_SEED=N            the seed (default 1); each point and
 *                                  repetition draws its own element from
 *                                  it and the point's salt.
 *   GPUMEM_FAULT_REP=R             strike repetition R (from 0) alone, not
 *                                  every one: a check that compares later
 *                                  repetitions with the first is shown
 *                                  failing.
 *
 * Each strike is reported on stderr as one line,
 *   gpumem: fault: KIND struck element I of N (bit B)
 * so that a test can match it against the mismatch row's first index.
 *
 * The whole model's inner products (bench/workloads/model_product_check.c):
 *   GPUMEM_FAULT=corrupt-product[:NAME[:LAYER]]
 *   GPUMEM_FAULT=flip-product-bit[:NAME[:LAYER]]
 *                                  as corrupt-output and flip-output-bit,
 *                                  but the element is one of a product's
 *                                  output inside the forward pass, struck
 *                                  after the product and before its
 *                                  consumer in every forward from the
 *                                  first timed iteration on (timed, the
 *                                  check's replay, a training step's
 *                                  recomputation; not set-up's training
 *                                  step, whose gradients would make the
 *                                  weights wrong before any check): a
 *                                  deterministic wrong
 *                                  product, which comparing the logits
 *                                  with a replay cannot see. NAME (one of
 *                                  gm_output_fault_products: q_proj ...
 *                                  lm_head) and LAYER (from 0) name the
 *                                  product; where left out they are drawn
 *                                  from the seed, as the element is
 *                                  (GPUMEM_FAULT_REP does not apply).
 *                                  Other workloads' outputs are not
 *                                  struck. Each strike is reported as
 *   gpumem: fault: KIND struck element I of N (bit B) of layer L NAME
 *                                  (I = row * columns + column of the
 *                                  product's output).
 *                                  A training step's backward products
 *                                  are named ROLE PRODUCT (see
 *                                  gm_output_fault_roles: dX_up_proj,
 *                                  dW_down_proj, lora_dA_v_proj ...) and
 *                                  struck in every backward from the
 *                                  first timed iteration on (timed and
 *                                  the check's alike); never drawn.
 *                                  NAME attn (GM_OUTPUT_FAULT_ATTN) is a
 *                                  layer's attention output, [tokens,
 *                                  heads * head_dim], struck after the
 *                                  attention stage in every forward (a
 *                                  recomputation's too); never drawn.
 *   GPUMEM_PRODUCT_CHECK=sampled   (tests) the whole model's products and
 *                                  attention are checked on sampled rows
 *                                  alone, as before their device checks
 *                                  (the checksums, model_attention_verify):
 *                                  shows what those find that nothing
 *                                  else does.
 */
#ifndef GM_OUTPUT_FAULT_H
#define GM_OUTPUT_FAULT_H

#include "device/device.h"

#include <stddef.h>
#include <stdint.h>

typedef enum {
    GM_OUTPUT_FAULT_NONE = 0,
    GM_OUTPUT_FAULT_CORRUPT,    /* corrupt-output */
    GM_OUTPUT_FAULT_FLIP_BIT,   /* flip-output-bit */
} gm_output_fault_kind;

/* Where a fault strikes: a workload's output after its run (the
 * workloads' corrupt hooks), or a product inside the whole model's
 * forward pass (corrupt-product, flip-product-bit). */
typedef enum {
    GM_OUTPUT_FAULT_SITE_OUTPUT = 0,
    GM_OUTPUT_FAULT_SITE_PRODUCT,
} gm_output_fault_site;

/* The products a product fault names, in this order. */
#define GM_OUTPUT_FAULT_PRODUCTS 8
extern const char *const gm_output_fault_products[GM_OUTPUT_FAULT_PRODUCTS];

/* The product index of NAME attn: a layer's attention output (the whole
 * model's S_ATTN), after the products; never drawn. */
#define GM_OUTPUT_FAULT_ATTN GM_OUTPUT_FAULT_PRODUCTS
extern const char gm_output_fault_attn[];

/* The training backward's products of each (bench/workloads/
 * model_backward.c, model_lora.c), named ROLE PRODUCT: role 0 is the
 * forward's product itself (no prefix); "dX_" dX = dY W^T (lm_head: the
 * final norm's output's gradient), "dW_" dW = X^T dY (lm_head tied: the
 * embedding's dE), and LoRA's four: "lora_dB_" dB = xa^T dY, "lora_dxa_"
 * d(xa) = dY B^T, "lora_dA_" dA = x^T d(xa), "lora_dx_" dX += d(xa) A^T. */
#define GM_OUTPUT_FAULT_ROLES 7
extern const char *const gm_output_fault_roles[GM_OUTPUT_FAULT_ROLES];

typedef struct gm_output_fault {
    gm_output_fault_kind kind;
    uint64_t seed;
    unsigned only_rep;   /* 0: every repetition; R + 1: repetition R alone */
    gm_output_fault_site site;
    int product;         /* SITE_PRODUCT: index into gm_output_fault_products, GM_OUTPUT_FAULT_ATTN, -1 drawn */
    int role;            /* SITE_PRODUCT: index into gm_output_fault_roles (0 where drawn) */
    long layer;          /* SITE_PRODUCT: the layer, -1 drawn */
} gm_output_fault;

/* Reads GPUMEM_FAULT and GPUMEM_FAULT_SEED (either may be NULL). A fault
 * that is not an output or product fault leaves kind NONE (other layers
 * own it). Returns 0, -1 for a seed that is not a whole number, -2 for a
 * product fault whose NAME or LAYER is not one (see above). */
int gm_output_fault_parse(const char *fault, const char *seed, gm_output_fault *f);

/* Reads GPUMEM_FAULT_REP (may be NULL: every repetition). Returns 0, or -1
 * for a value that is not a whole number. */
int gm_output_fault_parse_rep(const char *rep, gm_output_fault *f);

/* A salt naming a point (its kernel, precision, size...): FNV-1a of text. */
uint64_t gm_output_fault_salt(const char *text);

/* The element, in [0, n), that repetition rep of the point `salt` strikes;
 * the same arguments give the same element. n must be > 0. */
size_t gm_output_fault_index(const gm_output_fault *f, uint64_t salt, unsigned rep, size_t n);

/* The bit flip-output-bit flips, in [low_bit, elem_bits): a check whose
 * tolerance cannot see a flip below some bit passes that bit as low_bit
 * (and says why where it calls this); exact checks pass 0. */
unsigned gm_output_fault_bit(const gm_output_fault *f, uint64_t salt, unsigned rep, unsigned low_bit,
                             unsigned elem_bits);

/*
 * Strikes one element of an output of n elements of elem_size bytes that
 * starts at byte `offset` of buf: the element gm_output_fault_index picks,
 * overwritten (corrupt-output) or read, one bit flipped and written back
 * (flip-output-bit, bit from gm_output_fault_bit with low_bit). Reports
 * the strike on stderr and in *struck (may be NULL). Does nothing for
 * kind NONE, nor for a repetition other than GPUMEM_FAULT_REP's. Returns
 * the device's status.
 */
gm_status gm_output_fault_strike(const gm_output_fault *f, gm_device *dev, gm_buffer *buf, size_t offset,
                                 size_t n, size_t elem_size, uint64_t salt, unsigned rep, unsigned low_bit,
                                 size_t *struck);

/*
 * The bits of an element of precision p that flip-output-bit flips where a
 * check compares with a tolerance, [*low, *high): a flip below them can
 * be smaller than the rounding any correct output may carry, and the
 * sign bit of a value at or near zero changes nothing a check can see.
 *   floating formats (fp32, fp16, bf16, fp8): the top exponent bit alone.
 *     With E exponent bits, a value of magnitude 2 or more is divided by
 *     2^(2^(E-1)) (at least 256): it moves by more than 99% of itself,
 *     so by 1.99 or more; a smaller normal value is multiplied by as much
 *     (it becomes 4 or more, or inf/NaN), and zero or a subnormal becomes
 *     2 or more. Every flip moves the element by at least about 1.99 (in
 *     the element's own units), however small it was.
 *   int8: bit 7, the sign of the two's complement code: the code moves
 *     by 128 steps of its scale.
 * Exact checks (bit for bit) see every flip: they use [0, bits).
 */
void gm_output_fault_visible_bits(gm_precision p, unsigned *low, unsigned *high);

/* As gm_output_fault_strike, with the flipped bit drawn from
 * [low_bit, high_bit) (high_bit <= elem_size * 8). */
gm_status gm_output_fault_strike_bits(const gm_output_fault *f, gm_device *dev, gm_buffer *buf, size_t offset,
                                      size_t n, size_t elem_size, uint64_t salt, unsigned rep, unsigned low_bit,
                                      unsigned high_bit, size_t *struck);

/* A product fault's strike (GM_OUTPUT_FAULT_SITE_PRODUCT) in an output of
 * n elements of precision p (elem_size bytes) at byte `offset` of buf:
 * as gm_output_fault_strike_bits with repetition 0 whatever
 * GPUMEM_FAULT_REP says (the same element and bit in every forward) and
 * the bits gm_output_fault_visible_bits gives p, its report ending
 * " of LABEL". */
gm_status gm_output_fault_strike_product(const gm_output_fault *f, gm_device *dev, gm_buffer *buf, size_t offset,
                                         size_t n, size_t elem_size, gm_precision p, uint64_t salt, const char *label,
                                         size_t *struck);

#endif
