/*
 * The suite's side of a probe worker: a child process (this binary's
 * hidden `__worker` command, src/cmd_worker.c) started with the bench
 * command's own options, plus the chosen backend, device and cap, that
 * answers one request line with one result line. A worker that dies is a
 * GM_PROBE_CRASH naming the signal; one that does not answer within
 * --probe-timeout seconds is killed and is a GM_PROBE_TIMEOUT. Either way
 * the next request starts a fresh worker. Its stderr goes to
 * worker.log in the run folder; GPUMEM_WORKER_SERIAL tells it which
 * worker of the run it is (1 for the first).
 */
#include "bench/oom/probe.h"

#include "lib/interrupt.h"
#include "run/worker_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define READY_TIMEOUT_S 120     /* opening the device in a fresh worker */
#define EXIT_WAIT_MS 10000      /* a worker told to stop gets this long */

struct gm_worker {
    gm_bench *b;
    pid_t pid;                  /* 0: none running */
    int started;                /* workers started so far */
    int to_worker, from_worker;
    char line[4096];
    size_t have;                /* bytes of line read so far */
};

gm_worker *gm_worker_new(gm_bench *b)
{
    gm_worker *w = calloc(1, sizeof *w);
    if (w) {
        w->b = b;
        w->to_worker = w->from_worker = -1;
    }
    return w;
}

/* The worker's arguments: the bench options, then what this run chose. */
static char **worker_argv(const gm_bench *b, char *backend, char *device, char *limit, char *section)
{
    char **argv = calloc((size_t)b->argc + 10, sizeof *argv);
    if (!argv)
        return NULL;
    int n = 0;
    argv[n++] = "gpumem";
    argv[n++] = "__worker";
    gm_suite_section("oom", b->dev, section, 16);
    argv[n++] = section;      /* the suite whose options apply, for this kind of device */
    for (int i = 1; i < b->argc; i++)
        argv[n++] = b->argv[i];
    snprintf(backend, 16, "%s", b->dev->backend->name);
    snprintf(device, 16, "%d", b->dev->index);
    snprintf(limit, 32, "%" PRIu64, b->dev->mem_limit);
    argv[n++] = "--backend";
    argv[n++] = backend;
    argv[n++] = "--device";
    argv[n++] = device;
    if (b->dev->mem_limit) {
        argv[n++] = "--mem-limit";
        argv[n++] = limit;
    }
    argv[n] = NULL;
    return argv;
}

