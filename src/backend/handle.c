#include "backend/handle.h"

#include <stdarg.h>
#include <stdio.h>

gm_status gm_device_fail(gm_device *dev, gm_status code, int native, const char *fmt, ...)
{
    va_list ap;
    dev->err.code = code;
    dev->err.native = native;
    va_start(ap, fmt);
    vsnprintf(dev->err.msg, sizeof dev->err.msg, fmt, ap);
    va_end(ap);
    return code;
}
