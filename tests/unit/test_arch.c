/* Architectures, config.json parsing and the whole-model memory plan
 * (bench/model/arch.h, bench/model/mem_plan.h) against published figures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "bench/model/arch.h"
#include "bench/model/mem_plan.h"

static char err[600];

static gm_arch preset(const char *name)
{
    gm_arch a;
    err[0] = '\0';
    int rc = gm_arch_load(name, &a, err, sizeof err);
    if (rc != 0)
        fail_msg("%s: %s", name, err);
    return a;
}

static int parse(const char *text, gm_arch *a)
{
    err[0] = '\0';
    return gm_arch_parse("test/config.json", text, a, err, sizeof err);
}

static gm_arch parsed(const char *text)
{
    gm_arch a;
    if (parse(text, &a) != 0)
        fail_msg("%s", err);
    return a;
}

/* The totals the model cards and papers publish. */
static void test_published_totals(void **state)
{
    (void)state;
    gm_arch a = preset("gpt2");
    assert_int_equal(gm_arch_params(&a), 124439808ull);
    a = preset("llama-2-7b");
    assert_int_equal(gm_arch_params(&a), 6738415616ull);
    a = preset("llama-3-8b");
    assert_int_equal(gm_arch_params(&a), 8030261248ull);
    a = preset("mistral-7b");
    assert_int_equal(gm_arch_params(&a), 7241732096ull);
    a = preset("mixtral-8x7b");
    assert_int_equal(gm_arch_params(&a), 46702792704ull);
    /* Mixtral's "12.9B active parameters": 2 of 8 experts per token. */
    assert_int_equal(gm_arch_active_params(&a), 12879925248ull);
    a = preset("tiny-llama-gqa");
    assert_int_equal(a.kv_heads, 2);
    assert_true(a.gated_mlp && !a.layernorm && !a.tied);
}

/* Other families from config text, against their model cards. */
static void test_families(void **state)
{
    (void)state;
    /* Qwen2-0.5B: q, k, v biases, tied: 494,032,768. */
    gm_arch a = parsed("{\"model_type\":\"qwen2\",\"hidden_size\":896,\"intermediate_size\":4864,"
                       "\"num_attention_heads\":14,\"num_key_value_heads\":2,\"num_hidden_layers\":24,"
                       "\"vocab_size\":151936,\"tie_word_embeddings\":true}");
    assert_true(a.qkv_bias && !a.o_bias);
    assert_int_equal(gm_arch_params(&a), 494032768ull);
    /* Gemma-2B: MQA, head_dim 256 (a*d != h), tied by default: 2,506,172,416. */
    a = parsed("{\"model_type\":\"gemma\",\"hidden_size\":2048,\"intermediate_size\":16384,"
               "\"num_attention_heads\":8,\"num_key_value_heads\":1,\"head_dim\":256,"
               "\"num_hidden_layers\":18,\"vocab_size\":256000}");
    assert_int_equal(gm_arch_params(&a), 2506172416ull);
    /* Phi-3-mini: 3,821,079,552. */
    a = parsed("{\"model_type\":\"phi3\",\"hidden_size\":3072,\"intermediate_size\":8192,"
               "\"num_attention_heads\":32,\"num_key_value_heads\":32,\"num_hidden_layers\":32,"
               "\"vocab_size\":32064,\"tie_word_embeddings\":false}");
    assert_int_equal(gm_arch_params(&a), 3821079552ull);
    /* Pythia-160M (GPT-NeoX): LayerNorm, biases, plain MLP, untied: 162,322,944. */
    a = parsed("{\"model_type\":\"gpt_neox\",\"hidden_size\":768,\"intermediate_size\":3072,"
               "\"num_attention_heads\":12,\"num_hidden_layers\":12,\"vocab_size\":50304,"
               "\"max_position_embeddings\":2048}");
    assert_int_equal(gm_arch_params(&a), 162322944ull);
}

