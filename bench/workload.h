/*
 * ML workloads and their memory model. A workload declares the tensors it
 * holds as a function of its shape (name, role, bytes): that list is the
 * memory model `gpumem plan` prints and the sweeps compare with what the
 * device really held.
 */
#ifndef GM_WORKLOAD_H
#define GM_WORKLOAD_H

#include "lib/precision.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    GM_ROLE_WEIGHT,
    GM_ROLE_ACTIVATION,
    GM_ROLE_KV_CACHE,
    GM_ROLE_WORKSPACE,
} gm_tensor_role;

const char *gm_tensor_role_name(gm_tensor_role r);

typedef struct {
    char name[32];
    gm_tensor_role role;
    uint64_t bytes;
} gm_tensor;

/* The shape of one point. Unused fields are ignored by a workload. */
typedef struct {
    gm_precision prec;
    uint64_t batch, seq;
    uint64_t hidden;        /* model width */
    uint64_t heads, head_dim;
    uint64_t out;           /* linear: output features (default hidden) */
    uint64_t ffn;           /* block: MLP width (default 4 * hidden) */
    uint64_t layers;
    uint64_t micro_batch;   /* block: rows of the batch live at once (0 = batch) */
    uint64_t block_tokens;  /* kvcache: tokens per block when paged */
    bool causal, checkpoint, paged;
    bool offload;           /* block: weights in host memory, two layers on the device */
    bool naive;             /* attention: materialise the score matrix */
} gm_shape;

/* Fills in defaults that depend on other fields (out, ffn, head_dim...). */
void gm_shape_complete(gm_shape *s);

#define GM_MAX_TENSORS 32

typedef struct {
    const char *name;
    const char *summary;
    /* The tensors held at once for shape s, at most GM_MAX_TENSORS.
     * Returns the count, or -1 if a size overflows 64 bits. */
    int (*tensors)(const gm_shape *s, gm_tensor *out);
} gm_workload;

extern const gm_workload *const gm_workloads[];   /* NULL-terminated */
const gm_workload *gm_workload_find(const char *name);

/* Sum of bytes over n tensors (UINT64_MAX on overflow). */
uint64_t gm_tensors_total(const gm_tensor *t, int n);

#endif
