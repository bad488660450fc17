/*
 * `gpumem bench --device all|LIST`: one worker process per device, each
 * this binary's own `bench` with the same options but `--device K` and
 * `--out RUN/device<K>`, all at once (or one after another with
 * --serial). Every device's folder is a normal run folder, its rows
 * tagged with the device's stable identity (device_id); the worker's
 * output goes to RUN/device<K>/bench.log; RUN/devices.csv lists each
 * device with its identity, folder and exit status. A device whose worker
 * failed before writing any row gets a run folder with one `error` row
 * saying why; the other devices go on. The memory cap applies per device.
 * Exit status: 0 when every worker succeeded, else the first of 3, 2, 1
 * that some worker returned (a worker killed by a signal counts as 3).
 */
#include "cli/bench_devices.h"
#include "lib/json.h"

#include "cli/commands.h"
#include "lib/csv.h"
#include "run/meta.h"
#include "run/results.h"
#include "run/worker_spawn.h"
#include "device/select.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEVICES 64

typedef struct {
    int index;
    gm_device_info info;
    char dir[4200];
    pid_t pid;
    int status;                 /* the worker's exit status (3 for a signal) */
    char how[128];              /* how it ended, in words */
} device_job;

/* Parses "all" or "0,2,3" against count devices into jobs. */
static int parse_list(const char *list, int count, device_job *jobs, int *n, char *err, size_t err_len)
{
    *n = 0;
    if (strcmp(list, "all") == 0) {
        for (int i = 0; i < count && i < MAX_DEVICES; i++)
            jobs[(*n)++].index = i;
        return 0;
    }
    char buf[256], *save = NULL;
    snprintf(buf, sizeof buf, "%s", list);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(tok, &end, 10);
        if (*end || end == tok || v < 0 || v >= count) {
            snprintf(err, err_len, "--device '%s': '%s' is not a device (0 to %d, or all)", list, tok, count - 1);
            return -1;
        }
        for (int i = 0; i < *n; i++)
            if (jobs[i].index == v) {
                snprintf(err, err_len, "--device '%s': device %ld is listed twice", list, v);
                return -1;
            }
        if (*n == MAX_DEVICES)
            break;
        jobs[(*n)++].index = (int)v;
    }
    if (*n == 0) {
        snprintf(err, err_len, "--device '%s': expected a device list such as 0,1 or all", list);
        return -1;
    }
    return 0;
}

/* The worker's argv: the options given, less --device, --out and
 * --serial, then the backend, the device and its folder. */
static char **worker_argv(int argc, char **argv, const char *backend, const char *device, const char *dir)
{
    char **out = calloc((size_t)argc + 10, sizeof *out);
    if (!out)
        return NULL;
    int n = 0;
    out[n++] = "gpumem";
    out[n++] = "bench";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char name[64];
        size_t len = strcspn(a + 2, "=");
        snprintf(name, sizeof name, "%.*s", (int)(len < 63 ? len : 63), a + 2);
        bool drop = strncmp(a, "--", 2) == 0
                    && (strcmp(name, "device") == 0 || strcmp(name, "out") == 0 || strcmp(name, "serial") == 0);
        bool has_value = strncmp(a, "--", 2) == 0 && !strchr(a, '=') && gm_opts_takes_value(name) == 1;
        if (!drop)
            out[n++] = argv[i];
        if (has_value && i + 1 < argc) {
            if (!drop)
                out[n++] = argv[i + 1];
            i++;
        }
    }
    out[n++] = "--backend";
    out[n++] = (char *)backend;
    out[n++] = "--device";
    out[n++] = (char *)device;
    out[n++] = "--out";
    out[n++] = (char *)dir;
    out[n] = NULL;
    return out;
}

