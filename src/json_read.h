/*
 * Reading one value out of a JSON document (meta.json): enough JSON to
 * walk objects, arrays, strings, numbers and literals, no more.
 */
#ifndef GM_JSON_READ_H
#define GM_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

/* Finds the member at `path` (keys joined by dots, "device.name") in the
 * JSON text and writes its value into out: a string unescaped (\uXXXX
 * beyond ASCII becomes '?'), a number or literal as written. Returns false
 * when the path is absent, names an object or array, or the text is not
 * well-formed up to it. */
bool gm_json_get(const char *text, const char *path, char *out, size_t len);

/* Reads the file at `path` into a NUL-terminated buffer (free() it), or NULL. */
char *gm_read_text_file(const char *path);

#endif
