/* Reading RUN/devices.csv (run_devices.h), as bench_devices.c writes it. */
#include "run_devices.h"

#include "csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

enum { C_INDEX, C_BACKEND, C_DEVICE, C_DEVICE_ID, C_FOLDER, C_EXIT, N_COLS };
static const char *const columns[N_COLS] = {"index", "backend", "device", "device_id", "folder", "exit_status"};

int gm_run_devices(const char *run_dir, gm_run_device *out, int max, char *err, size_t err_len)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/devices.csv", run_dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char *line = NULL, *fields[32];
    size_t cap = 0;
    int col[N_COLS], n_cols = -1, lineno = 1, n = 0;
    ssize_t got = getline(&line, &cap, f);
    if (got > 0) {
        line[strcspn(line, "\r\n")] = '\0';
        n_cols = gm_csv_split(line, fields, 32);
    }
    for (int c = 0; c < N_COLS && n >= 0; c++) {
        col[c] = -1;
        for (int i = 0; i < n_cols; i++)
            if (strcmp(fields[i], columns[c]) == 0)
                col[c] = i;
        if (col[c] < 0) {
            snprintf(err, err_len, "%s:1: not a gpumem devices header (no column '%s')", path, columns[c]);
            n = -1;
        }
    }
    while (n >= 0 && n < max && (got = getline(&line, &cap, f)) > 0) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        char *end;
        if (gm_csv_split(line, fields, 32) != n_cols
            || (out[n].index = (int)strtol(fields[col[C_INDEX]], &end, 10), *end)) {
            snprintf(err, err_len, "%s:%d: malformed row (expected %d fields)", path, lineno, n_cols);
            n = -1;
            break;
        }
        gm_run_device *d = &out[n++];
        snprintf(d->backend, sizeof d->backend, "%s", fields[col[C_BACKEND]]);
        snprintf(d->device, sizeof d->device, "%s", fields[col[C_DEVICE]]);
        snprintf(d->device_id, sizeof d->device_id, "%s", fields[col[C_DEVICE_ID]]);
        snprintf(d->folder, sizeof d->folder, "%s", fields[col[C_FOLDER]]);
        d->exit_status = atoi(fields[col[C_EXIT]]);
    }
    free(line);
    fclose(f);
    return n;
}
