/* A fine-tuning point's tensors and label (bench/model/workload.h): the
 * memory plan of --mode lora and qlora as a workload's tensor list. */
#include "bench/model/mem_plan.h"
#include "bench/model/workload.h"

#include <stdio.h>

const char *gm_mode_label(const gm_shape *s)
{
    return s->tune == GM_PLAN_QLORA ? " qlora" : s->tune ? " lora" : s->train ? " train" : "";
}

int gm_tune_tensors(const gm_shape *s, gm_tensor *out)
{
    gm_plan_opts o;
    gm_plan_opts_init(&o);
    o.mode = (gm_plan_mode)s->tune;
    o.prec = s->prec;
    o.batch = s->batch;
    o.seq = s->seq;
    o.naive = s->naive;
    o.tune.rank = s->lora_rank;
    o.tune.alpha = s->lora_alpha;
    o.tune.targets = s->lora_targets;
    /* --checkpoint: every layer recomputed; else --recompute (option_rules.c: they agree). */
    o.recompute = s->checkpoint ? GM_RECOMPUTE_FULL : (gm_recompute)s->recompute;
    gm_plan_item it[GM_PLAN_MAX_ITEMS];
    int n = gm_plan_model(&s->arch, &o, it);
    if (n < 0 || n > GM_MAX_TENSORS || gm_plan_sum(it, n) == UINT64_MAX)
        return -1;
    for (int i = 0; i < n; i++) {
        snprintf(out[i].name, sizeof out[i].name, "%s", it[i].name);
        out[i].role = it[i].role == GM_PLAN_ACTIVATIONS ? GM_ROLE_ACTIVATION
                      : it[i].role == GM_PLAN_WORKSPACE  ? GM_ROLE_WORKSPACE
                                                         : GM_ROLE_WEIGHT;
        out[i].bytes = it[i].bytes;
    }
    return n;
}
