#include "lib/host_memory.h"

#include <stdio.h>

/* The figure of /proc/meminfo's line `field` (a format such as
 * "MemTotal: %llu kB"), in bytes; 0 if unknown. */
static uint64_t meminfo(const char *field)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, field, &kib) == 1)
            break;
    fclose(f);
    return (uint64_t)kib * 1024;
}

uint64_t gm_host_mem_available(void) { return meminfo("MemAvailable: %llu kB"); }

uint64_t gm_host_mem_total(void) { return meminfo("MemTotal: %llu kB"); }
