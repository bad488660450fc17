/* Point keys and their names (point_key.h). */
#include "analysis/point_key.h"

#include "lib/units.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const gm_point_key_columns[GM_POINT_KEY_FIELDS] = {
    "suite", "workload", "variant", "pattern", "precision", "batch", "seq_len", "bytes", "metric"};

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

void gm_point_label(const char *const *key, char *out, size_t len)
{
    enum { SUITE, WORKLOAD, VARIANT, PATTERN, PRECISION, BATCH, SEQ_LEN, BYTES };
    size_t n = 0;
    out[0] = '\0';
    for (int i = SUITE; i <= PRECISION; i++)
        if (*key[i] && n < len)
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
