/* Starting a worker process (worker_spawn.h). */
#include "run/worker_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* True when entry "NAME=..." names the same variable as one of extra. */
static int replaced(const char *entry, const char *const *extra)
{
    size_t len = strcspn(entry, "=");
    for (int i = 0; extra && extra[i]; i++)
        if (strncmp(extra[i], entry, len) == 0 && extra[i][len] == '=')
            return 1;
    return 0;
}

/* The inherited environment less what extra replaces, then extra: one
 * malloc'd array of pointers into both (NULL when out of memory). */
static char **child_environment(const char *const *extra)
{
    size_t n = 0, m = 0;
    while (environ && environ[n])
        n++;
    while (extra && extra[m])
        m++;
    char **env = calloc(n + m + 1, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!replaced(environ[i], extra))
            env[k++] = environ[i];
    for (size_t i = 0; i < m; i++)
        env[k++] = (char *)extra[i];
    env[k] = NULL;
    return env;
}

/* In the child: makes fd its descriptor `to`, open across exec. */
static int place(int fd, int to)
{
    if (fd < 0)
        return 0;
    if (fd == to)
        return fcntl(to, F_SETFD, 0);
    return dup2(fd, to) < 0 ? -1 : 0;
}

pid_t gm_spawn_worker(const gm_spawn_spec *spec, char *err, size_t err_len)
{
    const char *path = spec->path ? spec->path : "/proc/self/exe";
    char **env = child_environment(spec->env);
    if (!env) {
        snprintf(err, err_len, "cannot start %s: out of memory", spec->argv[0]);
        errno = ENOMEM;
        return -1;
    }
    /* The child's failure message, made now: no stdio after fork. */
    char failed[300];
    int failed_len = snprintf(failed, sizeof failed, "gpumem: cannot run %s (%s): ", spec->argv[0], path);
    if (failed_len < 0 || failed_len >= (int)sizeof failed)
        failed_len = 0;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* Async-signal-safe calls only from here on. */
        if (place(spec->stdin_fd, STDIN_FILENO) == 0 && place(spec->stdout_fd, STDOUT_FILENO) == 0
            && place(spec->stderr_fd, STDERR_FILENO) == 0)
            execve(path, spec->argv, env);
        int why = errno;
        const char *text = why == ENOENT ? "no such file" : why == EACCES ? "permission denied"
                         : why == ENOEXEC ? "not an executable" : "exec failed";
        ssize_t ignored = write(STDERR_FILENO, failed, (size_t)failed_len);
        ignored = write(STDERR_FILENO, text, strlen(text));
        ignored = write(STDERR_FILENO, "\n", 1);
        (void)ignored;
        _exit(spec->exec_failed_status);
    }
    int saved = errno;
    free(env);
    if (pid < 0) {
        snprintf(err, err_len, "cannot start %s: %s", spec->argv[0], strerror(saved));
        errno = saved;
    }
    return pid;
}
