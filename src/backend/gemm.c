/* The stored row lengths of a gm_gemm's operands (backend.h). */
#include "backend/backend.h"

size_t gm_gemm_lda(const gm_gemm *g)
{
    return g->lda ? g->lda : g->trans_a ? g->m : g->k;
}

size_t gm_gemm_ldb(const gm_gemm *g)
{
    return g->ldb ? g->ldb : g->b_nk ? g->k : g->n;
}

size_t gm_gemm_ldc(const gm_gemm *g)
{
    return g->ldc ? g->ldc : g->n;
}
