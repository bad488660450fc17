/*
 * Hugging Face config.json to gm_arch (bench/model/arch.h), read with jansson.
 * Field names and defaults are those of each family's configuration class
 * in the transformers library (LlamaConfig, MistralConfig, MixtralConfig,
 * Qwen2Config, GemmaConfig, Gemma2Config, Phi3Config, GPT2Config,
 * GPTNeoXConfig). Finding a preset or a model's folder: presets.c.
 */
#include "bench/model/arch.h"


#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char gm_arch_known_types[] = "llama, mistral, mixtral, qwen2, gemma, gemma2, phi3, gpt2, gpt_neox";

typedef struct {
    const char *path;
    json_t *root;
    char *err;
    size_t err_len;
} reader;

/* A whole number >= 1 under `key`. Absent (or null): *out = dflt, and an
 * error naming the field when dflt is 0 (the field is required). */
static int get_uint(reader *r, const char *key, uint64_t dflt, uint64_t *out)
{
    json_t *v = json_object_get(r->root, key);
    if (!v || json_is_null(v)) {
        if (dflt == 0) {
            snprintf(r->err, r->err_len, "%s: field '%s': missing", r->path, key);
            return -1;
        }
        *out = dflt;
        return 0;
    }
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > (1ll << 40)) {
        snprintf(r->err, r->err_len, "%s: field '%s': expected a whole number from 1 to 2^40", r->path, key);
        return -1;
    }
    *out = (uint64_t)json_integer_value(v);
    return 0;
}

/* A positive number under `key`, dflt when absent or null. */
static int get_positive(reader *r, const char *key, double dflt, double *out)
{
    json_t *v = json_object_get(r->root, key);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return 0;
    }
    if (!json_is_number(v) || !(json_number_value(v) > 0)) {
        snprintf(r->err, r->err_len, "%s: field '%s': expected a number above 0", r->path, key);
        return -1;
    }
    *out = json_number_value(v);
    return 0;
}

/* A boolean under `key`, dflt when absent. */
static int get_bool(reader *r, const char *key, bool dflt, bool *out)
{
    json_t *v = json_object_get(r->root, key);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return 0;
    }
    if (!json_is_boolean(v)) {
        snprintf(r->err, r->err_len, "%s: field '%s': expected true or false", r->path, key);
        return -1;
    }
    *out = json_is_true(v);
    return 0;
}

/* Whether a soft-capping value under `key` is on: absent, the family's
 * default (dflt); null or 0, off; a positive number, on. */
static int get_softcap(reader *r, const char *key, bool dflt, bool *out)
{
    json_t *v = json_object_get(r->root, key);
    if (!v) {
        *out = dflt;
        return 0;
    }
    if (!json_is_null(v) && !(json_is_number(v) && json_number_value(v) >= 0)) {
        snprintf(r->err, r->err_len, "%s: field '%s': expected a number of at least 0, or null", r->path, key);
        return -1;
    }
    *out = json_is_number(v) && json_number_value(v) > 0;
    return 0;
}

/* Gemma2Config: a norm before and after both attention and the MLP; every
 * other layer (the even ones) attends to a sliding window (default 4096
 * tokens); attention scores and logits soft-capped by tanh (defaults 50
 * and 30). */
static int parse_gemma2(reader *r, gm_arch *a)
{
    a->layer_norms = 4;
    a->sliding_layers = (a->layers + 1) / 2;
    return get_uint(r, "sliding_window", 4096, &a->sliding_window) ||
           get_softcap(r, "attn_logit_softcapping", true, &a->attn_softcap) ||
           get_softcap(r, "final_logit_softcapping", true, &a->final_softcap) ? -1 : 0;
}

/* True when any of the dropout probabilities named is above zero. */
static bool any_dropout(reader *r, const char *const *keys)
{
    for (; *keys; keys++) {
        json_t *v = json_object_get(r->root, *keys);
        if (v && json_is_number(v) && json_number_value(v) > 0)
            return true;
    }
    return false;
}

static int parse_gpt2(reader *r, gm_arch *a)
{
    /* GPT2Config: n_embd, n_layer, n_head, n_positions, vocab_size; n_inner
     * null means 4 * n_embd; Conv1D layers all carry biases; LayerNorm;
     * the LM head is tied to wte. */
    static const char *const drops[] = {"attn_pdrop", "resid_pdrop", "embd_pdrop", NULL};
    if (get_uint(r, "n_embd", 0, &a->hidden) || get_uint(r, "n_layer", 0, &a->layers) ||
        get_uint(r, "n_head", 0, &a->heads) || get_uint(r, "n_positions", 0, &a->positions) ||
        get_uint(r, "vocab_size", 0, &a->vocab) || get_uint(r, "n_inner", 4 * a->hidden, &a->ffn) ||
        get_bool(r, "tie_word_embeddings", true, &a->tied))
        return -1;
    a->context = a->positions;
    a->kv_heads = a->heads;
    a->layernorm = a->qkv_bias = a->o_bias = a->mlp_bias = true;
    a->dropout = any_dropout(r, drops);
    return 0;
}

