/*
 * `gpumem stress`: the stress checks (stress/) on one device, as a TAP
 * stream (version 13, a YAML diagnostics block per check) on stdout and in
 * the run folder's stress.tap, with the measurements in its results.csv
 * and the run's facts in meta.json. Exit status 0 when every check
 * passes, 1 when any fails, 2 for bad usage or results that cannot be
 * written, 3 when no device opens or the device is lost or hung.
 */
#include "cli/commands.h"
#include "cli/option_rules.h"
#include "cli/option_table.h"
#include "device/memtrace.h"
#include "device/device.h"
#include "lib/interrupt.h"
#include "run/results.h"
#include "run/session.h"
#include "stress/stress.h"
#include "lib/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The command as gpumem's list, --help and the man page show it (cli/command.h). */
const gm_command gm_command_stress = {
    .name = "stress",
    .run = gm_cmd_stress,
    .options = GM_CMD_STRESS,
    .summary = "check that a device keeps its data under memory pressure (TAP)",
    .usage = "stress [OPTIONS]",
    .about = "Checks that a device keeps its data and stays usable under memory pressure; prints TAP (one test point "
        "per check, YAML diagnostics).",
    .exit_status = "0 every check passed, 1 a check failed, 2 bad usage, 3 no device, or the device was lost or hung, 4 "
        "results could not be written, 130/143 SIGINT/SIGTERM",
    .positional = GM_POSITIONAL_NONE,
};

static void usage(FILE *f)
{
    gm_command_help(f, &gm_command_stress);
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
    gm_ask ask = {.checks = o->checks};
    for (int i = 0; i < n; i++)
        if (gm_option_rule_check(cli[i].opt, cli[i].value, GM_CMD_STRESS, &ask, 1, err, sizeof err) != 0) {
            fprintf(stderr, "gpumem stress: %s\n", err);
            return GM_EXIT_USAGE;
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

/* The session's hang hook (run/session.h), on the watchdog's thread while
 * the main thread is stuck in a device call: ends the TAP stream. */
static void bail_out(const char *op, double seconds, void *ctx)
{
    FILE *const *sinks = ctx;
    (void)seconds;
    tap(sinks, "Bail out! the device hung in a %s call%s\n", op, "");
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
    gm_output_fault output_fault;
    int fault_rc = gm_output_fault_parse(getenv("GPUMEM_FAULT"), getenv("GPUMEM_FAULT_SEED"), &output_fault);
    if (output_fault.site == GM_OUTPUT_FAULT_SITE_PRODUCT)     /* the whole model's (bench) */
        output_fault.kind = GM_OUTPUT_FAULT_NONE;
    if (fault_rc == -1) {
        fprintf(stderr, "gpumem stress: GPUMEM_FAULT_SEED '%s': not a whole number\n", getenv("GPUMEM_FAULT_SEED"));
        return GM_EXIT_USAGE;
    }
    if (gm_stress_fault_parse(getenv("GPUMEM_FAULT"), &fault) != 0 && output_fault.kind == GM_OUTPUT_FAULT_NONE) {
        fprintf(stderr, "gpumem stress: GPUMEM_FAULT '%s': not a stress fault (flip-bits, drop-free, "
                        "corrupt-swap, throttle, corrupt-output, flip-output-bit)\n", getenv("GPUMEM_FAULT"));
        return GM_EXIT_USAGE;
    }
    char err[600];
    FILE *sinks[2] = {stdout, NULL};
    gm_session_params sp = {"gpumem stress", o.backend, o.device, o.mem_limit, o.hang_timeout, o.out, argc, argv,
                            NULL, NULL, bail_out, sinks};
    gm_session ses;
    rc = gm_session_open(&ses, &sp, err, sizeof err);
    if (rc) {
        fprintf(stderr, "gpumem stress: %s\n", err);
        return rc;
    }
    gm_device *dev = &ses.dev;
    char path[4200];
    snprintf(path, sizeof path, "%s/stress.tap", ses.run.dir);
    sinks[1] = fopen(path, "w");
    if (!sinks[1])
        fprintf(stderr, "gpumem stress: cannot write %s; the TAP stream goes to stdout only\n", path);
    gm_stress s = {dev, &ses.run, o.duration, o.fill, o.throttle, o.seed, fault, output_fault, false, ""};
    int planned = __builtin_popcount(o.checks), n = 0, failed = 0;
    char plan[32];
    snprintf(plan, sizeof plan, "1..%d", planned);
    tap(sinks, "TAP version 13\n%s%s\n", plan, "");
    char dev_line[400];
    snprintf(dev_line, sizeof dev_line, "%s device %d: %s", dev->backend->name, dev->index, dev->info.name);
    tap(sinks, "# %s%s\n", dev_line, "");
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
                gm_stress_fail(&r, "%s", s.output_failed ? s.error : dev->err.msg);
        }
        if (gm_interrupted() && !stop)
            gm_stress_fail(&r, "interrupted by %s", strsignal(gm_interrupted()));
        failed += !r.ok;
        tap_result(sinks, ++n, gm_stress_checks[i], &r);
    }
    if (gm_session_check_leaks(&ses))
        tap(sinks, "# device memory leak: %s%s\n", ses.leak.detail, "");
    if (sinks[1])
        fclose(sinks[1]);
    gm_session_outcome end = {s.output_failed, 0, lost, failed > 0, failed > 0, s.error, sizeof s.error};
    gm_session_finish(&ses, &end);
    fprintf(stderr, "gpumem stress: %d of %d checks passed -> %s\n", n - failed, n, ses.run.dir);
    if (end.output_failed)
        fprintf(stderr, "gpumem stress: stopped: %s\n", s.error);
    else if (end.interrupted)
        fprintf(stderr, "gpumem stress: interrupted by %s\n", strsignal(end.interrupted));
    if (ses.leak.leaked)
        fprintf(stderr, "gpumem stress: device memory leak: %s\n", ses.leak.detail);
    return gm_session_close(&ses, &end);
}
