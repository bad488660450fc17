/*
 * A small JSON reader for the files the suite writes (meta.json): parses a
 * document into a flat list of leaves, each named by its path ("device.name",
 * "command_line.2") with its value as text (strings unescaped, \u escapes
 * as UTF-8; numbers, true, false and null as written).
 */
#ifndef GM_JSON_READ_H
#define GM_JSON_READ_H

#include <stddef.h>

typedef struct {
    char *path, *value;
    int is_string;
} gm_json_leaf;

typedef struct {
    gm_json_leaf *leaves;
    int n, cap;
} gm_json_doc;

/* Parses text[0..len). Returns 0, or -1 with "line L: why" in err. Nesting
 * deeper than 32 levels is refused. */
int gm_json_parse(const char *text, size_t len, gm_json_doc *doc, char *err, size_t err_len);

/* Reads and parses a file; errors name it ("FILE:LINE: why"). */
int gm_json_load(const char *path, gm_json_doc *doc, char *err, size_t err_len);

/* The value at path, or NULL. */
const char *gm_json_get(const gm_json_doc *doc, const char *path);

void gm_json_doc_free(gm_json_doc *doc);

#endif
