/*
 * gm_device, the handle of an open device that every backend op receives:
 * the backend's private state, the device's facts, the last error, and
 * the accounting the device layer (device/device.h) keeps in it.
 */
#ifndef GM_BACKEND_HANDLE_H
#define GM_BACKEND_HANDLE_H

#include "backend/backend.h"
#include "backend/shim.h"

typedef struct gm_device {
    const gm_backend *backend;
    int index;
    gm_device_info info;
    gm_error err;                 /* the last failure */
    uint64_t mem_limit;           /* cap on live device bytes; 0 = none */
    uint64_t live_bytes;          /* device + managed bytes allocated now */
    uint64_t peak_bytes;
    void *priv;                   /* the backend's state */
    gm_backend_shim shim;         /* what dev->backend points to */
} gm_device;

/* Records a failure on dev and returns code. Backends call it. */
gm_status gm_device_fail(gm_device *dev, gm_status code, int native, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif
