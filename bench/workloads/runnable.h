/*
 * What a workload's file (bench/workloads/NAME.c) includes to define its descriptor
 * (gm_workload, bench/model/workload.h): the suite, the patterns and the model.
 */
#ifndef GM_RUNNABLE_H
#define GM_RUNNABLE_H

#include "bench/bench.h"
#include "bench/pattern/pattern.h"
#include "bench/model/workload.h"

#include <stdbool.h>

#endif
