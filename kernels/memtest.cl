/*
 * Device memory test patterns over buffers of 32-bit words. The word
 * expected at index i, by mode:
 *   0 constant   p
 *   1 address    i ^ p                (own address; p = ~0: inverted)
 *   2 random     a hash of (i, p)     (p is the seed; the host has it as
 *                                     gm_stress_random_word, stress/verify.c)
 *   3 modulo     i % 20 == offset ? p : ~p
 * memtest_fill writes the pattern; memtest_check compares every word and
 * reports into `report`: [0] the error count, [1] the OR of every flipped
 * bit, then the first MEMTEST_MAX_FAILS failing indices as (low, high)
 * word pairs; memtest_invert does one moving-inversions step: checks each
 * word against the pattern, reporting as check does, then writes its
 * complement. Every kernel covers n words with GM_FOR_EACH.
 */
#define MEMTEST_MAX_FAILS 8

GM_INLINE gm_u32 memtest_word(gm_u64 i, unsigned int mode, gm_u32 p, unsigned int offset)
{
    if (mode == 1)
        return (gm_u32)i ^ p;
    if (mode == 2) {
        gm_u32 h = (gm_u32)i * 0x9e3779b1u ^ (gm_u32)(i >> 32) * 0x85ebca77u ^ p * 0xc2b2ae3du;
        h ^= h >> 15;
        h *= 0x2c1b3c6du;
        h ^= h >> 12;
        return h;
    }
    if (mode == 3)
        return i % 20 == offset ? p : ~p;
    return p;
}

GM_INLINE void memtest_report(GM_GLOBAL gm_u32 *report, gm_u64 i, gm_u32 got, gm_u32 want)
{
    gm_u32 slot = gm_atomic_inc(&report[0]);
    gm_atomic_or(&report[1], got ^ want);
    if (slot < MEMTEST_MAX_FAILS) {
        report[2 + 2 * slot] = (gm_u32)i;
        report[3 + 2 * slot] = (gm_u32)(i >> 32);
    }
}

GM_KERNEL memtest_fill(GM_GLOBAL gm_u32 *GM_RESTRICT buf, gm_u64 n, unsigned int mode, gm_u32 p,
                       unsigned int offset)
{
    GM_FOR_EACH(i, (size_t)n)
        buf[i] = memtest_word(i, mode, p, offset);
}

GM_KERNEL memtest_check(GM_GLOBAL const gm_u32 *GM_RESTRICT buf, gm_u64 n, unsigned int mode, gm_u32 p,
                        unsigned int offset, GM_GLOBAL gm_u32 *GM_RESTRICT report)
{
    GM_FOR_EACH(i, (size_t)n) {
        const gm_u32 want = memtest_word(i, mode, p, offset), got = buf[i];
        if (got != want)
            memtest_report(report, i, got, want);
    }
}

GM_KERNEL memtest_invert(GM_GLOBAL gm_u32 *GM_RESTRICT buf, gm_u64 n, unsigned int mode, gm_u32 p,
                         unsigned int offset, GM_GLOBAL gm_u32 *GM_RESTRICT report)
{
    GM_FOR_EACH(i, (size_t)n) {
        const gm_u32 want = memtest_word(i, mode, p, offset), got = buf[i];
        if (got != want)
            memtest_report(report, i, got, want);
        buf[i] = ~want;
    }
}
