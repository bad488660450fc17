/*
 * A precision per tensor role (--weight-precision, --kv-precision,
 * --activation-precision over --precision): how a point's shape carries
 * them, the kernel variant they select, and where a combination is
 * refused.
 */
#ifndef GM_PRECISION_ROLES_H
#define GM_PRECISION_ROLES_H

#include "run/results.h"
#include "bench/model/workload.h"

#include <stdbool.h>
#include <stddef.h>

#define GM_DEFAULT_GROUP_SIZE 128

/* The weight and KV-cache precisions of shape s (s->prec, the activations',
 * unless overridden). */
gm_precision gm_weight_prec(const gm_shape *s);
gm_precision gm_kv_prec(const gm_shape *s);
/* Rows of W per int4 scale (group_size, default 128). */
uint64_t gm_group_size(const gm_shape *s);

/* The point's roles from its --precision value p and the overrides in
 * base (0: none, else precision + 1): activations in s->prec, weights and
 * KV cache explicit. */
void gm_shape_set_roles(gm_shape *s, const gm_shape *base, gm_precision p);

/* The --precision value the point came from (the worker's protocol). */
gm_precision gm_sweep_prec(const gm_shape *s);
/* The `precision` column of a point's rows: the activations' precision,
 * then -w<weights> and -kv<KV cache> where those differ, and -lmint4 for
 * an int4 LM head ("bf16-wint4", "bf16-wint4-kvfp8e4m3-lmint4"). */
const char *gm_roles_label(const gm_shape *s);

/* The point columns a row takes from its shape: precision and each
 * role's, the whole model's name (NULL for other shapes) and the mode. */
void gm_row_shape_fields(gm_row *row, const gm_shape *s);

/* The kernel variant: "bf16-grid", or with role tokens where a role
 * differs from the activations: "bf16-wint4-chunked", "fp16-kvfp8e4m3-grid". */
const char *gm_role_variant(gm_precision act, gm_precision weight, gm_precision kv, bool chunked, char *buf,
                            size_t len);

/* 0 if workload `name` (NULL: any) can run activations act, weights w and KV
 * cache kv; else -1 with one line in err. */
int gm_roles_check(const char *name, gm_precision act, gm_precision w, gm_precision kv, char *err, size_t err_len);

/* 0 if shape s (roles set, or the options' base shape with its
 * overrides) may take --int4-lm-head (s->int4_lm_head) in workload `name`
 * (NULL: any), or does not ask for it; else -1 with one line in err. It
 * needs int4 weights and a whole model (--model PRESET or a config.json)
 * with an untied LM head (a tied one is the embedding, which stays in the
 * activations' precision), run by block. */
int gm_int4_lm_head_check(const char *name, const gm_shape *s, char *err, size_t err_len);


#endif
