/*
 * Decoder architectures as the common model families define them, and
 * their parameter count. A gm_arch is read from a Hugging Face config.json
 * (bench/model/arch_config.c) or a preset of the same format in share/models/.
 * The counts follow docs/DESIGN section 6 and each family's modelling code.
 */
#ifndef GM_ARCH_H
#define GM_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    char name[64];          /* preset name or config path, for messages */
    char model_type[32];    /* the config's model_type: llama, gpt2, ... */
    uint64_t layers;        /* L */
    uint64_t hidden;        /* h */
    uint64_t heads;         /* a: query heads */
    uint64_t kv_heads;      /* k: key/value heads (a: MHA, 1: MQA, else GQA) */
    uint64_t head_dim;      /* d (h / a unless the config says otherwise) */
    uint64_t ffn;           /* I: the MLP's intermediate size (per expert) */
    uint64_t vocab;         /* V */
    uint64_t positions;     /* learned position embeddings (0: rotary, none) */
    uint64_t experts;       /* MoE experts per layer (0: a dense MLP) */
    uint64_t experts_per_token;
    bool gated_mlp;         /* SwiGLU/GeGLU: gate, up, down; else up, down */
    bool layernorm;         /* LayerNorm with bias; else RMSNorm (weight only) */
    bool qkv_bias;          /* biases on q, k, v (Qwen2, GPT-2, GPT-NeoX) */
    bool o_bias;            /* bias on the attention output projection */
    bool mlp_bias;          /* biases on the MLP's projections */
    bool tied;              /* the LM head shares the token embeddings */
    bool dropout;           /* attention and residual dropout in training */
} gm_arch;

/* Parameters of one layer's attention: q, o (h x a*d), k, v (h x k*d),
 * and their biases where the family has them. */
uint64_t gm_arch_attn_params(const gm_arch *a);
/* Parameters of one layer's MLP: (3 if gated else 2) * h * I plus biases,
 * times the experts, plus the h x experts router, for MoE. */
uint64_t gm_arch_mlp_params(const gm_arch *a);
/* Parameters of one norm: h (RMSNorm), 2h (LayerNorm with bias). */
uint64_t gm_arch_norm_params(const gm_arch *a);
/* All parameters: V*h embeddings + positions*h + L * (attention + MLP +
 * 2 norms) + final norm + V*h LM head unless tied. */
uint64_t gm_arch_params(const gm_arch *a);
/* Parameters that one token's forward pass multiplies by (MoE: only
 * experts_per_token experts); equal to gm_arch_params for dense models. */
uint64_t gm_arch_active_params(const gm_arch *a);
/* KV cache bytes per token: 2 (K and V) * L * k * d * elem_size. */
uint64_t gm_arch_kv_bytes_per_token(const gm_arch *a, size_t elem_size);

/* Reads `model`: a path (it contains '/' or ends in .json) to a Hugging
 * Face config.json, or a preset name, share/models/NAME.json. Returns 0;
 * 2 with one line in err naming the file and the field on bad input (no
 * such preset, unreadable file, malformed JSON, a missing or bad field,
 * an unknown model_type). */
int gm_arch_load(const char *model, gm_arch *out, char *err, size_t err_len);

/* Parses config.json text already read from `path` (named in messages).
 * Same returns as gm_arch_load. */
int gm_arch_parse(const char *path, const char *text, gm_arch *out, char *err, size_t err_len);

/* The model_type values gm_arch_parse knows, comma separated. */
extern const char gm_arch_known_types[];

#endif
