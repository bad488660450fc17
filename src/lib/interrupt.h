/*
 * Ctrl-C and SIGTERM. gm_interrupt_install makes the first SIGINT or
 * SIGTERM only set a flag (async-signal-safe); the run checks it between
 * points and in long loops, abandons the current point, cleans up and
 * exits 128 + the signal's number. A second signal exits at once with
 * that status: the files then hold whole rows only (see results.h), and
 * `gpumem bench --resume` cuts back the unfinished point.
 */
#ifndef GM_INTERRUPT_H
#define GM_INTERRUPT_H

/* Installs the handlers for SIGINT and SIGTERM (no SA_RESTART, so a
 * blocking wait returns EINTR and can look at the flag). */
void gm_interrupt_install(void);

/* The signal that asked the run to stop, or 0. */
int gm_interrupted(void);

#endif
