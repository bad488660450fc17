/*
 * The option table (option_table.h): every option of every command, once.
 * The apply functions below validate a value and write it; their messages
 * name the option, the value and what is allowed.
 */
#include "cli/option_table.h"

#include "cli/data_names.h"
#include "cli/option_plan.h"

#include "backend/watchdog.h"
#include "bench/bench.h"
#include "bench/model/mem_plan.h"
#include "bench/pattern/pattern.h"
#include "bench/model/shape_opts.h"
#include "lib/precision.h"
#include "lib/units.h"
#include "stress/stress.h"
#include "bench/workloads/registry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

/* ---- the allowed values of enumerations and lists ---- */

static int fill(const char **names, int max, const char *const *list, int n)
{
    int k = 0;
    for (int i = 0; i < n && list[i] && k < max; i++)
        names[k++] = list[i];
    return k;
}

static int suite_values(const char **names, int max)
{
    int k = 0;
    for (int i = 0; gm_suites[i] && k < max; i++)
        names[k++] = gm_suites[i]->name;
    return k;
}

static int workload_values(const char **names, int max)
{
    return fill(names, max, gm_runnable_workloads, GM_RUNNABLE_WORKLOAD_COUNT);
}

static int pattern_values(const char **names, int max)
{
    return fill(names, max, gm_pattern_names, GM_PATTERN_COUNT);
}

static int precision_values(const char **names, int max)
{
    int k = 0;
    for (int i = 0; i < GM_PREC_COUNT && k < max; i++)
        names[k++] = gm_precision_name((gm_precision)i);
    return k;
}

static int mode_values(const char **names, int max)
{
    return fill(names, max, gm_plan_mode_names, GM_PLAN_MODE_COUNT);
}

static int kernel_values(const char **names, int max)
{
    return fill(names, max, gm_stream_kernel_names, GM_STREAM_KERNEL_COUNT);
}

static int oom_part_values(const char **names, int max)
{
    return fill(names, max, gm_oom_part_names, GM_OOM_PART_COUNT);
}

static int check_values(const char **names, int max)
{
    int k = 0;
    for (int i = 0; gm_stress_checks[i] && k < max; i++)
        names[k++] = gm_stress_checks[i]->name;
    return k;
}

#define LIST_VALUES(fn, ...)                                                                                  \
    static int fn(const char **names, int max)                                                               \
    {                                                                                                        \
        static const char *const list[] = {__VA_ARGS__};                                                     \
        return fill(names, max, list, (int)(sizeof list / sizeof list[0]));                                  \
    }
LIST_VALUES(backend_values, "auto", "cuda", "opencl")
LIST_VALUES(access_values, "auto", "grid", "chunked", "both")   /* in gm_access order */
LIST_VALUES(on_oom_values, "fail", "shrink")
LIST_VALUES(search_values, "model", "bisect")
LIST_VALUES(variant_values, "tiled", "naive", "ours", "vendor", "all")
LIST_VALUES(format_values, "table", "markdown", "csv")
LIST_VALUES(preempt_values, "swap", "recompute")
/* The whole-model plan's enumerations, in the order of their enums
 * (bench/model/mem_plan.h, cli/plan_model.h). */
LIST_VALUES(logits_values, "last", "all")
LIST_VALUES(optimizer_values, "adamw", "adamw-8bit", "sgd", "sgd-momentum")
LIST_VALUES(bench_optimizer_values, "adamw")
LIST_VALUES(recompute_values, "none", "selective", "full")
LIST_VALUES(zero_values, "0", "1", "2", "3")
LIST_VALUES(plan_format_values, "text", "csv", "json")

#define MAX_VALUES GM_OPTION_MAX_VALUES

/* ---- value parsers shared by the apply functions ---- */

/* Sets *vals from a range (sizes or plain numbers) whose every value lies
 * in [min, max]; `bounds` says so in the error. */
static int set_range(const char *opt, const char *value, int sizes, uint64_t min, uint64_t max,
                     const char *bounds, uint64_t **vals, size_t *n, char *err, size_t err_len)
{
    char why[200];
    uint64_t *v;
    size_t count;
    if (gm_parse_range(value, sizes, &v, &count, why, sizeof why) != 0) {
        snprintf(err, err_len, "--%s: %s", opt, why);
        return -1;
    }
    for (size_t i = 0; i < count; i++) {
        if (v[i] < min || v[i] > max) {
            snprintf(err, err_len, "--%s '%s': %s", opt, value, bounds);
            free(v);
            return -1;
        }
    }
    free(*vals);
    *vals = v;
    *n = count;
    return 0;
}

/* The generic parsers of names (option_values.c), by their short names. */
static int parse_names(const gm_option *opt, const char *value, unsigned *mask, char *err, size_t err_len)
{
    return gm_option_parse_names(opt, value, mask, err, err_len);
}

static int parse_enum(const gm_option *opt, const char *value, char *err, size_t err_len)
{
    return gm_option_parse_enum(opt, value, err, err_len);
}

