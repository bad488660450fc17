/* What the host has: its memory available now. */
#ifndef GM_HOST_MEMORY_H
#define GM_HOST_MEMORY_H

#include <stdint.h>

/* Host memory available now (MemAvailable of /proc/meminfo), 0 if unknown. */
uint64_t gm_host_mem_available(void);

#endif
