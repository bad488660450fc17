/*
 * `gpumem stress`: the stress checks (stress/) on one device, as a TAP
 * stream (version 13, a YAML diagnostics block per check) on stdout and in
 * the run folder's stress.tap, with the measurements in its results.csv
 * and the run's facts in meta.json. Exit status 0 when every check
 * passes, 1 when any fails, 2 for bad usage or results that cannot be
 * written, 3 when no device opens or the device is lost or hung.
 */
#include "cli/commands.h"
#include "cli/option_table.h"
#include "device/memtrace.h"
#include "device/device.h"
#include "lib/interrupt.h"
#include "run/meta.h"
#include "run/results.h"
#include "device/select.h"
#include "stress/stress.h"
#include "lib/units.h"
#include "backend/watchdog.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: gpumem stress [OPTIONS]\n"
               "\n"
               "Checks that a device keeps its data and stays usable under memory pressure;\n"
               "prints TAP (one test point per check, YAML diagnostics).\n"
               "\n");
    gm_option_help(f, GM_CMD_STRESS);
    fprintf(f, "exit status: 0 every check passed, 1 a check failed, 2 bad usage, 3 no device, or\n"
               "the device was lost or hung, 4 results could not be written, 130/143 SIGINT/SIGTERM\n");
}

/* Returns 0, 2 (message printed) or -1 for --help. */
static int parse(int argc, char **argv, gm_stress_args *o)
{
    gm_cli_arg cli[64];
    gm_opt_dest dest = {.stress = o};
    int n = 0;
    bool help = false;
    char err[600];
    int rc = gm_option_split("stress", GM_CMD_STRESS, "unknown option", argc, argv, cli, 64, &n, &help);
    if (rc || help)
        return help ? -1 : rc;
    for (int i = 0; i < n; i++) {
        if (!cli[i].opt) {
            fprintf(stderr, "gpumem stress: unexpected argument '%s' (see gpumem stress --help)\n", cli[i].value);
            return GM_EXIT_USAGE;
        }
        if (gm_option_apply(cli[i].opt, &dest, cli[i].value, err, sizeof err) != 0) {
            fprintf(stderr, "gpumem stress: %s\n", err);
            return GM_EXIT_USAGE;
        }
    }
    return 0;
}

/* Writes one line to every TAP sink. */
static void tap(FILE *const *sinks, const char *fmt, const char *a, const char *b)
{
    for (int i = 0; i < 2; i++)
        if (sinks[i]) {
            fprintf(sinks[i], fmt, a, b);
            fflush(sinks[i]);
        }
}

/* What the watchdog's hook needs of a run under way. */
typedef struct {
    gm_meta *meta;
    FILE *const *sinks;
} hang_context;

/* The watchdog's hook (watchdog.h), on its thread while the main thread is
 * stuck in a device call: ends the TAP stream and records the end. */
static void record_hang(const char *op, double seconds, void *ctx)
{
    hang_context *h = ctx;
    char err[600];
    (void)seconds;
    tap(h->sinks, "Bail out! the device hung in a %s call%s\n", op, "");
    h->meta->end = time(NULL);
    h->meta->status = "hung";
    if (gm_meta_write(h->meta, err, sizeof err) != 0)
        fprintf(stderr, "gpumem stress: %s\n", err);
}

static void tap_result(FILE *const *sinks, int n, const gm_stress_check *c, const gm_stress_result *r)
{
    char head[128];
    snprintf(head, sizeof head, "%s %d - ", r->ok ? "ok" : "not ok", n);
    tap(sinks, "%s%s\n", head, c->name);
    tap(sinks, "  ---\n%s%s", "", "");
    const char *line = r->diag;
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[GM_STRESS_DIAG];
        snprintf(buf, sizeof buf, "%.*s", (int)len, line);
        tap(sinks, "  %s%s\n", buf, "");
        line += len + (nl ? 1 : 0);
    }
    tap(sinks, "  ...\n%s%s", "", "");
}

