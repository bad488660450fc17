#include "bench/output_fault.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const gm_output_fault_products[GM_OUTPUT_FAULT_PRODUCTS] = {
    "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"};
const char gm_output_fault_attn[] = "attn";
const char *const gm_output_fault_roles[GM_OUTPUT_FAULT_ROLES] = {"",         "dX_",     "dW_",    "lora_dB_",
                                                                 "lora_dxa_", "lora_dA_", "lora_dx_"};

/* "[:NAME[:LAYER]]" after a product fault's kind into f; -2 where it is not that. */
static int parse_product(const char *at, gm_output_fault *f)
{
    f->site = GM_OUTPUT_FAULT_SITE_PRODUCT;
    if (!*at)
        return 0;
    if (*at++ != ':')
        return -2;
    size_t len = strcspn(at, ":");
    for (int r = 0; r < GM_OUTPUT_FAULT_ROLES && f->product < 0; r++) {
        size_t pre = strlen(gm_output_fault_roles[r]);
        for (int i = 0; i < GM_OUTPUT_FAULT_PRODUCTS && f->product < 0 && len > pre; i++)
            if (strncmp(at, gm_output_fault_roles[r], pre) == 0 && strlen(gm_output_fault_products[i]) == len - pre
                && strncmp(at + pre, gm_output_fault_products[i], len - pre) == 0) {
                f->product = i;
                f->role = r;
            }
    }
    if (f->product < 0 && len == sizeof gm_output_fault_attn - 1 && strncmp(at, gm_output_fault_attn, len) == 0)
        f->product = GM_OUTPUT_FAULT_ATTN;
    if (f->product < 0)
        return -2;
    at += len;
    if (!*at)
        return 0;
    char *end;
    errno = 0;
    long v = strtol(++at, &end, 10);
    if (errno || *end || !*at || *at == '-' || *at == '+' || v < 0 || v > 1 << 20)
        return -2;
    f->layer = v;
    return 0;
}

int gm_output_fault_parse(const char *fault, const char *seed, gm_output_fault *f)
{
    f->kind = GM_OUTPUT_FAULT_NONE;
    f->seed = 1;
    f->only_rep = 0;
    f->site = GM_OUTPUT_FAULT_SITE_OUTPUT;
    f->product = -1;
    f->role = 0;
    f->layer = -1;
    static const char corrupt_product[] = "corrupt-product", flip_product[] = "flip-product-bit";
    if (fault && strcmp(fault, "corrupt-output") == 0)
        f->kind = GM_OUTPUT_FAULT_CORRUPT;
    else if (fault && strcmp(fault, "flip-output-bit") == 0)
        f->kind = GM_OUTPUT_FAULT_FLIP_BIT;
    else if (fault && strncmp(fault, corrupt_product, sizeof corrupt_product - 1) == 0) {
        f->kind = GM_OUTPUT_FAULT_CORRUPT;
        if (parse_product(fault + sizeof corrupt_product - 1, f) != 0) {
            f->kind = GM_OUTPUT_FAULT_NONE;
            return -2;
        }
    } else if (fault && strncmp(fault, flip_product, sizeof flip_product - 1) == 0) {
        f->kind = GM_OUTPUT_FAULT_FLIP_BIT;
        if (parse_product(fault + sizeof flip_product - 1, f) != 0) {
            f->kind = GM_OUTPUT_FAULT_NONE;
            return -2;
        }
    }
    if (seed && *seed) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(seed, &end, 10);
        if (errno || *end || *seed == '-')
            return -1;
        f->seed = v;
    }
    return 0;
}

int gm_output_fault_parse_rep(const char *rep, gm_output_fault *f)
{
    f->only_rep = 0;
    if (!rep || !*rep)
        return 0;
    char *end;
    errno = 0;
    unsigned long v = strtoul(rep, &end, 10);
    if (errno || *end || *rep == '-' || v >= 1u << 30)
        return -1;
    f->only_rep = (unsigned)v + 1;
    return 0;
}

uint64_t gm_output_fault_salt(const char *text)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

