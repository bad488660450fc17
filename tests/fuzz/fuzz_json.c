/*
 * Fuzz target: the JSON reader (src/json_read.c) that the report and
 * gpumem compare read meta.json with. The input is the document; every
 * leaf it accepts must be found again by its path.
 */
#include "fuzz_input.h"
#include "lib/json_read.h"

#include <assert.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gm_json_doc doc;
    char err[300];
    if (gm_json_parse((const char *)data, size, &doc, err, sizeof err) != 0)
        return 0;
    for (int i = 0; i < doc.n; i++)
        assert(gm_json_get(&doc, doc.leaves[i].path) != NULL);
    gm_json_doc_free(&doc);
    return 0;
}