static pid_t start_worker(int argc, char **argv, const char *backend, device_job *j)
{
    char device[16], log[4300], err[300];
    snprintf(device, sizeof device, "%d", j->index);
    snprintf(log, sizeof log, "%s/bench.log", j->dir);
    char **wargv = worker_argv(argc, argv, backend, device, j->dir);
    if (!wargv)
        return -1;
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    gm_spawn_spec spec = {NULL, wargv, NULL, -1, fd, fd, GM_EXIT_DEVICE};
    pid_t pid = gm_spawn_worker(&spec, err, sizeof err);
    int saved = errno;
    if (fd >= 0)
        close(fd);
    free(wargv);
    errno = saved;
    return pid;
}

static void finish(device_job *j, int wstatus)
{
    if (WIFSIGNALED(wstatus)) {
        j->status = GM_EXIT_DEVICE;
        snprintf(j->how, sizeof j->how, "killed by signal %d (%s)", WTERMSIG(wstatus), strsignal(WTERMSIG(wstatus)));
    } else {
        j->status = WEXITSTATUS(wstatus);
        snprintf(j->how, sizeof j->how, j->status ? "exit status %d" : "complete", j->status);
    }
    /* A failed run says why in its meta.json: device-lost, hung, ... */
    char path[4300], err[300];
    json_t *meta = NULL;
    snprintf(path, sizeof path, "%s/meta.json", j->dir);
    if (j->status && (meta = gm_json_load(path, err, sizeof err)) != NULL) {
        const char *status = gm_json_str(meta, "status");
        size_t used = strlen(j->how);
        if (status && strcmp(status, "running") != 0)
            snprintf(j->how + used, sizeof j->how - used, " (%.40s)", status);
    }
    json_decref(meta);
}

/* The last line of the worker's log, for the error row. */
static void last_log_line(const device_job *j, char *out, size_t len)
{
    char path[4300], line[512];
    snprintf(path, sizeof path, "%s/bench.log", j->dir);
    snprintf(out, len, "no output");
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f))
        if (line[strspn(line, " \r\n")])
            snprintf(out, len, "%.*s", (int)strcspn(line, "\r\n"), line);
    fclose(f);
}

/* A worker that wrote no row leaves a run folder with one error row. */
static void write_error_run(const gm_backend *be, device_job *j, int argc, char **argv, const char *profile)
{
    char path[4300], err[600], why[512], note[700];
    snprintf(path, sizeof path, "%s/results.csv", j->dir);
    if (access(path, F_OK) == 0)
        return;
    gm_run run;
    if (gm_run_open(&run, j->dir, be->name, j->info.name, j->info.uuid, err, sizeof err) == 0) {
        last_log_line(j, why, sizeof why);
        snprintf(note, sizeof note, "device worker %s: %s", j->how, why);
        gm_row row = {.suite = "bench", .workload = "device", .metric = "run", .status = GM_ROW_ERROR, .note = note};
        gm_run_write(&run, &row, NULL, 0, err, sizeof err);
        gm_meta meta = {&run, NULL, argc + 1, argv - 1, profile, time(NULL), time(NULL), "failed", NULL};
        gm_meta_write(&meta, err, sizeof err);
    }
    gm_run_close(&run);
}

typedef struct {
    const gm_backend *be;
    const device_job *jobs;
    int n;
} index_ctx;

static void emit_index(FILE *f, void *ctx)
{
    const index_ctx *c = ctx;
    static const char *const head[] = {"index", "backend", "device", "device_id", "folder", "exit_status", "result"};
    gm_csv_row(f, head, 7);
    for (int i = 0; i < c->n; i++) {
        const device_job *j = &c->jobs[i];
        char idx[16], st[16];
        const char *base = strrchr(j->dir, '/');
        snprintf(idx, sizeof idx, "%d", j->index);
        snprintf(st, sizeof st, "%d", j->status);
        const char *row[] = {idx, c->be->name, j->info.name, j->info.uuid, base ? base + 1 : j->dir, st, j->how};
        gm_csv_row(f, row, 7);
    }
}

