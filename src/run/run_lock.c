#include "run/run_lock.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Whether fd is still the file at path: a holder that finished removed
 * the file it locked, so a lock taken on the removed one guards nothing. */
static bool still_there(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int gm_run_lock(const char *dir, char *err, size_t err_len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/lock", dir);
    int fd, saved;
    for (int tries = 0;; tries++) {
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) {
            snprintf(err, err_len, "cannot create %s: %s", path, strerror(errno));
            return -1;
        }
        saved = flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : errno;
        if (saved || still_there(fd, path) || tries == 100)
            break;
        close(fd);              /* its holder removed it as we took it: take the new one */
    }
    if (saved) {
        char owner[256] = "";
        ssize_t n = pread(fd, owner, sizeof owner - 1, 0);
        owner[n > 0 ? n : 0] = '\0';
        owner[strcspn(owner, "\n")] = '\0';
        close(fd);
        if (saved != EWOULDBLOCK) {
            snprintf(err, err_len, "cannot lock %s: %s", path, strerror(saved));
            return -1;
        }
        snprintf(err, err_len, "run folder %s is in use by another gpumem (%s)", dir,
                 owner[0] ? owner : "owner unknown");
        return -2;
    }
    char host[128] = "?", when[32], line[400];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int len = snprintf(line, sizeof line, "pid %ld on %s, started %s\n", (long)getpid(), host, when);
    if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)len, 0) != len) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

void gm_run_unlock(const char *dir, int fd)
{
    if (fd < 0)
        return;
    /* Removed while still held, so a writer that opened it meanwhile
     * finds it gone once it holds it (still_there) and takes a new one. */
    char path[4200];
    snprintf(path, sizeof path, "%s/lock", dir);
    if (unlink(path) != 0 && ftruncate(fd, 0) != 0) {
        /* The lock goes with the descriptor; a stale owner line is harmless. */
    }
    close(fd);
}
