/* One bench or stress run from start to exit status: see session.h. */
#include "run/session.h"

#include "device/select.h"
#include "lib/exit_codes.h"
#include "lib/interrupt.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The watchdog's hook (watchdog.h), on its thread while the main thread is
 * stuck in a device call: the command's own record first, then the end in
 * meta.json. */
static void record_hang(const char *op, double seconds, void *ctx)
{
    gm_session *s = ctx;
    char err[600];
    if (s->p.on_hang)
        s->p.on_hang(op, seconds, s->p.ctx);
    s->meta.end = time(NULL);
    s->meta.status = "hung";
    if (gm_meta_write(&s->meta, err, sizeof err) != 0)
        fprintf(stderr, "%s: %s\n", s->p.who, err);
}

static int open_new_run(gm_session *s, char *err, size_t err_len)
{
    const char *out = s->p.out && s->p.out[0] ? s->p.out : NULL;
    return gm_run_open(&s->run, out, s->dev.backend->name, s->dev.info.name, s->dev.info.uuid, err, err_len);
}

int gm_session_open(gm_session *s, const gm_session_params *p, char *err, size_t err_len)
{
    memset(s, 0, sizeof *s);
    s->p = *p;
    if (gm_watchdog_start(p->hang_timeout, p->who) != 0)
        fprintf(stderr, "%s: no hung-device watchdog: %s\n", p->who, strerror(errno));
    int rc = gm_select_device(p->backend, p->device, &s->dev, err, err_len);
    if (rc) {
        gm_watchdog_stop();
        return rc;
    }
    gm_device_set_limit(&s->dev, p->mem_limit ? p->mem_limit : gm_default_mem_limit(&s->dev.info));
    /* A file-size limit makes write(2) fail with EFBIG instead of killing us. */
    signal(SIGXFSZ, SIG_IGN);
    gm_interrupt_install();
    rc = p->open_run ? p->open_run(&s->run, &s->dev, p->ctx, err, err_len) : open_new_run(s, err, err_len);
    if (rc == 0) {
        /* argv[-1] is the program name: main passes argv + 1 to subcommands. */
        s->meta = (gm_meta){&s->run, &s->dev, p->argc + 1, p->argv - 1, p->profile, time(NULL), 0, "running", NULL};
        if (gm_meta_write(&s->meta, err, err_len) != 0)
            rc = -1;
    }
    if (rc != 0) {
        gm_run_close(&s->run);
        gm_device_close(&s->dev);
        gm_watchdog_stop();
        return rc == GM_RUN_REFUSED ? GM_EXIT_USAGE : GM_EXIT_OUTPUT;
    }
    gm_watchdog_set_hook(record_hang, s);
    gm_mem_snapshot_take(&s->dev, &s->leak.start);
    return 0;
}

bool gm_session_check_leaks(gm_session *s)
{
    bool leaked = gm_leak_check(&s->dev, &s->leak);
    gm_watchdog_set_hook(NULL, NULL);   /* the end is this thread's to write */
    return leaked;
}

const char *gm_session_finish(gm_session *s, gm_session_outcome *o)
{
    char err[600];
    if (!o->interrupted)
        o->interrupted = gm_interrupted();
    s->meta.leak = &s->leak;
    s->meta.end = time(NULL);
    s->meta.status = o->output_failed ? "output-failed" : o->interrupted ? "interrupted"
                     : o->device_lost ? "device-lost" : o->failed || s->leak.leaked ? "failed" : "complete";
    if (gm_meta_write(&s->meta, err, sizeof err) != 0 && !o->output_failed) {
        o->output_failed = true;
        if (o->error)
            snprintf(o->error, o->error_len, "%s", err);
    }
    return s->meta.status;
}

int gm_session_close(gm_session *s, const gm_session_outcome *o)
{
    gm_run_close(&s->run);
    gm_device_close(&s->dev);
    gm_watchdog_stop();
    return o->output_failed ? GM_EXIT_OUTPUT : o->interrupted ? 128 + o->interrupted
           : o->device_lost ? GM_EXIT_DEVICE : s->leak.leaked || o->check_failed ? GM_EXIT_CHECK : GM_EXIT_OK;
}
