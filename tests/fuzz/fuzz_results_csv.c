/*
 * Fuzz target: the results.csv reader of gpumem plot (gm_plot_data_load
 * in src/plot_data.c) and the selection of every kind of plot from what it
 * read. The input is a results.csv file.
 */
#include "fuzz_input.h"
#include "report/plot_data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, ".csv");
    if (!path)
        return 0;
    gm_plot_data d;
    char err[600];
    if (gm_plot_data_load(path, &d, err, sizeof err) != 0)
        return 0;
    for (int k = 0; k < GM_PLOT_KINDS; k++) {
        gm_plot_set set;
        if (gm_plot_select(&d, k, &set) == 0)
            gm_plot_set_free(&set);
    }
    gm_plot_data_free(&d);
    return 0;
}
