/* Reading RUN/devices.csv (run_devices.h), as bench_devices.c writes it. */
#include "run/run_devices.h"

#include "lib/csv_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { C_INDEX, C_BACKEND, C_DEVICE, C_DEVICE_ID, C_FOLDER, C_EXIT, N_COLS };
static const char *const columns[N_COLS] = {"index", "backend", "device", "device_id", "folder", "exit_status"};

int gm_run_devices(const char *run_dir, gm_run_device *out, int max, char *err, size_t err_len)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/devices.csv", run_dir);
    if (access(path, F_OK) != 0)
        return 0;
    gm_csv_table t;
    int col[N_COLS];
    if (gm_csv_table_load(path, &t, err, err_len) != 0)
        return -1;
    int n = gm_csv_table_columns(&t, path, columns, col, N_COLS, err, err_len) == 0 ? 0 : -1;
    for (int r = 0; n >= 0 && n < max && r < t.n_rows; r++) {
        char **fields = t.fields[r], *end;
        gm_run_device *d = &out[n];
        d->index = (int)strtol(fields[col[C_INDEX]], &end, 10);
        if (*end || end == fields[col[C_INDEX]]) {
            snprintf(err, err_len, "%s:%d: index '%s' is not a number", path, r + 2, fields[col[C_INDEX]]);
            n = -1;
            break;
        }
        snprintf(d->backend, sizeof d->backend, "%s", fields[col[C_BACKEND]]);
        snprintf(d->device, sizeof d->device, "%s", fields[col[C_DEVICE]]);
        snprintf(d->device_id, sizeof d->device_id, "%s", fields[col[C_DEVICE_ID]]);
        snprintf(d->folder, sizeof d->folder, "%s", fields[col[C_FOLDER]]);
        d->exit_status = atoi(fields[col[C_EXIT]]);
        n++;
    }
    gm_csv_table_free(&t);
    return n;
}
