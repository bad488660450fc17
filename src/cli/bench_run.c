/* The run-folder side of gpumem bench: see bench_run.h. */
#include "cli/bench_run.h"

#include "lib/interrupt.h"
#include "run/journal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int gm_bench_open_run(gm_run *run, gm_bench *b, const gm_bench_opts *o, const gm_device *dev, int argc, char **argv,
                    const gm_resume *resume, char *err, size_t err_len)
{
    if (resume) {
        const gm_journal_state *j = resume->journal;
        int rc = gm_run_reopen(run, resume->dir, dev->backend->name, dev->info.name, j->results_len,
                               j->samples_len, j->rows, err, err_len);
        if (rc != 0)
            return rc;
        snprintf(run->device_id, sizeof run->device_id, "%s", dev->info.uuid);
        b->journal_fd = resume->journal_fd;
        b->resume_from = b->points_finished = j->points;
    } else {
        int rc = gm_run_open(run, o->out[0] ? o->out : NULL, dev->backend->name, dev->info.name, dev->info.uuid,
                             err, err_len);
        if (rc != 0)
            return rc;
        if (gm_journal_save_args(run->dir, argc, argv, err, err_len) != 0)
            return -1;
        b->journal_fd = gm_journal_create(run->dir, run->results_len, run->samples_len, err, err_len);
        if (b->journal_fd < 0)
            return -1;
    }
    b->done_results_len = run->results_len;
    b->done_samples_len = run->samples_len;
    b->done_rows = run->rows_written;
    return 0;
}

const char *gm_bench_finish_run(gm_bench *b, gm_run *run, int suites_rc)
{
    if (!b->interrupted && gm_interrupted())
        b->interrupted = gm_interrupted();
    if (b->interrupted && !b->output_failed &&
        gm_run_cut_back(run, b->done_results_len, b->done_samples_len) != 0) {
        b->output_failed = true;
        snprintf(b->error, sizeof b->error, "cannot cut back %.500s/results.csv: %s", run->dir, strerror(errno));
    }
    if (b->interrupted)
        run->rows_written = b->done_rows;
    const char *status = b->output_failed ? "output-failed" : b->interrupted ? "interrupted"
                         : b->device_lost ? "device-lost" : suites_rc ? "failed" : "complete";
    bool all_attempted = !b->output_failed && !b->interrupted && !b->device_lost;
    if (all_attempted && b->journal_fd >= 0 && gm_journal_end(b->journal_fd, status) != 0) {
        b->output_failed = true;
        snprintf(b->error, sizeof b->error, "cannot write %.500s/points.journal: %s", run->dir, strerror(errno));
        status = "output-failed";
    }
    return status;
}
