/* gpumem bench: options, device, run folder, suites, summary. */
#include "bench/bench.h"
#include "bench/model/precision_roles.h"
#include "bench/model/shape_opts.h"
#include "cli/bench_devices.h"
#include "cli/bench_run.h"
#include "cli/commands.h"
#include "cli/option_rules.h"
#include "cli/option_table.h"
#include "run/journal.h"
#include "run/session.h"
#include "bench/rounds.h"
#include "device/memtrace.h"
#include "run/summary.h"
#include "lib/units.h"
#include "report/report.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The command as gpumem's list, --help and the man page show it (cli/command.h). */
const gm_command gm_command_bench = {
    .name = "bench",
    .run = gm_cmd_bench,
    .options = GM_CMD_BENCH,
    .summary = "run benchmark suites and write a results folder",
    .usage = "bench [OPTIONS]\nbench --resume RUN [--quiet]",
    .about = "Runs benchmark suites on a device and writes a run folder (results.csv, samples.csv, meta.json). Options "
        "name the suites or workloads they concern first. A profile sets them by their long names, in its [bench] "
        "section and one per suite ([oom], and [oom.cpu] or [oom.gpu] for one kind of device); command-line options "
        "override the profile's. Each default is followed by what the profile (--profile, else quick) sets in its "
        "place. An option that concerns no suite, workload or pattern the run asks for is refused.",
    .exit_status = GM_EXIT_STATUS_COMMON,
    .positional = GM_POSITIONAL_NONE,
    .profile = "quick",
};

/* Help, with what the profile named on the command line (else quick)
 * sets in place of each default. */
static void usage(FILE *f, int argc, char **argv)
{
    gm_command c = gm_command_bench;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc)
            c.profile = argv[++i];
        else if (strncmp(argv[i], "--profile=", 10) == 0)
            c.profile = argv[i] + 10;
    }
    gm_command_help(f, &c);
}

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

int gm_bench_options(int argc, char **argv, const char *suite, gm_bench_opts *o, bool *help)
{
    gm_cli_arg cli[64];
    int n = 0;
    char err[600];
    int rc = gm_option_split("bench", GM_CMD_BENCH, "unknown option", argc, argv, cli, 64, &n, help);
    if (rc || *help)
        return rc;
    const char *profile = "quick";
    bool shapes = false, model = false;
    for (int i = 0; i < n; i++) {
        if (!cli[i].opt) {
            fprintf(stderr, "gpumem bench: unexpected argument '%s' (options start with --)\n", cli[i].value);
            return GM_EXIT_USAGE;
        }
        if (strcmp(cli[i].opt->name, "profile") == 0)
            profile = cli[i].value;
        shapes |= gm_shape_from_model(cli[i].opt->name);
        model |= strcmp(cli[i].opt->name, "model") == 0;
    }
    o->profile_model_off = shapes && !model;
    if (gm_profile_load(o, profile, suite, err, sizeof err) != 0) {
        fprintf(stderr, "gpumem bench: %s\n", err);
        return 2;
    }
    snprintf(o->profile, sizeof o->profile, "%s", profile);
    bool precision = false;
    for (int i = 0; i < n; i++) {
        if (gm_opts_set(o, cli[i].opt->name, cli[i].value, err, sizeof err) != 0) {
            fprintf(stderr, "gpumem bench: %s\n", err);
            return 2;
        }
        precision |= strcmp(cli[i].opt->name, "precision") == 0;
    }
    /* Fine-tuning trains in fp32, fp16 or bf16: where the command line
     * names no --precision, a run whose every mode trains runs bf16, and
     * one with lora or qlora among other modes leaves out the default
     * list's (or the profile's) other precisions (int8 trains nothing);
     * a --precision given is checked by gm_roles_check_opts. */
    unsigned trains = 0, tunes = (1u << GM_PLAN_LORA) | (1u << GM_PLAN_QLORA);
    unsigned trainable = (1u << GM_FP32) | (1u << GM_FP16) | (1u << GM_BF16);
    for (int m = 0; m < GM_PLAN_MODE_COUNT; m++)
        trains |= gm_plan_trains((gm_plan_mode)m) && m != GM_PLAN_SERVE ? 1u << m : 0u;
    if (!precision && o->modes && !(o->modes & ~trains))
        o->precisions = 1u << GM_BF16;
    else if (!precision && (o->modes & tunes) && (o->precisions & trainable))
        o->precisions &= trainable;
    return 0;
}

