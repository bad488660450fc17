#include "device/memtrace.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ENV_NAME "GPUMEM_MEMTRACE"
#define BUFFER_BYTES 16384

static struct {
    int fd;                       /* -1: no trace */
    int64_t t0_ns;
    char process[32], phase[32];
    char buf[BUFFER_BYTES];
    size_t used;
    long lines;
} trace = {.fd = -1};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void flush_buffer(void)
{
    size_t off = 0;
    while (trace.fd >= 0 && off < trace.used) {
        ssize_t n = write(trace.fd, trace.buf + off, trace.used - off);
        if (n <= 0) {             /* the trace is auxiliary: stop tracing */
            close(trace.fd);
            trace.fd = -1;
            break;
        }
        off += (size_t)n;
    }
    trace.used = 0;
}

static int open_trace(const char *path, int64_t t0, const char *process, int create)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0), 0644);
    if (fd < 0)
        return -1;
    gm_memtrace_stop();
    trace.fd = fd;
    trace.t0_ns = t0;
    trace.lines = 0;
    snprintf(trace.process, sizeof trace.process, "%s", process);
    snprintf(trace.phase, sizeof trace.phase, "start");
    return 0;
}

/* The last t_s of an existing trace (0 when none). */
static double last_time(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char tail[256];
    double t = 0;
    if (fseek(f, -(long)sizeof tail + 1, SEEK_END) != 0)
        rewind(f);
    size_t n = fread(tail, 1, sizeof tail - 1, f);
    fclose(f);
    tail[n] = '\0';
    while (n && tail[n - 1] == '\n')
        tail[--n] = '\0';
    char *line = strrchr(tail, '\n');
    if (line)
        sscanf(line + 1, "%lf,", &t);
    return t;
}

int gm_memtrace_start(const char *dir, bool resume)
{
    char path[4200], env[4300];
    snprintf(path, sizeof path, "%s/memory.csv", dir);
    if (resume && access(path, F_OK) == 0) {
        int64_t t0 = now_ns() - (int64_t)(last_time(path) * 1e9);
        if (open_trace(path, t0, "main", 0) != 0)
            return -1;
        snprintf(env, sizeof env, "%" PRId64 ":%s", t0, path);
        setenv(ENV_NAME, env, 1);
        return 0;
    }
    int64_t t0 = now_ns();
    if (open_trace(path, t0, "main", 1) != 0)
        return -1;
    static const char header[] = "t_s,process,phase,live_bytes\n";
    if (write(trace.fd, header, sizeof header - 1) != (ssize_t)(sizeof header - 1)) {
        close(trace.fd);
        trace.fd = -1;
        return -1;
    }
    snprintf(env, sizeof env, "%" PRId64 ":%s", t0, path);
    setenv(ENV_NAME, env, 1);
    return 0;
}

void gm_memtrace_join(const char *process)
{
    const char *env = getenv(ENV_NAME);
    char *colon = env ? strchr(env, ':') : NULL;
    if (!colon)
        return;
    open_trace(colon + 1, strtoll(env, NULL, 10), process, 0);
}

void gm_memtrace_phase(const char *phase)
{
    snprintf(trace.phase, sizeof trace.phase, "%s", phase);
}

void gm_memtrace_record(uint64_t live_bytes)
{
    if (trace.fd < 0 || trace.lines >= GM_MEMTRACE_MAX_LINES)
        return;
    char line[160];
    int n = snprintf(line, sizeof line, "%.6f,%s,%s,%" PRIu64 "\n", (double)(now_ns() - trace.t0_ns) / 1e9,
                     trace.process, trace.phase, live_bytes);
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    if (trace.used + (size_t)n > sizeof trace.buf)
        flush_buffer();
    memcpy(trace.buf + trace.used, line, (size_t)n);
    trace.used += (size_t)n;
    trace.lines++;
}

void gm_memtrace_stop(void)
{
    if (trace.fd < 0)
        return;
    flush_buffer();
    if (trace.fd >= 0)
        close(trace.fd);
    trace.fd = -1;
}
