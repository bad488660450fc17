/*
 * Fuzz target: the quantity parsers of src/units.c (sizes, counts, shares,
 * ranges and lists). The first byte picks the parser, the rest is the text.
 * A parser must accept or refuse with a message, never crash or leak; what
 * it accepts must hold its promises (ranges ascending and within the cap).
 */
#include "fuzz_input.h"
#include "lib/units.h"

#include <assert.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    char *s = fuzz_string(data + 1, size - 1);
    if (!s)
        return 0;
    char err[256], buf[64];
    uint64_t v, *list = NULL;
    double share;
    size_t n = 0;
    switch (data[0] % 5) {
    case 0:
        if (gm_parse_size(s, &v, err, sizeof err) == 0)
            gm_format_size(v, buf, sizeof buf);
        break;
    case 1:
        if (gm_parse_uint(s, 1000000, &v, err, sizeof err) == 0)
            assert(v <= 1000000);
        break;
    case 2:
        if (gm_parse_share(s, &share, err, sizeof err) == 0)
            assert(share > 0 && share <= 1);
        break;
    default:
        if (gm_parse_range(s, data[0] % 5 == 3, &list, &n, err, sizeof err) == 0) {
            assert(n >= 1 && n <= GM_MAX_RANGE_POINTS);
            if (strchr(s, ':'))
                for (size_t i = 1; i < n; i++)
                    assert(list[i - 1] < list[i]);
        }
        free(list);
        break;
    }
    free(s);
    return 0;
}
