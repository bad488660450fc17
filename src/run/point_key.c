/* Point keys and their names (point_key.h). */
#include "run/point_key.h"

#include "lib/csv.h"
#include "lib/units.h"
#include "run/results.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const gm_point_key_columns[GM_POINT_KEY_FIELDS] = {
    "suite", "workload", "variant", "pattern", "precision", "mode", "batch", "seq_len", "bytes", "metric"};

int gm_point_key_require(char *const *header, int n_header, const char *path, const char *const *names, int *cols,
                         int n, char *err, size_t len)
{
    const char *want[64];
    if (n > 64) {
        snprintf(err, len, "%s: too many columns asked for", path);
        return -1;
    }
    memcpy(want, names, (size_t)n * sizeof *want);
    int mode_col;
    bool has_mode = gm_csv_find_columns(header, n_header, &names[GM_POINT_KEY_MODE], &mode_col, 1) < 0;
    if (!has_mode)
        want[GM_POINT_KEY_MODE] = names[0];     /* found with the rest; its index is dropped below */
    if (gm_csv_require_columns(header, n_header, path, want, cols, n, err, len) != 0)
        return -1;
    if (!has_mode)
        cols[GM_POINT_KEY_MODE] = -1;
    return 0;
}

bool gm_point_note_train(const char *note) { return note && strstr(note, GM_TRAIN_NOTE) != NULL; }

unsigned gm_point_note_launches(const char *note)
{
    const char *at = note ? strstr(note, GM_LAUNCHES_NOTE) : NULL;
    if (!at)
        return 1;
    const char *digits = at;
    while (digits > note && at - digits < 9 && digits[-1] >= '0' && digits[-1] <= '9')
        digits--;
    unsigned n = 0;
    for (const char *d = digits; d < at; d++)
        n = n * 10 + (unsigned)(*d - '0');     /* at most 9 digits: no overflow */
    return n >= 1 ? n : 1;
}

bool gm_point_file_train(const char *path)
{
    FILE *f = fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    bool train = false;
    while (f && !train && getline(&line, &cap, f) > 0)
        train = gm_point_note_train(line);
    free(line);
    if (f)
        fclose(f);
    return train;
}

const char *gm_point_key_mode(char *const *row, int col, int suite_col, int workload_col, bool train_run)
{
    if (col >= 0)
        return row[col];
    const char *suite = row[suite_col], *workload = row[workload_col];
    bool has_mode = strcmp(suite, "workloads") == 0
                    || (strcmp(suite, "oom") == 0 && strcmp(workload, "alloc") != 0 && strcmp(workload, "allocator") != 0);
    return !has_mode ? "" : train_run ? "train" : "inference";
}

int gm_point_key_join(const char *const *key, char *out, size_t len)
{
    size_t j = 0;
    for (int k = 0; k < GM_POINT_KEY_FIELDS; k++) {
        int n = snprintf(out + j, len - j, "%s%c", key[k], GM_POINT_KEY_SEP);
        if (n < 0 || (size_t)n >= len - j)
            return -1;
        j += (size_t)n;
    }
    return 0;
}

const char *gm_point_card_role(const char *suite, const char *workload, const char *variant)
{
    if (strcmp(suite, "stream") == 0)
        return "";
    if (strcmp(suite, "workloads") == 0 && strcmp(workload, "linear") == 0)
        return strcmp(variant, "tiled") == 0 || strcmp(variant, "blocked") == 0 ? "ours" : "vendor";
    return variant;
}

void gm_point_label(const char *const *key, char *out, size_t len)
{
    enum { SUITE, WORKLOAD, VARIANT, PATTERN, PRECISION, MODE, BATCH, SEQ_LEN, BYTES };
    size_t n = 0;
    out[0] = '\0';
    for (int i = SUITE; i <= MODE; i++)
        if (*key[i] && n < len && (i != MODE || strcmp(key[i], "inference") != 0))
            n += (size_t)snprintf(out + n, len - n, "%s%s", n ? " " : "", key[i]);
    if (*key[BATCH] && n < len)
        n += (size_t)snprintf(out + n, len - n, " batch %s", key[BATCH]);
    if (*key[SEQ_LEN] && n < len)
        n += (size_t)snprintf(out + n, len - n, " seq %s", key[SEQ_LEN]);
    if (*key[BYTES] && n < len) {
        char size[32];
        bool soak = strcmp(key[SUITE], "stress") == 0 && strcmp(key[WORKLOAD], "soak") == 0;
        snprintf(out + n, len - n, " %s", soak ? key[BYTES] : gm_format_size(strtoull(key[BYTES], NULL, 10), size, sizeof size));
    }
}
