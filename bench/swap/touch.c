#include "bench/swap/touch.h"

#include "bench/bench.h"

gm_status gm_touch_open(gm_touch *t, gm_device *dev)
{
    t->dev = dev;
    t->chunked = gm_device_prefers_chunked(dev);
    t->prog = NULL;
    t->kernel = NULL;
    char variant[32];
    gm_status rc = dev->backend->program_build(dev, "touch", gm_kernel_variant(GM_FP32, t->chunked, variant,
                                                                               sizeof variant),
                                               NULL, &t->prog);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, t->prog, "touch_pages", &t->kernel);
    return rc;
}

void gm_touch_close(gm_touch *t)
{
    if (t->kernel)
        t->dev->backend->kernel_release(t->dev, t->kernel);
    if (t->prog)
        t->dev->backend->program_release(t->dev, t->prog);
    t->kernel = NULL;
    t->prog = NULL;
}

gm_status gm_touch_enqueue(gm_touch *t, int queue, const gm_buffer *buf, uint64_t words, unsigned int add)
{
    const unsigned int page_words = GM_TOUCH_PAGE_WORDS;
    gm_arg args[] = {gm_arg_buf(buf), gm_arg_u64(&words), gm_arg_u32(&page_words), gm_arg_u32(&add)};
    size_t global, local;
    gm_launch_geometry(t->dev, t->chunked, (size_t)((words + page_words - 1) / page_words), &global, &local);
    return t->dev->backend->launch(t->dev, queue, t->kernel, global, local, args, 4);
}

void gm_touch_reference(uint32_t *w, size_t n, uint32_t add)
{
    for (size_t first = 0; first < n; first += GM_TOUCH_PAGE_WORDS) {
        size_t end = first + GM_TOUCH_PAGE_WORDS < n ? first + GM_TOUCH_PAGE_WORDS : n;
        uint32_t sum = 0;
        for (size_t i = first; i + 1 < end; i++)
            sum += w[i];
        if (end - first > 1)
            w[end - 1] = sum;
        w[first] += add;
    }
}
