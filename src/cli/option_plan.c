/* Plan's options (option_plan.h): the whole-model plan's choices and the
 * fine-tuning options, applied into gm_plan_args. */
#include "cli/option_plan.h"

#include "bench/model/shape_opts.h"
#include "bench/model/train_plan.h"
#include "bench/workloads/registry.h"
#include "lib/units.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define APPLY(fn) GM_PLAN_APPLY(fn)

static int fill(const char **names, int max, const char *const *list, int n)
{
    int k = 0;
    for (int i = 0; i < n && k < max; i++)
        names[k++] = list[i];
    return k;
}

int gm_lora_target_values(const char **names, int max)
{
    return fill(names, max, gm_lora_target_names, GM_LORA_TARGET_COUNT);
}

/* The adapters train in a floating-point precision of 16 or 32 bits. */
static const gm_precision adapter_precisions[] = {GM_FP32, GM_FP16, GM_BF16};

int gm_adapter_precision_values(const char **names, int max)
{
    int k = 0;
    for (size_t i = 0; i < sizeof adapter_precisions / sizeof adapter_precisions[0] && k < max; i++)
        names[k++] = gm_precision_name(adapter_precisions[i]);
    return k;
}

int gm_offload_values(const char **names, int max)
{
    static const char *const list[] = {"none", "optimizer", "params"};   /* gm_offload */
    return fill(names, max, list, 3);
}

int gm_saved_values(const char **names, int max)
{
    static const char *const list[] = {"gpumem", "pytorch"};             /* gm_saved */
    return fill(names, max, list, 2);
}
APPLY(gm_apply_plan_workload)
{
    const gm_workload *w = gm_workload_find(v);
    if (!w) {
        char allowed[256];
        gm_option_allowed(opt, ", ", allowed, sizeof allowed);
        snprintf(err, err_len, "--workload: unknown workload '%s' (allowed: %s)", v, allowed);
        return -1;
    }
    d->plan->workload = w;
    return 0;
}

/* --model of plan: a whole model (a preset, a config.json or a model's
 * folder), planned whole without --workload, else shaping the workload. */
APPLY(gm_apply_plan_model)
{
    (void)opt;
    d->plan->model = v;
    return gm_shape_set(&d->plan->shape, "model", v, err, err_len);
}

/* The whole-model plan's enumerations: the index in the option's list. */
APPLY(gm_apply_plan_choice)
{
    int i = gm_option_parse_enum(opt, v, err, err_len);
    if (i < 0)
        return -1;
    gm_model_plan_args *m = &d->plan->whole;
    if (!strcmp(opt->name, "mode"))
        m->plan.mode = (gm_plan_mode)i;
    else if (!strcmp(opt->name, "logits"))
        m->plan.logits_all = i == 1;
    else if (!strcmp(opt->name, "optimizer"))
        m->plan.optimizer = (gm_optimizer)i;
    else if (!strcmp(opt->name, "recompute"))
        m->plan.recompute = (gm_recompute)i;
    else if (!strcmp(opt->name, "zero"))
        m->plan.zero = i;
    else
        m->format = (gm_plan_format)i;
    return 0;
}

/* A whole number within opt's bounds: 0, or -1 with err. */
static int bounded(const gm_option *opt, const char *v, uint64_t *n, char *err, size_t err_len)
{
    char why[160];
    if (gm_parse_uint(v, opt->max, n, why, sizeof why) != 0 || *n < opt->min) {
        snprintf(err, err_len, "--%s '%s': expected a whole number from %llu to %llu", opt->name, v,
                 (unsigned long long)opt->min, (unsigned long long)opt->max);
        return -1;
    }
    return 0;
}

APPLY(gm_apply_plan_gpus)
{
    uint64_t n;
    if (bounded(opt, v, &n, err, err_len))
        return -1;
    if (!strcmp(opt->name, "gpus"))
        d->plan->whole.plan.gpus = n;
    else
        d->plan->whole.plan.tp = n;
    return 0;
}

