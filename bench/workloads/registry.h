/*
 * The workload descriptors of GM_WORKLOAD_LIST (bench/model/workload.h),
 * each defined in its own file of this folder, and their lookup.
 */
#ifndef GM_WORKLOAD_REGISTRY_H
#define GM_WORKLOAD_REGISTRY_H

#include "bench/model/workload.h"

/* Every workload in list order, then NULL. */
extern const gm_workload *const gm_workloads[];
/* The workload named name, or NULL. */
const gm_workload *gm_workload_find(const char *name);

#endif