static int set_uint(const gm_option *opt, const char *value, unsigned *out, char *err, size_t err_len)
{
    uint64_t v;
    char why[160];
    if (gm_parse_uint(value, opt->max, &v, why, sizeof why) != 0 || v < opt->min) {
        snprintf(err, err_len, "--%s '%s': expected a whole number from %llu to %llu", opt->name, value,
                 (unsigned long long)opt->min, (unsigned long long)opt->max);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

static int copy_str(const char *opt, const char *value, char *dst, size_t len, char *err, size_t err_len)
{
    if (strlen(value) >= len || !*value) {
        snprintf(err, err_len, "--%s '%.100s': must be 1 to %zu characters", opt, value, len - 1);
        return -1;
    }
    strcpy(dst, value);
    return 0;
}

/* A number above 0 and below max; with percent, "5%" or "5" means 0.05. */
static int parse_fraction(const char *s, int percent, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno)
        return -1;
    if (percent && *end == '%')
        end++;
    if (*end || !(v > 0))
        return -1;
    *out = percent ? v / 100 : v;
    return *out < max ? 0 : -1;
}

#define APPLY(fn) static int fn(const gm_option *opt, gm_opt_dest *d, const char *v, char *err, size_t err_len)

/* ---- bench and stress ---- */

APPLY(apply_backend)
{
    (void)opt;
    if (strcmp(v, "auto") && strcmp(v, "cuda") && strcmp(v, "opencl")) {
        snprintf(err, err_len, "--backend: unknown backend '%s' (allowed: auto, cuda, opencl)", v);
        return -1;
    }
    strcpy(d->bench ? d->bench->backend : d->stress->backend, v);
    return 0;
}

APPLY(apply_bench_device)
{
    gm_bench_opts *o = d->bench;
    unsigned dev;
    char why[200];
    o->device_list[0] = '\0';
    if (strcmp(v, "all") == 0 || strchr(v, ','))
        return copy_str(opt->name, v, o->device_list, sizeof o->device_list, err, err_len);
    if (gm_parse_uint(v, 63, &(uint64_t){0}, why, sizeof why) != 0) {
        snprintf(err, err_len, "--device '%s': expected a device index (0 to 63), a list (0,2) or all", v);
        return -1;
    }
    if (set_uint(opt, v, &dev, err, err_len))
        return -1;
    o->device = (int)dev;
    return 0;
}

APPLY(apply_stress_device)
{
    unsigned dev;
    if (set_uint(opt, v, &dev, err, err_len))
        return -1;
    d->stress->device = (int)dev;
    return 0;
}

APPLY(apply_mem_limit)
{
    uint64_t bytes;
    char why[200];
    (void)opt;
    if (gm_parse_size(v, &bytes, why, sizeof why) != 0 || bytes < (1u << 20)) {
        snprintf(err, err_len, "--mem-limit '%s': expected a size of at least 1MiB (e.g. 2GiB)", v);
        return -1;
    }
    if (d->bench) {
        d->bench->mem_limit = bytes;
        d->bench->mem_limit_set = true;
    } else {
        d->stress->mem_limit = bytes;
    }
    return 0;
}

APPLY(apply_hang_timeout)
{
    return set_uint(opt, v, d->bench ? &d->bench->hang_timeout : &d->stress->hang_timeout, err, err_len);
}

APPLY(apply_out)
{
    if (d->bench)
        return copy_str(opt->name, v, d->bench->out, sizeof d->bench->out, err, err_len);
    if (!*v) {
        snprintf(err, err_len, "--%s '': expected a folder", opt->name);
        return -1;
    }
    if (d->stress)
        d->stress->out = v;
    else
        d->report->out = v;
    return 0;
}

/* ---- bench ---- */

APPLY(apply_profile)
{
    return copy_str(opt->name, v, d->bench->profile, sizeof d->bench->profile, err, err_len);
}

APPLY(apply_resume)
{
    (void)d;
    (void)v;
    snprintf(err, err_len, "--%s RUN takes the run's own options (only --quiet may be added); give it on the "
                           "command line", opt->name);
    return -1;
}

APPLY(apply_serial)
{
    (void)opt, (void)v, (void)err, (void)err_len;
    d->bench->serial = true;
    return 0;
}

APPLY(apply_quiet)
{
    (void)opt, (void)v, (void)err, (void)err_len;
    d->bench->quiet = true;
    return 0;
}

APPLY(apply_allow_oversubscribe)
{
    (void)opt, (void)v, (void)err, (void)err_len;
    d->bench->allow_oversubscribe = true;
    return 0;
}

APPLY(apply_suite)
{
    gm_bench_opts *o = d->bench;
    const char *names[MAX_VALUES];
    int n = opt->values(names, MAX_VALUES);
    unsigned mask;
    if (parse_names(opt, v, &mask, err, err_len))
        return -1;
    o->n_suites = 0;
    for (int i = 0; i < n && o->n_suites < GM_MAX_SUITES; i++)
        if (mask & (1u << i))
            snprintf(o->suites[o->n_suites++], sizeof o->suites[0], "%s", names[i]);
    return 0;
}

APPLY(apply_precision)
{
    unsigned *mask = d->bench ? &d->bench->precisions : &d->plan->precisions;
    if (parse_names(opt, v, mask, err, err_len))
        return -1;
    if (*mask & (1u << GM_INT4)) {
        snprintf(err, err_len, "--precision int4: int4 is a weight precision only (use --weight-precision int4)");
        return -1;
    }
    return 0;
}

/* --weight-precision, --kv-precision, --activation-precision: one role's
 * precision on every point (stored + 1 in the shape; 0 is none). */
APPLY(apply_role_precision)
{
    gm_shape *s = d->bench ? &d->bench->shape : &d->plan->shape;
    int p = parse_enum(opt, v, err, err_len);
    if (p < 0)
        return -1;
    if (p == GM_INT4 && strcmp(opt->name, "weight-precision") != 0) {
        snprintf(err, err_len, "--%s int4: int4 is a weight precision only (use --weight-precision int4)",
                 opt->name);
        return -1;
    }
    unsigned *role = !strcmp(opt->name, "weight-precision") ? &s->weight_prec
                     : !strcmp(opt->name, "kv-precision")   ? &s->kv_prec
                                                            : &s->act_prec;
    *role = (unsigned)p + 1;
    return 0;
}

APPLY(apply_group_size)
{
    gm_shape *s = d->bench ? &d->bench->shape : &d->plan->shape;
    unsigned g;
    if (set_uint(opt, v, &g, err, err_len))
        return -1;
    s->group_size = g;
    return 0;
}

APPLY(apply_int4_lm_head)
{
    (void)opt, (void)v, (void)err, (void)err_len;
    (d->bench ? &d->bench->shape : &d->plan->shape)->int4_lm_head = true;
    return 0;
}

APPLY(apply_reps)
{
    return set_uint(opt, v, &d->bench->reps, err, err_len);
}

APPLY(apply_rounds)
{
    return set_uint(opt, v, &d->bench->rounds, err, err_len);
}

APPLY(apply_warmup)
{
    return set_uint(opt, v, &d->bench->warmup, err, err_len);
}

APPLY(apply_probe_timeout)
{
    return set_uint(opt, v, &d->bench->probe_timeout, err, err_len);
}

APPLY(apply_search)
{
    int i = parse_enum(opt, v, err, err_len);
    if (i < 0)
        return -1;
    d->bench->search_bisect = i == 1;
    return 0;
}

APPLY(apply_oom_parts)
{
    return parse_names(opt, v, &d->bench->oom_parts, err, err_len);
}

static const char SIZE_BOUND[] = "every size must be at least 4KiB";

APPLY(apply_sizes)
{
    return set_range(opt->name, v, 1, 4096, UINT64_MAX, SIZE_BOUND, &d->bench->sizes, &d->bench->n_sizes, err,
                     err_len);
}

APPLY(apply_blocks)
{
    return set_range(opt->name, v, 1, 4096, UINT64_MAX, SIZE_BOUND, &d->bench->blocks, &d->bench->n_blocks, err,
                     err_len);
}

APPLY(apply_kv_block_sizes)
{
    return set_range(opt->name, v, 1, 4096, UINT64_MAX, SIZE_BOUND, &d->bench->kv_block_sizes,
                     &d->bench->n_kv_block_sizes, err, err_len);
}

APPLY(apply_unified_sizes)
{
    return set_range(opt->name, v, 1, 4096, UINT64_MAX, SIZE_BOUND, &d->bench->unified_sizes,
                     &d->bench->n_unified_sizes, err, err_len);
}

APPLY(apply_swap_batch)
{
    return set_range(opt->name, v, 0, opt->min, opt->max, "every value must be from 1 to 65536",
                     &d->bench->swap_batches, &d->bench->n_swap_batches, err, err_len);
}

static const char AXIS_BOUND[] = "every value must be from 1 to 16777216";

APPLY(apply_batch_axis)
{
    return set_range(opt->name, v, 0, 1, 1u << 24, AXIS_BOUND, &d->bench->batches, &d->bench->n_batches, err,
                     err_len);
}

APPLY(apply_seq_axis)
{
    return set_range(opt->name, v, 0, 1, 1u << 24, AXIS_BOUND, &d->bench->seqs, &d->bench->n_seqs, err, err_len);
}

APPLY(apply_swap_pressure)
{
    char why[200];
    (void)opt;
    if (gm_parse_share(v, &d->bench->swap_pressure, why, sizeof why) != 0 || d->bench->swap_pressure >= 1.0) {
        snprintf(err, err_len, "--swap-pressure '%s': expected a share below 100%% (e.g. 50%%)", v);
        return -1;
    }
    return 0;
}

APPLY(apply_kernels)
{
    return parse_names(opt, v, &d->bench->kernels, err, err_len);
}

APPLY(apply_access)
{
    unsigned mask;
    if (parse_names(opt, v, &mask, err, err_len))
        return -1;
    if (mask & (mask - 1)) {
        char allowed[128];
        gm_option_allowed(opt, ", ", allowed, sizeof allowed);
        snprintf(err, err_len, "--access '%s': give one of %s", v, allowed);
        return -1;
    }
    d->bench->access = (gm_access)__builtin_ctz(mask);
    return 0;
}

APPLY(apply_workloads)
{
    return parse_names(opt, v, &d->bench->workloads, err, err_len);
}

APPLY(apply_modes)
{
    return parse_names(opt, v, &d->bench->modes, err, err_len);
}

APPLY(apply_pattern)
{
    return parse_names(opt, v, &d->bench->patterns, err, err_len);
}

APPLY(apply_share)
{
    gm_bench_opts *o = d->bench;
    char why[200];
    double *dst = strcmp(opt->name, "frag-fill") == 0   ? &o->frag_fill
                  : strcmp(opt->name, "frag-free") == 0 ? &o->frag_free
                                                        : &o->prealloc_share;
    if (gm_parse_share(v, dst, why, sizeof why) != 0) {
        snprintf(err, err_len, "--%s: %s", opt->name, why);
        return -1;
    }
    return 0;
}

APPLY(apply_frag_sizes)
{
    const char *colon = strchr(v, ':');
    char lo[64], why[200];
    (void)opt;
    if (!colon || (size_t)(colon - v) >= sizeof lo) {
        snprintf(err, err_len, "--frag-sizes '%s': expected MIN:MAX (e.g. 64KiB:16MiB)", v);
        return -1;
    }
    memcpy(lo, v, (size_t)(colon - v));
    lo[colon - v] = '\0';
    uint64_t a, b;
    if (gm_parse_size(lo, &a, why, sizeof why) || gm_parse_size(colon + 1, &b, why, sizeof why) || a < 4096 || b < a
        || b > ((uint64_t)1 << 40)) {
        snprintf(err, err_len, "--frag-sizes '%s': expected MIN:MAX with 4KiB <= MIN <= MAX <= 1TiB", v);
        return -1;
    }
    d->bench->frag_min = a;
    d->bench->frag_max = b;
    return 0;
}

APPLY(apply_on_oom)
{
    int i = parse_enum(opt, v, err, err_len);
    if (i < 0)
        return -1;
    d->bench->on_oom_shrink = i == 1;
    return 0;
}

/* The shape options (bench's workloads and plan): shape_opts.c checks them;
 * where they apply: option_rules.c. */
APPLY(apply_shape)
{
    gm_shape *s = d->bench ? &d->bench->shape : &d->plan->shape;
    if (opt->kind == GM_OPTARG_ENUM && parse_enum(opt, v, err, err_len) < 0)
        return -1;
    return gm_shape_set(s, opt->name, v, err, err_len);
}

/* ---- stress ---- */

APPLY(apply_checks)
{
    return parse_names(opt, v, &d->stress->checks, err, err_len);
}

APPLY(apply_duration)
{
    char *end;
    double s = strtod(v, &end);
    if (end == v || *end || !(s > 0 && s <= 86400)) {
        snprintf(err, err_len, "--%s '%s': expected seconds above 0, at most 86400", opt->name, v);
        return -1;
    }
    d->stress->duration = s;
    return 0;
}

APPLY(apply_stress_share)
{
    char why[200];
    double *dst = strcmp(opt->name, "fill") == 0 ? &d->stress->fill : &d->stress->throttle;
    if (gm_parse_share(v, dst, why, sizeof why) != 0) {
        snprintf(err, err_len, "--%s: %s", opt->name, why);
        return -1;
    }
    return 0;
}

APPLY(apply_seed)
{
    char why[160];
    if (gm_parse_uint(v, opt->max, &d->stress->seed, why, sizeof why) != 0) {
        snprintf(err, err_len, "--%s '%s': expected a whole number from 0 to %llu", opt->name, v,
                 (unsigned long long)opt->max);
        return -1;
    }
    return 0;
}

/* ---- plot, compare, fleet ---- */

APPLY(apply_format)
{
    int i = parse_enum(opt, v, err, err_len);
    if (i < 0)
        return -1;
    d->report->format = v;
    return 0;
}

APPLY(apply_threshold)
{
    (void)opt;
    if (parse_fraction(v, 1, 10, &d->report->threshold) != 0) {
        snprintf(err, err_len, "--threshold '%s': a percentage above 0, such as 5%%", v);
        return -1;
    }
    return 0;
}

APPLY(apply_alpha)
{
    (void)opt;
    if (parse_fraction(v, 0, 1, &d->report->alpha) != 0) {
        snprintf(err, err_len, "--alpha '%s': a level between 0 and 1, such as 0.05", v);
        return -1;
    }
    return 0;
}

APPLY(apply_report_flag)
{
    (void)v, (void)err, (void)err_len;
    bool *flag = !strcmp(opt->name, "gate") ? &d->report->gate : !strcmp(opt->name, "cards") ? &d->report->cards
                                                                                               : &d->report->points;
    *flag = true;
    return 0;
}

APPLY(apply_outlier_mad)
{
    char *end;
    double k = strtod(v, &end);
    if (end == v || *end || !(k > 0 && k < 1e6)) {
        snprintf(err, err_len, "--%s '%s': expected a number above 0 (e.g. 4)", opt->name, v);
        return -1;
    }
    d->report->outlier_mad = k;
    return 0;
}

/* ---- the table ---- */

#define B GM_CMD_BENCH
#define S GM_CMD_STRESS
#define P GM_CMD_PLAN
#define NUM(lo, hi) .min = (lo), .max = (hi)
#define VALUES(fn) .values = (fn)

/* In the order help lists them. */
const gm_option gm_option_table[] = {
    /* bench */
    {"profile", GM_OPTARG_TEXT, "NAME", B, NULL, "options from share/profiles/NAME.ini (gpumem info lists the "
     "folders searched)", "quick", VALUES(gm_profile_names), .files = GM_FILES_ANY, .flags = GM_OPT_NO_PROFILE,
     .apply = apply_profile},
    {"resume", GM_OPTARG_TEXT, "RUN", B, NULL, "continue the interrupted run in folder RUN with its own options, "
     "from its first unfinished point; only --quiet may be added", NULL, .files = GM_FILES_DIR,
     .flags = GM_OPT_NO_PROFILE, .apply = apply_resume},
    {"backend", GM_OPTARG_ENUM, "B", B | S, NULL, "the backend (auto: a GPU first)", "auto", VALUES(backend_values),
     .apply = apply_backend},
    {"device", GM_OPTARG_TEXT, "N", B, NULL, "device index within the backend (0 to 63); all, or a list (0,2): one "
     "worker per device, at once, each into OUT/device<K>/ (see gpumem fleet)", "the best",
     NUM(0, 63), .apply = apply_bench_device},
    {"device", GM_OPTARG_NUMBER, "N", S, NULL, "device index within the backend", "the best", NUM(0, 63),
     .apply = apply_stress_device},
    {"serial", GM_OPTARG_FLAG, NULL, B, NULL, "with several devices: one after another", NULL, .apply = apply_serial},
    {"suite", GM_OPTARG_LIST, "LIST", B, NULL, "suites to run", "stream", VALUES(suite_values), .apply = apply_suite},
    {"precision", GM_OPTARG_LIST, "LIST", B, NULL, "precisions (every role; int4 only as --weight-precision; "
     "fp8: stream, workloads and oom)", "fp32,fp16,bf16,int8", VALUES(precision_values),
     .apply = apply_precision},
    {"reps", GM_OPTARG_NUMBER, "N", B, NULL, "timed repetitions per point (each verified)", "5", NUM(1, 100000),
     .apply = apply_reps},
    {"rounds", GM_OPTARG_NUMBER, "K", B, NULL, "measure every point in K rounds through the run, each taking a "
     "share of the reps (gpumem compare judges changes against the rounds' spread)", "1", NUM(1, 1000),
     .apply = apply_rounds},
    {"warmup", GM_OPTARG_NUMBER, "N", B, NULL, "untimed repetitions before them", "1", NUM(0, 1000),
     .apply = apply_warmup},
    {"sizes", GM_OPTARG_RANGE, "RANGE", B, "stream", "array sizes: 4MiB:1GiB:x2, 1MiB:8MiB:+1MiB or a,b,c "
     "(each at least 4KiB)", "by device", .apply = apply_sizes},
    {"kernels", GM_OPTARG_LIST, "LIST", B, "stream", "kernels", "all", VALUES(kernel_values), .apply = apply_kernels},
    {"access", GM_OPTARG_ENUM, "A", B, "stream", "access pattern (auto: grid on GPUs, chunked on CPUs)", "auto",
     VALUES(access_values), .apply = apply_access},
    {"workload", GM_OPTARG_LIST, "LIST", B, "workloads, oom", "workloads", "linear", VALUES(workload_values),
     .apply = apply_workloads},
    {"batch", GM_OPTARG_RANGE, "RANGE", B, "workloads, swap", "batch sizes, e.g. 1:64:x2 (1 to 16777216; swap's "
     "offload point: the first)", "workloads: 1,4,16; swap: 1",
     .apply = apply_batch_axis},
    {"seq", GM_OPTARG_RANGE, "RANGE", B, "workloads, oom, swap", "sequence lengths, e.g. 128:4096:x2 (1 to "
     "16777216; swap's offload point: the first)", "workloads: 128,512; oom, swap: 512",
     .apply = apply_seq_axis},
    {"pattern", GM_OPTARG_LIST, "LIST", B, "workloads", "allocation patterns (bench/pattern/pattern.h)", "per-tensor",
     VALUES(pattern_values), .apply = apply_pattern},
    {"on-oom", GM_OPTARG_ENUM, "A", B, "workloads", "on OOM: fail the point, or halve the batch until it fits",
     "fail", VALUES(on_oom_values), .apply = apply_on_oom},
    {"frag-fill", GM_OPTARG_SHARE, "SHARE", B, "pattern fragmented", "share of free memory filled before the "
     "workload", "50%", .apply = apply_share},
    {"frag-free", GM_OPTARG_SHARE, "SHARE", B, "pattern fragmented", "share of the fill freed again (holes)", "50%",
     .apply = apply_share},
    {"frag-sizes", GM_OPTARG_TEXT, "MIN:MAX", B, "pattern fragmented", "sizes of the fill's allocations, "
     "4KiB <= MIN <= MAX <= 1TiB", "64KiB:16MiB", .apply = apply_frag_sizes},
    {"prealloc", GM_OPTARG_SHARE, "SHARE", B, "pattern prealloc", "share of free memory reserved up front", "90%",
     .apply = apply_share},
    /* the workloads' shape: bench and plan */
    {"model", GM_OPTARG_TEXT, "NAME", B, "workloads, oom", "a whole model: a preset of share/models/, a Hugging "
     "Face config.json or a model's folder holding one; the workloads take their shape from it (width, heads, "
     "head width, layers, MLP width, KV heads) and block runs it whole, layer by layer", NULL,
     VALUES(gm_model_preset_names), .files = GM_FILES_ANY, .apply = apply_shape},
    {"mode", GM_OPTARG_LIST, "LIST", B, "workloads, oom", "inference, train, lora, qlora or several: train is "
     "block with a whole --model running whole training steps (forward, loss, backward, AdamW) over gradients, "
     "AdamW states, master weights and activations kept for backward; lora the same step with rank-r adapters "
     "over a frozen base (--lora-rank, --lora-alpha, --lora-targets), qlora over a base in NF4; training modes run "
     "bf16 where --precision is left out; serve is the serving engine (workload and suite serve); other workloads run "
     "inference only",
     "inference", VALUES(mode_values), .apply = apply_modes},
    {"optimizer", GM_OPTARG_ENUM, "O", B, "block --mode train", "the optimizer the device steps", "adamw",
     VALUES(bench_optimizer_values), .apply = apply_shape},
    {"recompute", GM_OPTARG_ENUM, "R", B, "block --mode train, lora, qlora", "what the training step's backward "
     "recomputes instead of keeping: none, selective (the attention's row statistics) or full (every layer but its "
     "input), in train, lora and qlora steps alike (--checkpoint: full, lora and qlora rows unsupported with plan's "
     "bytes)",
     "none", VALUES(recompute_values), .apply = apply_shape},
    {"model", GM_OPTARG_TEXT, "NAME", P, NULL, "a whole model: a preset of share/models/, a Hugging Face "
     "config.json or a model's folder holding one; planned whole without --workload, else the workload takes "
     "its shape from it", NULL, VALUES(gm_model_preset_names), .files = GM_FILES_ANY, .apply = gm_apply_plan_model},
    {"hidden", GM_OPTARG_NUMBER, "N", B | P, "workloads", "model width", "512; plan: 768", .apply = apply_shape},
    {"heads", GM_OPTARG_NUMBER, "N", B | P, "workloads", "attention heads", "8; plan: 12", .apply = apply_shape},
    {"head-dim", GM_OPTARG_NUMBER, "N", B | P, "workloads", "width of a head", "hidden / heads",
     .apply = apply_shape},
    {"layers", GM_OPTARG_NUMBER, "N", B | P, "block, kvcache", "layers", "1", .apply = apply_shape},
    {"out-features", GM_OPTARG_NUMBER, "N", B | P, "linear", "output features", "hidden", .apply = apply_shape},
    {"causal", GM_OPTARG_FLAG, NULL, B | P, "attention", "mask keys after the query", NULL, .apply = apply_shape},
    {"variant", GM_OPTARG_ENUM, "V", B | P, "attention, linear, block", "attention: naive holds the score matrix; "
     "tiled streams keys with an online softmax. linear and a whole model: ours (our kernels), vendor (the vendor "
     "GEMM: cuBLAS, CLBlast), all (side by side); by default linear runs all, a whole model the faster on the device "
     "(the vendor's on a GPU, ours on a CPU device); plan: vendor counts the vendor path's workspaces", "tiled",
     VALUES(variant_values), .apply = apply_shape},
    {"ffn", GM_OPTARG_NUMBER, "N", B | P, "block", "MLP width", "4 x hidden", .apply = apply_shape},
    {"micro-batch", GM_OPTARG_NUMBER, "N", B | P, "block", "rows of the batch live at once", "the batch",
     .apply = apply_shape},
    {"checkpoint", GM_OPTARG_FLAG, NULL, B | P, "block", "keep each layer's input only (recompute activations; "
     "with a whole --model, the full recomputation its lora and qlora rows count)", NULL, .apply = apply_shape},
    {"offload", GM_OPTARG_FLAG, NULL, B | P, "block", "weights in host memory, two layers on the device", NULL,
     .apply = apply_shape},
    {"paged", GM_OPTARG_FLAG, NULL, P, "kvcache", "a paged cache of fixed-size blocks (bench runs the contiguous "
     "and the paged cache, each a variant)", NULL,
     .apply = apply_shape},
    {"block-tokens", GM_OPTARG_NUMBER, "N", B | P, "kvcache, serve", "tokens per block of the paged cache", "16",
     .apply = apply_shape},
    /* the serving engine (bench/model/serve_plan.h: vLLM's KV budget) */
    {"gpu-memory-utilization", GM_OPTARG_SHARE, "SHARE", B | P, "serve", "share of the device's memory the engine "
     "takes", "0.9", .apply = apply_shape},
    {"max-batched-tokens", GM_OPTARG_NUMBER, "N", B | P, "serve", "rows a step runs (decode tokens, prefill chunks)",
     "8192 from 70GiB, else 2048", .apply = apply_shape},
    {"max-seqs", GM_OPTARG_NUMBER, "N", B | P, "serve", "sequences at once", "1024 from 70GiB, else 256",
     .apply = apply_shape},
    {"max-model-len", GM_OPTARG_NUMBER, "N", B | P, "serve", "tokens a request may hold", "the context",
     .apply = apply_shape},
    {"kv-cache-memory", GM_OPTARG_SIZE, "SIZE", P, "serve", "the KV cache's bytes as given", NULL,
     .apply = apply_shape},
    {"serve-reserve", GM_OPTARG_SIZE, "SIZE", B | P, "serve", "memory besides weights, activations and KV cache "
     "(workspaces, CUDA graphs)", "0", .apply = apply_shape},
    {"output-tokens", GM_OPTARG_NUMBER, "N", B, "serve", "of a request's --seq tokens, those decoded", "seq / 8",
     .apply = apply_shape},
    {"prefill-requests", GM_OPTARG_NUMBER, "N", B, "serve", "requests prefilled; the others copy the first's blocks",
     "all", .apply = apply_shape},
    {"preempt", GM_OPTARG_LIST, "LIST", B, "serve", "how a full KV pool makes room: swap (blocks to pinned host "
     "memory and back), recompute (prefill again)", "swap,recompute", VALUES(preempt_values), .apply = apply_shape},
    /* a precision per tensor role, over --precision (bench/model/precision_roles.h) */
    {"weight-precision", GM_OPTARG_ENUM, "P", B | P, "workloads, oom, plan", "the weights' precision on every "
     "point (int4: linear and whole-model plans)", "--precision", VALUES(precision_values),
     .apply = apply_role_precision},
    {"kv-precision", GM_OPTARG_ENUM, "P", B | P, "workloads, oom, plan", "the KV cache's precision on every point",
     "--precision", VALUES(precision_values), .apply = apply_role_precision},
    {"activation-precision", GM_OPTARG_ENUM, "P", B | P, "workloads, oom, plan", "the activations' precision on "
     "every point", "--precision", VALUES(precision_values), .apply = apply_role_precision},
    {"group-size", GM_OPTARG_NUMBER, "N", B | P, "int4 weights", "weights per fp16 scale along the input "
     "dimension", "128", NUM(1, 1u << 20), .apply = apply_group_size},
    {"int4-lm-head", GM_OPTARG_FLAG, NULL, B | P, "int4 weights, whole model", "the untied LM head in int4 too "
     "(else in the activations' precision, as GPTQ and AWQ checkpoints keep it)", NULL, .apply = apply_int4_lm_head},
    /* bench: swap */
    {"blocks", GM_OPTARG_RANGE, "RANGE", B, "swap", "transfer block sizes, e.g. 4KiB:1GiB:x4",
     "4KiB,64KiB,1MiB,16MiB,256MiB,1GiB",
     .apply = apply_blocks},
    {"kv-block-sizes", GM_OPTARG_RANGE, "RANGE", B, "swap", "KV-cache block sizes, e.g. 64KiB,1MiB",
     "64KiB,256KiB,1MiB",
     .apply = apply_kv_block_sizes},
    {"swap-batch", GM_OPTARG_RANGE, "RANGE", B, "swap", "KV blocks per swap-out and swap-in, e.g. 1:64:x4 "
     "(1 to 65536)", "1,8,32", NUM(1, 65536), .apply = apply_swap_batch},
    {"swap-pressure", GM_OPTARG_SHARE, "SHARE", B, "swap", "share of free memory other allocations hold meanwhile "
     "(below 100%)", "50%", .apply = apply_swap_pressure},
    {"unified-sizes", GM_OPTARG_RANGE, "RANGE", B, "swap", "managed-memory working sets, e.g. 16MiB,64MiB",
     "16MiB,64MiB",
     .apply = apply_unified_sizes},
    {"allow-oversubscribe", GM_OPTARG_FLAG, NULL, B, NULL, "managed memory past free memory: the swap suite's "
     "oversubscription sweep (50-150%) and the managed pattern", NULL, .apply = apply_allow_oversubscribe},
    /* bench: oom */
    {"probe-timeout", GM_OPTARG_NUMBER, "S", B, "oom", "seconds a probe may run before its worker is killed "
     "(a `timeout` row)", "600", NUM(1, 86400), .apply = apply_probe_timeout},
    {"search", GM_OPTARG_ENUM, "S", B, "oom", "how the largest batch is found: model (probe the memory model's "
     "guess and the next batch first, gallop out, then bisect) or bisect (double from 1, then bisect)", "model",
     VALUES(search_values), .apply = apply_search},
    {"oom-parts", GM_OPTARG_LIST, "LIST", B, "oom", "what is measured: alloc (the largest allocation and total), "
     "fragmentation, allocator (latency), batch (each workload's largest batch)", "all", VALUES(oom_part_values),
     .apply = apply_oom_parts},
    /* stress */
    {"checks", GM_OPTARG_LIST, "LIST", S, NULL, "the checks to run", "all", VALUES(check_values),
     .apply = apply_checks},
    {"duration", GM_OPTARG_REAL, "SECONDS", S, NULL, "churn and soak run this long (at most 86400)", "10",
     .apply = apply_duration},
    {"fill", GM_OPTARG_SHARE, "SHARE", S, NULL, "of free memory memtest and soak take", "90%",
     .apply = apply_stress_share},
    {"throttle", GM_OPTARG_SHARE, "SHARE", S, NULL, "soak fails when throughput falls by more", "50%",
     .apply = apply_stress_share},
    {"seed", GM_OPTARG_NUMBER, "N", S, NULL, "of every random choice", "1", NUM(0, UINT32_MAX), .apply = apply_seed},
    /* bench and stress */
    {"mem-limit", GM_OPTARG_SIZE, "SIZE", B | S, NULL, "cap on device memory the run may hold, at least 1MiB",
     "CPU devices: a quarter of available host memory", .apply = apply_mem_limit},
    {"hang-timeout", GM_OPTARG_NUMBER, "S", B | S, NULL, "seconds one device call may take before the device "
     "counts as hung: the run stops, exit status 3 (0: off)", STR(GM_HANG_TIMEOUT_DEFAULT), NUM(0, 86400),
     .apply = apply_hang_timeout},
    {"out", GM_OPTARG_TEXT, "DIR", B | S, NULL, "the run folder", "results/<run-id>", .files = GM_FILES_DIR,
     .flags = GM_OPT_NO_PROFILE, .apply = apply_out},
    {"quiet", GM_OPTARG_FLAG, NULL, B, NULL, "no progress or summary", NULL, .apply = apply_quiet},
    /* plan */
    {"workload", GM_OPTARG_ENUM, "W", P, NULL, "the workload (or --model without it: the whole model)", NULL,
     VALUES(workload_values), .apply = gm_apply_plan_workload},
    {"batch", GM_OPTARG_NUMBER, "N", P, NULL, "batch size", "1", NUM(1, 1u << 24), .apply = gm_apply_plan_number},
    {"seq", GM_OPTARG_NUMBER, "N", P, NULL, "sequence length", "512", NUM(1, 1u << 24), .apply = gm_apply_plan_number},
    {"precision", GM_OPTARG_LIST, "LIST", P, NULL, "precisions, one plan each", "fp32", VALUES(precision_values),
     .apply = apply_precision},
    /* plan --model without --workload: the whole model (bench/model/mem_plan.h) */
    {"mode", GM_OPTARG_ENUM, "M", P, "model", "inference (weights, KV cache, live layer, logits), train (full "
     "fine-tuning: gradients, optimizer states, master weights, activations kept for backward), lora (rank-r "
     "adapters over a frozen base in --precision), qlora (over a base in NF4: 4-bit codes, an 8-bit absmax a 64 "
     "weights, an fp32 scale a 256 of those) or serve (vLLM's KV budget on a card of --fit bytes)", "inference",
     VALUES(mode_values), .apply = gm_apply_plan_choice},
    {"logits", GM_OPTARG_ENUM, "L", P, "model", "inference: logits of every position or of the last", "last",
     VALUES(logits_values), .apply = gm_apply_plan_choice},
    {"optimizer", GM_OPTARG_ENUM, "O", P, "model", "train: the optimizer whose states are counted", "adamw",
     VALUES(optimizer_values), .apply = gm_apply_plan_choice},
    {"recompute", GM_OPTARG_ENUM, "R", P, "model", "train: activations recomputed in backward instead of kept",
     "none", VALUES(recompute_values), .apply = gm_apply_plan_choice},
    {"gpus", GM_OPTARG_NUMBER, "N", P, "model", "GPUs the model is spread over (bytes per GPU)", "1",
     NUM(1, 1u << 20), .apply = gm_apply_plan_gpus},
    {"tensor-parallel", GM_OPTARG_NUMBER, "T", P, "model", "tensor-parallel degree (divides --gpus)", "1",
     NUM(1, 4096), .apply = gm_apply_plan_gpus},
    {"zero", GM_OPTARG_ENUM, "Z", P, "model", "ZeRO stage: 1 shards optimizer states and master weights over the "
     "data-parallel GPUs, 2 also gradients, 3 also weights", "0", VALUES(zero_values), .apply = gm_apply_plan_choice},
    {"format", GM_OPTARG_ENUM, "F", P, "model", "output on stdout", "text", VALUES(plan_format_values),
     .apply = gm_apply_plan_choice},
    {"fit", GM_OPTARG_TEXT, "SIZE|RUN", P, "model", "the largest batch at --seq and the largest sequence length at "
     "--batch that fit in SIZE (24GiB, 78.7GiB), in the usable memory a run folder measured (RUN), or in the best "
     "device's free memory (device)", NULL,
     .apply = gm_apply_plan_fit},
    {"lora-rank", GM_OPTARG_NUMBER, "R", B | P, "model lora, qlora", "the adapters' rank (at most each adapted "
     "projection's smaller width)", "16", NUM(1, 1u << 20), .apply = gm_apply_plan_tune},
    {"lora-alpha", GM_OPTARG_REAL, "A", B | P, "model lora, qlora", "adapters add (alpha / rank) x A B (no bytes: "
     "the step's scale)", "2 x rank", .apply = gm_apply_plan_tune},
    {"lora-targets", GM_OPTARG_LIST, "LIST", B | P, "model lora, qlora", "the projections with an adapter (all "
     "linear ones, as QLoRA and PEFT's all-linear; q,v: LoRA's paper)", "all the model has",
     VALUES(gm_lora_target_values), .apply = gm_apply_plan_tune},
    {"adapter-precision", GM_OPTARG_ENUM, "P", P, "model lora, qlora", "the adapters' weights and gradients "
     "(16-bit ones with fp32 master copies)", "fp32", VALUES(gm_adapter_precision_values),
     .apply = gm_apply_plan_tune},
    {"zero-offload", GM_OPTARG_ENUM, "O", B | P, "model training", "in host memory (ZeRO-Offload): optimizer (fp32 "
     "master weights, optimizer states, gradients) or params (those and the weights: ZeRO-3); bench: block's "
     "training step keeps them in pinned host memory and steps AdamW on the host (optimizer; params is an "
     "unsupported row)", "none", VALUES(gm_offload_values), .apply = gm_apply_plan_tune},
    {"host-memory", GM_OPTARG_SIZE, "SIZE", B | P, "model --zero-offload", "the host memory offloaded states must "
     "fit in", "this host's", .apply = gm_apply_plan_tune},
    {"saved", GM_OPTARG_ENUM, "S", P, "model training", "the tensors backward keeps: gpumem's step's, or plain "
     "PyTorch's eager autograd's (RMSNorm's fp32 upcasts, silu(gate), the unfused loss's 3 fp32 logit tensors)",
     "gpumem", VALUES(gm_saved_values), .apply = gm_apply_plan_tune},
    /* plot, compare, fleet */
    {"out", GM_OPTARG_TEXT, "DIR", GM_CMD_PLOT, NULL, "render into DIR instead of RUN/plots", NULL,
     .files = GM_FILES_DIR, .apply = apply_out},
    {"threshold", GM_OPTARG_SHARE, "PCT", GM_CMD_COMPARE, NULL, "a change counts only when larger than this, in "
     "the worse direction (above 0, below 1000%)", "5%", .apply = apply_threshold},
    {"alpha", GM_OPTARG_REAL, "A", GM_CMD_COMPARE, NULL, "significance level after Holm's correction (between 0 "
     "and 1)", "0.05", .apply = apply_alpha},
    {"gate", GM_OPTARG_FLAG, NULL, GM_CMD_COMPARE, NULL, "exit 1 when any run regressed against BASE, listing the "
     "regressions; tests of one run a side without rounds are not gated (none gated: exit 2)", NULL,
     .apply = apply_report_flag},
    {"cards", GM_OPTARG_FLAG, NULL, GM_CMD_COMPARE, NULL, "lead with the card sheet, as for runs of different "
     "devices", NULL, .apply = apply_report_flag},
    {"points", GM_OPTARG_FLAG, NULL, GM_CMD_COMPARE | GM_CMD_FLEET, NULL, "after a card sheet, the point-by-point "
     "table too (written files always have it)", NULL, .apply = apply_report_flag},
    {"outlier-mad", GM_OPTARG_REAL, "K", GM_CMD_FLEET, NULL, "flag a GPU more than K scales from the median in the "
     "metric's worse direction (scale: the larger of 1.4826 x MAD across GPUs, the repetitions' typical stdev, "
     "and 1% of the median)", "4", .apply = apply_outlier_mad},
    {"format", GM_OPTARG_ENUM, "F", GM_CMD_COMPARE | GM_CMD_FLEET, NULL, "output on stdout", "table",
     VALUES(format_values), .apply = apply_format},
    {"out", GM_OPTARG_TEXT, "DIR", GM_CMD_COMPARE, NULL, "also write DIR/compare.md, DIR/compare.csv and overlay "
     "plots (PNG, SVG)", NULL, .files = GM_FILES_DIR, .apply = apply_out},
    {"out", GM_OPTARG_TEXT, "DIR", GM_CMD_FLEET, NULL, "also write DIR/fleet.csv and DIR/fleet.md", NULL,
     .files = GM_FILES_DIR, .apply = apply_out},
};
const size_t gm_option_count = sizeof gm_option_table / sizeof gm_option_table[0];
