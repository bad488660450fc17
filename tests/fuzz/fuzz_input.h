/*
 * Helpers the fuzz targets share (tests/fuzz/fuzz_*.c, built by `make
 * fuzz`): the fuzzer's bytes as a C string, or as a file for parsers that
 * read one. Inputs are arbitrary bytes: a NUL inside one ends the string.
 */
#ifndef GM_FUZZ_INPUT_H
#define GM_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A malloc'd NUL-terminated copy of data (caller frees), NULL if none. */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

/* The path of a file that holds exactly data: one file per process,
 * rewritten on every call and removed at exit. NULL if it cannot be made. */
static char fuzz_path[64];
static void fuzz_remove_file(void) { unlink(fuzz_path); }
static inline const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
    if (!fuzz_path[0]) {
        snprintf(fuzz_path, sizeof fuzz_path, "/tmp/gm-fuzz-%ld%s", (long)getpid(), suffix);
        atexit(fuzz_remove_file);
    }
    FILE *f = fopen(fuzz_path, "wb");
    if (!f)
        return NULL;
    size_t put = fwrite(data, 1, size, f);
    if (fclose(f) != 0 || put != size)
        return NULL;
    return fuzz_path;
}

#endif