/* Runs every suite with its own options (the profile's [bench], its
 * section, its section for the device's kind, then the command line) and
 * its own cap: the suite's
 * --mem-limit, else the run's default `cap`. */
static int run_suites(gm_bench *b, uint64_t cap)
{
    const gm_bench_opts *base = b->opts;
    gm_bench_opts per[GM_MAX_SUITES];
    int n = base->n_suites, made = 0, rc = 0;
    for (; made < n && rc == 0; made++) {
        bool help = false;
        char typed[48];       /* the suite's section for this kind of device too */
        gm_suite_section(base->suites[made], b->dev, typed, sizeof typed);
        gm_opts_init(&per[made]);
        rc = gm_bench_options(b->argc, b->argv, typed, &per[made], &help);
        /* A suite its profile does not name runs on [bench]'s options
         * alone: say so, and which file was read (a binary carried away
         * from its tree reads the data of the tree it runs in). */
        if (rc == 0 && !per[made].profile_names_suite && !base->quiet)
            fprintf(stderr, "gpumem bench: note: profile %s (%s) does not name the %s suite (in [bench]'s suite "
                    "list, a [%s] or a [%s] section): it runs on [bench]'s options and the command line's\n",
                    base->profile, per[made].profile_file, base->suites[made], base->suites[made], typed);
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
        bool workloads = strcmp(o->suites[i], "workloads") == 0;
        if (!workloads && strcmp(o->suites[i], "oom") != 0 && strcmp(o->suites[i], "stream") != 0
            && strcmp(o->suites[i], "swap") != 0)
            continue;
        gm_bench_opts wo;
        gm_opts_init(&wo);
        bool help = false;
        char err[400];
        rc = gm_bench_options(argc, argv, o->suites[i], &wo, &help);
        if (rc == 0 && (gm_roles_check_opts(&wo, o->suites[i], err, sizeof err) != 0
                        || (workloads && gm_workloads_check_sizes(&wo, err, sizeof err) != 0))) {
            fprintf(stderr, "gpumem bench: %s\n", err);
            rc = GM_EXIT_USAGE;
        }
        gm_opts_release(&wo);
    }
    return rc;
}

#define MAX_VIEWS (GM_MAX_SUITES * 3)

/* The bit of workload `name` in --workload's mask. */
static unsigned workload_bit(const char *name)
{
    for (int w = 0; w < GM_RUNNABLE_WORKLOAD_COUNT; w++)
        if (strcmp(gm_runnable_workloads[w], name) == 0)
            return 1u << w;
    return 0;
}

/* Appends to views (and shapes) suite's options as its profile section
 * SUITE`kind` ("", ".cpu", ".gpu") and the command line give them.
 * Returns 0, or 2 with the line printed. */
static int add_view(int argc, char **argv, const char *suite, const char *kind, gm_ask *views, gm_shape *shapes,
                    int *n)
{
    char section[48];
    bool help = false;
    gm_bench_opts vo;
    gm_opts_init(&vo);
    snprintf(section, sizeof section, "%s%s", suite, kind);
    int rc = gm_bench_options(argc, argv, section, &vo, &help);
    shapes[*n] = vo.shape;
    /* The swap suite's offload point runs block at the shape; the serve
     * suite runs the serving engine (the serve workload's). */
    views[*n] = (gm_ask){.suite = gm_suite_find(suite)->name,
                         .workloads = !strcmp(suite, "swap")    ? workload_bit("block")
                                      : !strcmp(suite, "serve") ? workload_bit("serve")
                                                                : vo.workloads,
                         .patterns = vo.patterns, .modes = vo.modes, .oom_parts = vo.oom_parts,
                         .several_devices = vo.device_list[0] != '\0', .shape = &shapes[*n]};
    (*n)++;
    gm_opts_release(&vo);
    return rc;
}

/* Refuses, before anything runs, an option of the command line that
 * concerns nothing the run asks for (option_rules.h), judged against each
 * suite's options as its profile sections give them: SUITE, and where an
 * option concerns none of those, SUITE.cpu and SUITE.gpu too (the device
 * is not open yet). Returns 0, or 2 with the line printed. */
