/*
 * The rules of option_rules.h: for each option that concerns part of a
 * command, the suites, workloads, allocation patterns, kind of plan and
 * --mode it concerns, and any further condition, each said in words when
 * it is not met.
 */
#include "cli/option_rules.h"

#include "bench/model/mem_plan.h"
#include "bench/model/shape_opts.h"
#include "bench/options.h"
#include "bench/pattern/pattern.h"
#include "lib/precision.h"
#include "stress/stress.h"

#include <stdio.h>
#include <string.h>

enum { FOR_WORKLOAD = 1, FOR_MODEL = 2 };   /* the kind of plan an option concerns */

typedef struct {
    const char *name;
    unsigned commands;      /* GM_CMD_* bits this rule judges */
    /* bench: the suites it concerns, one of which must run (NULL: any;
     * with workloads set, workloads and oom). The swap suite's offload
     * point runs block at the shape options. */
    const char *suites;
    const char *workloads;  /* one of them must be asked (NULL: any) */
    const char *patterns;   /* one of them must be asked (NULL: any) */
    int plan;               /* FOR_WORKLOAD, FOR_MODEL; 0: either */
    const char *mode;       /* the --mode it concerns (NULL: any) */
    const char *checks;     /* stress: one of them must run (NULL: any) */
    /* A further condition: NULL when a meets it, else what the option
     * needs, in words (the option's name goes before them). */
    const char *(*unmet)(const gm_ask *a, const char *value, char *buf, size_t len);
} rule;

#define UNMET(fn) static const char *fn(const gm_ask *a, const char *value, char *buf, size_t len)

/* Writes words into buf (len bytes) and returns buf. */
static const char *say(char *buf, size_t len, const char *words)
{
    snprintf(buf, len, "%s", words);
    return buf;
}

static bool has_model(const gm_ask *a) { return a->shape && gm_shape_has_arch(a->shape); }

static bool asks_workload(const gm_ask *a, const char *name)
{
    for (int w = 0; w < GM_RUNNABLE_WORKLOAD_COUNT; w++)
        if ((a->workloads & (1u << w)) && strcmp(gm_runnable_workloads[w], name) == 0)
            return true;
    return false;
}

UNMET(no_model)
{
    (void)value;
    if (!has_model(a))
        return NULL;
    gm_shape_model_conflict(a->shape, buf, len);
    return buf;
}

UNMET(block_shape)
{
    (void)value;
    if (!has_model(a))
        return NULL;
    snprintf(buf, len, "concerns block shaped by --hidden, --heads, --layers and --ffn, and --model %s is a whole "
             "model, run as its config says (drop one of them)", a->shape->arch.name);
    return buf;
}

/* --checkpoint: block shaped by the shape options, or the full
 * recomputation of a whole model's lora and qlora rows (bench). */
UNMET(checkpoints)
{
    if (a->modes & ((1u << GM_PLAN_LORA) | (1u << GM_PLAN_QLORA)))
        return NULL;
    return block_shape(a, value, buf, len);
}

UNMET(causal_applies)
{
    (void)value;
    if (asks_workload(a, "attention") || !has_model(a))
        return NULL;
    snprintf(buf, len, "concerns attention and block without a whole model: the attention of --model %s is causal "
             "already", a->shape->arch.name);
    return buf;
}

UNMET(needs_paged)
{
    (void)value;
    return a->shape && a->shape->paged ? NULL : say(buf, len, "sizes the blocks of the paged cache: add --paged");
}

/* plan's --block-tokens: the paged cache's blocks (a --workload kvcache
 * plan with --paged) or the serving engine's (a whole model's --mode serve). */
UNMET(plan_blocks)
{
    (void)value;
    if (a->whole_model)
        return (a->modes & (1u << GM_PLAN_SERVE)) ? NULL
                                                  : say(buf, len, "sizes the serving engine's KV blocks of a whole "
                                                                  "model: add --mode serve");
    if (!asks_workload(a, "kvcache"))
        return say(buf, len, "sizes the blocks of a paged cache (--workload kvcache --paged) or a serving engine's "
                             "(--mode serve)");
    return needs_paged(a, value, buf, len);
}

UNMET(needs_int4)
{
    (void)value;
    return a->shape && a->shape->weight_prec == (unsigned)GM_INT4 + 1
               ? NULL
               : say(buf, len, "concerns int4 weights: add --weight-precision int4");
}

