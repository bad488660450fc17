/* The switch GPUMEM_BACKEND_FAULT and the names of the backend ops
 * (backend/shim.h says what it does). */
#include "backend/shim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[GM_OP_COUNT] = {
    "open", "mem_info", "alloc", "view", "fill", "copy", "map", "unmap", "prefetch", "program_build",
    "kernel_get", "launch", "event_record", "event_elapsed_ms", "synchronize", "blas_gemm", "trim", "free",
    "queue_hold",
};

const char *gm_backend_op_name(gm_backend_op op)
{
    return op >= 0 && op < GM_OP_COUNT ? op_names[op] : "unknown";
}

int gm_inject_parse(const char *text, gm_inject_spec *spec, char *err, size_t err_len)
{
    memset(spec, 0, sizeof *spec);
    if (!text || !*text)
        return 0;
    const char *c1 = strchr(text, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1 || !c2) {
        snprintf(err, err_len, "GPUMEM_BACKEND_FAULT '%.80s': expected OP:N:lost|oom|leak|hang", text);
        return -1;
    }
    size_t len = (size_t)(c1 - text);
    int op = -1;
    for (int i = 0; i < GM_OP_COUNT; i++)
        if (strlen(op_names[i]) == len && strncmp(op_names[i], text, len) == 0)
            op = i;
    if (op < 0) {
        snprintf(err, err_len, "GPUMEM_BACKEND_FAULT '%.80s': '%.*s' is not a backend op (alloc, copy, launch, ...)",
                 text, (int)(len > 40 ? 40 : len), text);
        return -1;
    }
    char *end;
    errno = 0;
    long at = strtol(c1 + 1, &end, 10);
    if (end != c2 || at < 1 || errno) {
        snprintf(err, err_len, "GPUMEM_BACKEND_FAULT '%.80s': the call number must be a whole number from 1", text);
        return -1;
    }
    const char *mode = c2 + 1;
    gm_inject_mode m = strcmp(mode, "lost") == 0 ? GM_INJECT_LOST
                       : strcmp(mode, "oom") == 0 ? GM_INJECT_OOM
                       : strcmp(mode, "leak") == 0 ? GM_INJECT_LEAK
                       : strcmp(mode, "hang") == 0 ? GM_INJECT_HANG
                                                   : GM_INJECT_NONE;
    if (m == GM_INJECT_NONE) {
        snprintf(err, err_len, "GPUMEM_BACKEND_FAULT '%.80s': the mode must be lost, oom, leak or hang", text);
        return -1;
    }
    if (m != GM_INJECT_HANG && (m == GM_INJECT_LEAK) != (op == GM_OP_FREE)) {
        snprintf(err, err_len, "GPUMEM_BACKEND_FAULT '%.80s': %s", text,
                 m == GM_INJECT_LEAK ? "only free can leak" : "free cannot fail, only leak or hang");
        return -1;
    }
    spec->op = (gm_backend_op)op;
    spec->at = at;
    spec->mode = m;
    return 0;
}

gm_inject_spec gm_inject_from_env(void)
{
    gm_inject_spec spec;
    char err[200];
    if (gm_inject_parse(getenv("GPUMEM_BACKEND_FAULT"), &spec, err, sizeof err) != 0)
        memset(&spec, 0, sizeof spec);
    return spec;
}
