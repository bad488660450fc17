#include "pattern.h"

#include <string.h>

const char *const gm_pattern_names[GM_PATTERN_COUNT] = {"per-tensor", "monolithic"};

static uint64_t align_up(uint64_t v) { return (v + GM_VIEW_ALIGN - 1) / GM_VIEW_ALIGN * GM_VIEW_ALIGN; }

uint64_t gm_arena_bytes(const gm_tensor *t, int n)
{
    uint64_t total = 0;
    for (int i = 0; i < n; i++)
        if (t[i].bytes > UINT64_MAX - GM_VIEW_ALIGN || __builtin_add_overflow(total, align_up(t[i].bytes), &total))
            return 0;
    return total;
}

gm_status gm_pattern_begin(gm_pattern *p, gm_device *dev, gm_pattern_kind kind, const gm_tensor *t, int n)
{
    memset(p, 0, sizeof *p);
    p->dev = dev;
    p->kind = kind;
    if (kind != GM_PATTERN_MONOLITHIC)
        return GM_OK;
    uint64_t bytes = gm_arena_bytes(t, n);
    if (bytes == 0 || bytes > SIZE_MAX)
        return gm_device_fail(dev, GM_ERR_OOM, 0, "the arena's size overflows");
    return gm_device_alloc(dev, GM_MEM_DEVICE, (size_t)bytes, &p->arena);
}

gm_status gm_pattern_alloc(gm_pattern *p, size_t bytes, gm_buffer *out)
{
    gm_status st;
    if (p->kind == GM_PATTERN_MONOLITHIC) {
        if (bytes > p->arena.bytes - p->used)
            return gm_device_fail(p->dev, GM_ERR_INVALID, 0, "tensor of %zu bytes past the end of the arena", bytes);
        st = gm_device_view(p->dev, &p->arena, p->used, bytes, out);
        if (st == GM_OK)
            p->used += (size_t)align_up(bytes);
    } else {
        st = gm_device_alloc(p->dev, GM_MEM_DEVICE, bytes, out);
    }
    if (st == GM_OK)
        p->requested += bytes;
    return st;
}

void gm_pattern_end(gm_pattern *p)
{
    gm_device_free(p->dev, &p->arena);
}
