/*
 * The touch kernel (kernels/touch.cl) and its host reference: a change to
 * every 4KiB page of a buffer of 32-bit words that reads the whole page
 * and that the host can predict. Used by the swap suite's unified-memory
 * part and by the stress checks.
 */
#ifndef GM_TOUCH_H
#define GM_TOUCH_H

#include "device/device.h"

#include <stdbool.h>
#include <stdint.h>

#define GM_TOUCH_PAGE_WORDS 1024u     /* 4KiB pages */

typedef struct {
    gm_device *dev;
    bool chunked;
    gm_program *prog;
    gm_kernel *kernel;
} gm_touch;

/* Builds the kernel for dev. On failure dev->err says why. */
gm_status gm_touch_open(gm_touch *t, gm_device *dev);
void gm_touch_close(gm_touch *t);

/* Enqueues touch_pages over the first `words` words of buf on `queue`. */
gm_status gm_touch_enqueue(gm_touch *t, int queue, const gm_buffer *buf, uint64_t words, unsigned int add);

/* What touch_pages does, on the host. */
void gm_touch_reference(uint32_t *w, size_t n, uint32_t add);

#endif
