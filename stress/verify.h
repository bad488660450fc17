/*
 * What several stress checks share: a device buffer of 32-bit words with
 * a host reference, changed by the touch kernel and checked back.
 */
#ifndef GM_STRESS_VERIFY_H
#define GM_STRESS_VERIFY_H

#include "stress/stress.h"
#include "bench/swap/touch.h"

typedef struct {
    gm_buffer dev, host;          /* the device words and a host staging copy */
    uint32_t *want;               /* the reference */
    size_t words;
} gm_stress_words;

/* Allocates `bytes` on the device and writes a seeded payload there. */
gm_status gm_stress_words_init(gm_stress *s, gm_stress_words *w, size_t bytes, uint64_t seed);
/* Enqueues the touch kernel over the words on `queue` (and applies it to the reference). */
gm_status gm_stress_words_touch(gm_stress *s, gm_touch *t, gm_stress_words *w, int queue);
/* Reads the words back (blocking, queue 0) and compares; *ok. With the
 * flip-bits fault, one bit is flipped on the device first. */
gm_status gm_stress_words_check(gm_stress *s, gm_stress_words *w, bool *ok);
void gm_stress_words_free(gm_stress *s, gm_stress_words *w);

/* Flips bit 5 of the word in the middle of buf, or of the word at byte
 * `offset` (a multiple of 4). */
gm_status gm_stress_flip_bit(gm_device *dev, gm_buffer *buf);
gm_status gm_stress_flip_bit_at(gm_device *dev, gm_buffer *buf, size_t offset);

/* The word kernels/memtest.cl's random mode writes at index i with seed
 * p (memtest_word, mode 2): the two must stay the same function. */
uint32_t gm_stress_random_word(uint64_t i, uint32_t p);

#endif
