/* Fine-tuning's memory (bench/model/train_plan.h): the LoRA and QLoRA
 * counts against their definitions, and gpumem's full fine-tuning kept
 * the same by both counts of a layer's activations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "bench/model/arch.h"
#include "bench/model/train_plan.h"

static gm_arch preset(const char *name)
{
    gm_arch a;
    char err[600];
    if (gm_arch_load(name, &a, err, sizeof err) != 0)
        fail_msg("%s: %s", name, err);
    return a;
}

static gm_plan_opts train_opts(gm_plan_mode mode, gm_precision p, bool naive)
{
    gm_plan_opts o;
    gm_plan_opts_init(&o);
    o.mode = mode;
    o.prec = p;
    o.naive = naive;
    return o;
}

/* gm_layer_tune_activations counts full fine-tuning (every projection
 * learns) as gm_layer_train_activations does, for every preset (dense,
 * GQA, MoE, GPT-2 with dropout), attention and recomputation. */
static void test_full_matches_train(void **state)
{
    (void)state;
    const char *models[] = {"gpt2", "llama-2-7b", "llama-3-8b", "mistral-7b", "mixtral-8x7b", "tiny-llama-gqa"};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        gm_arch a = preset(models[m]);
        for (int naive = 0; naive < 2; naive++)
            for (int r = GM_RECOMPUTE_NONE; r <= GM_RECOMPUTE_FULL; r++)
                for (uint64_t tp = 1; tp <= 2; tp++) {
                    gm_plan_opts o = train_opts(GM_PLAN_TRAIN, GM_BF16, naive);
                    o.tp = tp;
                    uint64_t want = gm_layer_train_activations(&a, 3, 96, 2, naive, (gm_recompute)r, tp);
                    uint64_t got = gm_layer_tune_activations(&a, &o, 3, 96, (gm_recompute)r);
                    if (got != want)
                        fail_msg("%s naive=%d recompute=%d tp=%llu: %llu, want %llu", models[m], naive, r,
                                 (unsigned long long)tp, (unsigned long long)got, (unsigned long long)want);
                }
    }
}

/* r (in + out) per adapted matrix; a mixture of experts adapts every
 * expert's MLP; GPT-2's plain MLP has no gate. */
static void test_adapter_params(void **state)
{
    (void)state;
    gm_arch a = preset("mixtral-8x7b");
    gm_tune_opts t = {.rank = 4, .targets = 1u << GM_LORA_DOWN};
    assert_int_equal(gm_lora_params(&a, &t), a.layers * a.experts * 4 * (a.ffn + a.hidden));
    t.targets = 1u << GM_LORA_Q;
    assert_int_equal(gm_lora_params(&a, &t), a.layers * 4 * (a.hidden + a.heads * a.head_dim));
    gm_arch g = preset("gpt2");
    uint64_t in, out;
    assert_false(gm_lora_shape(&g, GM_LORA_GATE, &in, &out));
    gm_tune_opts every = {0};
    assert_int_equal(gm_lora_targets(&g, &every), 0x7fu & ~(1u << GM_LORA_GATE));
    assert_int_equal(gm_lora_rank(&every), GM_LORA_RANK_DEFAULT);
}

/* NF4: half a byte a weight, a byte a 64, four a 64 x 256, rounded up
 * per matrix; the rest in the compute precision. */
static void test_nf4_bytes(void **state)
{
    (void)state;
    gm_arch a = preset("tiny-llama-gqa");
    uint64_t codes, absmax, scales, other, elems = 0, want_absmax = 0, want_scales = 0, in, out;
    gm_plan_nf4_weights(&a, 2, &codes, &absmax, &scales, &other);
    for (int t = 0; t < GM_LORA_TARGET_COUNT; t++) {
        assert_true(gm_lora_shape(&a, (gm_lora_target)t, &in, &out));
        uint64_t blocks = (in * out + 63) / 64;
        elems += a.layers * in * out;
        want_absmax += a.layers * blocks;
        want_scales += a.layers * 4 * ((blocks + 255) / 256);
    }
    assert_int_equal(codes, elems / 2);
    assert_int_equal(absmax, want_absmax);
    assert_int_equal(scales, want_scales);
    assert_int_equal(other, 2 * (gm_arch_params(&a) - elems));
}

/* Offload moves bytes, it does not lose them: the device's and the host's
 * totals, less what offload adds on the device, are the plan's without. */
static void test_offload_moves(void **state)
{
    (void)state;
    gm_arch a = preset("llama-2-7b");
    for (int mode = GM_PLAN_TRAIN; mode <= GM_PLAN_QLORA; mode++) {
        gm_plan_opts o = train_opts((gm_plan_mode)mode, GM_BF16, false);
        gm_plan_item it[GM_PLAN_MAX_ITEMS], off[GM_PLAN_MAX_ITEMS];
        int n = gm_plan_model(&a, &o, it);
        assert_true(n > 0);
        for (int k = GM_OFFLOAD_OPTIMIZER; k <= GM_OFFLOAD_PARAMS; k++) {
            o.tune.offload = (gm_offload)k;
            int m = gm_plan_model(&a, &o, off);
            assert_true(m > n);
            uint64_t added = 0;
            for (int i = n; i < m; i++)
                added += off[i].bytes;
            assert_int_equal(gm_plan_sum(off, m) + gm_plan_host_sum(off, m) - added, gm_plan_sum(it, n));
            assert_true(gm_plan_host_sum(off, m) > 0);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_matches_train),
        cmocka_unit_test(test_adapter_params),
        cmocka_unit_test(test_nf4_bytes),
        cmocka_unit_test(test_offload_moves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
