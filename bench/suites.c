/*
 * The list of suites (bench/bench.h): the top of bench/, the one file that
 * names every suite's folder (stream/, workloads/, swap/, oom/, serve/).
 */
#include "bench/bench.h"

#include <string.h>

const gm_suite *const gm_suites[] = {&gm_suite_stream, &gm_suite_workloads, &gm_suite_swap, &gm_suite_oom, &gm_suite_serve, NULL};

const gm_suite *gm_suite_find(const char *name)
{
    for (int i = 0; gm_suites[i]; i++)
        if (strcmp(gm_suites[i]->name, name) == 0)
            return gm_suites[i];
    return NULL;
}
