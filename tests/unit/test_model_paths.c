/*
 * The whole model's vendor path (bench/workloads/model_*.c) on the OpenCL
 * device in every precision it takes, with our kernels in every product
 * (the test implementation "gemm-ours": the vendor implementation's
 * attention by GEMMs over chunks of queries with the softmax between, its
 * residual copies, its fp32 LM head through the dispatch, its workspaces),
 * against the model's CPU reference check: inference in fp32, fp16 and
 * bf16, training (the saved log-sum-exp too) in fp32 and bf16, an fp8 KV
 * cache (the tiled attention beside the dispatch's products) and int4
 * weights, a tied LM head (the embedding transposed), queries in several
 * chunks of a sequence, a GPU's launch geometry (work groups of 256 a
 * row); and a corrupted logit is caught.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "opencl_fixture.h"
#include "workload_point.h"
#include "bench/model/shape_opts.h"
#include "bench/workloads/model_private.h"

/* Runs the model at the shape and checks it, its queries in chunks of
 * `chunk` rows where not 0 (fewer than the workspace holds); `corrupt`
 * plants an error first, which the check must catch. */
static void run_chunked(const char *model, gm_precision act, unsigned weight_prec, unsigned kv_prec, bool train,
                        uint64_t batch, uint64_t seq, const char *impl, bool corrupt, uint64_t chunk)
{
    const gm_workload *r = &gm_workload_block;
    gm_shape base = {0};
    char err[256];
    assert_int_equal(gm_shape_set(&base, "model", model, err, sizeof err), 0);
    base.weight_prec = weight_prec;
    base.kv_prec = kv_prec;
    base.group_size = 16;
    gm_shape s = base;
    gm_shape_set_roles(&s, &base, act);
    s.batch = batch;
    s.seq = seq;
    s.train = train;
    s.probe = dev.info.type != GM_DEV_CPU;     /* see test_gpu_geometry */
    r->adapt(&s, impl);
    gm_shape_complete(&s);
    assert_true(s.vendor_gemm);
    workload_point p = {.w = r};
    if (!chunk) {
        workload_point_run(&p, r, &s, impl);
    } else {
        /* workload_point_run's steps, the chunk set between set-up and run. */
        gm_tensor t[GM_MAX_TENSORS];
        int nt = r->tensors(&s, t);
        assert_true(nt > 0);
        gm_opts_init(&p.o);
        gm_pattern_env_init(&p.env, &dev, &p.o);
        assert_int_equal(gm_pattern_begin(&p.pat, &p.env, GM_PATTERN_PER_TENSOR, t, nt), GM_OK);
        if (r->setup(&dev, &p.pat, &s, impl, &p.state) != GM_OK)
            fail_msg("%s %s: set-up: %s", model, gm_roles_label(&s), dev.err.msg);
        model_state *st = p.state;
        assert_true(chunk <= st->attn_rows);
        st->attn_rows = chunk;
        assert_int_equal(r->enqueue(p.state), GM_OK);
        assert_int_equal(dev.backend->synchronize(&dev, 0), GM_OK);
    }
    model_state *st = p.state;
    assert_true(st->model && st->vendor);
    if (corrupt) {
        gm_output_fault f = {.kind = GM_OUTPUT_FAULT_CORRUPT, .seed = 1};
        assert_int_equal(r->corrupt(p.state, &f, 0), GM_OK);
    }
    bool correct = false;
    char note[300] = "";
    assert_int_equal(r->verify(p.state, 0, &correct, note, sizeof note), GM_OK);
    char described[400] = "";
    r->describe(p.state, described, sizeof described);
    if (corrupt) {
        if (correct)
            fail_msg("%s %s: a corrupted logit passed the check", model, gm_roles_label(&s));
        assert_non_null(strstr(note, "of the iteration"));
    } else if (!correct) {
        fail_msg("%s %s%s batch %llu seq %llu: %s (%s)", model, gm_roles_label(&s), train ? " train" : "",
                 (unsigned long long)batch, (unsigned long long)seq, note, described);
    }
    print_message("%s %s%s: %s\n", model, gm_roles_label(&s), train ? " train" : "", described);
    workload_point_end(&p);
}