UNMET(needs_model)
{
    (void)value;
    return has_model(a) ? NULL : say(buf, len, "concerns a whole model: add --model NAME (a preset or a config.json)");
}

/* bench --recompute: a whole model's training, LoRA and QLoRA steps
 * recompute it on the device; with --checkpoint, which means full for
 * lora and qlora rows (they carry plan's bytes: tune_tensors.c), the two
 * must agree. */
UNMET(recomputes)
{
    if (needs_model(a, value, buf, len))
        return buf;
    if (!a->shape->checkpoint || !strcmp(value, "full"))
        return NULL;
    snprintf(buf, len, "%s disagrees with --checkpoint, which recomputes every layer of a whole model's lora and "
             "qlora rows (--recompute full): drop one of them", value);
    return buf;
}

/* bench --mode: a mode that trains (train, and lora and qlora, whose rows
 * carry plan's bytes) concerns block with a whole model alone. */
UNMET(trains)
{
    (void)value;
    int m = 0;
    while (m < GM_PLAN_MODE_COUNT && !(gm_plan_trains((gm_plan_mode)m) && (a->modes & (1u << m))))
        m++;
    if (m == GM_PLAN_MODE_COUNT || (asks_workload(a, "block") && has_model(a)))
        return NULL;
    snprintf(buf, len, "%s runs block with a whole model alone: add %s--model NAME", gm_plan_mode_names[m],
             asks_workload(a, "block") ? "" : "--workload block and ");
    return buf;
}

UNMET(fragments)
{
    (void)value;
    if ((a->patterns & (1u << GM_PATTERN_FRAGMENTED))
        || (a->suite && !strcmp(a->suite, "oom") && (a->oom_parts & (1u << GM_OOM_FRAGMENTATION))))
        return NULL;
    return say(buf, len, "concerns the fragmented pattern (--pattern) and the oom suite's fragmentation measure "
                       "(--oom-parts), and neither runs");
}

UNMET(batch_part)
{
    (void)value;
    return a->oom_parts & (1u << GM_OOM_BATCH) ? NULL
                                               : say(buf, len, "concerns the largest batch's search: add batch to "
                                                             "--oom-parts");
}

UNMET(oversubscribes)
{
    (void)value;
    if ((a->suite && !strcmp(a->suite, "swap")) || (a->patterns & (1u << GM_PATTERN_MANAGED)))
        return NULL;
    return say(buf, len, "concerns managed memory: the swap suite or the managed pattern, and neither runs");
}

UNMET(offloads)
{
    (void)value;
    return a->offload || (a->shape && a->shape->zero_offload) ? NULL : say(buf, len, "sizes the host memory that offloaded states fit in: add --zero-offload "
                                             "optimizer or params");
}

UNMET(several_devices)
{
    (void)value;
    return a->several_devices ? NULL : say(buf, len, "concerns several devices: add --device all or a list (0,2)");
}

UNMET(data_parallel)
{
    if (!strcmp(value, "0") || a->data_parallel > 1)
        return NULL;
    snprintf(buf, len, "shards over the data-parallel GPUs (--gpus / --tensor-parallel), and this plan has "
             "%llu: add --gpus N", (unsigned long long)a->data_parallel);
    return buf;
}

UNMET(card_sheet)
{
    (void)value;
    return a->cards ? NULL : say(buf, len, "follows a card sheet (runs of different devices, or --cards), and these "
                                           "runs are of one device: their table is point by point already");
}

#define B GM_CMD_BENCH
#define P GM_CMD_PLAN
#define S GM_CMD_STRESS
#define SHAPE_SUITES "workloads,oom,swap"
#define TRAINING "train,lora,qlora"     /* the modes gm_plan_trains */

