/*
 * touch_pages: brings every page of buf to the device and changes it in a
 * way the host can check. For each page of `page_words` 32-bit words
 * (the last page may be shorter): the last word becomes the wrapping sum
 * of the page's other words (every word is read), then the first word is
 * increased by `add`. Pages are spread over the launch with GM_FOR_EACH.
 */
GM_KERNEL touch_pages(GM_GLOBAL gm_u32 *GM_RESTRICT buf, gm_u64 n_words, unsigned int page_words,
                      unsigned int add)
{
    const gm_u64 pages = (n_words + page_words - 1) / page_words;
    GM_FOR_EACH(p, (size_t)pages) {
        const size_t first = p * (size_t)page_words;
        const size_t end = first + page_words < n_words ? first + page_words : (size_t)n_words;
        gm_u32 sum = 0;
        for (size_t i = first; i + 1 < end; i++)
            sum += buf[i];
        if (end - first > 1)
            buf[end - 1] = sum;
        buf[first] += add;
    }
}
