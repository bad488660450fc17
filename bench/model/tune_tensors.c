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
    o.mode = s->tune ? (gm_plan_mode)s->tune : GM_PLAN_TRAIN;
    o.tune.offload = (gm_offload)s->zero_offload;
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
    if (n < 0 || gm_plan_sum(it, n) == UINT64_MAX)
        return -1;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (it[i].host)     /* --zero-offload's host items: not the device's */
            continue;
        if (k == GM_MAX_TENSORS)
            return -1;
        snprintf(out[k].name, sizeof out[k].name, "%s", it[i].name);
        out[k].role = it[i].role == GM_PLAN_ACTIVATIONS ? GM_ROLE_ACTIVATION
                      : it[i].role == GM_PLAN_WORKSPACE  ? GM_ROLE_WORKSPACE
                                                         : GM_ROLE_WEIGHT;
        out[k++].bytes = it[i].bytes;
    }
    return k;
}
