#include "bench/workloads/kernel_calls.h"

#include "bench/bench.h"

/* Geometry constants of kernels/linear.cl: linear_tiled's GM_TILE;
 * linear_blocked's GM_RB, GM_CB, GM_NS and GM_NB. */
#define TILE 32
#define TILE_ITEMS (TILE * TILE / 8)
#define BLOCKED_RB 6
#define BLOCKED_CB 16
#define BLOCKED_NS 2
#define BLOCKED_NB 16
/* linear_blocked with m <= BLOCKED_RB: GM_ROWS_SPAN, and this many work
 * items per compute unit at least. */
#define ROWS_SPAN 512
#define ROWS_ITEMS_PER_CU 4
/* linear_blocked: at least this many work items per compute unit where
 * the rows allow. */
#define BLOCKED_ITEMS_PER_CU 8

/* linear_blocked's global size (kernels/linear.cl): the spans times the
 * row groups, as few groups as BLOCKED_NB row blocks each allow, more
 * (down to one block each) while the work items fill the compute units
 * fewer than BLOCKED_ITEMS_PER_CU times; with at most BLOCKED_RB rows,
 * the spans of linear_rows_body. */
static size_t blocked_global(const gm_device *dev, uint64_t m, uint64_t n)
{
    uint64_t cu = dev->info.compute_units > 0 ? (uint64_t)dev->info.compute_units : 1;
    if (m <= BLOCKED_RB) {
        /* Spans of whole strips, at most ROWS_SPAN columns each, and
         * ROWS_ITEMS_PER_CU a compute unit where the strips allow. */
        uint64_t strips = (n + BLOCKED_CB - 1) / BLOCKED_CB, items = cu * ROWS_ITEMS_PER_CU;
        uint64_t least = (n + ROWS_SPAN - 1) / ROWS_SPAN;
        if (items > strips)
            items = strips;
        return (size_t)(items > least ? items : least);
    }
    uint64_t spans = (n + BLOCKED_NS * BLOCKED_CB - 1) / (BLOCKED_NS * BLOCKED_CB);
    uint64_t blocks = (m + BLOCKED_RB - 1) / BLOCKED_RB, least = (blocks + BLOCKED_NB - 1) / BLOCKED_NB;
    uint64_t groups = (cu * BLOCKED_ITEMS_PER_CU + spans - 1) / spans;
    if (groups > blocks)
        groups = blocks;
    if (groups < least)
        groups = least;
    return (size_t)(groups * spans);
}

gm_status gm_linear_enqueue(gm_device *dev, int queue, gm_kernel *kernel, bool blocked, const gm_linear_call *c)
{
    return gm_linear_enqueue_int4(dev, queue, kernel, blocked, c, NULL, 1);
}

gm_status gm_linear_enqueue_int4(gm_device *dev, int queue, gm_kernel *kernel, bool blocked, const gm_linear_call *c,
                                 const gm_buffer *ws, unsigned int group)
{
    if (c->m > UINT32_MAX || c->n > UINT32_MAX || c->k > UINT32_MAX)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "matrix dimensions must fit 32 bits");
    const unsigned int m = (unsigned int)c->m, n = (unsigned int)c->n, k = (unsigned int)c->k;
    gm_arg args[] = {gm_arg_buf(c->x),    gm_arg_buf(c->w),      gm_arg_buf(c->y),      gm_arg_buf(c->r ? c->r : c->x),
                     gm_arg_u32(&m),      gm_arg_u32(&n),        gm_arg_u32(&k),        gm_arg_f32(&c->sx),
                     gm_arg_f32(&c->sw),  gm_arg_f32(&c->sy),    gm_arg_f32(&c->sr),    gm_arg_u64(&c->x_off),
                     gm_arg_u64(&c->w_off), gm_arg_u64(&c->y_off), gm_arg_u64(&c->r_off), gm_arg_u32(&c->epilogue),
                     gm_arg_buf(ws ? ws : c->x), gm_arg_u32(&group)};
    size_t global, local;
    if (!blocked) {
        local = TILE_ITEMS;
        global = ((c->m + TILE - 1) / TILE) * ((c->n + TILE - 1) / TILE) * local;
    } else {
        local = 1;
        global = blocked_global(dev, c->m, c->n);
    }
    return dev->backend->launch(dev, queue, kernel, global, local, args, (int)(sizeof args / sizeof args[0]));
}

