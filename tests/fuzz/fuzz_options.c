/*
 * Fuzz target: one `--name value` of gpumem bench (gm_opts_set in
 * src/options.c and the shape, list and range parsers behind it). The
 * input is "name=value"; the name need not exist.
 */
#include "fuzz_input.h"
#include "bench/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    if (!s)
        return 0;
    char *eq = strchr(s, '=');
    const char *value = "";
    if (eq) {
        *eq = '\0';
        value = eq + 1;
    }
    gm_bench_opts o;
    gm_opts_init(&o);
    char err[600];
    if (gm_opts_takes_value(s) >= 0)
        gm_opts_set(&o, s, value, err, sizeof err);
    gm_opts_release(&o);
    free(s);
    return 0;
}
