#include "bench/options.h"

#include "backend/watchdog.h"
#include "bench/bench.h"
#include "bench/model/mem_plan.h"
#include "bench/model/precision_roles.h"
#include "bench/model/train_plan.h"
#include "cli/option_plan.h"
#include "cli/option_table.h"
#include "cli/profile_text.h"
#include "lib/host_memory.h"
#include "lib/precision.h"
#include "lib/units.h"
#include "bench/workloads/registry.h"

#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>



void gm_opts_init(gm_bench_opts *o)
{
    memset(o, 0, sizeof *o);
    strcpy(o->backend, "auto");
    o->device = -1;
    strcpy(o->suites[0], "stream");
    o->n_suites = 1;
    o->precisions = GM_PREC_DEFAULT_MASK;
    o->reps = 5;
    o->rounds = 1;
    o->warmup = 1;
    o->kernels = (1u << GM_STREAM_KERNEL_COUNT) - 1;
    o->access = GM_ACCESS_AUTO;
    o->workloads = 1u;
    o->patterns = 1u;
    o->modes = 1u << GM_PLAN_INFERENCE;
    o->probe_timeout = 600;
    o->oom_parts = (1u << GM_OOM_PART_COUNT) - 1;
    o->hang_timeout = GM_HANG_TIMEOUT_DEFAULT;
    o->frag_fill = 0.5;
    o->frag_free = 0.5;
    o->frag_min = 64u << 10;
    o->frag_max = 16u << 20;
    o->prealloc_share = 0.9;
    o->swap_pressure = 0.5;
    o->shape.hidden = 512;
    o->shape.heads = 8;
}

void gm_opts_release(gm_bench_opts *o)
{
    free(o->sizes);
    free(o->batches);
    free(o->seqs);
    free(o->blocks);
    free(o->kv_block_sizes);
    free(o->swap_batches);
    free(o->unified_sizes);
    o->sizes = o->batches = o->seqs = o->blocks = o->kv_block_sizes = o->swap_batches = o->unified_sizes = NULL;
    o->n_sizes = o->n_batches = o->n_seqs = o->n_blocks = o->n_kv_block_sizes = o->n_swap_batches = 0;
    o->n_unified_sizes = 0;
}

int gm_opts_takes_value(const char *name)
{
    const gm_option *opt = gm_option_find(GM_CMD_BENCH, name);
    return opt ? opt->kind != GM_OPTARG_FLAG : -1;
}

int gm_opts_set(gm_bench_opts *o, const char *name, const char *value, char *err, size_t err_len)
{
    const gm_option *opt = gm_option_find(GM_CMD_BENCH, name);
    if (!opt) {
        snprintf(err, err_len, "unknown option '--%s' (see gpumem bench --help)", name);
        return 1;
    }
    gm_opt_dest d = {.bench = o};
    return gm_option_apply(opt, &d, value, err, err_len);
}

typedef struct {
    gm_bench_opts *o;
    gm_bench_opts *scratch;   /* the first pass checks other sections' entries here */
    const char *apply;  /* the section this pass applies */
    char scratch_section[64];   /* the section scratch holds */
    const char *suite;  /* SUITE of the suite loaded for, or NULL */
    bool names_suite;   /* the profile names it (gm_profile_load) */
    char why[400];     /* the first entry's failure; its line comes from ini_parse */
} profile_ctx;

bool gm_is_suite_name(const char *name)
{
    return gm_suite_find(name) != NULL;
}

/* Is `name` SUITE.cpu or SUITE.gpu: a suite's section for CPU devices, or
 * for the others (GPUs and accelerators)? */
static bool is_typed_section(const char *name)
{
    const char *dot = strrchr(name, '.');
    char suite[32];
    if (!dot || (strcmp(dot, ".cpu") != 0 && strcmp(dot, ".gpu") != 0) || (size_t)(dot - name) >= sizeof suite)
        return false;
    snprintf(suite, sizeof suite, "%.*s", (int)(dot - name), name);
    return gm_is_suite_name(suite);
}

/* Is section `name` [suite], [suite.cpu] or [suite.gpu]? */
static bool section_of(const char *name, const char *suite)
{
    size_t n = strlen(suite);
    return strncmp(name, suite, n) == 0 && (name[n] == '\0' || (name[n] == '.' && is_typed_section(name)));
}

/* Does the comma-separated `list` hold `item`? */
static bool lists(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list; *p; p += strcspn(p, ",")) {
        p += strspn(p, ", \t");
        if (strncmp(p, item, n) == 0 && (p[n] == '\0' || p[n] == ',' || p[n] == ' ' || p[n] == '\t'))
            return true;
    }
    return false;
}

