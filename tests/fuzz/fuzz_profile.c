/*
 * Fuzz target: the INI profile loader (gm_profile_load in src/options.c):
 * the input is a profile file, loaded for the run ([bench]) and for the
 * oom suite's section, as `gpumem bench --profile FILE` does.
 */
#include "fuzz_input.h"
#include "bench/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".ini");
    if (!path)
        return 0;
    char err[600];
    const char *suites[] = {NULL, "oom"};
    for (int i = 0; i < 2; i++) {
        gm_bench_opts o;
        gm_opts_init(&o);
        gm_profile_load(&o, path, suites[i], err, sizeof err);
        gm_opts_release(&o);
    }
    return 0;
}
