/*
 * The apply functions and value lists of plan's options (the table itself
 * is src/cli/option_table.c): each validates its value and writes it into
 * the plan's arguments, or returns -1 with one line in err naming the
 * option, the value and what is allowed.
 */
#ifndef GM_OPTION_PLAN_H
#define GM_OPTION_PLAN_H

#include "cli/option_table.h"

#define GM_PLAN_APPLY(fn) int fn(const gm_option *opt, gm_opt_dest *d, const char *v, char *err, size_t err_len)

GM_PLAN_APPLY(gm_apply_plan_workload);
GM_PLAN_APPLY(gm_apply_plan_model);
GM_PLAN_APPLY(gm_apply_plan_choice);    /* --mode, --logits, --optimizer, --recompute, --zero, --format */
GM_PLAN_APPLY(gm_apply_plan_gpus);      /* --gpus, --tensor-parallel */
GM_PLAN_APPLY(gm_apply_plan_fit);
GM_PLAN_APPLY(gm_apply_plan_number);    /* --batch, --seq */
GM_PLAN_APPLY(gm_apply_plan_tune);      /* --lora-*, --adapter-precision, --zero-offload, --host-memory, --saved */

/* The allowed values of --lora-targets, --adapter-precision,
 * --zero-offload and --saved, in the order of their enums. */
int gm_lora_target_values(const char **names, int max);
int gm_adapter_precision_values(const char **names, int max);
int gm_offload_values(const char **names, int max);
int gm_saved_values(const char **names, int max);

#endif
