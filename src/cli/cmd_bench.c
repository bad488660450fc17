/* gpumem bench: options, device, run folder, suites, summary. */
#include "bench/bench.h"
#include "cli/bench_devices.h"
#include "cli/bench_run.h"
#include "cli/commands.h"
#include "cli/option_table.h"
#include "lib/interrupt.h"
#include "run/journal.h"
#include "bench/rounds.h"
#include "device/memtrace.h"
#include "run/meta.h"
#include "device/select.h"
#include "run/summary.h"
#include "lib/units.h"
#include "backend/watchdog.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gpumem bench [OPTIONS]\n"
               "       gpumem bench --resume RUN [--quiet]\n"
               "\n"
               "Options name the suites or workloads they concern first. A profile sets them\n"
               "by their long names; command-line options override the profile's.\n"
               "\n");
    gm_option_help(f, GM_CMD_BENCH);
}

/* What the watchdog's hook needs of a run under way. */
typedef struct {
    gm_bench *bench;
    gm_meta *meta;
} hang_context;

/* The watchdog's hook (watchdog.h), on its thread while the main thread is
 * stuck in a device call: cuts the unfinished point's rows off, as an
 * interrupted run does, and records the end in meta.json. */
static void record_hang(const char *op, double seconds, void *ctx)
{
    hang_context *h = ctx;
    gm_bench *b = h->bench;
    gm_run *run = b->run;
    char err[600];
    (void)op;
    (void)seconds;
    if (!b->output_failed && gm_run_cut_back(run, b->done_results_len, b->done_samples_len) == 0)
        run->rows_written = b->done_rows;
    h->meta->end = time(NULL);
    h->meta->status = "hung";
    if (gm_meta_write(h->meta, err, sizeof err) != 0)
        fprintf(stderr, "gpumem bench: %s\n", err);
    fprintf(stderr, "gpumem bench: %d finished points kept in %s; continue (after a device reset) with "
                    "gpumem bench --resume %s\n", b->points_finished, run->dir, run->dir);
}

