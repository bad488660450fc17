/* `gpumem bench --device all|LIST`: one worker per device (bench_devices.c). */
#ifndef GM_BENCH_DEVICES_H
#define GM_BENCH_DEVICES_H

#include "bench/options.h"

/* Runs `gpumem bench` with the options argv gives (argv[0] is "bench",
 * as main hands it) once per device of o->device_list, concurrently unless
 * o->serial, into RUN/device<K>/, and writes RUN/devices.csv. Returns the
 * exit status (commands.h). */
int gm_bench_devices(int argc, char **argv, const gm_bench_opts *o);

#endif
