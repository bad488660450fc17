/*
 * A small streaming JSON writer (objects, arrays, strings, numbers).
 * Written here rather than taken from a library because the binary must
 * run on GPU nodes where no extra shared library can be installed, and
 * Debian ships cJSON only as a shared object.
 */
#ifndef GM_JSON_H
#define GM_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define GM_JSON_MAX_DEPTH 16

typedef struct {
    FILE *f;
    int depth;
    bool first[GM_JSON_MAX_DEPTH];   /* no member written yet at this depth */
    char closer[GM_JSON_MAX_DEPTH];  /* '}' or ']' for the container at this depth */
} gm_json;

void gm_json_init(gm_json *j, FILE *f);
/* key is NULL inside arrays and at the top level. */
void gm_json_object(gm_json *j, const char *key);
void gm_json_array(gm_json *j, const char *key);
void gm_json_end(gm_json *j);          /* closes the innermost object/array */
void gm_json_string(gm_json *j, const char *key, const char *value);   /* NULL -> null */
void gm_json_int(gm_json *j, const char *key, int64_t value);
void gm_json_uint(gm_json *j, const char *key, uint64_t value);
void gm_json_double(gm_json *j, const char *key, double value);        /* non-finite -> null */
void gm_json_bool(gm_json *j, const char *key, bool value);
void gm_json_null(gm_json *j, const char *key);

#endif