int gm_bench_devices(int argc, char **argv, const gm_bench_opts *o)
{
    char err[600];
    const gm_backend *be;
    int count = 0;
    int rc = gm_select_backend(o->backend, &be, &count, err, sizeof err);
    static device_job jobs[MAX_DEVICES];
    int n = 0;
    if (rc == 0 && parse_list(o->device_list, count, jobs, &n, err, sizeof err) != 0)
        rc = GM_EXIT_USAGE;
    if (rc) {
        fprintf(stderr, "gpumem bench: %s\n", err);
        return rc;
    }
    char root[4096];
    if (o->out[0]) {
        snprintf(root, sizeof root, "%s", o->out);
    } else {
        char stamp[32];
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        snprintf(root, sizeof root, "results/%s-%s-devices", stamp, be->name);
    }
    char index_path[4300];
    snprintf(index_path, sizeof index_path, "%s/devices.csv", root);
    if (gm_make_dirs(root) != 0 || access(index_path, F_OK) == 0) {
        fprintf(stderr, "gpumem bench: --out %s: %s\n", root,
                errno == 0 || access(index_path, F_OK) == 0 ? "already holds a devices.csv" : strerror(errno));
        return GM_EXIT_USAGE;
    }
    for (int i = 0; i < n; i++) {
        device_job *j = &jobs[i];
        gm_error e = {0};
        if (be->describe(j->index, &j->info, &e) != GM_OK)
            snprintf(j->info.name, sizeof j->info.name, "device %d", j->index);
        snprintf(j->dir, sizeof j->dir, "%s/device%d", root, j->index);
        if (gm_make_dirs(j->dir) != 0) {
            fprintf(stderr, "gpumem bench: cannot create %s: %s\n", j->dir, strerror(errno));
            return GM_EXIT_USAGE;
        }
    }
    if (!o->quiet)
        fprintf(stderr, "gpumem: %s devices %s, %s -> %s\n", be->name, o->device_list,
                o->serial ? "one after another" : "all at once", root);
    /* Serially each worker is reaped before the next starts; concurrently
     * every worker starts first and all are reaped at the end. */
    int reaped = 0;
    for (int i = 0; i < n; i++) {
        jobs[i].pid = start_worker(argc, argv, be->name, &jobs[i]);
        if (jobs[i].pid < 0) {
            jobs[i].status = GM_EXIT_DEVICE;
            snprintf(jobs[i].how, sizeof jobs[i].how, "could not start: %s", strerror(errno));
        }
        for (; (o->serial || i == n - 1) && reaped <= i; reaped++) {
            int ws;
            if (jobs[reaped].pid <= 0)
                continue;
            while (waitpid(jobs[reaped].pid, &ws, 0) < 0 && errno == EINTR)
                ;
            finish(&jobs[reaped], ws);
        }
    }
    int worst = GM_EXIT_OK;
    for (int i = 0; i < n; i++) {
        device_job *j = &jobs[i];
        if (j->status)
            write_error_run(be, j, argc, argv, o->profile);
        if (j->status == GM_EXIT_DEVICE || (j->status == GM_EXIT_USAGE && worst != GM_EXIT_DEVICE)
            || (j->status && worst == GM_EXIT_OK))
            worst = j->status > GM_EXIT_DEVICE ? GM_EXIT_DEVICE : j->status;
        printf("device %d (%s): %s -> %s\n", j->index, j->info.uuid[0] ? j->info.uuid : j->info.name, j->how, j->dir);
    }
    index_ctx ctx = {be, jobs, n};
    if (gm_write_file_atomic(index_path, emit_index, &ctx, err, sizeof err) != 0) {
        fprintf(stderr, "gpumem bench: %s\n", err);
        return GM_EXIT_USAGE;
    }
    printf("results: %s (%d device%s; gpumem fleet %s compares them)\n", root, n, n == 1 ? "" : "s", root);
    return worst;
}
