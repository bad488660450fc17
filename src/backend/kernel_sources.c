#include "backend/kernel_sources.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* From the generated build/gen/kernel_table.c; NULL-name terminated. */
extern const gm_embedded_file gm_kernel_files[];
extern const gm_embedded_file gm_cuda_images[];

static const gm_embedded_file *find(const gm_embedded_file *table, const char *name)
{
    for (; table->name; table++)
        if (strcmp(table->name, name) == 0)
            return table;
    return NULL;
}

const char *gm_kernel_text(const char *program, size_t *len)
{
    const gm_embedded_file *f = find(gm_kernel_files, program);
    if (!f)
        return NULL;
    *len = (size_t)(f->end - f->start);
    return (const char *)f->start;
}

const char *gm_kernel_header(size_t *len)
{
    return gm_kernel_text("gm_portable.h", len);
}

const unsigned char *gm_cuda_image(const char *program, const char *variant, size_t *len)
{
    char key[128];
    if ((size_t)snprintf(key, sizeof key, "%s.%s", program, variant) >= sizeof key)
        return NULL;
    const gm_embedded_file *f = find(gm_cuda_images, key);
    if (!f)
        return NULL;
    *len = (size_t)(f->end - f->start);
    return f->start;
}

int gm_variant_defines(const char *variant, char *out, size_t out_len)
{
    size_t used = 0;
    const char *p = variant;
    if (out_len == 0)
        return -1;
    out[0] = '\0';
    while (*p) {
        size_t tok = strcspn(p, "-");
        if (tok == 0)
            return -1;
        if (used + tok + 12 >= out_len)
            return -1;
        used += (size_t)sprintf(out + used, "%s-DGM_", used ? " " : "");
        for (size_t i = 0; i < tok; i++) {
            unsigned char c = (unsigned char)p[i];
            if (!isalnum(c) && c != '_')
                return -1;
            out[used++] = (char)toupper(c);
        }
        used += (size_t)sprintf(out + used, "=1");
        p += tok;
        if (*p == '-')
            p++;
    }
    return 0;
}
