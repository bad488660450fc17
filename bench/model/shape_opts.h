/* Shape options shared by `gpumem plan` and the workloads suite. */
#ifndef GM_SHAPE_OPTS_H
#define GM_SHAPE_OPTS_H

#include "bench/model/workload.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Applies `--name value` to s. Returns 0; -1 with err for a bad value;
 * 1 if name is not a shape option. Flags (checkpoint, paged, causal) take
 * an empty value. */
int gm_shape_set(gm_shape *s, const char *name, const char *value, char *err, size_t err_len);

/* Is `name` a shape option that a --model sets from its config (hidden,
 * heads, head-dim, layers, ffn)? gm_shape_set refuses them on a shape
 * that has a model. */
bool gm_shape_from_model(const char *name);

/* Why a shape option a model sets (gm_shape_from_model) is refused on
 * shape s, which has one: the words after the option's name. */
void gm_shape_model_conflict(const gm_shape *s, char *why, size_t len);

/* Does shape option `name` take a value? -1 if it is not one. */
int gm_shape_takes_value(const char *name);

/* The bounds of number option `name` into *min and *max: 0, or -1 (and
 * both untouched) if it is not one. */
int gm_shape_bounds(const char *name, uint64_t *min, uint64_t *max);

/* Applies --model: the whole model (bench/model/arch.h, gm_arch_load) into
 * s->arch, and its width, heads, head width, MLP width and layers into
 * the shape the workloads read. Returns 0, or -1 with err. */
int gm_shape_load_model(gm_shape *s, const char *model, char *err, size_t err_len);

#endif
