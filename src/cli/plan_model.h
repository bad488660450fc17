/* gpumem plan --model M without --workload: a whole model's memory per
 * GPU (bench/model/mem_plan.h), printed as text, CSV or JSON. */
#ifndef GM_PLAN_MODEL_H
#define GM_PLAN_MODEL_H

#include "bench/model/mem_plan.h"

#include <stdbool.h>
#include <stdint.h>

typedef enum { GM_PLAN_TEXT, GM_PLAN_CSV, GM_PLAN_JSON } gm_plan_format;

typedef struct {
    gm_plan_opts plan;      /* prec is set per precision */
    unsigned precisions;    /* bit p: gm_precision p */
    gm_plan_format format;
    bool fit;               /* answer --fit */
    bool fit_device;        /* the budget is the best device's free memory */
    uint64_t fit_bytes;     /* else this budget */
    uint64_t host_bytes;    /* --host-memory: what offloaded states must fit (0: this host's memory) */
} gm_model_plan_args;

/* Loads `model` (bench/model/arch.h) and prints its plan for each precision.
 * Returns the exit status: 0; 2 bad input (one line on stderr naming the
 * file and the field, or the option); 3 no device for --fit device. */
int gm_plan_model_main(const char *model, const gm_model_plan_args *args);

#endif
