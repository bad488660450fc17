/*
 * The harness as a suite sees it: the open device, the run to write rows
 * into, the options, and progress. A suite runs its points in order and
 * reports every measurement through gm_bench_emit.
 */
#ifndef GM_BENCH_H
#define GM_BENCH_H

#include "device/device.h"
#include "bench/options.h"
#include "bench/output_fault.h"
#include "lib/precision.h"
#include "run/results.h"
#include "run/summary.h"

#include <stdbool.h>

typedef struct gm_bench {
    gm_device *dev;
    gm_run *run;
    gm_summary *summary;       /* may be NULL */
    const gm_bench_opts *opts;
    int points_done, points_total;
    double started;            /* monotonic seconds at the first point */
    bool progress;             /* draw progress (stderr is a terminal) */
    bool device_lost;          /* stop: the device failed */
    bool output_failed;        /* stop: results could not be written */
    int interrupted;           /* stop: the signal that asked for it (interrupt.h) */
    int resume_from;           /* --resume: points before this index are finished */
    int journal_fd;            /* the point journal (journal.h), or -1 */
    off_t done_results_len;    /* results.csv and samples.csv lengths at the end */
    off_t done_samples_len;    /* of the last finished point, and its */
    int done_rows;             /* rows in results.csv */
    int points_finished;       /* points journaled as finished, resumed ones included */
    char error[640];           /* why the run stopped early */
    gm_output_fault output_fault; /* test-only: strike each output (output_fault.h) */
    int round, rounds;         /* --rounds: the round under way (0-based) of how many */
    struct gm_round_pool *pool; /* samples of the rounds before the last (rounds.h) */
    int argc;                  /* the bench command's arguments (argv[0] "bench"), */
    char **argv;               /* which worker processes are started with */
} gm_bench;

/* A benchmark suite. count_points is called first (for progress); run
 * returns 0 when every point was attempted, -1 when it stopped early
 * (b->device_lost or b->output_failed says why). */
typedef struct {
    const char *name;
    const char *summary;
    int (*count_points)(gm_bench *b);
    int (*run)(gm_bench *b);
} gm_suite;

extern const gm_suite gm_suite_stream;
extern const gm_suite gm_suite_workloads;
extern const gm_suite gm_suite_swap;
extern const gm_suite gm_suite_oom;
extern const gm_suite gm_suite_serve;
/* Every suite, NULL-terminated. */
extern const gm_suite *const gm_suites[];
const gm_suite *gm_suite_find(const char *name);
/* The profile section of `suite` for dev's kind of device: "SUITE.cpu" on
 * a CPU device, "SUITE.gpu" on any other (gm_profile_load). */
void gm_suite_section(const char *suite, const gm_device *dev, char *buf, size_t len);

/* Refuses (-1 with err) workloads options whose largest shape's memory
 * model overflows 64 bits: such a run is refused, not attempted. */
int gm_workloads_check_sizes(const gm_bench_opts *o, char *err, size_t err_len);

/* Writes a row (and its samples). Returns 0, or -1 after setting
 * b->output_failed and b->error, or b->interrupted once a signal asked
 * the run to stop (the row is not written). A row of a point that a
 * resumed run already finished is dropped (returns 0). With --rounds,
 * a round before the last writes only the samples (under their round)
 * and the last writes the row over every round's samples (rounds.h). */
int gm_bench_emit(gm_bench *b, const gm_row *row, const double *samples, size_t n);

/* Writes a row and its samples to the run and the summary, as they are
 * (no resume or rounds logic). Returns 0, or -1 after setting
 * b->output_failed and b->error. */
int gm_bench_write_row(gm_bench *b, const gm_row *row, const double *samples, size_t n);

/* The row status of a failed device call: oom for GM_ERR_OOM, unsupported
 * for GM_ERR_UNSUPPORTED, error for anything else. */
gm_row_status gm_row_status_of(gm_status st);

/* True while a resumed run passes points it already finished: the suite
 * may skip the point's work (its rows would be dropped anyway). */
bool gm_bench_resuming(const gm_bench *b);

/* Marks one point done (its line goes to the journal once its rows are
 * durable) and redraws the progress line on a terminal. */
void gm_bench_point_done(gm_bench *b, const char *label);

/* After a point: marks it done; returns rc, or -1 once the device is lost
 * or a signal asked the run to stop (the suite stops). */
int gm_bench_point_finished(gm_bench *b, int rc, const char *label);