gm_status gm_attention_enqueue(gm_device *dev, gm_kernel *kernel, bool chunked, const gm_attention_call *c)
{
    const unsigned int kv_group = c->kv_group ? c->kv_group : 1;
    gm_arg args[] = {gm_arg_buf(c->q),        gm_arg_buf(c->k),         gm_arg_buf(c->v),
                     gm_arg_buf(c->o),        gm_arg_buf(c->stats),     gm_arg_u32(&c->bh),
                     gm_arg_u32(&c->seq),     gm_arg_u32(&c->dim),      gm_arg_u32(&c->causal),
                     gm_arg_f32(&c->scale_in), gm_arg_f32(&c->scale_out), gm_arg_u32(&c->heads),
                     gm_arg_u32(&kv_group),   gm_arg_u64(&c->q_batch),  gm_arg_u64(&c->q_row),
                     gm_arg_u64(&c->kv_batch), gm_arg_u64(&c->kv_row), gm_arg_u64(&c->o_batch),
                     gm_arg_u64(&c->o_row),   gm_arg_u64(&c->q_off),    gm_arg_u64(&c->k_off),
                     gm_arg_u64(&c->v_off),   gm_arg_u64(&c->o_off)};
    size_t global, local;
    gm_launch_geometry(dev, chunked, (size_t)c->bh * c->seq, &global, &local);
    return dev->backend->launch(dev, 0, kernel, global, local, args, (int)(sizeof args / sizeof args[0]));
}

gm_status gm_kv_store_enqueue(gm_device *dev, gm_kernel *kernel, bool chunked, const gm_buffer *src,
                              const gm_buffer *cache, uint64_t tokens, unsigned int width, uint64_t src_row,
                              uint64_t src_off, uint64_t dst_off, float scale)
{
    gm_arg args[] = {gm_arg_buf(src),      gm_arg_buf(cache),    gm_arg_u64(&tokens),  gm_arg_u32(&width),
                     gm_arg_u64(&src_row), gm_arg_u64(&src_off), gm_arg_u64(&dst_off), gm_arg_f32(&scale)};
    size_t global, local;
    gm_launch_geometry(dev, chunked, (size_t)(tokens * width), &global, &local);
    return dev->backend->launch(dev, 0, kernel, global, local, args, (int)(sizeof args / sizeof args[0]));
}

gm_status gm_int4_init_enqueue(gm_device *dev, gm_kernel *k_scales, gm_kernel *k_pack, bool chunked,
                               const gm_buffer *codes, uint64_t p_off, const gm_buffer *scales, uint64_t k,
                               uint64_t n, uint64_t group, uint64_t base, unsigned int seed, float range)
{
    if (k > UINT32_MAX || n > UINT32_MAX || group > UINT32_MAX)
        return gm_device_fail(dev, GM_ERR_UNSUPPORTED, 0, "matrix dimensions must fit 32 bits");
    uint64_t s_off = 2 * p_off / group;
    unsigned int ku = (unsigned int)k, nu = (unsigned int)n, g = (unsigned int)group;
    gm_arg sa[] = {gm_arg_buf(scales), gm_arg_u64(&s_off), gm_arg_u32(&ku),   gm_arg_u32(&nu),
                   gm_arg_u32(&g),     gm_arg_u64(&base),  gm_arg_u32(&seed), gm_arg_f32(&range)};
    size_t global, local;
    gm_launch_geometry(dev, chunked, (size_t)((k + group - 1) / group * n), &global, &local);
    gm_status rc = dev->backend->launch(dev, 0, k_scales, global, local, sa, (int)(sizeof sa / sizeof sa[0]));
    gm_arg pa[] = {gm_arg_buf(codes), gm_arg_u64(&p_off), gm_arg_buf(scales), gm_arg_u64(&s_off),
                   gm_arg_u32(&ku),   gm_arg_u32(&nu),    gm_arg_u32(&g),     gm_arg_u64(&base),
                   gm_arg_u32(&seed), gm_arg_f32(&range)};
    gm_launch_geometry(dev, chunked, (size_t)(k * n / 2), &global, &local);
    return rc == GM_OK ? dev->backend->launch(dev, 0, k_pack, global, local, pa, (int)(sizeof pa / sizeof pa[0])) : rc;
}

gm_status gm_build_layer_kernels(gm_device *dev, const char *linear_variant, const char *attn_variant, bool chunked,
                                 gm_program **p_linear, gm_kernel **k_linear, gm_program **p_attn,
                                 gm_kernel **k_attn)
{
    gm_status rc = dev->backend->program_build(dev, "linear", linear_variant, NULL, p_linear);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, *p_linear, chunked ? "linear_blocked" : "linear_tiled", k_linear);
    if (rc == GM_OK)
        rc = dev->backend->program_build(dev, "attention", attn_variant, NULL, p_attn);
    if (rc == GM_OK)
        rc = dev->backend->kernel_get(dev, *p_attn, "attention_tiled", k_attn);
    return rc;
}
