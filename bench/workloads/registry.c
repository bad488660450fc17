/* The workload descriptors: see registry.h. */
#include "bench/workloads/registry.h"

#include <string.h>

#define ENTRY_(n) &gm_workload_##n,
const gm_workload *const gm_workloads[] = {GM_WORKLOAD_LIST(ENTRY_) NULL};
#undef ENTRY_

const gm_workload *gm_workload_find(const char *name)
{
    for (int i = 0; gm_workloads[i]; i++)
        if (strcmp(gm_workloads[i]->name, name) == 0)
            return gm_workloads[i];
    return NULL;
}
