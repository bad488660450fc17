/*
 * Opening a run folder: a new one (gm_run_open) or one to continue
 * (gm_run_reopen), the folder's lock, and the CSV headers. See results.h.
 */
#include "device/memtrace.h"
#include "run/results.h"

#include "lib/csv.h"
#include "run/results_io.h"
#include "run/run_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int gm_make_dirs(const char *path)
{
    char buf[4096];
    if (strlen(path) >= sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(buf, path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return -1;
    return 0;
}

static void slug(const char *in, char *out, size_t len)
{
    size_t j = 0;
    for (; *in && j + 1 < len && j < 40; in++) {
        char c = *in;
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
            out[j++] = c;
        else if (c >= 'A' && c <= 'Z')
            out[j++] = (char)(c - 'A' + 'a');
        else if (j && out[j - 1] != '-')
            out[j++] = '-';
    }
    while (j && out[j - 1] == '-')
        j--;
    out[j] = '\0';
}

/* Opens (creating, or appending when `append`) <dir>/name, O_APPEND;
 * a new file gets its header line. Returns the fd or -1 with err. */
static int open_csv(gm_run *run, const char *name, const char *const *extra, int n_extra, bool append,
                    char *err, size_t err_len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", run->dir, name);
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | (append ? 0 : O_CREAT | O_EXCL), 0666);
    if (fd < 0 && errno == EEXIST) {
        snprintf(err, err_len, "%s already holds a run (%s); choose another --out, or continue it with "
                 "gpumem bench --resume %s", run->dir, name, run->dir);
        return GM_RUN_REFUSED;
    }
    if (fd < 0) {
        snprintf(err, err_len, "cannot %s %s: %s", append ? "open" : "create", path, strerror(errno));
        return -1;
    }
    if (append)
        return fd;
    const char *header[32];
    int n = 0;
    header[n++] = "schema_version";
    for (int i = 0; i < gm_n_point_columns; i++)
        header[n++] = gm_point_columns[i];
    for (int i = 0; i < n_extra; i++)
        header[n++] = extra[i];
    size_t len = 0;
    char *line = gm_csv_line(header, n, &len);
    if (!line || gm_write_whole(fd, line, len) != 0 || fsync(fd) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", path, strerror(errno));
        free(line);
        close(fd);
        return -1;
    }
    free(line);
    return fd;
}

static const char *const result_cols[] = {"metric", "unit", "value", "min",  "max",
                                          "stdev",  "reps", "status", "note"};
static const char *const sample_cols[] = {"metric", "unit", "rep", "value", "round"};

/* Opens both CSVs of run->dir (see open_csv). */
static int open_both(gm_run *run, bool append, char *err, size_t err_len)
{
    run->results_fd = open_csv(run, "results.csv", result_cols, 9, append, err, err_len);
    if (run->results_fd < 0)
        return run->results_fd;
    run->samples_fd = open_csv(run, "samples.csv", sample_cols, 5, append, err, err_len);
    if (run->samples_fd < 0) {
        int rc = run->samples_fd;
        close(run->results_fd);
        run->results_fd = -1;
        return rc;
    }
    run->results_len = lseek(run->results_fd, 0, SEEK_END);
    run->samples_len = lseek(run->samples_fd, 0, SEEK_END);
    return 0;
}

int gm_run_open(gm_run *run, const char *out, const char *backend, const char *device,
                const char *device_id, char *err, size_t err_len)
{
    memset(run, 0, sizeof *run);
    snprintf(run->device_id, sizeof run->device_id, "%s", device_id ? device_id : "");
    run->results_fd = run->samples_fd = run->lock_fd = -1;
    snprintf(run->backend, sizeof run->backend, "%s", backend);
    snprintf(run->device, sizeof run->device, "%s", device);
    char stamp[32], dev_slug[48];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    slug(device, dev_slug, sizeof dev_slug);
    snprintf(run->run_id, sizeof run->run_id, "%s-%s-%s", stamp, backend, dev_slug);
    if (out) {
        if (strlen(out) >= sizeof run->dir - 64) {
            snprintf(err, err_len, "--out path is too long");
            return GM_RUN_REFUSED;
        }
        snprintf(run->dir, sizeof run->dir, "%s", out);
        if (gm_make_dirs(run->dir) != 0) {
            snprintf(err, err_len, "cannot create output folder %s: %s", run->dir, strerror(errno));
            return -1;
        }
        const char *base = strrchr(out, '/');
        base = base && base[1] ? base + 1 : out;
        snprintf(run->run_id, sizeof run->run_id, "%.120s", base);
    } else {
        if (gm_make_dirs("results") != 0) {
            snprintf(err, err_len, "cannot create results/: %s", strerror(errno));
            return -1;
        }
        /* A second run in the same second gets a suffix. */
        char base[128];
        snprintf(base, sizeof base, "%s", run->run_id);
        for (int k = 1;; k++) {
            snprintf(run->dir, sizeof run->dir, "results/%s", run->run_id);
            if (mkdir(run->dir, 0777) == 0)
                break;
            if (errno != EEXIST || k > 99) {
                snprintf(err, err_len, "cannot create %s: %s", run->dir, strerror(errno));
                return -1;
            }
            snprintf(run->run_id, sizeof run->run_id, "%.100s-%d", base, k + 1);
        }
    }
    if (access(run->dir, W_OK) != 0) {
        snprintf(err, err_len, "output folder %s is not writable: %s", run->dir, strerror(errno));
        return -1;
    }
    run->lock_fd = gm_run_lock(run->dir, err, err_len);
    if (run->lock_fd < 0)
        return run->lock_fd;
    int rc = open_both(run, false, err, err_len);
    if (rc == 0)
        gm_memtrace_start(run->dir, false);   /* memory.csv: auxiliary, never fails the run */
    return rc;
}

int gm_run_reopen(gm_run *run, const char *dir, const char *backend, const char *device, off_t results_len,
                  off_t samples_len, int rows, char *err, size_t err_len)
{
    memset(run, 0, sizeof *run);
    run->results_fd = run->samples_fd = run->lock_fd = -1;
    snprintf(run->backend, sizeof run->backend, "%s", backend);
    snprintf(run->device, sizeof run->device, "%s", device);
    if (strlen(dir) >= sizeof run->dir - 64) {
        snprintf(err, err_len, "run folder path is too long");
        return GM_RUN_REFUSED;
    }
    snprintf(run->dir, sizeof run->dir, "%s", dir);
    size_t len = strlen(run->dir);
    while (len > 1 && run->dir[len - 1] == '/')
        run->dir[--len] = '\0';
    const char *base = strrchr(run->dir, '/');
    snprintf(run->run_id, sizeof run->run_id, "%.120s", base ? base + 1 : run->dir);
    run->lock_fd = gm_run_lock(run->dir, err, err_len);
    if (run->lock_fd < 0)
        return run->lock_fd;
    if (open_both(run, true, err, err_len) != 0)
        return -1;
    if (ftruncate(run->results_fd, results_len) != 0 || ftruncate(run->samples_fd, samples_len) != 0) {
        snprintf(err, err_len, "cannot cut back the unfinished point in %s: %s", run->dir, strerror(errno));
        return -1;
    }
    run->results_len = results_len;
    run->samples_len = samples_len;
    run->rows_written = rows;
    gm_memtrace_start(run->dir, true);        /* the trace goes on after its last line */
    return 0;
}

int gm_run_cut_back(gm_run *run, off_t results_len, off_t samples_len)
{
    if (ftruncate(run->results_fd, results_len) != 0 || ftruncate(run->samples_fd, samples_len) != 0)
        return -1;
    run->results_len = results_len;
    run->samples_len = samples_len;
    return fsync(run->results_fd) == 0 && fsync(run->samples_fd) == 0 ? 0 : -1;
}

