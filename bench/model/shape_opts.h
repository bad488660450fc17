/* Shape options shared by `gpumem plan` and the workloads suite. */
#ifndef GM_SHAPE_OPTS_H
#define GM_SHAPE_OPTS_H

#include "bench/model/workload.h"

#include <stddef.h>
#include <stdint.h>

/* Applies `--name value` to s. Returns 0; -1 with err for a bad value;
 * 1 if name is not a shape option. Flags (checkpoint, paged, causal) take
 * an empty value. */
int gm_shape_set(gm_shape *s, const char *name, const char *value, char *err, size_t err_len);

/* Does shape option `name` take a value? -1 if it is not one. */
int gm_shape_takes_value(const char *name);

/* The bounds of number option `name` into *min and *max: 0, or -1 (and
 * both untouched) if it is not one. */
int gm_shape_bounds(const char *name, uint64_t *min, uint64_t *max);

/* Applies the section `model` of models.ini (found like profiles).
 * Returns 0, or -1 with err. */
int gm_shape_load_model(gm_shape *s, const char *model, char *err, size_t err_len);

#endif
