#include "bench/options.h"

#include "lib/datafile.h"
#include "lib/precision.h"
#include "bench/pattern.h"
#include "bench/shape_opts.h"
#include "lib/units.h"
#include "backend/watchdog.h"

#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const gm_stream_kernel_names[GM_STREAM_KERNEL_COUNT] = {
    "read", "write", "copy", "scale", "add", "triad", "dot",
};

static const char *const known_suites[] = {"stream", "workloads", "swap", "oom", NULL};

void gm_opts_init(gm_bench_opts *o)
{
    memset(o, 0, sizeof *o);
    strcpy(o->backend, "auto");
    o->device = -1;
    strcpy(o->suites[0], "stream");
    o->n_suites = 1;
    o->precisions = (1u << GM_PREC_COUNT) - 1;
    o->reps = 5;
    o->warmup = 1;
    o->kernels = (1u << GM_STREAM_KERNEL_COUNT) - 1;
    o->access = GM_ACCESS_AUTO;
    o->workloads = 1u;
    o->patterns = 1u;
    o->probe_timeout = 600;
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

/* Sets *vals from a range (sizes or plain numbers) whose every value
 * lies in [min, max]; `bounds` says so in the error. */
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

static int set_sizes(const char *opt, const char *value, uint64_t **vals, size_t *n, char *err, size_t err_len)
{
    return set_range(opt, value, 1, 4096, UINT64_MAX, "every size must be at least 4KiB", vals, n, err, err_len);
}

static int set_axis(const char *opt, const char *value, uint64_t **vals, size_t *n, char *err, size_t err_len)
{
    return set_range(opt, value, 0, 1, 1u << 24, "every value must be from 1 to 16777216", vals, n, err, err_len);
}

/* Parses a comma-separated list of names from table into a bit mask. */
static int parse_names(const char *opt, const char *value, const char *const *table, int n,
                       unsigned *mask, char *err, size_t err_len)
{
    char buf[512], allowed[256] = "";
    for (int i = 0; i < n; i++)
        snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s", i ? "," : "", table[i]);
    if (strlen(value) >= sizeof buf || !*value) {
        snprintf(err, err_len, "--%s '%.100s': expected a list of %s", opt, value, allowed);
        return -1;
    }
    strcpy(buf, value);
    unsigned m = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(tok, table[i]) == 0)
                found = i;
        if (found < 0) {
            snprintf(err, err_len, "--%s: unknown value '%s' (allowed: %s)", opt, tok, allowed);
            return -1;
        }
        m |= 1u << found;
    }
    if (!m) {                     /* only commas: no name at all */
        snprintf(err, err_len, "--%s '%.100s': expected a list of %s", opt, value, allowed);
        return -1;
    }
    *mask = m;
    return 0;
}