static void test_bad_configs(void **state)
{
    (void)state;
    gm_arch a;
    assert_int_equal(parse("{\"model_type\":\"llama\",\"hidden_size\":64,\"intermediate_size\":128,"
                           "\"num_attention_heads\":4,\"vocab_size\":100}", &a), 2);
    assert_non_null(strstr(err, "test/config.json"));
    assert_non_null(strstr(err, "'num_hidden_layers'"));
    assert_int_equal(parse("{\"model_type\":\"bert\",\"hidden_size\":64}", &a), 2);
    assert_non_null(strstr(err, "test/config.json"));
    assert_non_null(strstr(err, "'model_type'"));
    assert_non_null(strstr(err, "bert"));
    assert_int_equal(parse("{\"hidden_size\":64}", &a), 2);
    assert_non_null(strstr(err, "'model_type': missing"));
    assert_int_equal(parse("{\"model_type\":\"gpt2\",\"n_embd\":64,", &a), 2);
    assert_non_null(strstr(err, "malformed JSON"));
    assert_int_equal(parse("{\"model_type\":\"gpt2\",\"n_embd\":\"64\",\"n_layer\":2,\"n_head\":2,"
                           "\"n_positions\":8,\"vocab_size\":10}", &a), 2);
    assert_non_null(strstr(err, "'n_embd'"));
    assert_int_equal(parse("{\"model_type\":\"mixtral\",\"hidden_size\":64,\"intermediate_size\":128,"
                           "\"num_attention_heads\":4,\"num_hidden_layers\":2,\"vocab_size\":100}", &a), 2);
    assert_non_null(strstr(err, "'num_local_experts'"));
    assert_int_equal(gm_arch_load("no-such-model", &a, err, sizeof err), 2);
    assert_non_null(strstr(err, "no-such-model"));

    /* A config file on disk: the message names its path. */
    char path[] = "/tmp/gm-test-arch-XXXXXX.json";
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    const char *text = "{\"model_type\": \"llama\", \"hidden_size\": 64}";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(gm_arch_load(path, &a, err, sizeof err), 2);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "'num_hidden_layers'"));
    unlink(path);
}

static void test_kv_bytes(void **state)
{
    (void)state;
    gm_arch a = preset("llama-3-8b");
    assert_int_equal(gm_arch_kv_bytes_per_token(&a, 2), 131072);     /* 2*32*8*128*2 */
    a = preset("llama-2-7b");
    assert_int_equal(gm_arch_kv_bytes_per_token(&a, 2), 524288);     /* MHA: 4x GQA's */
    gm_plan_opts o;
    gm_plan_opts_init(&o);
    o.prec = GM_FP16;
    o.batch = 4;
    o.seq = 2048;
    gm_plan_item it[GM_PLAN_MAX_ITEMS];
    int n = gm_plan_model(&a, &o, it);
    assert_true(n > 0);
    for (int i = 0; i < n; i++)
        if (it[i].role == GM_PLAN_KV_CACHE)
            assert_int_equal(it[i].bytes, 524288ull * 4 * 2048);
}

/* The bytes of plan item `name` (0 when the plan has none). */
static uint64_t item_bytes(const gm_arch *a, const gm_plan_opts *o, const char *name)
{
    gm_plan_item it[GM_PLAN_MAX_ITEMS];
    int n = gm_plan_model(a, o, it);
    assert_true(n > 0);
    for (int i = 0; i < n; i++)
        if (strcmp(it[i].name, name) == 0)
            return it[i].bytes;
    return 0;
}

/* Gemma-2 (Gemma2Config): four norms a layer, every other layer a sliding
 * window, soft-capped scores and logits. */
static void test_gemma2(void **state)
{
    (void)state;
    gm_arch a = preset("gemma-2-9b");
    assert_int_equal(a.layer_norms, 4);
    assert_int_equal(a.sliding_window, 4096);
    assert_int_equal(a.sliding_layers, 21);
    assert_true(a.attn_softcap && a.final_softcap && a.tied);
    /* Per layer and token, bf16: 2 * 8 KV heads * 256 = 8192 bytes. */
    assert_int_equal(gm_arch_kv_bytes_per_sequence(&a, 2, 4096), 42ull * 4096 * 8192);
    assert_int_equal(gm_arch_kv_bytes_per_sequence(&a, 2, 8192), (21ull * 8192 + 21ull * 4096) * 8192);
    gm_arch l = preset("llama-3-8b");
    assert_int_equal(gm_arch_kv_bytes_per_sequence(&l, 2, 8192), 8192ull * 131072);
    /* Defaults when the config leaves them out; null turns soft-capping off. */
    a = parsed("{\"model_type\":\"gemma2\",\"hidden_size\":64,\"intermediate_size\":128,"
               "\"num_attention_heads\":2,\"num_hidden_layers\":3,\"vocab_size\":100,"
               "\"final_logit_softcapping\":null}");
    assert_int_equal(a.head_dim, 256);
    assert_int_equal(a.sliding_window, 4096);
    assert_int_equal(a.sliding_layers, 2);          /* layers 0 and 2 */
    assert_true(a.attn_softcap && !a.final_softcap);
    assert_int_equal(parse("{\"model_type\":\"gemma2\",\"hidden_size\":64,\"intermediate_size\":128,"
                           "\"num_attention_heads\":2,\"num_hidden_layers\":3,\"vocab_size\":100,"
                           "\"attn_logit_softcapping\":\"50\"}", &a), 2);
    assert_non_null(strstr(err, "'attn_logit_softcapping'"));
    /* Training: the soft-capped logits keep tanh's output, a second fp32 copy. */
    a = preset("gemma-2-9b");
    gm_plan_opts o;
    gm_plan_opts_init(&o);
    o.mode = GM_PLAN_TRAIN;
    o.prec = GM_BF16;
    o.seq = 1024;
    assert_int_equal(item_bytes(&a, &o, "logits_softcap_fp32"), 4ull * 1024 * 256000);
    assert_int_equal(item_bytes(&a, &o, "logits_softcap_fp32"), item_bytes(&a, &o, "logits_fp32"));
}

