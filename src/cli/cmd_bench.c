/* gpumem bench: options, device, run folder, suites, summary. */
#include "bench/bench.h"
#include "cli/bench_devices.h"
#include "cli/bench_run.h"
#include "cli/commands.h"
#include "run/journal.h"
#include "run/session.h"
#include "device/memtrace.h"
#include "run/summary.h"
#include "lib/units.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpumem bench [OPTIONS]\n"
            "\n"
            "  --profile NAME      options from share/profiles/NAME.ini (default: quick)\n"
            "  --backend B         auto | cuda | opencl (default: auto, a GPU first)\n"
            "  --device N          device index within the backend (default: the best);\n"
            "                      all, or a list (0,2): one worker per device, at once,\n"
            "                      each into OUT/device<K>/ (see gpumem fleet)\n"
            "  --serial            with several devices: one after another\n"
            "  --suite LIST        suites to run: stream,workloads,swap,oom\n"
            "  --precision LIST    fp32,fp16,bf16,int8\n"
            "  --reps N            timed repetitions per point (each verified)\n"
            "  --warmup N          untimed repetitions before them\n"
            "  --sizes RANGE       stream array sizes: 4MiB:1GiB:x2, 1MiB:8MiB:+1MiB or a,b,c\n"
            "  --kernels LIST      read,write,copy,scale,add,triad,dot\n"
            "  --access A          auto | grid | chunked | both (auto: grid on GPUs, chunked on CPUs)\n"
            "  --workload LIST     workloads and oom suites: linear,attention,kvcache\n"
            "  --batch RANGE       workloads: batch sizes, e.g. 1:64:x2\n"
            "  --seq RANGE         workloads: sequence lengths, e.g. 128:4096:x2\n"
            "  --model NAME        workloads: a shape from share/models.ini\n"
            "  --hidden N --heads N --head-dim N --out-features N --layers N\n"
            "                      workloads: the model shape\n"
            "  --causal            attention: mask keys after the query\n"
            "  --block-tokens N    kvcache: tokens per block of the paged cache\n"
            "  --pattern LIST      workloads: allocation patterns, per-tensor,monolithic\n"
            "  --blocks RANGE      swap: transfer block sizes, e.g. 4KiB:1GiB:x4\n"
            "  --kv-block-sizes RANGE  swap: KV-cache block sizes, e.g. 64KiB,1MiB\n"
            "  --swap-batch RANGE  swap: KV blocks per swap-out and swap-in, e.g. 1:64:x4\n"
            "  --swap-pressure P   swap: share of free memory other allocations hold\n"
            "                      meanwhile (default 50%%)\n"
            "  --unified-sizes RANGE  swap: managed-memory working sets, e.g. 16MiB,64MiB\n"
            "  --allow-oversubscribe  managed memory past free memory: the swap suite's\n"
            "                      oversubscription sweep (50-150%%) and the managed pattern\n"
            "  --mem-limit SIZE    cap on device memory the run may hold (CPU devices default\n"
            "                      to a quarter of available host memory)\n"
            "  --probe-timeout S   oom suite: seconds a probe may run before its worker is\n"
            "                      killed (a `timeout` row; default 600)\n"
            "  --hang-timeout S    seconds one device call may take before the device counts\n"
            "                      as hung: the run stops, exit status 3 (default 600; 0 off)\n"
            "  --out DIR           results folder (default: results/<run-id>)\n"
            "  --quiet             no progress or summary\n"
            "\n"
            "Command-line options override the profile's.\n");
}

typedef struct {
    const char *name, *value;
} cli_opt;

/* What the session's open_run (gm_bench_open_run) and hang hook need. */
typedef struct {
    gm_bench *bench;
    const gm_bench_opts *opts;
    int argc;
    char **argv;
    const gm_resume *resume;
} run_context;

/* The session's hang hook (run/session.h), on the watchdog's thread while
 * the main thread is stuck in a device call: cuts the unfinished point's
 * rows off, as an interrupted run does, and says how to continue. */
static void keep_finished(const char *op, double seconds, void *ctx)
{
    gm_bench *b = ((run_context *)ctx)->bench;
    gm_run *run = b->run;
    (void)op;
    (void)seconds;
    if (!b->output_failed && gm_run_cut_back(run, b->done_results_len, b->done_samples_len) == 0)
        run->rows_written = b->done_rows;
    fprintf(stderr, "gpumem bench: %d finished points kept in %s; continue (after a device reset) with "
                    "gpumem bench --resume %s\n", b->points_finished, run->dir, run->dir);
}

/* The session's open_run (run/session.h): a new run with its journal, or
 * the resumed one. */