int gm_bench_options(int argc, char **argv, const char *suite, gm_bench_opts *o, bool *help)
{
    gm_cli_arg cli[64];
    int n = 0;
    char err[600];
    int rc = gm_option_split("bench", GM_CMD_BENCH, "unknown option", argc, argv, cli, 64, &n, help);
    if (rc || *help)
        return rc;
    const char *profile = "quick";
    for (int i = 0; i < n; i++) {
        if (!cli[i].opt) {
            fprintf(stderr, "gpumem bench: unexpected argument '%s' (options start with --)\n", cli[i].value);
            return GM_EXIT_USAGE;
        }
        if (strcmp(cli[i].opt->name, "profile") == 0)
            profile = cli[i].value;
    }
    if (gm_profile_load(o, profile, suite, err, sizeof err) != 0) {
        fprintf(stderr, "gpumem bench: %s\n", err);
        return 2;
    }
    snprintf(o->profile, sizeof o->profile, "%s", profile);
    for (int i = 0; i < n; i++) {
        if (gm_opts_set(o, cli[i].opt->name, cli[i].value, err, sizeof err) != 0) {
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
    /* --rounds: the whole point list once a round, each round a share of
     * the reps (bench/rounds.h); the journal numbers points on through
     * the rounds, so --resume finds its round. */
    int rounds = base->rounds > 1 ? (int)base->rounds : 1;
    unsigned reps[GM_MAX_SUITES];
    for (int i = 0; i < made; i++)
        reps[i] = per[i].reps;
    b->points_total = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        b->opts = &per[i];
        b->points_total += gm_suite_find(base->suites[i])->count_points(b);
    }
    b->points_total *= rounds;
    b->rounds = rounds;
    if (rc == 0 && rounds > 1 && !(b->pool = gm_round_pool_new()))
        rc = -1;
    char err[600];
    if (rc == 0 && rounds > 1 && b->resume_from > 0 && gm_round_pool_load(b->pool, b->run->dir, err, sizeof err) != 0) {
        snprintf(b->error, sizeof b->error, "%s", err);
        rc = -1;
    }
    b->started = gm_now();
    for (int r = 0; r < rounds && rc == 0; r++) {
        b->round = r;
        for (int i = 0; i < n && rc == 0; i++) {
            b->opts = &per[i];
            per[i].reps = gm_round_reps(reps[i], r, rounds);
            gm_device_set_limit(b->dev, per[i].mem_limit_set ? per[i].mem_limit : cap);
            gm_memtrace_phase(base->suites[i]);
            if (gm_suite_find(base->suites[i])->run(b) != 0)
                rc = -1;
        }
    }
    gm_round_pool_free(b->pool);
    b->pool = NULL;
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
    if (gm_watchdog_start(o.hang_timeout, "gpumem bench") != 0)
        fprintf(stderr, "gpumem bench: no hung-device watchdog: %s\n", strerror(errno));
    gm_device dev;
    rc = gm_select_device(o.backend, o.device, &dev, err, sizeof err);
    if (rc) {
        fprintf(stderr, "gpumem bench: %s\n", err);
        gm_watchdog_stop();
        gm_opts_release(&o);
        return rc;
    }
    gm_device_set_limit(&dev, o.mem_limit_set ? o.mem_limit : gm_default_mem_limit(&dev.info));

    gm_run run;
    gm_bench b = {0};
    b.journal_fd = -1;
    int open_rc = gm_bench_open_run(&run, &b, &o, &dev, argc, argv, resume, err, sizeof err);
    if (open_rc != 0) {
        fprintf(stderr, "gpumem bench: %s\n", err);
        if (!resume && b.journal_fd >= 0)
            close(b.journal_fd);
        gm_run_close(&run);
        gm_device_close(&dev);
        gm_watchdog_stop();
        gm_opts_release(&o);
        return open_rc == GM_RUN_REFUSED ? GM_EXIT_USAGE : GM_EXIT_OUTPUT;
    }
    /* argv[-1] is the program name: main passes argv + 1 to subcommands. */
    gm_meta meta = {&run, &dev, argc + 1, argv - 1, o.profile, time(NULL), 0, "running", NULL};
    gm_summary summary;
    gm_summary_init(&summary);
    b.dev = &dev;
    b.run = &run;
    b.opts = &o;
    b.summary = &summary;
    b.progress = !o.quiet && isatty(STDERR_FILENO);
    b.argc = argc;
    b.argv = argv;
    /* A worker that dies leaves a closed pipe: writes to it fail, not kill. */
    signal(SIGPIPE, SIG_IGN);
    /* A file-size limit makes write(2) fail with EFBIG instead of killing us. */
    signal(SIGXFSZ, SIG_IGN);
    gm_interrupt_install();
    const char *fault = getenv("GPUMEM_FAULT");
    /* Test-only: corrupt one output value after every kernel. */
    b.fault_corrupt = fault && strcmp(fault, "corrupt-output") == 0;

    hang_context hang = {&b, &meta};
    if (gm_meta_write(&meta, err, sizeof err) != 0) {
        fprintf(stderr, "gpumem bench: %s\n", err);
        rc = GM_EXIT_OUTPUT;
    } else {
        gm_watchdog_set_hook(record_hang, &hang);
        char limit[32] = "none";
        if (dev.mem_limit)
            gm_format_size(dev.mem_limit, limit, sizeof limit);
        if (!o.quiet)
            fprintf(stderr, "gpumem: %s device %d: %s (memory cap %s) -> %s%s\n", dev.backend->name, dev.index,
                    dev.info.name, limit, run.dir, resume ? " (resumed)" : "");
        gm_leak_report leak = {0};
        gm_mem_snapshot_take(&dev, &leak.start);
        int suites_rc = run_suites(&b, dev.mem_limit);
        gm_leak_check(&dev, &leak);
        gm_watchdog_set_hook(NULL, NULL);   /* the end is this thread's to write */
        meta.leak = &leak;
        meta.end = time(NULL);
        meta.status = gm_bench_finish_run(&b, &run, suites_rc);
        if (leak.leaked && strcmp(meta.status, "complete") == 0)
            meta.status = "failed";
        if (gm_meta_write(&meta, err, sizeof err) != 0 && !b.output_failed) {
            b.output_failed = true;
            snprintf(b.error, sizeof b.error, "%s", err);
        }
        if (!o.quiet)
            gm_summary_print(&summary, stdout);
        int mism = run.rows_by_status[GM_ROW_MISMATCH];
        printf("results: %s (%d rows%s)\n", run.dir, run.rows_written,
               mism ? ", with mismatches" : "");
        if (b.output_failed) {
            fprintf(stderr, "gpumem bench: stopped: %s\n", b.error);
            rc = GM_EXIT_OUTPUT;
        } else if (b.interrupted) {
            fprintf(stderr, "gpumem bench: interrupted by %s after %d finished points; continue with "
                            "gpumem bench --resume %s\n", strsignal(b.interrupted), b.points_finished, run.dir);
            rc = 128 + b.interrupted;
        } else if (b.device_lost) {
            fprintf(stderr, "gpumem bench: stopped: %s\n", b.error);
            rc = GM_EXIT_DEVICE;
        } else if (leak.leaked) {
            fprintf(stderr, "gpumem bench: device memory leak: %s\n", leak.detail);
            rc = GM_EXIT_CHECK;
        } else if (mism) {
            fprintf(stderr, "gpumem bench: %d point%s produced wrong output (status mismatch)\n", mism,
                    mism == 1 ? "" : "s");
            rc = GM_EXIT_CHECK;
        }
    }
    if (b.journal_fd >= 0 && !resume)
        close(b.journal_fd);        /* a resumed run's is its caller's */
    gm_summary_release(&summary);
    gm_run_close(&run);
    gm_device_close(&dev);
    gm_watchdog_stop();
    gm_opts_release(&o);
    return rc;
}