static int set_uint(const char *opt, const char *value, unsigned lo, unsigned hi, unsigned *out,
                    char *err, size_t err_len)
{
    uint64_t v;
    char why[160];
    if (gm_parse_uint(value, hi, &v, why, sizeof why) != 0 || v < lo) {
        snprintf(err, err_len, "--%s '%s': expected a whole number from %u to %u", opt, value, lo, hi);
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

static const struct { const char *name; bool value; } option_table[] = {
    {"backend", true}, {"device", true},   {"suite", true},     {"precision", true},
    {"reps", true},    {"warmup", true},   {"out", true},       {"profile", true},
    {"sizes", true},   {"kernels", true},  {"mem-limit", true}, {"access", true},
    {"quiet", false},  {"workload", true}, {"batch", true},     {"seq", true},
    {"blocks", true},  {"pattern", true},  {"probe-timeout", true}, {"hang-timeout", true},
    {"frag-fill", true}, {"frag-free", true}, {"frag-sizes", true}, {"prealloc", true},
    {"allow-oversubscribe", false}, {"on-oom", true}, {"kv-block-sizes", true}, {"swap-batch", true},
    {"swap-pressure", true}, {"unified-sizes", true}, {"serial", false},
};

int gm_opts_takes_value(const char *name)
{
    for (size_t i = 0; i < sizeof option_table / sizeof option_table[0]; i++)
        if (strcmp(option_table[i].name, name) == 0)
            return option_table[i].value;
    return gm_shape_takes_value(name);
}

int gm_opts_set(gm_bench_opts *o, const char *name, const char *value, char *err, size_t err_len)
{
    char why[200];
    if (strcmp(name, "backend") == 0) {
        if (strcmp(value, "auto") && strcmp(value, "cuda") && strcmp(value, "opencl")) {
            snprintf(err, err_len, "--backend: unknown backend '%s' (allowed: auto, cuda, opencl)", value);
            return -1;
        }
        strcpy(o->backend, value);
    } else if (strcmp(name, "device") == 0) {
        unsigned d;
        o->device_list[0] = '\0';
        if (strcmp(value, "all") == 0 || strchr(value, ','))
            return copy_str(name, value, o->device_list, sizeof o->device_list, err, err_len);
        if (gm_parse_uint(value, 63, &(uint64_t){0}, why, sizeof why) != 0) {
            snprintf(err, err_len, "--device '%s': expected a device index (0 to 63), a list (0,2) or all", value);
            return -1;
        }
        if (set_uint(name, value, 0, 63, &d, err, err_len))
            return -1;
        o->device = (int)d;
    } else if (strcmp(name, "serial") == 0) {
        o->serial = true;
    } else if (strcmp(name, "suite") == 0) {
        unsigned mask;
        int n = 0;
        while (known_suites[n])
            n++;
        if (parse_names(name, value, known_suites, n, &mask, err, err_len))
            return -1;
        o->n_suites = 0;
        for (int i = 0; i < n; i++)
            if (mask & (1u << i))
                strcpy(o->suites[o->n_suites++], known_suites[i]);
    } else if (strcmp(name, "precision") == 0) {
        const char *names[GM_PREC_COUNT];
        for (int i = 0; i < GM_PREC_COUNT; i++)
            names[i] = gm_precision_name((gm_precision)i);
        return parse_names(name, value, names, GM_PREC_COUNT, &o->precisions, err, err_len);
    } else if (strcmp(name, "reps") == 0) {
        return set_uint(name, value, 1, 100000, &o->reps, err, err_len);
    } else if (strcmp(name, "warmup") == 0) {
        return set_uint(name, value, 0, 1000, &o->warmup, err, err_len);
    } else if (strcmp(name, "out") == 0) {
        return copy_str(name, value, o->out, sizeof o->out, err, err_len);
    } else if (strcmp(name, "profile") == 0) {
        return copy_str(name, value, o->profile, sizeof o->profile, err, err_len);
    } else if (strcmp(name, "sizes") == 0) {
        return set_sizes(name, value, &o->sizes, &o->n_sizes, err, err_len);
    } else if (strcmp(name, "blocks") == 0) {
        return set_sizes(name, value, &o->blocks, &o->n_blocks, err, err_len);
    } else if (strcmp(name, "kv-block-sizes") == 0) {
        return set_sizes(name, value, &o->kv_block_sizes, &o->n_kv_block_sizes, err, err_len);
    } else if (strcmp(name, "unified-sizes") == 0) {
        return set_sizes(name, value, &o->unified_sizes, &o->n_unified_sizes, err, err_len);
    } else if (strcmp(name, "swap-batch") == 0) {
        return set_range(name, value, 0, 1, 65536, "every value must be from 1 to 65536", &o->swap_batches,
                         &o->n_swap_batches, err, err_len);
    } else if (strcmp(name, "swap-pressure") == 0) {
        if (gm_parse_share(value, &o->swap_pressure, why, sizeof why) != 0 || o->swap_pressure >= 1.0) {
            snprintf(err, err_len, "--swap-pressure '%s': expected a share below 100%% (e.g. 50%%)", value);
            return -1;
        }
    } else if (strcmp(name, "kernels") == 0) {
        return parse_names(name, value, gm_stream_kernel_names, GM_STREAM_KERNEL_COUNT, &o->kernels,
                           err, err_len);
    } else if (strcmp(name, "mem-limit") == 0) {
        if (gm_parse_size(value, &o->mem_limit, why, sizeof why) != 0 || o->mem_limit < (1u << 20)) {
            snprintf(err, err_len, "--mem-limit '%s': expected a size of at least 1MiB (e.g. 2GiB)", value);
            return -1;
        }
        o->mem_limit_set = true;
    } else if (strcmp(name, "access") == 0) {
        static const char *const names[] = {"auto", "grid", "chunked", "both"};
        unsigned mask;
        if (parse_names(name, value, names, 4, &mask, err, err_len))
            return -1;
        if (mask & (mask - 1)) {
            snprintf(err, err_len, "--access '%s': give one of auto, grid, chunked, both", value);
            return -1;
        }
        o->access = (gm_access)__builtin_ctz(mask);
    } else if (strcmp(name, "quiet") == 0) {
        o->quiet = true;
    } else if (strcmp(name, "workload") == 0) {
        return parse_names(name, value, gm_runnable_workloads, GM_RUNNABLE_WORKLOAD_COUNT, &o->workloads, err,
                           err_len);
    } else if (strcmp(name, "pattern") == 0) {
        return parse_names(name, value, gm_pattern_names, GM_PATTERN_COUNT, &o->patterns, err, err_len);
    } else if (strcmp(name, "frag-fill") == 0 || strcmp(name, "frag-free") == 0 || strcmp(name, "prealloc") == 0) {
        double *dst = strcmp(name, "frag-fill") == 0   ? &o->frag_fill
                      : strcmp(name, "frag-free") == 0 ? &o->frag_free
                                                       : &o->prealloc_share;
        if (gm_parse_share(value, dst, why, sizeof why) != 0) {
            snprintf(err, err_len, "--%s: %s", name, why);
            return -1;
        }
    } else if (strcmp(name, "frag-sizes") == 0) {
        const char *colon = strchr(value, ':');
        char lo[64];
        if (!colon || (size_t)(colon - value) >= sizeof lo) {
            snprintf(err, err_len, "--frag-sizes '%s': expected MIN:MAX (e.g. 64KiB:16MiB)", value);
            return -1;
        }
        memcpy(lo, value, (size_t)(colon - value));
        lo[colon - value] = '\0';
        uint64_t a, b;
        if (gm_parse_size(lo, &a, why, sizeof why) || gm_parse_size(colon + 1, &b, why, sizeof why) || a < 4096
            || b < a || b > ((uint64_t)1 << 40)) {
            snprintf(err, err_len, "--frag-sizes '%s': expected MIN:MAX with 4KiB <= MIN <= MAX <= 1TiB", value);
            return -1;
        }
        o->frag_min = a;
        o->frag_max = b;
    } else if (strcmp(name, "allow-oversubscribe") == 0) {
        o->allow_oversubscribe = true;
    } else if (strcmp(name, "on-oom") == 0) {
        if (strcmp(value, "fail") && strcmp(value, "shrink")) {
            snprintf(err, err_len, "--on-oom '%s': expected fail or shrink", value);
            return -1;
        }
        o->on_oom_shrink = strcmp(value, "shrink") == 0;
    } else if (strcmp(name, "probe-timeout") == 0) {
        return set_uint(name, value, 1, 86400, &o->probe_timeout, err, err_len);
    } else if (strcmp(name, "hang-timeout") == 0) {
        return set_uint(name, value, 0, 86400, &o->hang_timeout, err, err_len);
    } else if (strcmp(name, "batch") == 0) {
        return set_axis(name, value, &o->batches, &o->n_batches, err, err_len);
    } else if (strcmp(name, "seq") == 0) {
        return set_axis(name, value, &o->seqs, &o->n_seqs, err, err_len);
    } else {
        int rc = gm_shape_set(&o->shape, name, value, err, err_len);
        if (rc == 1)
            snprintf(err, err_len, "unknown option '--%s' (see gpumem bench --help)", name);
        return rc;
    }
    return 0;
}

typedef struct {
    gm_bench_opts *o;
    gm_bench_opts *scratch;   /* the first pass checks other sections' entries here */
    const char *apply;  /* the section this pass applies */
    char why[400];     /* the first entry's failure; its line comes from ini_parse */
} profile_ctx;

bool gm_is_suite_name(const char *name)
{
    for (int i = 0; known_suites[i]; i++)
        if (strcmp(known_suites[i], name) == 0)
            return true;
    return false;
}

/* Applies one `name = value`; returns 0 to make ini_parse report the line. */
static int on_ini_entry(void *user, const char *section, const char *name, const char *value)
{
    profile_ctx *c = user;
    if (c->why[0])
        return 0;
    if (strcmp(section, "bench") != 0 && !gm_is_suite_name(section))
        snprintf(c->why, sizeof c->why, "unknown section [%s] (profiles have [bench] and one per suite)", section);
    else if (strcmp(name, "profile") == 0 || strcmp(name, "out") == 0
             || (strcmp(name, "suite") == 0 && strcmp(section, "bench") != 0))
        snprintf(c->why, sizeof c->why, "'%s' cannot be set in a profile%s", name,
                 strcmp(name, "suite") == 0 ? " section of a suite" : "");
    else {
        /* The section this pass applies goes into o; the first pass checks
         * every other section's entries too, so that a bad one fails now. */
        gm_bench_opts *into = strcmp(section, c->apply) == 0 ? c->o : c->scratch;
        if (into && gm_opts_set(into, name, value, c->why, sizeof c->why) != 0 && !c->why[0])
            snprintf(c->why, sizeof c->why, "bad entry '%s'", name);
    }
    return c->why[0] ? 0 : 1;
}

static bool find_profile(const char *name, char *path, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(path, len, "%s", name);
        return access(path, R_OK) == 0;
    }
    const char *env = getenv("GPUMEM_PROFILE_DIR");
    if (env && (size_t)snprintf(path, len, "%s/%s.ini", env, name) < len && access(path, R_OK) == 0)
        return true;
    char rel[300];
    snprintf(rel, sizeof rel, "profiles/%s.ini", name);
    return gm_find_data_file(rel, path, len);
}

int gm_profile_load(gm_bench_opts *o, const char *name, const char *suite, char *err, size_t err_len)
{
    char path[4200];
    if (!find_profile(name, path, sizeof path)) {
        snprintf(err, err_len, "--profile: no profile '%s' (looked for profiles/%s.ini in the data folders: gpumem info lists them)", name, name);
        return -1;
    }
    gm_bench_opts scratch;
    gm_opts_init(&scratch);
    profile_ctx c = {o, &scratch, "bench", ""};
    int rc = ini_parse(path, on_ini_entry, &c);
    gm_opts_release(&scratch);
    if (rc == 0 && suite) {
        c.apply = suite;
        c.scratch = NULL;
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