/* At the end of a suite's run: names the lost device in b->error. */
int gm_bench_suite_end(gm_bench *b, int rc);

/* Launch geometry for a kernel that covers n items with GM_FOR_EACH:
 * `grid` (GPUs): groups of 256, enough to fill the device; `chunked`
 * (CPUs): single-item groups, 64 slices per compute unit so that a slowed
 * core does not hold up the rest. */
void gm_launch_geometry(const gm_device *dev, bool chunked, size_t n, size_t *global, size_t *local);

/*
 * The launch over `vectors` 16-byte vectors (the kernels' unit: see
 * kernels/stream.cl) of a stream kernel (the stream suite's, and the serve
 * suite's read of its KV pool). Every compute unit gets several times the
 * work items it runs at once, and no work item is left without a vector (beyond the
 * one group a tiny array needs). A CPU core runs one work item at a time:
 * chunked gives it single-item groups, 64 slices per core (so that
 * finishing times even out); grid is the bench's common geometry. A GPU
 * holds 2048 threads per compute unit: both patterns launch groups of 256,
 * up to four times that many. Reductions write one partial per group, so
 * there are at most a few dozen per compute unit for the host to add.
 */
void gm_stream_geometry(const gm_device *dev, bool chunked, size_t vectors, size_t *global, size_t *local);

/* Times the work enqueue(ctx) puts on `queue`: events before and after
 * it, *ms the device time between them.
 *   gm_time_work: the device's time for the work alone. The queue is held
 *     (backend.h, queue_hold) from before the first event until the
 *     second is enqueued, so the device reaches the first event with the
 *     work already queued behind it: the host's submission (a launch's
 *     few microseconds, against kernels of a microsecond in a GPU's cache)
 *     is not in *ms. Where the backend cannot hold its queue, or enqueue
 *     calls an op that releases the hold (shim.h: anything but launches
 *     and events, e.g. a vendor GEMM), as gm_time_on_queue.
 *     The timed reps after a warm-up use it: a first launch may load
 *     code (lazy module loading), which a driver may do only with its
 *     queues idle, and the hold would then last until its backend lets go.
 *   gm_time_on_queue: from when the device reaches the first event, so
 *     the submission is in *ms: a transfer's latency as a caller sees it
 *     (the swap suite), warm-ups and the oom suite's probes (one cold run
 *     each). */
gm_status gm_time_work(gm_device *dev, int queue, gm_status (*enqueue)(void *ctx), void *ctx, double *ms);
gm_status gm_time_on_queue(gm_device *dev, int queue, gm_status (*enqueue)(void *ctx), void *ctx, double *ms);

/* Test-only fault: overwrites `len` (at most 4) bytes of buf at `offset`
 * with a pattern no kernel writes there. */
gm_status gm_corrupt_bytes(gm_device *dev, gm_buffer *buf, size_t offset, size_t len);

/* Input data for workloads: a value in [-1, 1) in steps of 1/256 from a
 * hash of (i, which), so neighbouring elements differ and each input
 * (`which`) has its own sequence. Exact in fp32 and fp16; bf16 and int8
 * round it on store like any input (the references read what was stored). */
float gm_input_value(size_t i, unsigned which);

/* Advances a seeded xorshift64 generator (state must not be 0) and
 * returns its new value: the suites' source of reproducible samples. */
uint64_t gm_xorshift(uint64_t *state);

/* The kernel variant key of a precision and access pattern, e.g.
 * "fp16-chunked" (see kernels/gm_portable.h). Returns buf. */
const char *gm_kernel_variant(gm_precision p, bool chunked, char *buf, size_t len);

/* Seconds on a monotonic clock. */
double gm_now(void);

/* Kernel arguments; the pointed-to values must outlive the launch call. */
static inline gm_arg gm_arg_buf(const gm_buffer *b) { return (gm_arg){GM_ARG_BUFFER, b, NULL, 0}; }
static inline gm_arg gm_arg_u32(const unsigned int *v) { return (gm_arg){GM_ARG_VALUE, NULL, v, sizeof *v}; }
static inline gm_arg gm_arg_u64(const uint64_t *v) { return (gm_arg){GM_ARG_VALUE, NULL, v, sizeof *v}; }
static inline gm_arg gm_arg_f32(const float *v) { return (gm_arg){GM_ARG_VALUE, NULL, v, sizeof *v}; }

#endif