static int open_run(gm_run *run, const gm_device *dev, void *ctx, char *err, size_t err_len)
{
    run_context *c = ctx;
    return gm_bench_open_run(run, c->bench, c->opts, dev, c->argc, c->argv, c->resume, err, err_len);
}

/* Splits argv into options; returns 0, or 2 with a message printed. */
static int parse_cli(int argc, char **argv, cli_opt *opts, int *n, bool *help)
{
    *n = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            *help = true;
            return 0;
        }
        if (strncmp(arg, "--", 2) != 0 || !arg[2]) {
            fprintf(stderr, "gpumem bench: unexpected argument '%s' (options start with --)\n", arg);
            return 2;
        }
        static char names[64][32];
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        if (len >= sizeof names[0] || *n >= 64) {
            fprintf(stderr, "gpumem bench: unknown option '%s' (see gpumem bench --help)\n", arg);
            return 2;
        }
        memcpy(names[*n], arg + 2, len);
        names[*n][len] = '\0';
        int takes = gm_opts_takes_value(names[*n]);
        if (takes < 0) {
            fprintf(stderr, "gpumem bench: unknown option '--%s' (see gpumem bench --help)\n", names[*n]);
            return 2;
        }
        const char *value = "";
        if (takes && eq)
            value = eq + 1;
        else if (takes && i + 1 < argc)
            value = argv[++i];
        else if (takes) {
            fprintf(stderr, "gpumem bench: option '--%s' needs a value\n", names[*n]);
            return 2;
        } else if (eq) {
            fprintf(stderr, "gpumem bench: option '--%s' takes no value\n", names[*n]);
            return 2;
        }
        opts[*n].name = names[*n];
        opts[*n].value = value;
        (*n)++;
    }
    return 0;
}

int gm_bench_options(int argc, char **argv, const char *suite, gm_bench_opts *o, bool *help)
{
    cli_opt cli[64];
    int n = 0;
    char err[600];
    int rc = parse_cli(argc, argv, cli, &n, help);
    if (rc || *help)
        return rc;
    const char *profile = "quick";
    for (int i = 0; i < n; i++)
        if (strcmp(cli[i].name, "profile") == 0)
            profile = cli[i].value;
    if (gm_profile_load(o, profile, suite, err, sizeof err) != 0) {
        fprintf(stderr, "gpumem bench: %s\n", err);
        return 2;
    }
    snprintf(o->profile, sizeof o->profile, "%s", profile);
    for (int i = 0; i < n; i++) {
        if (gm_opts_set(o, cli[i].name, cli[i].value, err, sizeof err) != 0) {
            fprintf(stderr, "gpumem bench: %s\n", err);
            return 2;
        }
    }
    return 0;
}

/* Runs every suite with its own options (the profile's [bench], its
 * section, then the command line) and its own cap: the suite's
 * --mem-limit, else the run's default `cap`. */
static int run_suites(gm_bench *b, uint64_t cap)
{
    const gm_bench_opts *base = b->opts;
    gm_bench_opts per[GM_MAX_SUITES];
    int n = base->n_suites, made = 0, rc = 0;
    for (; made < n && rc == 0; made++) {
        bool help = false;
        gm_opts_init(&per[made]);
        rc = gm_bench_options(b->argc, b->argv, base->suites[made], &per[made], &help);
    }
    b->points_total = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        b->opts = &per[i];
        b->points_total += gm_suite_find(base->suites[i])->count_points(b);
    }
    b->started = gm_now();
    for (int i = 0; i < n && rc == 0; i++) {
        b->opts = &per[i];
        gm_device_set_limit(b->dev, per[i].mem_limit_set ? per[i].mem_limit : cap);
        gm_memtrace_phase(base->suites[i]);
        if (gm_suite_find(base->suites[i])->run(b) != 0)
            rc = -1;
    }
    b->opts = base;
    gm_device_set_limit(b->dev, cap);
    for (int i = 0; i < made; i++)
        gm_opts_release(&per[i]);
    return rc;
}

/* Refuses, before anything runs, a workloads suite whose shapes overflow
 * the memory model. Returns 0, or 2 with the message printed. */
static int check_sizes(int argc, char **argv, const gm_bench_opts *o)
{
    int rc = 0;
    for (int i = 0; i < o->n_suites && rc == 0; i++) {
        if (strcmp(o->suites[i], "workloads") != 0)
            continue;
        gm_bench_opts wo;
        gm_opts_init(&wo);
        bool help = false;
        char err[400];
        rc = gm_bench_options(argc, argv, "workloads", &wo, &help);
        if (rc == 0 && gm_workloads_check_sizes(&wo, err, sizeof err) != 0) {
            fprintf(stderr, "gpumem bench: %s\n", err);
            rc = GM_EXIT_USAGE;
        }
        gm_opts_release(&wo);
    }
    return rc;
}

