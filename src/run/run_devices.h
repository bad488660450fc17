/*
 * The devices of a multi-device run (`gpumem bench --device all|LIST`):
 * RUN/devices.csv read back, for whatever shows such a run per device
 * (the report's one column per device, gpumem fleet's GPUs). A device's
 * own run folder is RUN/<folder>/.
 */
#ifndef GM_RUN_DEVICES_H
#define GM_RUN_DEVICES_H

#include <stddef.h>

typedef struct {
    int index;                 /* the device's index within its backend */
    char backend[32];
    char device[160];          /* its name */
    char device_id[64];        /* its stable identity (results.csv device_id) */
    char folder[256];          /* its run folder, relative to RUN */
    int exit_status;           /* its worker's exit status (0: complete) */
} gm_run_device;

/* Reads up to max devices of run_dir into out, in the order the run
 * listed them. Returns their count; 0 when run_dir has no devices.csv (a
 * run of one device); -1 with "FILE:LINE: why" in err for a malformed
 * file. */
int gm_run_devices(const char *run_dir, gm_run_device *out, int max, char *err, size_t err_len);

#endif
