/*
 * Starting gpumem itself (or another program) as a worker process, in one
 * place: the oom suite's probe workers (bench/oom/worker.c) and one bench per
 * device under --device all (src/cli/bench_devices.c). Everything the
 * child needs (argv, the environment with the extra entries, its standard
 * streams) is made before fork; between fork and exec the child calls only
 * async-signal-safe functions (dup2, fcntl, execve, write, _exit), so a
 * parent with other threads (the watchdog's, the driver's) cannot leave it
 * stuck on a lock those threads held.
 */
#ifndef GM_RUN_WORKER_SPAWN_H
#define GM_RUN_WORKER_SPAWN_H

#include <stddef.h>
#include <sys/types.h>

typedef struct {
    const char *path;          /* the program; NULL: this binary (/proc/self/exe) */
    char *const *argv;         /* NULL-terminated; argv[0] names the process */
    const char *const *env;    /* extra NAME=VALUE entries, NULL-terminated (or
                                * NULL): each replaces an inherited NAME */
    int stdin_fd, stdout_fd, stderr_fd;   /* the child's 0, 1, 2; -1: inherited */
    int exec_failed_status;    /* the child's exit status when exec fails */
} gm_spawn_spec;

/* Starts the worker (stdio flushed first, so that nothing buffered is
 * written twice). Returns its pid, or -1 with errno set and a one-line
 * reason in err when it could not be started. The descriptors given stay
 * open in the parent; every other descriptor the parent opened with
 * O_CLOEXEC stays out of the child. */
pid_t gm_spawn_worker(const gm_spawn_spec *spec, char *err, size_t err_len);

#endif