/* Training state bytes (weights, master, gradients, optimizer) / params. */
static uint64_t state_bytes(const gm_arch *a, gm_precision p, gm_optimizer opt, uint64_t gpus, int zero)
{
    gm_plan_opts o;
    gm_plan_opts_init(&o);
    o.mode = GM_PLAN_TRAIN;
    o.prec = p;
    o.optimizer = opt;
    o.gpus = gpus;
    o.zero = zero;
    gm_plan_item it[GM_PLAN_MAX_ITEMS];
    int n = gm_plan_model(a, &o, it);
    assert_true(n > 0);
    uint64_t t = 0;
    for (int i = 0; i < n; i++)
        if (it[i].role == GM_PLAN_WEIGHTS || it[i].role == GM_PLAN_GRADIENTS || it[i].role == GM_PLAN_OPTIMIZER)
            t += it[i].bytes;
    return t;
}

static void test_training_bytes_per_param(void **state)
{
    (void)state;
    gm_arch a = preset("llama-2-7b");
    uint64_t P = gm_arch_params(&a);
    assert_int_equal(state_bytes(&a, GM_FP32, GM_OPTIM_ADAMW, 1, 0), 16 * P);
    assert_int_equal(state_bytes(&a, GM_BF16, GM_OPTIM_ADAMW, 1, 0), 16 * P);
    assert_int_equal(state_bytes(&a, GM_FP16, GM_OPTIM_ADAMW, 1, 0), 16 * P);
    assert_int_equal(state_bytes(&a, GM_FP32, GM_OPTIM_SGD, 1, 0), 8 * P);
    assert_int_equal(state_bytes(&a, GM_FP32, GM_OPTIM_SGD_MOMENTUM, 1, 0), 12 * P);
    /* 8-bit AdamW: 2 bytes of moments plus one fp32 absmax per 256 values each. */
    assert_int_equal(state_bytes(&a, GM_FP32, GM_OPTIM_ADAMW_8BIT, 1, 0), 8 * P + 2 * (P + 4 * ((P + 255) / 256)));
    gm_plan_opts o;
    gm_plan_opts_init(&o);
    o.mode = GM_PLAN_TRAIN;
    o.prec = GM_INT8;
    gm_plan_item it[GM_PLAN_MAX_ITEMS];
    assert_int_equal(gm_plan_model(&a, &o, it), -1);
}

/* ZeRO over 8 GPUs, bf16 + AdamW: 2 weights, 2 grads, 12 master+moments. */
static void test_zero(void **state)
{
    (void)state;
    gm_arch a = preset("llama-2-7b");
    uint64_t P = gm_arch_params(&a);       /* a multiple of 8 */
    assert_int_equal(P % 8, 0);
    assert_int_equal(state_bytes(&a, GM_BF16, GM_OPTIM_ADAMW, 8, 0), 16 * P);
    assert_int_equal(state_bytes(&a, GM_BF16, GM_OPTIM_ADAMW, 8, 1), 4 * P + 12 * P / 8);
    assert_int_equal(state_bytes(&a, GM_BF16, GM_OPTIM_ADAMW, 8, 2), 2 * P + 14 * P / 8);
    assert_int_equal(state_bytes(&a, GM_BF16, GM_OPTIM_ADAMW, 8, 3), 16 * P / 8);
    /* Tensor parallelism 2 of 8 GPUs: 4 data-parallel ranks. */
    gm_plan_opts o;
    gm_plan_opts_init(&o);
    o.mode = GM_PLAN_TRAIN;
    o.prec = GM_BF16;
    o.gpus = 8;
    o.tp = 2;
    o.zero = 3;
    gm_plan_item it[GM_PLAN_MAX_ITEMS];
    int n = gm_plan_model(&a, &o, it);
    assert_true(n > 0);
    assert_string_equal(it[0].name, "weights");
    assert_int_equal(it[0].bytes, 2 * (P / 2) / 4);
    o.tp = 3;
    assert_int_equal(gm_plan_model(&a, &o, it), -1);
}

