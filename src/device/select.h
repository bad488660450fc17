/* Finding and opening the device a command asks for. */
#ifndef GM_SELECT_H
#define GM_SELECT_H

#include "device/device.h"

/*
 * Opens device `index` (-1: the best) of backend `name` ("auto" tries every
 * backend: the first GPU found wins, then any device). Returns 0; 2 if
 * the request names no such backend or device; 3 if no usable device
 * exists. On failure writes one line into err.
 */
int gm_select_device(const char *name, int index, gm_device *dev, char *err, size_t err_len);

/*
 * The backend a multi-device run uses: `name`, or for "auto" the first
 * backend with a GPU, else the first with any device; *count its devices.
 * Returns 0, 2 (no such backend built in) or 3 (no usable device), with
 * one line in err on failure.
 */
int gm_select_backend(const char *name, const gm_backend **be, int *count, char *err, size_t err_len);

#endif