APPLY(gm_apply_plan_fit)
{
    gm_model_plan_args *m = &d->plan->whole;
    char why[200];
    struct stat st;
    m->fit = true;
    m->fit_device = strcmp(v, "device") == 0;
    m->fit_run = !m->fit_device && stat(v, &st) == 0 && S_ISDIR(st.st_mode) ? v : NULL;
    if (m->fit_device || m->fit_run)
        return 0;
    int bad = gm_parse_budget(v, &m->fit_bytes, why, sizeof why) != 0;
    if (!bad && !m->fit_bytes)
        bad = snprintf(why, sizeof why, "'%.100s' is no memory", v);
    if (bad) {
        snprintf(err, err_len, "--%s: %s (or a run folder, or device)", opt->name, why);
        return -1;
    }
    return 0;
}

APPLY(gm_apply_plan_number)
{
    uint64_t n;
    if (bounded(opt, v, &n, err, err_len))
        return -1;
    d->plan->seen_batch |= !strcmp(opt->name, "batch");
    d->plan->seen_seq |= !strcmp(opt->name, "seq");
    return gm_shape_set(&d->plan->shape, opt->name, v, err, err_len);
}


/* The fine-tuning options: LoRA's (--mode lora, qlora) and the training
 * modes' (--zero-offload, --saved); --host-memory sizes the host. Which
 * modes each concerns: option_rules.c. */
APPLY(gm_apply_plan_tune)
{
    /* bench takes LoRA's three into every point's shape (the device's
     * LoRA step, bench/workloads/model_lora.c). */
    gm_tune_opts bench_tune = {0};
    gm_model_plan_args *m = d->plan ? &d->plan->whole : NULL;
    gm_tune_opts *t = m ? &m->plan.tune : &bench_tune;
    char why[160];
    const char *name = opt->name;
    if (!strcmp(name, "lora-rank")) {
        if (bounded(opt, v, &t->rank, err, err_len))
            return -1;
    } else if (!strcmp(name, "lora-alpha")) {
        char *end;
        errno = 0;
        t->alpha = strtod(v, &end);
        if (end == v || *end || errno || !(t->alpha > 0 && t->alpha < 1e6)) {
            snprintf(err, err_len, "--%s '%s': expected a number above 0 and below 1000000 (e.g. 32)", name, v);
            return -1;
        }
    } else if (!strcmp(name, "lora-targets")) {
        if (gm_option_parse_names(opt, v, &t->targets, err, err_len))
            return -1;
    } else if (!strcmp(name, "host-memory")) {
        uint64_t bytes;
        if (gm_parse_size(v, &bytes, why, sizeof why) != 0 || bytes == 0) {
            snprintf(err, err_len, "--%s '%s': expected a size such as 512GiB", name, v);
            return -1;
        }
        if (m)
            m->host_bytes = bytes;
        else
            d->bench->shape.host_memory = bytes;
        return 0;
    } else {
        int i = gm_option_parse_enum(opt, v, err, err_len);
        if (i < 0)
            return -1;
        if (!strcmp(name, "adapter-precision"))
            t->adapter_prec = (unsigned)adapter_precisions[i] + 1;
        else if (!strcmp(name, "zero-offload"))
            t->offload = (gm_offload)i;
        else
            t->saved = (gm_saved)i;
    }
    if (!m) {
        gm_shape *sh = &d->bench->shape;
        if (!strcmp(name, "lora-rank"))
            sh->lora_rank = t->rank;
        else if (!strcmp(name, "lora-alpha"))
            sh->lora_alpha = t->alpha;
        else if (!strcmp(name, "lora-targets"))
            sh->lora_targets = t->targets;
        else if (!strcmp(name, "zero-offload"))
            sh->zero_offload = (unsigned)t->offload;
        else
            return -1;      /* a plan option alone */
    }
    return 0;
}
