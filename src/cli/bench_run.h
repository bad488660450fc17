/*
 * The run folder of gpumem bench: opened new (with its command and point
 * journal, see journal.h) or reopened to continue (--resume), and the
 * end of the run: its status, and an interrupted run's abandoned point
 * cut back off results.csv and samples.csv.
 */
#ifndef GM_BENCH_RUN_H
#define GM_BENCH_RUN_H

#include "bench/bench.h"
#include "cli/commands.h"

/* Opens run for b: a new folder (o->out or results/<id>) when resume is
 * NULL, else the resumed one cut back to its last finished point. Sets
 * b's journal and resume fields. Returns 0; -1 (the OS refused) or
 * GM_RUN_REFUSED with err. */
int gm_bench_open_run(gm_run *run, gm_bench *b, const gm_bench_opts *o, const gm_device *dev, int argc,
                      char **argv, const gm_resume *resume, char *err, size_t err_len);

/* After the suites: the run's status for meta.json (output-failed,
 * interrupted, device-lost, failed, complete). An interrupted run loses
 * the rows of the point it abandoned; a run that attempted every point
 * gets its journal's end line. */
const char *gm_bench_finish_run(gm_bench *b, gm_run *run, int suites_rc);

#endif
