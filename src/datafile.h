/* Finding the suite's data files (profiles, bench/models.ini)
 * from wherever gpumem is run. */
#ifndef GM_DATAFILE_H
#define GM_DATAFILE_H

#include <stdbool.h>
#include <stddef.h>

/* Looks for `relpath` under the binary's folder, then the current folder.
 * Writes the first readable path into out and returns true. */
bool gm_find_data_file(const char *relpath, char *out, size_t len);

#endif
