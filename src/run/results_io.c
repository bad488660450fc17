/* One CSV line in one write(2): see results_io.h. */
#include "run/results_io.h"

#include "lib/csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const gm_point_columns[] = {"run_id",  "backend",   "device",  "device_id", "suite",
                                        "workload", "variant",  "pattern", "precision",
                                        "weight_precision", "kv_precision", "activation_precision",
                                        "model",   "mode",
                                        "batch",   "seq_len",   "bytes",   "model_bytes",
                                        "measured_bytes"};
const int gm_n_point_columns = (int)(sizeof gm_point_columns / sizeof gm_point_columns[0]);

/* Writes all of buf to fd in one write(2) (a short write is an error:
 * the OS refused the rest, e.g. a full disk or a file-size limit). */
int gm_write_whole(int fd, const char *buf, size_t len)
{
    ssize_t n;
    do
        n = write(fd, buf, len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    if ((size_t)n != len) {
        errno = ENOSPC;
        return -1;
    }
    return 0;
}

/* Formats n fields as one CSV line into a heap buffer; returns it (with
 * *len) or NULL. */
char *gm_csv_line(const char *const *fields, int n, size_t *len)
{
    char *buf = NULL;
    FILE *m = open_memstream(&buf, len);
    if (!m)
        return NULL;
    int bad = gm_csv_row(m, fields, n) != 0;
    bad |= fclose(m) != 0;
    if (bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