/* Reaps the worker; describes how it ended in note. */
static void reap(gm_worker *w, bool kill_it, char *note, size_t len)
{
    if (!w->pid)
        return;
    if (kill_it)
        kill(w->pid, SIGKILL);
    close(w->to_worker);
    close(w->from_worker);
    w->to_worker = w->from_worker = -1;
    int status = 0;
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    w->pid = 0;
    w->have = 0;
    if (!note)
        return;
    if (WIFSIGNALED(status))
        snprintf(note, len, "the worker was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        snprintf(note, len, "the worker exited with status %d", WEXITSTATUS(status));
}

/* Reads one line within timeout_s. 0: a line in w->line; 1: EOF; 2: timeout. */
static int read_line(gm_worker *w, unsigned timeout_s)
{
    double deadline = gm_now() + timeout_s;
    for (;;) {
        char *nl = memchr(w->line, '\n', w->have);
        if (nl) {
            *nl = '\0';
            return 0;
        }
        if (w->have >= sizeof w->line - 1)
            return 1;                       /* a line this long is not ours */
        double left = deadline - gm_now();
        if (left <= 0 || gm_interrupted())
            return 2;                       /* also when the run stops: the worker is killed */
        struct pollfd pfd = {w->from_worker, POLLIN, 0};
        int rc = poll(&pfd, 1, (int)(left * 1000) + 1);
        if (rc < 0 && errno == EINTR)
            continue;                       /* a signal to stop is seen at the loop's top */
        if (rc == 0)
            return 2;
        ssize_t got = read(w->from_worker, w->line + w->have, sizeof w->line - 1 - w->have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 1;
        w->have += (size_t)got;
    }
}

/* Drops the line just read (and keeps anything after it). */
static void consume_line(gm_worker *w)
{
    size_t used = strlen(w->line) + 1;
    memmove(w->line, w->line + used, w->have - used);
    w->have -= used;
}

static int start(gm_worker *w, char *why, size_t len)
{
    char backend[16], device[16], limit[32], section[16];
    char **argv = worker_argv(w->b, backend, device, limit, section);
    int to[2] = {-1, -1}, from[2] = {-1, -1};
    /* Every end is close-on-exec: the child gets its two ends as 0 and 1. */
    if (!argv || pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) {
        snprintf(why, len, "cannot start a worker: %s", strerror(errno));
        free(argv);
        for (int i = 0; i < 2; i++) {
            if (to[i] >= 0)
                close(to[i]);
            if (from[i] >= 0)
                close(from[i]);
        }
        return -1;
    }
    char log[4200];
    snprintf(log, sizeof log, "%s/worker.log", w->b->run->dir);
    int log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    char serial[48];
    snprintf(serial, sizeof serial, "GPUMEM_WORKER_SERIAL=%d", ++w->started);
    const char *env[] = {serial, NULL};
    gm_spawn_spec spec = {NULL, argv, env, to[0], from[1], log_fd, 127};
    pid_t pid = gm_spawn_worker(&spec, why, len);
    free(argv);
    if (log_fd >= 0)
        close(log_fd);
    close(to[0]);
    close(from[1]);
    if (pid < 0) {
        close(to[1]);
        close(from[0]);
        return -1;
    }
    w->pid = pid;
    w->to_worker = to[1];
    w->from_worker = from[0];
    w->have = 0;
    /* The worker says `ready` once its device is open, or why not. */
    int rc = read_line(w, READY_TIMEOUT_S);
    if (rc == 0 && strcmp(w->line, "ready") == 0) {
        consume_line(w);
        return 0;
    }
    if (rc == 0)
        snprintf(why, len, "%.*s", (int)(len - 1), w->line);
    reap(w, true, rc == 0 ? NULL : why, len);
    return -1;
}

/* Sends one request and reads its result, restarting the worker first if
 * need be. */
static void ask(gm_worker *w, const char *request, gm_probe_result *r)
{
    memset(r, 0, sizeof *r);
    if (!w->pid && start(w, r->note, sizeof r->note) != 0) {
        r->outcome = GM_PROBE_FAILED;
        r->failed_as = GM_ROW_ERROR;
        r->device_lost = true;
        return;
    }
    size_t len = strlen(request);
    bool sent = write(w->to_worker, request, len) == (ssize_t)len;
    int rc = sent ? read_line(w, w->b->opts->probe_timeout) : 1;
    if (rc == 0 && gm_probe_parse_result(w->line, r) == 0) {
        consume_line(w);
        return;
    }
    if (rc == 2) {
        r->outcome = GM_PROBE_TIMEOUT;
        reap(w, true, NULL, 0);
        snprintf(r->note, sizeof r->note, "no answer within %u s: the worker was killed",
                 w->b->opts->probe_timeout);
        return;
    }
    r->outcome = GM_PROBE_CRASH;
    reap(w, rc == 0, r->note, sizeof r->note);   /* a garbled answer: stop that worker too */
}

void gm_worker_alloc(gm_worker *w, uint64_t bytes, gm_probe_result *r)
{
    char req[64];
    snprintf(req, sizeof req, "alloc %" PRIu64 "\n", bytes);
    ask(w, req, r);
}

void gm_worker_total(gm_worker *w, gm_probe_result *r) { ask(w, "total\n", r); }

void gm_worker_free_memory(gm_worker *w, gm_probe_result *r) { ask(w, "free\n", r); }

void gm_worker_point(gm_worker *w, const gm_probe_point *p, gm_probe_result *r)
{
    char req[160];
    if (gm_probe_format_point(p, req, sizeof req) != 0) {
        memset(r, 0, sizeof *r);
        r->outcome = GM_PROBE_FAILED;
        r->failed_as = GM_ROW_ERROR;
        snprintf(r->note, sizeof r->note, "the probe does not fit a request line");
        return;
    }
    ask(w, req, r);
}

void gm_worker_fragment(gm_worker *w, double fill, gm_probe_result *r)
{
    char req[64];
    snprintf(req, sizeof req, "fragment %.6f\n", fill);
    ask(w, req, r);
}

void gm_worker_latency(gm_worker *w, gm_pattern_kind kind, double fill, gm_probe_result *r)
{
    char req[64];
    snprintf(req, sizeof req, "latency %d %.6f\n", (int)kind, fill);
    ask(w, req, r);
}

void gm_worker_free(gm_worker *w)
{
    if (!w)
        return;
    if (w->pid) {
        /* Closing its input tells the worker to stop; wait a while for it. */
        close(w->to_worker);
        w->to_worker = -1;
        struct pollfd pfd = {w->from_worker, POLLIN, 0};
        char sink[256];
        double deadline = gm_now() + EXIT_WAIT_MS / 1000.0;
        while (gm_now() < deadline && poll(&pfd, 1, 100) >= 0)
            if ((pfd.revents & (POLLIN | POLLHUP)) && read(w->from_worker, sink, sizeof sink) <= 0)
                break;
        if (waitpid(w->pid, NULL, WNOHANG) == w->pid) {
            close(w->from_worker);
            w->pid = 0;
        } else {
            reap(w, true, NULL, 0);
        }
    }
    free(w);
}