static const rule rules[] = {
    /* bench */
    {"serial", B, .unmet = several_devices},
    {"sizes", B, .suites = "stream"},
    {"kernels", B, .suites = "stream"},
    {"access", B, .suites = "stream"},
    {"workload", B, .suites = "workloads,oom"},
    {"batch", B, .suites = "workloads,swap"},
    {"seq", B, .suites = SHAPE_SUITES ",serve"},
    {"pattern", B, .suites = "workloads,oom"},
    {"on-oom", B, .suites = "workloads"},
    {"frag-fill", B, .suites = "workloads,oom", .unmet = fragments},
    {"frag-free", B, .suites = "workloads,oom", .unmet = fragments},
    {"frag-sizes", B, .suites = "workloads,oom", .unmet = fragments},
    {"prealloc", B, .suites = "workloads,oom", .patterns = "prealloc"},
    {"model", B, .suites = "workloads,oom,serve"},
    {"mode", B, .suites = "workloads,oom", .unmet = trains},
    {"optimizer", B, .suites = "workloads,oom", .workloads = "block", .mode = "train", .unmet = needs_model},
    {"recompute", B, .suites = "workloads,oom", .workloads = "block", .mode = TRAINING, .unmet = recomputes},
    {"zero-offload", B, .suites = "workloads", .workloads = "block", .mode = TRAINING, .unmet = needs_model},
    {"host-memory", B, .suites = "workloads", .workloads = "block", .mode = TRAINING, .unmet = offloads},
    {"lora-rank", B, .suites = "workloads,oom", .workloads = "block", .mode = "lora,qlora", .unmet = needs_model},
    {"lora-alpha", B, .suites = "workloads,oom", .workloads = "block", .mode = "lora,qlora", .unmet = needs_model},
    {"lora-targets", B, .suites = "workloads,oom", .workloads = "block", .mode = "lora,qlora", .unmet = needs_model},
    {"blocks", B, .suites = "swap"},
    {"kv-block-sizes", B, .suites = "swap"},
    {"swap-batch", B, .suites = "swap"},
    {"swap-pressure", B, .suites = "swap"},
    {"unified-sizes", B, .suites = "swap"},
    {"allow-oversubscribe", B, .unmet = oversubscribes},
    {"probe-timeout", B, .suites = "oom"},
    {"search", B, .suites = "oom", .unmet = batch_part},
    {"oom-parts", B, .suites = "oom"},
    /* the workloads' shape: bench and plan */
    {"hidden", B | P, .suites = SHAPE_SUITES, .plan = FOR_WORKLOAD, .unmet = no_model},
    {"heads", B | P, .suites = SHAPE_SUITES, .plan = FOR_WORKLOAD, .unmet = no_model},
    {"head-dim", B | P, .suites = SHAPE_SUITES, .plan = FOR_WORKLOAD, .unmet = no_model},
    {"layers", B | P, .suites = SHAPE_SUITES, .workloads = "block,kvcache", .plan = FOR_WORKLOAD, .unmet = no_model},
    {"ffn", B | P, .suites = SHAPE_SUITES, .workloads = "block", .plan = FOR_WORKLOAD, .unmet = no_model},
    {"out-features", B | P, .suites = "workloads,oom", .workloads = "linear", .plan = FOR_WORKLOAD},
    {"causal", B | P, .suites = SHAPE_SUITES, .workloads = "attention,block", .plan = FOR_WORKLOAD,
     .unmet = causal_applies},
    {"variant", B | P, .suites = SHAPE_SUITES, .workloads = "attention,block"},
    {"micro-batch", B | P, .suites = SHAPE_SUITES, .workloads = "block", .plan = FOR_WORKLOAD, .unmet = block_shape},
    {"checkpoint", B | P, .suites = SHAPE_SUITES, .workloads = "block", .plan = FOR_WORKLOAD, .unmet = checkpoints},
    {"offload", B | P, .suites = "workloads,oom", .workloads = "block", .plan = FOR_WORKLOAD, .unmet = block_shape},
    {"paged", P, .workloads = "kvcache", .plan = FOR_WORKLOAD},
    {"block-tokens", B, .suites = "workloads,oom,serve", .workloads = "kvcache,serve"},
    {"block-tokens", P, .unmet = plan_blocks},
    /* the serving engine (bench/model/serve_plan.h): the serve suite, the
     * serve workload and plan --mode serve */
    {"gpu-memory-utilization", B, .suites = "workloads,serve", .workloads = "serve"},
    {"gpu-memory-utilization", P, .plan = FOR_MODEL, .mode = "serve"},
    {"max-batched-tokens", B, .suites = "workloads,serve", .workloads = "serve"},
    {"max-batched-tokens", P, .plan = FOR_MODEL, .mode = "serve"},
    {"max-seqs", B, .suites = "workloads,serve", .workloads = "serve"},
    {"max-seqs", P, .plan = FOR_MODEL, .mode = "serve"},
    {"max-model-len", B, .suites = "workloads,serve", .workloads = "serve"},
    {"max-model-len", P, .plan = FOR_MODEL, .mode = "serve"},
    {"kv-cache-memory", P, .plan = FOR_MODEL, .mode = "serve"},
    {"serve-reserve", B, .suites = "workloads,serve", .workloads = "serve"},
    {"serve-reserve", P, .plan = FOR_MODEL, .mode = "serve"},
    {"output-tokens", B, .suites = "serve"},
    {"prefill-requests", B, .suites = "serve"},
    {"preempt", B, .suites = "serve"},
    /* the roles a workload holds (bench/model/precision_roles.h) */
    {"weight-precision", B | P, .suites = SHAPE_SUITES, .workloads = "linear,block"},
    {"kv-precision", B | P, .suites = SHAPE_SUITES, .workloads = "kvcache,block"},
    {"activation-precision", B, .suites = SHAPE_SUITES},
    {"group-size", B | P, .suites = SHAPE_SUITES, .unmet = needs_int4},
    /* plan: a whole model's options */
    {"mode", P, .plan = FOR_MODEL},
    {"logits", P, .plan = FOR_MODEL, .mode = "inference"},
    {"optimizer", P, .plan = FOR_MODEL, .mode = TRAINING},
    {"recompute", P, .plan = FOR_MODEL, .mode = TRAINING},
    {"gpus", P, .plan = FOR_MODEL},
    {"tensor-parallel", P, .plan = FOR_MODEL},
    {"zero", P, .plan = FOR_MODEL, .mode = TRAINING, .unmet = data_parallel},
    {"format", P, .plan = FOR_MODEL},
    {"fit", P, .plan = FOR_MODEL},
    /* plan: fine-tuning (bench/model/train_plan.h) */
    {"lora-rank", P, .plan = FOR_MODEL, .mode = "lora,qlora"},
    {"lora-alpha", P, .plan = FOR_MODEL, .mode = "lora,qlora"},
    {"lora-targets", P, .plan = FOR_MODEL, .mode = "lora,qlora"},
    {"adapter-precision", P, .plan = FOR_MODEL, .mode = "lora,qlora"},
    {"zero-offload", P, .plan = FOR_MODEL, .mode = TRAINING},
    {"host-memory", P, .plan = FOR_MODEL, .mode = TRAINING, .unmet = offloads},
    {"saved", P, .plan = FOR_MODEL, .mode = TRAINING},
    /* stress */
    {"duration", S, .checks = "churn,soak"},
    {"fill", S, .checks = "memtest,soak"},
    {"throttle", S, .checks = "soak"},
    /* compare */
    {"points", GM_CMD_COMPARE, .unmet = card_sheet},
};