static void run(const char *model, gm_precision act, unsigned weight_prec, unsigned kv_prec, bool train,
                uint64_t batch, uint64_t seq, const char *impl, bool corrupt)
{
    run_chunked(model, act, weight_prec, kv_prec, train, batch, seq, impl, corrupt, 0);
}

static void test_inference(void **state)
{
    (void)state;
    const gm_precision ps[] = {GM_FP32, GM_FP16, GM_BF16};
    for (size_t i = 0; i < 3; i++)
        run("tiny-llama-gqa", ps[i], 0, 0, false, 2, 24, "gemm-ours", false);
}

static void test_train(void **state)
{
    (void)state;
    run("tiny-llama-gqa", GM_FP32, 0, 0, true, 2, 16, "gemm-ours", false);
    run("tiny-llama-gqa", GM_BF16, 0, 0, true, 2, 16, "gemm-ours", false);
}

static void test_roles(void **state)
{
    (void)state;
    /* An fp8 KV cache: attention_tiled beside the dispatch's products. */
    run("tiny-llama-gqa", GM_BF16, 0, GM_FP8E4M3 + 1, false, 2, 16, "gemm-ours", false);
    /* int4 weights: our fused kernel (the vendor would dequantise). */
    run("tiny-llama-gqa", GM_FP16, GM_INT4 + 1, 0, false, 2, 16, "gemm-ours", false);
}

/* A tied LM head: the dispatch reads the embedding transposed. */
static void test_tied_head(void **state)
{
    (void)state;
    /* A config.json of its own in the temporary folder, whatever the build's. */
    const char *tmp = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/gm-tied-XXXXXX.json", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fprintf(f, "{\"model_type\": \"llama\", \"hidden_size\": 64, \"intermediate_size\": 128, "
               "\"num_attention_heads\": 4, \"num_hidden_layers\": 2, \"num_key_value_heads\": 2, "
               "\"vocab_size\": 256, \"tie_word_embeddings\": true}\n");
    fclose(f);
    run(path, GM_BF16, 0, 0, false, 2, 12, "gemm-ours", false);
    remove(path);
}

/* Queries in several chunks of a sequence, the last one shorter (5, 5,
 * 5, 5 and 4 of 24), in inference and training. */
static void test_chunks(void **state)
{
    (void)state;
    run_chunked("tiny-llama-gqa", GM_BF16, 0, 0, false, 2, 24, "gemm-ours", false, 5);
    run_chunked("tiny-llama-gqa", GM_FP32, 0, 0, true, 2, 24, "gemm-ours", false, 5);
}

/* A GPU's geometry on the OpenCL device (its type set to GPU for the
 * point): grid variants, linear_tiled, RMSNorm and the softmax a work
 * group of 256 a row, as a card runs them around the vendor's GEMMs. An
 * oom probe's point (one sequence of the batch), which measures no peak. */
static void test_gpu_geometry(void **state)
{
    (void)state;
    gm_device_type was = dev.info.type;
    dev.info.type = GM_DEV_GPU;
    run_chunked("tiny-llama-gqa", GM_BF16, 0, 0, false, 2, 40, "gemm-ours", false, 0);
    run_chunked("tiny-llama-gqa", GM_FP32, 0, 0, true, 2, 24, "gemm-ours", false, 8);
    dev.info.type = was;
}

static void test_planted_error(void **state)
{
    (void)state;
    run("tiny-llama-gqa", GM_BF16, 0, 0, false, 2, 16, "gemm-ours", true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inference), cmocka_unit_test(test_train),         cmocka_unit_test(test_roles),
        cmocka_unit_test(test_tied_head), cmocka_unit_test(test_chunks),        cmocka_unit_test(test_gpu_geometry),
        cmocka_unit_test(test_planted_error),
    };
    return cmocka_run_group_tests(tests, open_device, close_device);
}
