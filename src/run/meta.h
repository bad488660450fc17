/* meta.json: what was measured where, by which build, when. */
#ifndef GM_META_H
#define GM_META_H

#include "device/device.h"
#include "device/leak_check.h"
#include "run/results.h"

#include <time.h>

typedef struct {
    const gm_run *run;
    const gm_device *device;
    int argc;
    char **argv;
    const char *profile;
    time_t start;
    time_t end;             /* 0 while the run is going */
    const char *status;     /* "running", "complete", "failed", "device-lost",
                               "hung", "output-failed", "interrupted" */
    const gm_leak_report *leak;   /* the device leak check; NULL until it ran */
} gm_meta;

/* The suite's version: `git describe` of the build, or "unknown". */
const char *gm_suite_version(void);

/* (Re)writes <run dir>/meta.json atomically. Returns 0 or -1 with err. */
int gm_meta_write(const gm_meta *m, char *err, size_t err_len);

#endif
