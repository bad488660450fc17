/*
 * `gpumem __worker SUITE[.cpu|.gpu] [bench options]`: the probe worker of
 * bench/oom/worker.c, with the options the bench command gives SUITE.
 * Opens the device the options name (the suite passes its choice and its
 * cap), prints `ready` (or one line saying why not, then exits 3), and
 * answers each request line on stdin with one result line on stdout (the
 * wire format of bench/oom/probe.h) until stdin closes.
 *
 * Test-only faults (GPUMEM_FAULT), in the run's first worker only:
 * `worker-kill:N` makes it kill itself with SIGKILL on its N-th request,
 * `worker-hang:N` makes it stop answering there (the watchdog's case).
 */
#include "cli/commands.h"
#include "device/memtrace.h"
#include "device/program_cache.h"
#include "bench/oom/probe.h"
#include "device/select.h"
#include "bench/workloads/registry.h"

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Hidden from gpumem's list, --help and the man page (cli/command.h). */
const gm_command gm_command_worker = {
    .name = "__worker",
    .run = gm_cmd_worker,
    .summary = "the oom suite's probe worker",
    .usage = "__worker SUITE [OPTIONS]",
    .exit_status = GM_EXIT_STATUS_COMMON,
    .positional = GM_POSITIONAL_NONE,
    .hidden = true,
};

/* The request number (1-based) at which the fault named `kind` strikes; 0: never. */
static long fault_at(const char *kind)
{
    const char *f = getenv("GPUMEM_FAULT"), *serial = getenv("GPUMEM_WORKER_SERIAL");
    if (!serial || strcmp(serial, "1") != 0)
        return 0;
    size_t n = strlen(kind);
    if (!f || strncmp(f, kind, n) != 0 || f[n] != ':')
        return 0;
    return strtol(f + n + 1, NULL, 10);
}

static void answer(gm_device *dev, const gm_bench_opts *o, const char *line, gm_probe_result *r)
{
    uint64_t bytes;
    gm_probe_point p;
    int kind;
    double fill;
    if (sscanf(line, "alloc %" SCNu64, &bytes) == 1) {
        gm_probe_alloc_local(dev, bytes, r);
    } else if (strcmp(line, "total") == 0) {
        gm_probe_total_local(dev, r);
    } else if (strcmp(line, "free") == 0) {
        gm_probe_free_local(dev, r);
    } else if (sscanf(line, "fragment %lf", &fill) == 1 && fill > 0 && fill <= 1) {
        gm_probe_fragment_local(dev, o, fill, r);
    } else if (sscanf(line, "latency %d %lf", &kind, &fill) == 2 && kind >= 0 && kind < GM_PATTERN_COUNT && fill >= 0
               && fill < 1) {
        gm_probe_latency_local(dev, o, (gm_pattern_kind)kind, fill, r);
    } else if (gm_probe_parse_point(line, &p) == 0) {
        gm_program_cache_times t0, t1;
        gm_program_cache_seconds(&t0);
        gm_probe_point_local(dev, o, &p, r);
        gm_program_cache_seconds(&t1);
        /* Where the probe's time went, for worker.log: its phases, then
         * what allocation, copies (inputs in, outputs back) and kernel
         * builds took of them. */
        char outcome[320];   /* fits, oom, or the failure's row status and note */
        if (r->outcome == GM_PROBE_FAILED)
            snprintf(outcome, sizeof outcome, "%s (%s)", gm_row_status_name(r->failed_as), r->note);
        else
            snprintf(outcome, sizeof outcome, "%s", r->outcome == GM_PROBE_FITS ? "fits" : "oom");
        fprintf(stderr, "point %s %s %s seq %" PRIu64 " batch %" PRIu64 " %s: held %.0f B; setup %.3f s, run %.3f s, "
                "verify %.3f s, release %.3f s; of these allocation %.3f s, copies %.3f s, kernel builds %.3f s\n",
                gm_workloads[p.workload]->name, p.impl, gm_precision_name(p.prec), p.seq, p.batch, outcome,
                r->stats[GM_POINT_HELD], r->stats[GM_POINT_SETUP_S], r->stats[GM_POINT_RUN_S],
                r->stats[GM_POINT_VERIFY_S], r->stats[GM_POINT_RELEASE_S], t1.alloc - t0.alloc, t1.copy - t0.copy,
                t1.build - t0.build);
    } else {
        memset(r, 0, sizeof *r);
        r->outcome = GM_PROBE_FAILED;
        r->failed_as = GM_ROW_ERROR;
        snprintf(r->note, sizeof r->note, "the worker got a request it does not know: '%.100s'", line);
    }
}

int gm_cmd_worker(int argc, char **argv)
{
    gm_bench_opts o;
    gm_opts_init(&o);
    bool help = false;
    char suite[32] = "";          /* SUITE of SUITE.cpu or SUITE.gpu */
    if (argc >= 2)
        snprintf(suite, sizeof suite, "%.*s", (int)strcspn(argv[1], "."), argv[1]);
    if (argc < 2 || !gm_is_suite_name(suite)) {
        printf("the worker needs the suite it serves\n");
        gm_opts_release(&o);
        return GM_EXIT_USAGE;
    }
    /* argv[1] is the suite; the bench options follow (argv[1] stands in for "bench"). */
    int rc = gm_bench_options(argc - 1, argv + 1, argv[1], &o, &help);
    if (rc || help) {
        printf("the worker's options are wrong\n");
        gm_opts_release(&o);
        return rc ? rc : GM_EXIT_USAGE;
    }
    char err[600];
    gm_device dev;
    struct timespec open0, open1;
    clock_gettime(CLOCK_MONOTONIC, &open0);
    rc = gm_select_device(o.backend, o.device, &dev, err, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &open1);
    if (rc) {
        printf("%s\n", err);
        gm_opts_release(&o);
        return rc;
    }
    gm_device_set_limit(&dev, o.mem_limit_set ? o.mem_limit : 0);   /* the suite passes its cap */
    char process[32];
    snprintf(process, sizeof process, "worker-%s", getenv("GPUMEM_WORKER_SERIAL") ? getenv("GPUMEM_WORKER_SERIAL") : "0");
    gm_memtrace_join(process);
    gm_memtrace_phase(suite);
    gm_program_cache_install(&dev);   /* each kernel built once per worker, not per probe */
    fprintf(stderr, "worker %s: device opened in %.3f s\n", process,
            (double)(open1.tv_sec - open0.tv_sec) + (double)(open1.tv_nsec - open0.tv_nsec) * 1e-9);
    printf("ready\n");
    fflush(stdout);
    long kill_at = fault_at("worker-kill"), hang_at = fault_at("worker-hang");
    char line[1024], out[4096];
    for (long n = 1; fgets(line, sizeof line, stdin); n++) {
        line[strcspn(line, "\n")] = '\0';
        if (n == kill_at)
            raise(SIGKILL);
        while (n == hang_at)
            pause();
        gm_probe_result r;
        answer(&dev, &o, line, &r);
        gm_device_trim(&dev);   /* the next probe finds the pool's cache free */
        if (gm_probe_format_result(&r, out, sizeof out) != 0 || fputs(out, stdout) == EOF || fflush(stdout) != 0)
            break;
    }
    gm_program_cache_release(&dev);
    gm_device_close(&dev);
    gm_memtrace_stop();
    gm_opts_release(&o);
    return GM_EXIT_OK;
}
