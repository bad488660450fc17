/*
 * The lock of a run folder: <dir>/lock, held with flock(2) for as long as
 * a bench, stress or resume writes into the folder, and holding the
 * owner's pid, host and start time; a writer that finishes removes it. A
 * second writer is refused with those named; a lock whose process died
 * stays behind, released by the kernel, so the next writer simply takes
 * it over.
 */
#ifndef GM_RUN_LOCK_H
#define GM_RUN_LOCK_H

#include <stddef.h>

/* Takes the lock of dir. Returns the lock's fd; -2 with err naming the
 * holder when another process has it; -1 with err when the OS refused. */
int gm_run_lock(const char *dir, char *err, size_t err_len);

/* Lets go of the lock of dir from gm_run_lock and removes its file (fd <
 * 0: nothing). */
void gm_run_unlock(const char *dir, int fd);

#endif