/* Applies one `name = value`; returns 0 to make ini_parse report the line. */
static int on_ini_entry(void *user, const char *section, const char *name, const char *value)
{
    profile_ctx *c = user;
    const gm_option *opt;
    if (c->why[0])
        return 0;
    if (strcmp(section, "bench") != 0 && !gm_is_suite_name(section) && !is_typed_section(section))
        snprintf(c->why, sizeof c->why, "unknown section [%s] (profiles have [bench], one per suite, and "
                 "[SUITE.cpu] or [SUITE.gpu] for one kind of device)", section);
    else if (((opt = gm_option_find(GM_CMD_BENCH, name)) && (opt->flags & GM_OPT_NO_PROFILE))
             || (strcmp(name, "suite") == 0 && strcmp(section, "bench") != 0))
        snprintf(c->why, sizeof c->why, "'%s' cannot be set in a profile%s", name,
                 strcmp(name, "suite") == 0 ? " section of a suite" : "");
    else {
        /* The section this pass applies goes into o; the first pass checks
         * every other section's entries too, so that a bad one fails now. */
        gm_bench_opts *into = strcmp(section, c->apply) == 0 ? c->o : c->scratch;
        if (into == c->scratch && into && strcmp(section, c->scratch_section) != 0) {
            /* Each other section is checked on its own, over [bench]'s defaults. */
            gm_opts_release(into);
            gm_opts_init(into);
            snprintf(c->scratch_section, sizeof c->scratch_section, "%s", section);
        }
        if (into == c->o && c->o->profile_model_off && strcmp(name, "model") == 0)
            into = NULL;        /* the command line's shape replaces the profile's model */
        if (c->suite && (section_of(section, c->suite)
                         || (strcmp(section, "bench") == 0 && strcmp(name, "suite") == 0 && lists(value, c->suite))))
            c->names_suite = true;
        if (into && gm_opts_set(into, name, value, c->why, sizeof c->why) != 0 && !c->why[0])
            snprintf(c->why, sizeof c->why, "bad entry '%s'", name);
    }
    return c->why[0] ? 0 : 1;
}

int gm_profile_load(gm_bench_opts *o, const char *name, const char *suite, char *err, size_t err_len)
{
    char path[4200];
    if (!gm_profile_find(name, path, sizeof path)) {
        snprintf(err, err_len, "--profile: no profile '%s' (looked for profiles/%s.ini in the data folders: gpumem info lists them)", name, name);
        return -1;
    }
    snprintf(o->profile_file, sizeof o->profile_file, "%s", path);
    /* SUITE.cpu (or .gpu): the suite's section, then the one for that kind
     * of device. */
    char base[32] = "";
    if (suite && is_typed_section(suite))
        snprintf(base, sizeof base, "%.*s", (int)(strrchr(suite, '.') - suite), suite);
    gm_bench_opts scratch;
    gm_opts_init(&scratch);
    profile_ctx c = {o, &scratch, "bench", "", suite ? (base[0] ? base : suite) : NULL, false, ""};
    int rc = ini_parse(path, on_ini_entry, &c);
    gm_opts_release(&scratch);
    o->profile_names_suite = c.names_suite;
    if (rc == 0 && suite) {
        c.apply = base[0] ? base : suite;
        c.scratch = NULL;
        rc = ini_parse(path, on_ini_entry, &c);
    }
    if (rc == 0 && base[0]) {
        c.apply = suite;
        rc = ini_parse(path, on_ini_entry, &c);
    }
    if (rc < 0) {
        snprintf(err, err_len, "%s: cannot read the profile", path);
        return -1;
    }
    if (rc > 0) {
        snprintf(err, err_len, "%s:%d: %s", path, rc,
                 c.why[0] ? c.why : "malformed line (expected name = value)");
        return -1;
    }
    return 0;
}

/* --zero-offload against the host memory (--host-memory, or this host's):
 * the host bytes plan puts there for each training mode and precision
 * asked must fit, as plan refuses them. 0, or -1 with one line in err. */