int gm_cmd_stress(int argc, char **argv)
{
    gm_stress_args o = {"auto", -1, 0, 10, 0.9, 0.5, 1, 0, NULL, GM_HANG_TIMEOUT_DEFAULT};
    for (int i = 0; gm_stress_checks[i]; i++)
        o.checks |= 1u << i;
    int rc = parse(argc, argv, &o);
    if (rc) {
        if (rc < 0)
            usage(stdout);
        return rc < 0 ? GM_EXIT_OK : rc;
    }
    gm_stress_fault fault;
    if (gm_stress_fault_parse(getenv("GPUMEM_FAULT"), &fault) != 0) {
        fprintf(stderr, "gpumem stress: GPUMEM_FAULT '%s': not a stress fault (flip-bits, drop-free, "
                        "corrupt-swap, throttle)\n", getenv("GPUMEM_FAULT"));
        return GM_EXIT_USAGE;
    }
    char err[600];
    if (gm_watchdog_start(o.hang_timeout, "gpumem stress") != 0)
        fprintf(stderr, "gpumem stress: no hung-device watchdog: %s\n", strerror(errno));
    gm_device dev;
    rc = gm_select_device(o.backend, o.device, &dev, err, sizeof err);
    if (rc) {
        fprintf(stderr, "gpumem stress: %s\n", err);
        gm_watchdog_stop();
        return rc;
    }
    gm_device_set_limit(&dev, o.mem_limit ? o.mem_limit : gm_default_mem_limit(&dev.info));
    /* A file-size limit makes write(2) fail with EFBIG instead of killing us. */
    signal(SIGXFSZ, SIG_IGN);
    gm_interrupt_install();
    gm_run run;
    int open_rc = gm_run_open(&run, o.out, dev.backend->name, dev.info.name, dev.info.uuid, err, sizeof err);
    if (open_rc != 0) {
        fprintf(stderr, "gpumem stress: %s\n", err);
        gm_run_close(&run);
        gm_device_close(&dev);
        gm_watchdog_stop();
        return open_rc == GM_RUN_REFUSED ? GM_EXIT_USAGE : GM_EXIT_OUTPUT;
    }
    /* argv[-1] is the program name: main passes argv + 1 to subcommands. */
    gm_meta meta = {&run, &dev, argc + 1, argv - 1, NULL, time(NULL), 0, "running", NULL};
    if (gm_meta_write(&meta, err, sizeof err) != 0) {
        fprintf(stderr, "gpumem stress: %s\n", err);
        gm_run_close(&run);
        gm_device_close(&dev);
        gm_watchdog_stop();
        return GM_EXIT_OUTPUT;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/stress.tap", run.dir);
    FILE *sinks[2] = {stdout, fopen(path, "w")};
    if (!sinks[1])
        fprintf(stderr, "gpumem stress: cannot write %s; the TAP stream goes to stdout only\n", path);
    gm_stress s = {&dev, &run, o.duration, o.fill, o.throttle, o.seed, fault, false, ""};
    int planned = __builtin_popcount(o.checks), n = 0, failed = 0;
    char plan[32];
    snprintf(plan, sizeof plan, "1..%d", planned);
    tap(sinks, "TAP version 13\n%s%s\n", plan, "");
    char dev_line[400];
    snprintf(dev_line, sizeof dev_line, "%s device %d: %s", dev.backend->name, dev.index, dev.info.name);
    tap(sinks, "# %s%s\n", dev_line, "");
    hang_context hang = {&meta, sinks};
    gm_watchdog_set_hook(record_hang, &hang);
    gm_leak_report leak = {0};
    gm_mem_snapshot_take(&dev, &leak.start);
    bool stop = false, lost = false;
    for (int i = 0; gm_stress_checks[i]; i++) {
        if (!(o.checks & (1u << i)))
            continue;
        gm_stress_result r = {true, ""};
        gm_memtrace_phase(gm_stress_checks[i]->name);
        if (stop || gm_interrupted()) {
            r.ok = false;
            gm_stress_fail(&r, "not run: %s", gm_interrupted() ? "interrupted"
                                              : s.output_failed ? s.error : "the device was lost");
        } else if (gm_stress_checks[i]->run(&s, &r) != 0) {
            stop = true;
            lost = !s.output_failed;
            if (r.ok)
                gm_stress_fail(&r, "%s", s.output_failed ? s.error : dev.err.msg);
        }
        if (gm_interrupted() && !stop)
            gm_stress_fail(&r, "interrupted by %s", strsignal(gm_interrupted()));
        failed += !r.ok;
        tap_result(sinks, ++n, gm_stress_checks[i], &r);
    }
    if (gm_leak_check(&dev, &leak))
        tap(sinks, "# device memory leak: %s%s\n", leak.detail, "");
    gm_watchdog_set_hook(NULL, NULL);   /* the end is this thread's to write */
    if (sinks[1])
        fclose(sinks[1]);
    meta.leak = &leak;
    meta.end = time(NULL);
    int interrupted = gm_interrupted();
    meta.status = s.output_failed ? "output-failed" : interrupted ? "interrupted" : lost ? "device-lost"
                  : failed || leak.leaked ? "failed" : "complete";
    if (gm_meta_write(&meta, err, sizeof err) != 0 && !s.output_failed) {
        s.output_failed = true;
        snprintf(s.error, sizeof s.error, "%s", err);
    }
    fprintf(stderr, "gpumem stress: %d of %d checks passed -> %s\n", n - failed, n, run.dir);
    if (s.output_failed)
        fprintf(stderr, "gpumem stress: stopped: %s\n", s.error);
    else if (interrupted)
        fprintf(stderr, "gpumem stress: interrupted by %s\n", strsignal(interrupted));
    if (leak.leaked)
        fprintf(stderr, "gpumem stress: device memory leak: %s\n", leak.detail);
    gm_run_close(&run);
    gm_device_close(&dev);
    gm_watchdog_stop();
    return s.output_failed ? GM_EXIT_OUTPUT : interrupted ? 128 + interrupted : lost ? GM_EXIT_DEVICE
           : failed || leak.leaked ? GM_EXIT_CHECK : GM_EXIT_OK;
}
