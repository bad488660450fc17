/*
 * Options of `gpumem bench`. Every option can be given on the command line
 * (--name value) or as `name = value` in a profile file (share/profiles/);
 * the command line wins. gm_opts_set is the one place that validates them.
 */
#ifndef GM_OPTIONS_H
#define GM_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/model/workload.h"

#define GM_MAX_SUITES 8

typedef enum { GM_ACCESS_AUTO, GM_ACCESS_GRID, GM_ACCESS_CHUNKED, GM_ACCESS_BOTH } gm_access;

typedef struct {
    char backend[16];          /* auto | cuda | opencl */
    int device;                /* -1: the best device of the backend */
    char device_list[256];     /* --device all or a list (0,2,3): one worker
                                * per device (bench_devices.c); "" for one */
    bool serial;               /* with a device list: one device at a time */
    char suites[GM_MAX_SUITES][16];
    int n_suites;
    unsigned precisions;       /* bit (1 << gm_precision) per precision */
    unsigned reps, warmup;
    unsigned rounds;           /* --rounds: rounds the reps are spread over (bench/rounds.h) */
    char out[4096];            /* empty: results/<run-id> */
    char profile[256];
    char profile_file[4200];   /* the profile's file as found (gm_profile_load) */
    bool profile_names_suite;  /* the profile lists the suite loaded for in [bench]'s
                                * suite, or has a section of it */
    uint64_t *sizes;           /* stream array sizes in bytes; NULL: by device */
    size_t n_sizes;
    unsigned kernels;          /* stream kernels, bit per gm_stream_kernel */
    uint64_t mem_limit;        /* 0: the default for the device */
    bool mem_limit_set;
    gm_access access;
    bool quiet;
    /* The workloads suite: which workloads, the batch and sequence axes,
     * and the model shape (hidden, heads, ...) shared by every point. */
    unsigned workloads;        /* bit per gm_runnable_workloads entry */
    unsigned patterns;         /* bit per allocation pattern (bench/pattern/pattern.h) */
    uint64_t *batches, *seqs;
    size_t n_batches, n_seqs;
    unsigned modes;            /* bit per gm_plan_mode (--mode): the suites run
                                * each point in every mode given */
    gm_shape shape;            /* its train flag is set per point, by the mode */
    /* The command line shapes the workloads itself (--hidden, --heads,
     * --head-dim, --layers or --ffn, no --model): the profile's `model`
     * entries are not applied (gm_profile_load). */
    bool profile_model_off;
    /* The oom suite: seconds a probe may take before its worker is killed;
     * the largest batch by doubling and bisection alone (--search bisect)
     * instead of from the memory model's guess. */
    unsigned probe_timeout;
    bool search_bisect;
    unsigned oom_parts;        /* what the oom suite measures: bit per gm_oom_part */
    /* Seconds one device call may take before the device counts as hung
     * (watchdog.h); 0: never. */
    unsigned hang_timeout;
    /* Allocation patterns (bench/pattern/pattern.h): fragmented fills frag_fill of
     * free memory with sizes from frag_min to frag_max and frees frag_free
     * of them; prealloc reserves prealloc_share of free memory; managed
     * memory past free memory needs allow_oversubscribe. */
    double frag_fill, frag_free, prealloc_share;
    uint64_t frag_min, frag_max;
    bool allow_oversubscribe;
    /* The workloads suite: on OOM, halve the batch until it fits. */
    bool on_oom_shrink;
    /* The swap suite: transfer block sizes in bytes (NULL: 4KiB to 64MiB);
     * KV-cache block sizes and blocks per swap (NULL: defaults), the share
     * of free memory other allocations hold meanwhile; unified-memory
     * working sets (NULL: defaults). */
    uint64_t *blocks;
    size_t n_blocks;
    uint64_t *kv_block_sizes, *swap_batches, *unified_sizes;
    size_t n_kv_block_sizes, n_swap_batches, n_unified_sizes;
    double swap_pressure;
} gm_bench_opts;

/* Refuses (-1 with err) precisions per role that no workload of the
 * options' suite runs: int4 weights or an fp8 KV cache where a workload
 * keeps neither, an int4 LM head without a whole model. */
int gm_roles_check_opts(const gm_bench_opts *o, const char *suite, char *err, size_t err_len);

/* Defaults before any profile or option is applied. */
void gm_opts_init(gm_bench_opts *o);
void gm_opts_release(gm_bench_opts *o);

/* Applies one option by its long name. Returns 0, or -1 with a message in
 * err naming the option, the value and what is allowed; 1 if the name is
 * not an option (err says so). */
int gm_opts_set(gm_bench_opts *o, const char *name, const char *value, char *err, size_t err_len);

/* Does option `name` take a value? -1 if there is no such option. */
int gm_opts_takes_value(const char *name);

/* Loads profile `name` (a path, or a name looked up in $GPUMEM_PROFILE_DIR,
 * and the data folders of lib/datafile.h) into o: its [bench]
 * section, then the section named `suite` (e.g. [oom]: options for that
 * suite alone) when suite is not NULL. `suite` may be SUITE.cpu or
 * SUITE.gpu: then [SUITE] and after it [SUITE.cpu] (CPU devices) or
 * [SUITE.gpu] (every other device) apply. Sections other than [bench] must
 * name a suite, alone or so typed. Sets o->profile_file, and
 * o->profile_names_suite when the profile was written for `suite` (it
 * names it in [bench]'s suite list or has an entry in one of its
 * sections); a profile of another version than the binary (a carried
 * binary reading another tree's share/) shows as one that does not.
 * Returns 0, or -1 with "FILE:LINE: reason" in err. */
int gm_profile_load(gm_bench_opts *o, const char *name, const char *suite, char *err, size_t err_len);

/* Is `name` a suite (a profile section may be named after it)? */
bool gm_is_suite_name(const char *name);

/* What the oom suite measures (--oom-parts), in bit order; names in
 * gm_oom_part_names (bench/oom/oom.c). */
typedef enum {
    GM_OOM_ALLOC,          /* the largest single allocation and the largest total */
    GM_OOM_FRAGMENTATION,  /* the largest free block after fragmenting fills */
    GM_OOM_ALLOCATOR,      /* allocation and free latency by fill level */
    GM_OOM_BATCH,          /* each workload's largest batch */
    GM_OOM_PART_COUNT
} gm_oom_part;
extern const char *const gm_oom_part_names[];

/* Names of the stream kernels, in gm_stream_kernel order, and parsing. */
extern const char *const gm_stream_kernel_names[];
#define GM_STREAM_KERNEL_COUNT 7

#endif
