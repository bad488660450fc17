/*
 * JSON through jansson, linked statically (the binary runs on GPU nodes
 * where no extra shared library can be installed). Reading: a whole
 * document into a jansson tree, its errors naming the line, and lookups by
 * dotted path. Writing: the conversions jansson does not make itself (NULL
 * and non-UTF-8 strings, unsigned and non-finite numbers) and the suite's
 * layout (two-space indent, keys in insertion order, a final newline).
 * Everything else is plain jansson (json_object_set_new, json_integer, ...).
 */
#ifndef GM_JSON_H
#define GM_JSON_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* Parses text[0..len): an object or an array at the top, nesting at most
 * 2048 deep. Returns a new reference (json_decref it), or NULL with
 * "line L: why" in err. */
json_t *gm_json_parse(const char *text, size_t len, char *err, size_t err_len);

/* Reads and parses a file the same way; errors name it ("FILE:LINE: why",
 * "cannot read FILE: why"). */
json_t *gm_json_load(const char *path, char *err, size_t err_len);

/* The value at path, borrowed from root, or NULL where there is none. A
 * path is object keys and array indexes (decimal) joined by dots:
 * "device.name", "command_line.2"; a key that holds a dot cannot be named. */
json_t *gm_json_at(const json_t *root, const char *path);

/* The string at path, or NULL where there is none or it is not a string. */
const char *gm_json_str(const json_t *root, const char *path);

/* A new string value: NULL gives null, bytes that are not UTF-8 become
 * U+FFFD (jansson takes only UTF-8). NULL only when out of memory. */
json_t *gm_json_text(const char *s);

/* A new number value: non-finite gives null. */
json_t *gm_json_real(double v);

/* Sets obj[key] to gm_json_text(value) / an integer. An unsigned value
 * above INT64_MAX (no byte count reaches it) is written as INT64_MAX.
 * Return 0, or -1 when out of memory. */
int gm_json_set_string(json_t *obj, const char *key, const char *value);
int gm_json_set_uint(json_t *obj, const char *key, uint64_t value);

/* Writes root to f: two-space indent, keys in insertion order, a final
 * newline. Returns 0, or -1 when the writing failed. */
int gm_json_dump(const json_t *root, FILE *f);

#endif
