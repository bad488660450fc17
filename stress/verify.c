#include "stress/verify.h"

#include "bench/swap/common.h"

#include <stdlib.h>
#include <string.h>

gm_status gm_stress_words_init(gm_stress *s, gm_stress_words *w, size_t bytes, uint64_t seed)
{
    memset(w, 0, sizeof *w);
    w->words = bytes / 4;
    w->want = malloc(w->words * 4);
    if (!w->want)
        return gm_device_fail(s->dev, GM_ERR_OOM, 0, "out of host memory");
    gm_status rc = gm_device_alloc(s->dev, GM_MEM_DEVICE, w->words * 4, &w->dev);
    if (rc == GM_OK)
        rc = gm_device_alloc(s->dev, GM_MEM_HOST, w->words * 4, &w->host);
    if (rc != GM_OK)
        return rc;
    gm_swap_fill((unsigned char *)w->want, w->words * 4, seed);
    memcpy(w->host.host, w->want, w->words * 4);
    return s->dev->backend->copy(s->dev, 0, &w->dev, 0, &w->host, 0, w->words * 4, false);
}

gm_status gm_stress_words_touch(gm_stress *s, gm_touch *t, gm_stress_words *w, int queue)
{
    (void)s;
    gm_status rc = gm_touch_enqueue(t, queue, &w->dev, w->words, 1);
    if (rc == GM_OK)
        gm_touch_reference(w->want, w->words, 1);
    return rc;
}

gm_status gm_stress_flip_bit(gm_device *dev, gm_buffer *buf) { return gm_stress_flip_bit_at(dev, buf, buf->bytes / 2 / 4 * 4); }

gm_status gm_stress_flip_bit_at(gm_device *dev, gm_buffer *buf, size_t at)
{
    gm_buffer word;
    gm_status rc = gm_device_alloc(dev, GM_MEM_HOST, 4, &word);
    if (rc == GM_OK)
        rc = dev->backend->copy(dev, 0, &word, 0, buf, at, 4, false);
    if (rc == GM_OK) {
        *(uint32_t *)word.host ^= 1u << 5;
        rc = dev->backend->copy(dev, 0, buf, at, &word, 0, 4, false);
    }
    gm_device_free(dev, &word);
    return rc;
}

gm_status gm_stress_words_check(gm_stress *s, gm_stress_words *w, bool *ok)
{
    gm_status rc = s->fault == GM_STRESS_FAULT_FLIP_BITS ? gm_stress_flip_bit(s->dev, &w->dev) : GM_OK;
    if (rc == GM_OK)
        rc = s->dev->backend->copy(s->dev, 0, &w->host, 0, &w->dev, 0, w->words * 4, false);
    *ok = rc == GM_OK && memcmp(w->host.host, w->want, w->words * 4) == 0;
    return rc;
}

void gm_stress_words_free(gm_stress *s, gm_stress_words *w)
{
    gm_device_free(s->dev, &w->dev);
    gm_device_free(s->dev, &w->host);
    free(w->want);
    w->want = NULL;
}

uint32_t gm_stress_random_word(uint64_t i, uint32_t p)
{
    uint32_t h = (uint32_t)i * 0x9e3779b1u ^ (uint32_t)(i >> 32) * 0x85ebca77u ^ p * 0xc2b2ae3du;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h;
}
