/*
 * A device's dense peak in FLOP/s for one precision: what model FLOPs
 * utilization (MFU) divides by. From a table of known NVIDIA cards, by
 * compute capability, SM count and name, with the datasheets' dense
 * (no sparsity) figures; elsewhere measured in this run by the matrix
 * product the dispatch (matmul.h) runs fastest on the device: the vendor's
 * GEMM at 8192^3 on a GPU, our kernel at 512^3 on a CPU device (its
 * measured peak, not the cores' FMA rate). Every figure says where it
 * comes from.
 */
#ifndef GM_PEAK_H
#define GM_PEAK_H

#include "device/device.h"

#include <stdbool.h>
#include <stddef.h>

/* The datasheet's dense peak of dev in precision p, in FLOP/s (0 where the
 * table has no entry: an unknown card, or a precision it has no tensor
 * cores for), and its source in `basis`. Pure: dev->info only. */
double gm_peak_from_table(const gm_device_info *info, gm_precision p, char *basis, size_t len);

/* The peak of dev in precision p, in FLOP/s: the table's, else measured
 * (once a process for each precision) by the dispatch: the vendor's GEMM
 * first on a GPU, our kernel on a CPU device (faster there than CLBlast).
 * 0 where neither gives one (basis says why: e.g. no memory for the
 * product). Returns GM_OK, or a device failure (GM_ERR_DEVICE_LOST...)
 * that the caller reports. */
gm_status gm_peak(gm_device *dev, gm_precision p, double *flops, char *basis, size_t len);

#endif
