/*
 * One run of gpumem bench or gpumem stress on one device, from its start
 * to its exit status: the hung-device watchdog (backend/watchdog.h), the
 * device (device/select.h) and its memory cap, the signals (SIGINT and
 * SIGTERM only ask the run to stop, lib/interrupt.h; SIGXFSZ makes a write
 * fail instead of killing), the run folder (results.h) and its meta.json
 * (meta.h), the record of a hang, the device leak check (leak_check.h),
 * the final status and the exit status.
 *
 *   gm_session_open      everything above opened, meta.json "running"
 *   ... the command's work on s->dev into s->run ...
 *   gm_session_check_leaks  the leak check; the hang hook cleared
 *   gm_session_finish    the final status into meta.json
 *   gm_session_close     everything released; the exit status
 */
#ifndef GM_SESSION_H
#define GM_SESSION_H

#include "backend/watchdog.h"
#include "device/device.h"
#include "device/leak_check.h"
#include "run/meta.h"
#include "run/results.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Opens the run folder on the device: 0, or -1 (the OS refused) or
 * GM_RUN_REFUSED (results.h) with one line in err. */
typedef int (*gm_session_open_run)(gm_run *run, const gm_device *dev, void *ctx, char *err, size_t err_len);

/* What a session needs of its command's options. */
typedef struct {
    const char *who;              /* message prefix: "gpumem bench" */
    const char *backend;          /* auto | cuda | opencl */
    int device;                   /* index within the backend; -1: the best */
    uint64_t mem_limit;           /* the cap; 0: the device's default cap */
    unsigned hang_timeout;        /* seconds; 0: no watchdog */
    const char *out;              /* run folder; NULL or "": results/<run-id> */
    int argc;                     /* the subcommand's arguments (argv[0] its */
    char **argv;                  /* name, argv[-1] the program's) for meta.json */
    const char *profile;          /* meta.json's profile, or NULL */
    gm_session_open_run open_run; /* NULL: a new folder at `out` */
    gm_hang_hook on_hang;         /* on a hang, before meta.json records it; or NULL */
    void *ctx;                    /* open_run's and on_hang's */
} gm_session_params;

typedef struct {
    gm_session_params p;
    gm_device dev;
    gm_run run;
    gm_meta meta;
    gm_leak_report leak;
} gm_session;

/* How the command's work ended, for the final status and exit status. */
typedef struct {
    bool output_failed;           /* results could not be written */
    int interrupted;              /* the signal; 0: filled in from gm_interrupted() */
    bool device_lost;
    bool failed;                  /* status "failed" (when none of the above) */
    bool check_failed;            /* exit status 1 (when none of the above) */
    char *error;                  /* why output failed: gm_session_finish */
    size_t error_len;             /* writes it here when meta.json fails */
} gm_session_outcome;

/* Starts the watchdog (a warning on stderr when it cannot), opens the
 * device with its cap, installs the signal handlers, opens the run folder
 * and writes meta.json with status "running"; then the hang hook is set
 * and the leak check's start taken. Returns 0, or the exit status (2 bad
 * device or refused folder, 3 no usable device, 4 output) with one line
 * in err and nothing left open. `p` is copied; its strings must outlive s. */
int gm_session_open(gm_session *s, const gm_session_params *p, char *err, size_t err_len);

/* After the work: clears the hang hook (the end is the caller's thread's
 * to write) and checks the device for leaks (s->leak). Returns true when
 * something leaked. */
bool gm_session_check_leaks(gm_session *s);

/* Writes the final status into meta.json: output-failed, interrupted,
 * device-lost, failed (o->failed or a leak), or complete; returns it.
 * When meta.json cannot be written and output had not failed before, sets
 * o->output_failed with the reason in o->error. */
const char *gm_session_finish(gm_session *s, gm_session_outcome *o);

/* Releases the run folder, the device and the watchdog. Returns the exit
 * status: 4 output failed, 128 + N interrupted by signal N, 3 device lost,
 * 1 a leak or o->check_failed, else 0. */
int gm_session_close(gm_session *s, const gm_session_outcome *o);

#endif
