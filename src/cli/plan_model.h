/* gpumem plan --model M without --workload: a whole model's memory per
 * GPU (bench/model/mem_plan.h), printed as text, CSV or JSON. */
#ifndef GM_PLAN_MODEL_H
#define GM_PLAN_MODEL_H

#include "bench/model/mem_plan.h"
#include "bench/model/workload.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum { GM_PLAN_TEXT, GM_PLAN_CSV, GM_PLAN_JSON } gm_plan_format;

typedef struct {
    gm_plan_opts plan;      /* prec is set per precision */
    unsigned precisions;    /* bit p: gm_precision p */
    gm_plan_format format;
    bool fit;               /* answer --fit */
    bool fit_device;        /* the budget is the best device's free memory */
    const char *fit_run;    /* else the usable memory this run folder measured (NULL: none) */
    uint64_t fit_bytes;     /* else this budget */
    uint64_t host_bytes;    /* --host-memory: what offloaded states must fit (0: this host's memory) */
    const gm_shape *serve;  /* --mode serve: the serving options (gpu_util, max_seqs, ...) */
} gm_model_plan_args;

/* Loads `model` (bench/model/arch.h) and prints its plan for each precision.
 * Returns the exit status: 0; 2 bad input (one line on stderr naming the
 * file and the field, or the option); 3 no device for --fit device. */
int gm_plan_model_main(const char *model, const gm_model_plan_args *args);

/* --mode serve (src/cli/plan_serve.c): the KV-cache budget of a serving
 * engine on a card of `total` bytes (0: only with --kv-cache-memory), for
 * each precision. Returns the exit status: 0, or 2 with one line on
 * stderr where the configuration is refused. */
int gm_plan_serve_print(const gm_arch *a, const gm_model_plan_args *args, uint64_t total);

#endif
