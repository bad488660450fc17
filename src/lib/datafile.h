/*
 * The data files gpumem reads at run time: profiles (profiles/NAME.ini),
 * model presets (models/NAME.json), plot scripts
 * (plots/KIND.gp) and the reference runs of real cards (reference/NAME/).
 * In the source tree they live in share/, plots/ and results/reference/;
 * installed, all of them in $(PREFIX)/share/gpumem (make install).
 */
#ifndef GM_DATAFILE_H
#define GM_DATAFILE_H

#include <stdbool.h>
#include <stddef.h>

/* Finds data file (or folder) `relpath` ("profiles/quick.ini",
 * "plots/style.gp", "reference/nvidia-h200") and writes the first readable
 * path into out. Looks, in order, in $GPUMEM_DATA_DIR; the source tree the
 * binary sits in (its folder holds share/, plots/ and results/); the
 * source tree of the current folder; the installed data folder
 * (GM_DATADIR, set when make install builds the installed binary); and
 * ../share/gpumem beside the binary (an installed tree moved elsewhere).
 * Returns false when none has it (out then holds the last path tried). */
bool gm_find_data_file(const char *relpath, char *out, size_t len);

/* The names in the first data folder (in gm_find_data_file's order) that
 * has folder `sub` ("models", "profiles", "reference"): each file ending
 * in `ext` (".json"), ext cut off, or with ext NULL each folder in it;
 * sorted, at most max of at most 63 characters, none starting with a dot.
 * Returns how many (0 when no data folder has sub). */
#define GM_DATA_NAME_LEN 64
int gm_data_file_names(const char *sub, const char *ext, char (*names)[GM_DATA_NAME_LEN], int max);

#endif