/* Korthikanti et al. 2022: s*b*h*(34 + 5*a*s/h) bytes per layer in 16-bit
 * (MHA, FFN 4h, GELU, LayerNorm, dropout: GPT-2 holds every assumption);
 * with T tensor-parallel ranks s*b*h*(10 + 24/T + 5*a*s/(h*T)); selective
 * recomputation 34*s*b*h (T = 1). */
static void test_korthikanti(void **state)
{
    (void)state;
    gm_arch a = preset("gpt2");
    assert_true(a.dropout && a.layernorm && !a.gated_mlp && a.ffn == 4 * a.hidden && a.kv_heads == a.heads);
    const uint64_t h = a.hidden, heads = a.heads;
    for (uint64_t s = 128; s <= 2048; s *= 4) {
        for (uint64_t b = 1; b <= 8; b *= 2) {
            uint64_t sbh = s * b * h;
            assert_int_equal(gm_layer_train_activations(&a, b, s, 2, true, GM_RECOMPUTE_NONE, 1),
                             34 * sbh + 5 * heads * s * s * b);
            assert_int_equal(gm_layer_train_activations(&a, b, s, 2, true, GM_RECOMPUTE_SELECTIVE, 1), 34 * sbh);
            for (uint64_t t = 2; t <= 4; t *= 2)
                assert_int_equal(gm_layer_train_activations(&a, b, s, 2, true, GM_RECOMPUTE_NONE, t),
                                 10 * sbh + 24 * sbh / t + 5 * heads * s * s * b / t);
            assert_int_equal(gm_layer_train_activations(&a, b, s, 2, true, GM_RECOMPUTE_FULL, 1), 2 * sbh);
            /* Tiled attention keeps fp32 row statistics instead of 5*a*s^2*b. */
            assert_int_equal(gm_layer_train_activations(&a, b, s, 2, false, GM_RECOMPUTE_NONE, 1),
                             34 * sbh + 4 * heads * s * b);
        }
    }
}

/* --fit: the answers fit, one more does not. */
static void test_fit(void **state)
{
    (void)state;
    gm_arch a = preset("tiny-llama-gqa");
    gm_plan_opts o;
    gm_plan_opts_init(&o);
    o.mode = GM_PLAN_TRAIN;
    o.prec = GM_BF16;
    o.seq = 256;
    o.batch = 2;
    gm_plan_item it[GM_PLAN_MAX_ITEMS];
    const uint64_t budget = 512ull << 20;
    uint64_t mb, ms;
    gm_plan_fit(&a, &o, budget, &mb, &ms);
    assert_true(mb > 1 && ms > 1);
    gm_plan_opts t = o;
    t.batch = mb;
    assert_true(gm_plan_sum(it, gm_plan_model(&a, &t, it)) <= budget);
    t.batch = mb + 1;
    assert_true(gm_plan_sum(it, gm_plan_model(&a, &t, it)) > budget);
    t = o;
    t.seq = ms;
    assert_true(gm_plan_sum(it, gm_plan_model(&a, &t, it)) <= budget);
    /* No sequence past the model's context (max_position_embeddings, 2048):
     * the answer is the context where the budget holds more. */
    assert_true(ms <= a.context);
    t.seq = ms + 1;
    assert_true(ms == a.context || gm_plan_sum(it, gm_plan_model(&a, &t, it)) > budget);
    o.batch = 64;
    gm_plan_fit(&a, &o, budget, &mb, &ms);
    t = o;
    t.seq = ms + 1;
    assert_true(ms < a.context && gm_plan_sum(it, gm_plan_model(&a, &t, it)) > budget);
    gm_plan_fit(&a, &o, 1000, &mb, &ms);
    assert_int_equal(mb, 0);
    assert_int_equal(ms, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_published_totals), cmocka_unit_test(test_families),
        cmocka_unit_test(test_bad_configs),      cmocka_unit_test(test_kv_bytes), cmocka_unit_test(test_gemma2),
        cmocka_unit_test(test_training_bytes_per_param), cmocka_unit_test(test_zero),
        cmocka_unit_test(test_korthikanti),      cmocka_unit_test(test_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
