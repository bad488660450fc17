/*
 * The device parts both whole-output checksum checks hold
 * (product_device_check.h for fp32, 16-bit and fp8 products,
 * product_device_check_int8.h for int8): kernels/abft.cl built in one
 * variant with its kernels taken by name, scratch buffers grown as
 * needed, and launches in the device's geometry.
 */
#ifndef GM_ABFT_KIT_H
#define GM_ABFT_KIT_H

#include "device/device.h"

#include <stdbool.h>
#include <stddef.h>

/* Builds abft.cl's `variant` on dev into *prog and takes names[i] into
 * *ks[i], i < n. On failure returns the status with dev->err set, and
 * releases what it built (*prog and every *ks[i] NULL). */
gm_status gm_abft_kit_build(gm_device *dev, const char *variant, const char *const *names, gm_kernel **const *ks,
                            size_t n, gm_program **prog);

/* Frees bufs[0..n) (each may be empty). */
void gm_abft_kit_free(gm_device *dev, gm_buffer *const *bufs, size_t n);

/* Releases ks[0..n) (NULL ones skipped) and prog (may be NULL). */
void gm_abft_kit_release(gm_device *dev, gm_program *prog, gm_kernel *const *ks, size_t n);

/* buf holds at least `bytes` device bytes (grown: its old contents are
 * lost). Returns the device's status (GM_ERR_OOM where it cannot). */
gm_status gm_abft_kit_reserve(gm_device *dev, gm_buffer *buf, size_t bytes);

/* Launches k over `items` work items on queue 0 in the device's geometry
 * (chunked: a CPU device's). */
gm_status gm_abft_kit_launch(gm_device *dev, bool chunked, gm_kernel *k, size_t items, gm_arg *args, int n);

#endif
