/*
 * Allocation patterns: how a workload's tensors become device allocations.
 * Workloads ask the pattern for each device tensor (in their memory
 * model's order); any workload runs under any pattern.
 *   per-tensor  one allocation per tensor
 *   monolithic  one arena for the point, carved into the tensors, each
 *               starting at a multiple of GM_VIEW_ALIGN
 */
#ifndef GM_PATTERN_H
#define GM_PATTERN_H

#include "device.h"
#include "workload.h"

typedef enum { GM_PATTERN_PER_TENSOR, GM_PATTERN_MONOLITHIC, GM_PATTERN_COUNT } gm_pattern_kind;

extern const char *const gm_pattern_names[GM_PATTERN_COUNT];

typedef struct {
    gm_device *dev;
    gm_pattern_kind kind;
    gm_buffer arena;         /* monolithic */
    size_t used;             /* monolithic: bytes of the arena handed out, with alignment */
    uint64_t requested;      /* bytes the tensors asked for */
} gm_pattern;

/* Bytes the arena needs for these tensors (each rounded up to
 * GM_VIEW_ALIGN); 0 on overflow. */
uint64_t gm_arena_bytes(const gm_tensor *t, int n);

/* Starts a point: monolithic reserves its arena for the tensors t[0..n).
 * On failure dev->err says why (GM_ERR_OOM if the arena did not fit). */
gm_status gm_pattern_begin(gm_pattern *p, gm_device *dev, gm_pattern_kind kind, const gm_tensor *t, int n);

/* A device tensor of `bytes`; release it with gm_device_free. */
gm_status gm_pattern_alloc(gm_pattern *p, size_t bytes, gm_buffer *out);

/* Ends the point: frees the arena (after the tensors were freed). */
void gm_pattern_end(gm_pattern *p);

#endif
