/*
 * Fuzz target: reading JSON as the report, gpumem compare, fleet and
 * bench --device all read meta.json (src/lib/json.c over jansson). The
 * input is the document; every value it accepts must be found again by
 * its dotted path (where no key on the way holds a dot), and the fields
 * the readers extract are looked up.
 */
#include "fuzz_input.h"
#include "lib/json.h"

#include <assert.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walks v (at path, len bytes long; top: v is the root): each value is
 * found again by its path. */
static void walk(const json_t *root, const json_t *v, int top, char *path, size_t len, size_t cap)
{
    if (json_is_object(v)) {
        const char *key;
        size_t key_len;
        json_t *child;
        json_object_keylen_foreach((json_t *)v, key, key_len, child) {
            if (memchr(key, '.', key_len) || strlen(key) != key_len || len + key_len + 2 > cap)
                continue;
            size_t n = len;
            if (!top)
                path[n++] = '.';
            memcpy(path + n, key, key_len);
            path[n + key_len] = '\0';
            /* A duplicate key keeps its last value: the one found here. */
            assert(gm_json_at(root, path) == child);
            walk(root, child, 0, path, n + key_len, cap);
            path[len] = '\0';
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v) && len + 24 < cap; i++) {
            int n = snprintf(path + len, cap - len, "%s%zu", top ? "" : ".", i);
            assert(gm_json_at(root, path) == json_array_get(v, i));
            walk(root, json_array_get(v, i), 0, path, len + (size_t)n, cap);
            path[len] = '\0';
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[300];
    json_t *doc = gm_json_parse((const char *)data, size, err, sizeof err);
    if (!doc) {
        assert(strncmp(err, "line ", 5) == 0);
        return 0;
    }
    static char path[1 << 16];
    path[0] = '\0';
    walk(doc, doc, 1, path, 0, sizeof path);
    /* What the readers extract (report_facts.c, compare_run.c, fleet_load.c). */
    static const char *fields[] = {"schema_version", "status", "device.name", "device.uuid",
                                   "device.index", "device.total_mem_bytes", "host.hostname",
                                   "command_line.0", "device_leak_check.live_at_end.buffers"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        const char *s = gm_json_str(doc, fields[i]);
        assert(!s || json_is_string(gm_json_at(doc, fields[i])));
        (void)json_integer_value(gm_json_at(doc, fields[i]));
    }
    json_decref(doc);
    return 0;
}
