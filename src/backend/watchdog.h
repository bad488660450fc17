/*
 * The hung-device watchdog. A device call that never returns (a GPU that
 * stopped answering) gives no error to handle and cannot be cancelled from
 * the calling thread; a run left overnight would wait forever. So every
 * call through the backend shim (backend/shim.h) marks its start and end
 * here, and bench and stress start a thread that looks at the call under
 * way: once one has run past the limit, the watchdog
 *   - says on stderr which call hung and for how long,
 *   - calls the run's hook (which records the end: meta.json status `hung`),
 *   - and ends the process with GM_EXIT_DEVICE, not returning to the stuck
 *     thread. The driver releases the process's device memory at exit.
 * Rows already written are whole (each one write(2), see results.h); a
 * bench run's unfinished point is not journaled, so `--resume` retries it.
 *
 * Calls nest (a backend op may call another through the table): the
 * outermost one is timed. One device per process calls through the shim,
 * from one thread.
 */
#ifndef GM_WATCHDOG_H
#define GM_WATCHDOG_H

/* --hang-timeout's default, in seconds, for bench and stress. */
#define GM_HANG_TIMEOUT_DEFAULT 600

/* What the run does before the process ends: it runs on the watchdog's
 * thread while the main thread is stuck in `op`, so it may only write
 * files whose data the main thread does not change during a device call. */
typedef void (*gm_hang_hook)(const char *op, double seconds, void *ctx);

/* Starts the watchdog for calls longer than limit_s seconds (0: none is
 * started). `who` prefixes its message ("gpumem bench"). Returns 0, or -1
 * with errno when the thread cannot start. */
int gm_watchdog_start(unsigned limit_s, const char *who);

/* Sets (or with NULL clears) the hook; the watchdog may fire at any time. */
void gm_watchdog_set_hook(gm_hang_hook hook, void *ctx);

/* Stops and joins the thread; a no-op when none runs. */
void gm_watchdog_stop(void);

/* The shim's marks around every device call; `op` is a static name. */
void gm_watchdog_call_begin(const char *op);
void gm_watchdog_call_end(void);

#endif
