/*
 * The cmocka group fixture of the unit tests that run on the first OpenCL
 * device (PoCL on the CPU in CI): opens it with a 64MiB cap, closes it.
 */
#ifndef GM_OPENCL_FIXTURE_H
#define GM_OPENCL_FIXTURE_H

#include "device/device.h"

#include <stdio.h>

static gm_device dev;

static int open_device(void **state)
{
    (void)state;
    char why[256];
    int count = 0;
    if (gm_backend_opencl.probe(&count, why, sizeof why) != GM_OK || count == 0) {
        fprintf(stderr, "no OpenCL device: %s\n", why);
        return -1;
    }
    if (gm_device_open(&dev, &gm_backend_opencl, 0) != GM_OK)
        return -1;
    gm_device_set_limit(&dev, 64u << 20);
    return 0;
}

static int close_device(void **state)
{
    (void)state;
    gm_device_close(&dev);
    return 0;
}

#endif