/* Is name one of the comma-separated list? */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *at = list; *at; at += strcspn(at, ",") + (at[strcspn(at, ",")] == ',')) {
        if (strncmp(at, name, n) == 0 && (at[n] == ',' || at[n] == '\0'))
            return true;
    }
    return false;
}

/* A comma-separated list as words: "a, b". */
static const char *spaced(const char *list, char *buf, size_t len)
{
    size_t used = 0;
    for (const char *at = list; *at && used + 2 < len; at++) {
        buf[used++] = *at;
        if (*at == ',')
            buf[used++] = ' ';
    }
    buf[used] = '\0';
    return buf;
}

/* The names of mask's bits, joined by ", " ("none" for no bit). */
static void names_of(unsigned mask, const char *const *names, int count, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < count; i++)
        if ((mask & (1u << i)) && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", names[i]);
    if (!used)
        snprintf(buf, len, "none");
}

static bool in_mask(unsigned mask, const char *const *names, int count, const char *list)
{
    for (int i = 0; i < count; i++)
        if ((mask & (1u << i)) && listed(list, names[i]))
            return true;
    return false;
}

/* How far view a gets through rule r's conditions, in their order: the
 * number of them it meets (6: all, the checks and the further condition
 * counting as one); why the next one fails into why. */
static int judge(const rule *r, const gm_ask *a, const char *value, char *why, size_t len)
{
    char asked[160], words[160], buf[400];
    const char *suites = r->suites ? r->suites : r->workloads ? "workloads,oom" : NULL;
    if (a->suite && suites && !listed(suites, a->suite)) {
        snprintf(why, len, "concerns the suite%s %s", strchr(suites, ',') ? "s" : "",
                 spaced(suites, words, sizeof words));
        return 0;
    }
    if (r->plan && !a->suite && (r->plan == FOR_MODEL) != a->whole_model) {
        names_of(a->workloads, gm_runnable_workloads, GM_RUNNABLE_WORKLOAD_COUNT, asked, sizeof asked);
        if (r->plan == FOR_MODEL)
            snprintf(why, len, "concerns a whole model's plan (--model without --workload), and this plan is of "
                     "--workload %s", asked);
        else
            snprintf(why, len, "concerns a --workload's plan, and this plan is of the whole model %s",
                     has_model(a) ? a->shape->arch.name : "?");
        return 1;
    }
    if (r->workloads && !a->whole_model && !in_mask(a->workloads, gm_runnable_workloads, GM_RUNNABLE_WORKLOAD_COUNT,
                                                    r->workloads)) {
        names_of(a->workloads, gm_runnable_workloads, GM_RUNNABLE_WORKLOAD_COUNT, asked, sizeof asked);
        snprintf(why, len, "concerns the workload%s %s, and --workload is %s", strchr(r->workloads, ',') ? "s" : "",
                 spaced(r->workloads, words, sizeof words), asked);
        return 2;
    }
    if (r->patterns && !in_mask(a->patterns, gm_pattern_names, GM_PATTERN_COUNT, r->patterns)) {
        names_of(a->patterns, gm_pattern_names, GM_PATTERN_COUNT, asked, sizeof asked);
        snprintf(why, len, "concerns the %s pattern, and --pattern is %s", r->patterns, asked);
        return 3;
    }
    if (r->mode && !in_mask(a->modes, gm_plan_mode_names, GM_PLAN_MODE_COUNT, r->mode)) {
        names_of(a->modes, gm_plan_mode_names, GM_PLAN_MODE_COUNT, asked, sizeof asked);
        snprintf(why, len, "concerns --mode %s, and --mode is %s", spaced(r->mode, words, sizeof words), asked);
        return 4;
    }
    if (r->checks) {
        const char *names[16];
        int n = 0;
        for (; gm_stress_checks[n] && n < 16; n++)
            names[n] = gm_stress_checks[n]->name;
        if (!in_mask(a->checks, names, n, r->checks)) {
            names_of(a->checks, names, n, asked, sizeof asked);
            snprintf(why, len, "concerns the check%s %s, and --checks is %s", strchr(r->checks, ',') ? "s" : "",
                     spaced(r->checks, words, sizeof words), asked);
            return 5;
        }
    }
    const char *unmet = r->unmet ? r->unmet(a, value, buf, sizeof buf) : NULL;
    if (unmet) {
        snprintf(why, len, "%s", unmet);
        return 5;
    }
    return 6;
}

int gm_option_rule_check(const gm_option *opt, const char *value, unsigned cmd, const gm_ask *views, int n, char *err,
                         size_t len)
{
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        const rule *r = &rules[i];
        if (!(r->commands & cmd) || strcmp(r->name, opt->name) != 0)
            continue;
        char why[600] = "", best[600] = "";
        int furthest = -1;
        for (int v = 0; v < n; v++) {
            int got = judge(r, &views[v], value, why, sizeof why);
            if (got == 6)
                return 0;
            if (got > furthest) {
                furthest = got;
                snprintf(best, sizeof best, "%s", why);
            }
        }
        if (furthest == 0) {                    /* no suite of the run: name them */
            char suites[200] = "";
            size_t used = 0;
            for (int v = 0; v < n; v++)
                if (!strstr(suites, views[v].suite) && used < sizeof suites)
                    used += (size_t)snprintf(suites + used, sizeof suites - used, "%s%s", used ? ", " : "",
                                             views[v].suite);
            snprintf(err, len, "--%s %s, and this run's suites are %s (--suite)", opt->name, best, suites);
        } else {
            snprintf(err, len, "--%s %s", opt->name, best);
        }
        return -1;
    }
    return 0;
}