int gm_cmd_bench(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--resume") == 0 || strncmp(argv[i], "--resume=", 9) == 0)
            return gm_bench_resume(argc, argv);
    return gm_bench_run(argc, argv, NULL);
}

int gm_bench_run(int argc, char **argv, const gm_resume *resume)
{
    gm_bench_opts o;
    gm_opts_init(&o);
    bool help = false;
    int rc = gm_bench_options(argc, argv, NULL, &o, &help);
    if (rc || help) {
        if (help)
            usage(stdout);
        gm_opts_release(&o);
        return rc;
    }
    rc = check_sizes(argc, argv, &o);
    if (rc) {
        gm_opts_release(&o);
        return rc;
    }
    if (o.device_list[0]) {         /* one worker per device (src/bench_devices.c) */
        rc = gm_bench_devices(argc, argv, &o);
        gm_opts_release(&o);
        return rc;
    }
    char err[600];
    gm_bench b = {0};
    b.journal_fd = -1;
    gm_session ses;
    b.run = &ses.run;               /* before the session can call keep_finished */
    run_context oc = {&b, &o, argc, argv, resume};
    gm_session_params sp = {"gpumem bench", o.backend, o.device, o.mem_limit_set ? o.mem_limit : 0,
                            o.hang_timeout, o.out, argc, argv, o.profile, open_run, keep_finished, &oc};
    /* A worker that dies leaves a closed pipe: writes to it fail, not kill. */
    signal(SIGPIPE, SIG_IGN);
    rc = gm_session_open(&ses, &sp, err, sizeof err);
    if (rc) {
        fprintf(stderr, "gpumem bench: %s\n", err);
        if (!resume && b.journal_fd >= 0)
            close(b.journal_fd);
        gm_opts_release(&o);
        return rc;
    }
    gm_device *dev = &ses.dev;
    gm_run *run = &ses.run;
    gm_summary summary;
    gm_summary_init(&summary);
    b.dev = dev;
    b.opts = &o;
    b.summary = &summary;
    b.progress = !o.quiet && isatty(STDERR_FILENO);
    b.argc = argc;
    b.argv = argv;
    const char *fault = getenv("GPUMEM_FAULT");
    /* Test-only: corrupt one output value after every kernel. */
    b.fault_corrupt = fault && strcmp(fault, "corrupt-output") == 0;

    char limit[32] = "none";
    if (dev->mem_limit)
        gm_format_size(dev->mem_limit, limit, sizeof limit);
    if (!o.quiet)
        fprintf(stderr, "gpumem: %s device %d: %s (memory cap %s) -> %s%s\n", dev->backend->name, dev->index,
                dev->info.name, limit, run->dir, resume ? " (resumed)" : "");
    int suites_rc = run_suites(&b, dev->mem_limit);
    gm_session_check_leaks(&ses);
    gm_bench_finish_run(&b, run, suites_rc);   /* the journal's end; the status is the session's */
    int mism = run->rows_by_status[GM_ROW_MISMATCH];
    gm_session_outcome end = {b.output_failed, b.interrupted, b.device_lost, suites_rc != 0, mism > 0,
                              b.error, sizeof b.error};
    gm_session_finish(&ses, &end);
    if (!o.quiet)
        gm_summary_print(&summary, stdout);
    printf("results: %s (%d rows%s)\n", run->dir, run->rows_written, mism ? ", with mismatches" : "");
    if (end.output_failed)
        fprintf(stderr, "gpumem bench: stopped: %s\n", b.error);
    else if (end.interrupted)
        fprintf(stderr, "gpumem bench: interrupted by %s after %d finished points; continue with "
                        "gpumem bench --resume %s\n", strsignal(end.interrupted), b.points_finished, run->dir);
    else if (end.device_lost)
        fprintf(stderr, "gpumem bench: stopped: %s\n", b.error);
    else if (ses.leak.leaked)
        fprintf(stderr, "gpumem bench: device memory leak: %s\n", ses.leak.detail);
    else if (mism)
        fprintf(stderr, "gpumem bench: %d point%s produced wrong output (status mismatch)\n", mism,
                mism == 1 ? "" : "s");
    if (b.journal_fd >= 0 && !resume)
        close(b.journal_fd);        /* a resumed run's is its caller's */
    gm_summary_release(&summary);
    gm_opts_release(&o);
    return gm_session_close(&ses, &end);
}
