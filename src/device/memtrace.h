/*
 * The memory trace of a run: memory.csv in the run folder, one line each
 * time the device memory a process of the run holds (gm_device.live_bytes)
 * changes, so that `gpumem plot` can draw memory in use over time.
 *
 *   t_s,process,phase,live_bytes
 *
 * t_s is seconds since the run started (CLOCK_MONOTONIC, shared by every
 * process of the run); process is `main` or `worker-N` (an oom-suite probe
 * worker); phase the suite or stress check running. The run's main process
 * starts the trace; the workers it forks join it through the environment
 * (GPUMEM_MEMTRACE). Lines reach the file whole (buffered, written with
 * O_APPEND in whole lines), so processes may share it; a process writes at
 * most GM_MEMTRACE_MAX_LINES lines. The trace is auxiliary: a failure to
 * write it never fails the run.
 */
#ifndef GM_MEMTRACE_H
#define GM_MEMTRACE_H

#include <stdbool.h>
#include <stdint.h>

#define GM_MEMTRACE_MAX_LINES 200000

/* Starts the trace of a run into DIR/memory.csv (header included) and
 * exports it to child processes. With `resume`, an existing trace is
 * appended to, its clock going on from the last time it holds. Returns 0,
 * or -1 (no trace). */
int gm_memtrace_start(const char *dir, bool resume);

/* Joins the trace the parent exported, as `process`. No-op without one. */
void gm_memtrace_join(const char *process);

/* The phase now running (copied; at most 31 characters kept). */
void gm_memtrace_phase(const char *phase);

/* Records live device bytes held by this process now. */
void gm_memtrace_record(uint64_t live_bytes);

/* Writes what is buffered and closes the trace. */
void gm_memtrace_stop(void);

#endif