static int parse_neox(reader *r, gm_arch *a)
{
    /* GPTNeoXConfig: rotary positions, LayerNorm, biased dense layers
     * (attention_bias defaults to true), a plain GELU MLP, untied
     * embed_out unless tie_word_embeddings. */
    static const char *const drops[] = {"attention_dropout", "hidden_dropout", NULL};
    bool bias;
    if (get_uint(r, "hidden_size", 0, &a->hidden) || get_uint(r, "num_hidden_layers", 0, &a->layers) ||
        get_uint(r, "num_attention_heads", 0, &a->heads) || get_uint(r, "intermediate_size", 0, &a->ffn) ||
        get_uint(r, "vocab_size", 0, &a->vocab) || get_bool(r, "tie_word_embeddings", false, &a->tied) ||
        get_bool(r, "attention_bias", true, &bias) || get_uint(r, "max_position_embeddings", 2048, &a->context))
        return -1;
    a->kv_heads = a->heads;
    a->layernorm = a->mlp_bias = true;
    a->qkv_bias = a->o_bias = bias;
    a->dropout = any_dropout(r, drops);
    return 0;
}

/* The Llama family and its relatives: RMSNorm, a gated MLP, rotary
 * positions, num_key_value_heads (default: MHA), head_dim (default h/a). */
static int parse_llama(reader *r, gm_arch *a, const char *type)
{
    static const char *const drops[] = {"attention_dropout", NULL};
    bool gemma2 = strcmp(type, "gemma2") == 0, gemma = gemma2 || strcmp(type, "gemma") == 0;
    bool qwen2 = strcmp(type, "qwen2") == 0, bias = false;
    /* max_position_embeddings where the config leaves it out: each
     * configuration class's default (LlamaConfig 2048, MistralConfig and
     * MixtralConfig 4096 * 32, Qwen2Config 32768, GemmaConfig and
     * Gemma2Config 8192, Phi3Config 4096). */
    uint64_t context = !strcmp(type, "mistral") || !strcmp(type, "mixtral") ? 4096 * 32
                       : qwen2                                              ? 32768
                       : gemma                                              ? 8192
                       : !strcmp(type, "phi3")                              ? 4096
                                                                            : 2048;
    if (get_uint(r, "hidden_size", 0, &a->hidden) || get_uint(r, "num_hidden_layers", 0, &a->layers) ||
        get_uint(r, "num_attention_heads", 0, &a->heads) || get_uint(r, "intermediate_size", 0, &a->ffn) ||
        get_uint(r, "vocab_size", 0, &a->vocab) || get_uint(r, "num_key_value_heads", a->heads, &a->kv_heads) ||
        get_uint(r, "head_dim", gemma2 ? 256 : a->hidden / a->heads ? a->hidden / a->heads : 1, &a->head_dim) ||
        get_bool(r, "tie_word_embeddings", gemma, &a->tied) || (gemma2 && parse_gemma2(r, a)) ||
        get_uint(r, "max_position_embeddings", context, &a->context) ||
        get_positive(r, "rope_theta", 10000.0, &a->rope_theta))
        return -1;
    /* LlamaConfig: attention_bias (q, k, v, o) and mlp_bias, both false by
     * default. Qwen2 has q, k, v biases and none on o_proj. */
    if (!strcmp(type, "llama") && (get_bool(r, "attention_bias", false, &bias) || get_bool(r, "mlp_bias", false, &a->mlp_bias)))
        return -1;
    a->qkv_bias = bias || qwen2;
    a->o_bias = bias;
    a->gated_mlp = true;
    if (!strcmp(type, "mixtral") &&
        (get_uint(r, "num_local_experts", 0, &a->experts) || get_uint(r, "num_experts_per_tok", 0, &a->experts_per_token)))
        return -1;
    if (a->experts && a->experts_per_token > a->experts) {
        snprintf(r->err, r->err_len, "%s: field 'num_experts_per_tok': more than num_local_experts", r->path);
        return -1;
    }
    if (a->kv_heads > a->heads || a->heads % a->kv_heads) {
        snprintf(r->err, r->err_len, "%s: field 'num_key_value_heads': must divide num_attention_heads", r->path);
        return -1;
    }
    a->dropout = any_dropout(r, drops);
    return 0;
}

int gm_arch_parse(const char *path, const char *text, gm_arch *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", path);
    json_error_t jerr;
    json_t *root = json_loads(text, 0, &jerr);
    if (!root) {
        snprintf(err, err_len, "%s:%d: malformed JSON: %s", path, jerr.line, jerr.text);
        return 2;
    }
    reader r = {path, root, err, err_len};
    int rc = 2;
    json_t *t = json_object_get(root, "model_type");
    if (!json_is_object(root)) {
        snprintf(err, err_len, "%s: malformed config: expected a JSON object", path);
    } else if (!t) {
        snprintf(err, err_len, "%s: field 'model_type': missing", path);
    } else if (!json_is_string(t)) {
        snprintf(err, err_len, "%s: field 'model_type': expected a string", path);
    } else {
        const char *type = json_string_value(t);
        snprintf(out->model_type, sizeof out->model_type, "%s", type);
        int bad;
        if (!strcmp(type, "gpt2"))
            bad = parse_gpt2(&r, out);
        else if (!strcmp(type, "gpt_neox"))
            bad = parse_neox(&r, out);
        else if (!strcmp(type, "llama") || !strcmp(type, "mistral") || !strcmp(type, "mixtral") ||
                 !strcmp(type, "qwen2") || !strcmp(type, "gemma") || !strcmp(type, "gemma2") ||
                 !strcmp(type, "phi3"))
            bad = parse_llama(&r, out, type);
        else {
            snprintf(err, err_len, "%s: field 'model_type': unknown value '%s' (known: %s)", path, type,
                     gm_arch_known_types);
            bad = 1;
        }
        if (!bad) {
            if (!out->head_dim)
                out->head_dim = out->hidden / out->heads;
            if (out->head_dim == 0) {
                snprintf(err, err_len, "%s: field 'hidden_size': smaller than the number of heads", path);
                bad = 1;
            }
        }
        rc = bad ? 2 : 0;
    }
    json_decref(root);
    return rc;
}