static int refuse_unapplied(int argc, char **argv, const gm_bench_opts *o)
{
    gm_ask views[MAX_VIEWS];
    gm_shape shapes[MAX_VIEWS];
    int n = 0, rc = 0;
    for (int i = 0; i < o->n_suites && rc == 0; i++)
        rc = add_view(argc, argv, o->suites[i], "", views, shapes, &n);
    gm_cli_arg cli[64];
    int n_cli = 0;
    bool help = false, typed = false;
    char err[700];
    if (rc == 0)
        rc = gm_option_split("bench", GM_CMD_BENCH, "unknown option", argc, argv, cli, 64, &n_cli, &help);
    for (int i = 0; i < n_cli && rc == 0; i++) {
        int bad = cli[i].opt ? gm_option_rule_check(cli[i].opt, cli[i].value, GM_CMD_BENCH, views, n, err,
                                                    sizeof err) : 0;
        if (bad && !typed) {            /* the sections for one kind of device, once */
            for (int s = 0; s < o->n_suites && rc == 0; s++)
                for (int k = 0; k < 2 && rc == 0; k++)
                    rc = add_view(argc, argv, o->suites[s], k ? ".gpu" : ".cpu", views, shapes, &n);
            typed = true;
            i--;                        /* judge it again */
            continue;
        }
        if (bad) {
            fprintf(stderr, "gpumem bench: %s\n", err);
            rc = GM_EXIT_USAGE;
        }
    }
    return rc;
}

/* The report's three answers (report/report.h) for whatever the run
 * measured, a line each: from its results.csv, without gnuplot. */
static void print_answers(const char *dir)
{
    char csv[4200], err[600];
    gm_plot_data d;
    snprintf(csv, sizeof csv, "%s/results.csv", dir);
    gm_report *r = malloc(sizeof *r);
    if (r && gm_plot_data_load(csv, &d, err, sizeof err) == 0) {
        gm_report_collect(&d, dir, r);
        for (int i = 0, printed = 0; i < GM_ANSWERS; i++)
            if (r->answers[i].label[0])
                printf("%s%s %s\n", printed++ ? "" : "\n", r->answers[i].label, r->answers[i].value);
        gm_plot_data_free(&d);
    }
    free(r);
}

int gm_cmd_bench(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--resume") == 0 || strncmp(argv[i], "--resume=", 9) == 0)
            return gm_bench_resume(argc, argv, gm_bench_run);
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
            usage(stdout, argc, argv);
        gm_opts_release(&o);
        return rc;
    }
    rc = check_sizes(argc, argv, &o);
    if (rc == 0)
        rc = refuse_unapplied(argc, argv, &o);
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
    /* Test-only: strike one output element after every kernel. */
    int fault_rc = gm_output_fault_parse(getenv("GPUMEM_FAULT"), getenv("GPUMEM_FAULT_SEED"), &b.output_fault);
    if (fault_rc == -2) {
        fprintf(stderr, "gpumem bench: GPUMEM_FAULT '%s': a product fault is corrupt-product or flip-product-bit, "
                        "then optionally :NAME (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, "
                        "lm_head; a backward product: dX_, dW_, lora_dB_, lora_dxa_, lora_dA_ or lora_dx_ before "
                        "the name; attn: a layer's attention output) and :LAYER (a whole number)\n",
                getenv("GPUMEM_FAULT"));
        gm_opts_release(&o);
        return GM_EXIT_USAGE;
    }
    if (fault_rc != 0) {
        fprintf(stderr, "gpumem bench: GPUMEM_FAULT_SEED '%s': not a whole number\n", getenv("GPUMEM_FAULT_SEED"));
        gm_opts_release(&o);
        return GM_EXIT_USAGE;
    }
    /* A product fault strikes inside the whole model's forward pass, which
     * reads it at set-up (bench/workloads/model_product_check.c): no
     * workload's output is struck after its run. */
    if (b.output_fault.site == GM_OUTPUT_FAULT_SITE_PRODUCT)
        b.output_fault.kind = GM_OUTPUT_FAULT_NONE;
    if (gm_output_fault_parse_rep(getenv("GPUMEM_FAULT_REP"), &b.output_fault) != 0) {
        fprintf(stderr, "gpumem bench: GPUMEM_FAULT_REP '%s': not a whole number\n", getenv("GPUMEM_FAULT_REP"));
        gm_opts_release(&o);
        return GM_EXIT_USAGE;
    }
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
    summary.llc_bytes = dev->info.llc_bytes;
    b.dev = dev;
    b.opts = &o;
    b.summary = &summary;
    b.progress = !o.quiet && isatty(STDERR_FILENO);
    b.argc = argc;
    b.argv = argv;

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
    if (!o.quiet) {
        gm_summary_print(&summary, stdout);
        print_answers(run->dir);
    }
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
