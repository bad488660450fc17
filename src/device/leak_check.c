/* The run-level device leak check (leak_check.h). */
#include "device/leak_check.h"

#include <stdio.h>
#include <string.h>

bool gm_driver_free_memory(gm_device *dev, uint64_t *free_b)
{
    uint64_t total_b = 0;
    gm_error saved = dev->err;            /* a driver that cannot tell is no failure */
    bool known = dev->info.type != GM_DEV_CPU && dev->backend->mem_info(dev, free_b, &total_b) == GM_OK;
    dev->err = saved;
    return known;
}

void gm_mem_snapshot_take(gm_device *dev, gm_mem_snapshot *m)
{
    m->live = dev->shim.live;
    m->driver_known = gm_driver_free_memory(dev, &m->driver_free);
}

uint64_t gm_leak_driver_allowance(uint64_t managed_bytes)
{
    uint64_t sum = GM_LEAK_DRIVER_SLACK + managed_bytes;
    return sum < managed_bytes ? UINT64_MAX : sum;
}

/* Appends "N name" for one kind of object still live beyond the start. */
static void more_live(char *buf, size_t len, uint64_t start, uint64_t end, const char *what)
{
    if (end == start)
        return;
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s%lld %s", used ? ", " : "", (long long)(end - start), what);
}

bool gm_leak_check(gm_device *dev, gm_leak_report *r)
{
    gm_mem_snapshot_take(dev, &r->end);
    r->checked = true;
    const gm_live_objects *a = &r->start.live, *b = &r->end.live;
    char live[200] = "";
    more_live(live, sizeof live, a->buffers, b->buffers, "buffers");
    more_live(live, sizeof live, a->bytes, b->bytes, "bytes");
    more_live(live, sizeof live, a->views, b->views, "views");
    more_live(live, sizeof live, a->maps, b->maps, "mappings");
    more_live(live, sizeof live, a->programs, b->programs, "programs");
    more_live(live, sizeof live, a->kernels, b->kernels, "kernels");
    more_live(live, sizeof live, a->events, b->events, "events");
    r->driver_compared = r->start.driver_known && r->end.driver_known && dev->shim.async_allocs == 0
                         && dev->shim.blas_calls == 0;
    uint64_t shortfall = r->driver_compared && r->end.driver_free < r->start.driver_free
                             ? r->start.driver_free - r->end.driver_free
                             : 0;
    if (live[0]) {
        r->leaked = true;
        snprintf(r->detail, sizeof r->detail, "still held at the end beyond the start: %s", live);
    } else if (shortfall > gm_leak_driver_allowance(dev->shim.managed_bytes)) {
        r->leaked = true;
        snprintf(r->detail, sizeof r->detail, "the driver's free memory is %llu bytes below the start's",
                 (unsigned long long)shortfall);
    } else if (!r->driver_compared) {
        r->leaked = false;
        snprintf(r->detail, sizeof r->detail, "every object released (the driver's free memory not compared)");
    } else if (shortfall > GM_LEAK_DRIVER_SLACK) {
        r->leaked = false;
        snprintf(r->detail, sizeof r->detail, "every object released; the driver's free memory %llu bytes below the "
                 "start's, within 64MiB and the %llu bytes of managed memory the run allocated (pages the driver may "
                 "keep)", (unsigned long long)shortfall, (unsigned long long)dev->shim.managed_bytes);
    } else {
        r->leaked = false;
        snprintf(r->detail, sizeof r->detail, "every object released; the driver's free memory back within 64MiB");
    }
    return r->leaked;
}
