#include "device/select.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int open_device(const gm_backend *be, int index, gm_device *dev, char *err, size_t err_len)
{
    if (gm_device_open(dev, be, index) != GM_OK) {
        snprintf(err, err_len, "cannot open %s device %d: %s", be->name, index, dev->err.msg);
        return 3;
    }
    return 0;
}

/* The index of the first GPU of a probed backend, else 0. */
static int best_index(const gm_backend *be, int count, bool *is_gpu)
{
    for (int i = 0; i < count; i++) {
        gm_device_info info;
        gm_error e;
        if (be->describe(i, &info, &e) == GM_OK && info.type == GM_DEV_GPU) {
            *is_gpu = true;
            return i;
        }
    }
    *is_gpu = false;
    return 0;
}

int gm_select_device(const char *name, int index, gm_device *dev, char *err, size_t err_len)
{
    char why[256] = "";
    int count = 0;
    gm_inject_spec spec;
    if (gm_inject_parse(getenv("GPUMEM_BACKEND_FAULT"), &spec, err, err_len) != 0)
        return 2;
    if (strcmp(name, "auto") != 0) {
        const gm_backend *be = gm_backend_find(name);
        if (!be) {
            snprintf(err, err_len, "--backend: backend '%s' is not built into this binary", name);
            return 2;
        }
        if (be->probe(&count, why, sizeof why) != GM_OK || count == 0) {
            snprintf(err, err_len, "%s backend unavailable: %s", name, why[0] ? why : "no device");
            return 3;
        }
        if (index >= count) {
            snprintf(err, err_len, "--device %d: %s has %d device%s (0..%d)", index, name, count,
                     count == 1 ? "" : "s", count - 1);
            return 2;
        }
        bool gpu;
        return open_device(be, index >= 0 ? index : best_index(be, count, &gpu), dev, err, err_len);
    }
    const gm_backend *fallback = NULL;
    int fallback_index = 0;
    char reasons[512] = "";
    for (int b = 0; gm_backends[b]; b++) {
        const gm_backend *be = gm_backends[b];
        if (be->probe(&count, why, sizeof why) != GM_OK || count == 0) {
            snprintf(reasons + strlen(reasons), sizeof reasons - strlen(reasons), "%s%s: %s",
                     reasons[0] ? "; " : "", be->name, why);
            continue;
        }
        if (index >= 0) {
            if (index < count)
                return open_device(be, index, dev, err, err_len);
            continue;
        }
        bool gpu;
        int best = best_index(be, count, &gpu);
        if (gpu)
            return open_device(be, best, dev, err, err_len);
        if (!fallback) {
            fallback = be;
            fallback_index = best;
        }
    }
    if (fallback)
        return open_device(fallback, fallback_index, dev, err, err_len);
    if (index >= 0)
        snprintf(err, err_len, "--device %d: no backend has that many devices", index);
    else
        snprintf(err, err_len, "no usable device (%s)", reasons);
    return index >= 0 ? 2 : 3;
}

int gm_select_backend(const char *name, const gm_backend **be, int *count, char *err, size_t err_len)
{
    char why[256] = "", reasons[512] = "";
    *be = NULL;
    for (int b = 0; gm_backends[b]; b++) {
        const gm_backend *cand = gm_backends[b];
        int n = 0;
        if (strcmp(name, "auto") != 0 && strcmp(name, cand->name) != 0)
            continue;
        if (cand->probe(&n, why, sizeof why) != GM_OK || n == 0) {
            snprintf(reasons + strlen(reasons), sizeof reasons - strlen(reasons), "%s%s: %s",
                     reasons[0] ? "; " : "", cand->name, why[0] ? why : "no device");
            continue;
        }
        bool gpu;
        best_index(cand, n, &gpu);
        if (!*be || gpu) {
            *be = cand;
            *count = n;
        }
        if (gpu)
            break;
    }
    if (*be)
        return 0;
    if (strcmp(name, "auto") != 0 && !gm_backend_find(name)) {
        snprintf(err, err_len, "--backend: backend '%s' is not built into this binary", name);
        return 2;
    }
    snprintf(err, err_len, "no usable device (%s)", reasons);
    return 3;
}
