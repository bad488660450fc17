/*
 * What a workload's file (bench/NAME.c) includes to define its descriptor
 * (gm_workload, bench/workload.h): the suite, the patterns and the model.
 */
#ifndef GM_RUNNABLE_H
#define GM_RUNNABLE_H

#include "bench/bench.h"
#include "bench/pattern.h"
#include "bench/workload.h"

#include <stdbool.h>

#endif