static int offload_host_check(const gm_bench_opts *o, char *err, size_t err_len)
{
    if (!o->shape.zero_offload || !gm_shape_has_arch(&o->shape))
        return 0;
    const char *offload_names[3];
    gm_offload_values(offload_names, 3);
    unsigned precisions = o->precisions ? o->precisions : 1u << GM_BF16;   /* training's default */
    uint64_t host = o->shape.host_memory ? o->shape.host_memory : gm_host_mem_total();
    for (int m = 0; m < GM_PLAN_MODE_COUNT; m++) {
        if (!(o->modes & (1u << m)) || !gm_plan_trains((gm_plan_mode)m))
            continue;
        for (int p = 0; p < GM_PREC_COUNT; p++) {
            if (!(precisions & (1u << p)))
                continue;
            gm_plan_opts po;
            gm_plan_opts_init(&po);
            po.mode = (gm_plan_mode)m;
            po.prec = (gm_precision)p;
            po.batch = o->shape.batch ? o->shape.batch : 1;
            po.seq = o->shape.seq ? o->shape.seq : 1;
            po.tune.rank = o->shape.lora_rank;
            po.tune.alpha = o->shape.lora_alpha;
            po.tune.targets = o->shape.lora_targets;
            po.tune.offload = (gm_offload)o->shape.zero_offload;
            if (m == GM_PLAN_QLORA)
                po.weight_prec = GM_INT4 + 1;
            gm_plan_item it[GM_PLAN_MAX_ITEMS];
            int n = gm_plan_model(&o->shape.arch, &po, it);
            uint64_t need = n < 0 ? 0 : gm_plan_host_sum(it, n);
            if (need <= host)
                continue;
            char want[32], have[32];
            snprintf(err, err_len, "--%s %s: --zero-offload %s puts %s in host memory for %s's %s --mode %s step "
                     "(fp32 master weights, gradients, optimizer states), more than %s",
                     o->shape.host_memory ? "host-memory" : "zero-offload",
                     o->shape.host_memory ? gm_format_size(host, have, sizeof have)
                                          : offload_names[o->shape.zero_offload],
                     offload_names[o->shape.zero_offload], gm_format_size(need, want, sizeof want),
                     o->shape.arch.name, gm_precision_name((gm_precision)p), gm_plan_mode_names[m],
                     o->shape.host_memory ? "it" : "this host's memory (--host-memory SIZE sizes another host)");
            return -1;
        }
    }
    return 0;
}

int gm_roles_check_opts(const gm_bench_opts *o, const char *suite, char *err, size_t err_len)
{
    if (gm_int4_lm_head_check(NULL, &o->shape, err, err_len))
        return -1;
    if (!strcmp(suite, "swap")) {
        /* Its offload point runs block in the first precision listed. */
        if (o->precisions && !(o->precisions & GM_PREC_DEFAULT_MASK)) {
            snprintf(err, err_len, "swap: the offloaded block runs in fp32, fp16, bf16 or int8, not %s",
                     gm_precision_name((gm_precision)__builtin_ctz(o->precisions)));
            return -1;
        }
        return 0;
    }
    if (!strcmp(suite, "stream"))   /* every storage precision (int4, weights only, is refused by the options) */
        return 0;
    /* LoRA's options against the model, as plan checks them: a rank above
     * an adapted projection's width, targets it lacks, QLoRA over a base
     * that is not 4-bit. */
    for (int m = GM_PLAN_LORA; m <= GM_PLAN_QLORA && gm_shape_has_arch(&o->shape); m++) {
        gm_plan_opts po;
        gm_plan_opts_init(&po);
        po.mode = (gm_plan_mode)m;
        po.weight_prec = o->shape.weight_prec;
        po.tune.rank = o->shape.lora_rank;
        po.tune.alpha = o->shape.lora_alpha;
        po.tune.targets = o->shape.lora_targets;
        if ((o->modes & (1u << m)) && gm_plan_tune_check(&o->shape.arch, &po, err, err_len))
            return -1;
        if (m == GM_PLAN_LORA && (o->modes & (1u << m)) && o->shape.weight_prec) {
            snprintf(err, err_len, "--weight-precision %s with --mode lora: LoRA's frozen base is in --precision "
                     "(a 4-bit base is --mode qlora)", gm_precision_name((gm_precision)(o->shape.weight_prec - 1)));
            return -1;
        }
    }
    if (offload_host_check(o, err, err_len))
        return -1;
    /* LoRA and QLoRA train in fp32, fp16 or bf16 (full fine-tuning's
     * other precisions are unsupported rows of the device's step). */
    unsigned trains = (1u << GM_FP32) | (1u << GM_FP16) | (1u << GM_BF16);
    for (int m = GM_PLAN_LORA; m <= GM_PLAN_QLORA; m++)
        if ((o->modes & (1u << m)) && (o->precisions & ~trains)) {
            snprintf(err, err_len, "--precision %s with --mode %s: fine-tuning trains in fp32, fp16 or bf16 (bf16 "
                     "where --precision is left out)",
                     gm_precision_name((gm_precision)__builtin_ctz(o->precisions & ~trains)), gm_plan_mode_names[m]);
            return -1;
        }
    for (int w = 0; gm_workloads[w]; w++) {
        if (!(o->workloads & (1u << w)))
            continue;
        for (int p = 0; p < GM_PREC_COUNT; p++) {
            if (!(o->precisions & (1u << p)))
                continue;
            gm_shape s = o->shape;
            gm_shape_set_roles(&s, &o->shape, (gm_precision)p);
            if (gm_roles_check(gm_workloads[w]->name, s.prec, gm_weight_prec(&s), gm_kv_prec(&s), err, err_len)
                || gm_int4_lm_head_check(gm_workloads[w]->name, &s, err, err_len))
                return -1;
        }
    }
    return 0;
}
