/*
 * The data files gpumem reads at run time: profiles (profiles/NAME.ini),
 * model presets (models.ini) and plot scripts (plots/KIND.gp). In the
 * source tree they live in share/ and plots/; installed, all of them in
 * $(PREFIX)/share/gpumem (make install).
 */
#ifndef GM_DATAFILE_H
#define GM_DATAFILE_H

#include <stdbool.h>
#include <stddef.h>

/* Finds data file `relpath` ("profiles/quick.ini", "plots/style.gp") and
 * writes the first readable path into out. Looks, in order, in
 * $GPUMEM_DATA_DIR; the source tree the binary sits in (its folder holds
 * share/ and plots/); the source tree of the current folder; the
 * installed data folder (GM_DATADIR, set at build time from PREFIX); and
 * ../share/gpumem beside the binary (an installed tree moved elsewhere).
 * Returns false when none has it (out then holds the last path tried). */
bool gm_find_data_file(const char *relpath, char *out, size_t len);

#endif
