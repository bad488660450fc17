/* What the host has: its memory available now, and in all. */
#ifndef GM_HOST_MEMORY_H
#define GM_HOST_MEMORY_H

#include <stdint.h>

/* Host memory available now (MemAvailable of /proc/meminfo), 0 if unknown. */
uint64_t gm_host_mem_available(void);

/* The host's physical memory (MemTotal of /proc/meminfo), 0 if unknown. */
uint64_t gm_host_mem_total(void);

#endif