/* splitmix64 of (seed, salt, rep, stream): one well-mixed draw. */
static uint64_t draw(const gm_output_fault *f, uint64_t salt, unsigned rep, unsigned stream)
{
    uint64_t x = f->seed * 0x9e3779b97f4a7c15ull ^ salt ^ ((uint64_t)rep << 32 | stream);
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

size_t gm_output_fault_index(const gm_output_fault *f, uint64_t salt, unsigned rep, size_t n)
{
    return (size_t)(draw(f, salt, rep, 0) % n);
}

unsigned gm_output_fault_bit(const gm_output_fault *f, uint64_t salt, unsigned rep, unsigned low_bit,
                             unsigned elem_bits)
{
    if (low_bit >= elem_bits)
        low_bit = elem_bits - 1;
    return low_bit + (unsigned)(draw(f, salt, rep, 1) % (elem_bits - low_bit));
}

static const char *kind_name(const gm_output_fault *f)
{
    if (f->site == GM_OUTPUT_FAULT_SITE_PRODUCT)
        return f->kind == GM_OUTPUT_FAULT_CORRUPT ? "corrupt-product" : "flip-product-bit";
    return f->kind == GM_OUTPUT_FAULT_CORRUPT ? "corrupt-output" : "flip-output-bit";
}

void gm_output_fault_visible_bits(gm_precision p, unsigned *low, unsigned *high)
{
    unsigned bits = (unsigned)gm_precision_size(p) * 8;
    *high = bits - 1;
    *low = bits - 2;
    if (p == GM_INT8) {
        *low = 7;
        *high = 8;
    }
}

gm_status gm_output_fault_strike(const gm_output_fault *f, gm_device *dev, gm_buffer *buf, size_t offset,
                                 size_t n, size_t elem_size, uint64_t salt, unsigned rep, unsigned low_bit,
                                 size_t *struck)
{
    return gm_output_fault_strike_bits(f, dev, buf, offset, n, elem_size, salt, rep, low_bit,
                                       (unsigned)(elem_size < 16 ? elem_size : 16) * 8, struck);
}

/* The strike of gm_output_fault_strike_bits, its report ending " of LABEL"
 * where label is not NULL. */
static gm_status strike(const gm_output_fault *f, gm_device *dev, gm_buffer *buf, size_t offset, size_t n,
                        size_t elem_size, uint64_t salt, unsigned rep, unsigned low_bit, unsigned high_bit,
                        const char *label, size_t *struck)
{
    if (f->kind == GM_OUTPUT_FAULT_NONE || n == 0 || elem_size == 0 || (f->only_rep && rep + 1 != f->only_rep))
        return GM_OK;
    unsigned char elem[16];
    if (elem_size > sizeof elem)
        elem_size = sizeof elem;
    size_t i = gm_output_fault_index(f, salt, rep, n);
    size_t at = offset + i * elem_size;
    gm_buffer host = {.kind = GM_MEM_HOST, .bytes = elem_size, .host = elem};
    unsigned bit = 0;
    gm_status st = GM_OK;
    if (f->kind == GM_OUTPUT_FAULT_CORRUPT) {
        for (size_t b = 0; b < elem_size; b++)
            elem[b] = b % 2 ? 0x7b : 0x5a;
    } else {
        if (high_bit == 0 || high_bit > elem_size * 8)
            high_bit = (unsigned)(elem_size * 8);
        bit = gm_output_fault_bit(f, salt, rep, low_bit, high_bit);
        st = dev->backend->copy(dev, 0, &host, 0, buf, at, elem_size, false);
        elem[bit / 8] ^= (unsigned char)(1u << (bit % 8));
    }
    if (st == GM_OK)
        st = dev->backend->copy(dev, 0, buf, at, &host, 0, elem_size, false);
    if (st == GM_OK) {
        if (f->kind == GM_OUTPUT_FAULT_FLIP_BIT)
            fprintf(stderr, "gpumem: fault: %s struck element %zu of %zu (bit %u)%s%s\n", kind_name(f), i, n, bit,
                    label ? " of " : "", label ? label : "");
        else
            fprintf(stderr, "gpumem: fault: %s struck element %zu of %zu%s%s\n", kind_name(f), i, n,
                    label ? " of " : "", label ? label : "");
        if (struck)
            *struck = i;
    }
    return st;
}

gm_status gm_output_fault_strike_bits(const gm_output_fault *f, gm_device *dev, gm_buffer *buf, size_t offset,
                                      size_t n, size_t elem_size, uint64_t salt, unsigned rep, unsigned low_bit,
                                      unsigned high_bit, size_t *struck)
{
    return strike(f, dev, buf, offset, n, elem_size, salt, rep, low_bit, high_bit, NULL, struck);
}

gm_status gm_output_fault_strike_product(const gm_output_fault *f, gm_device *dev, gm_buffer *buf, size_t offset,
                                         size_t n, size_t elem_size, gm_precision p, uint64_t salt, const char *label,
                                         size_t *struck)
{
    gm_output_fault every = *f;
    every.only_rep = 0;
    unsigned low, high;
    gm_output_fault_visible_bits(p, &low, &high);
    return strike(&every, dev, buf, offset, n, elem_size, salt, 0, low, high, label, struck);
}
