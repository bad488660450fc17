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
    double rope_theta;      /* rotary embedding's base (config rope_theta; 10000, LlamaConfig's, where absent) */
    uint64_t context;       /* the longest sequence the model takes: the config's
                             * max_position_embeddings (GPT-2: n_positions), or
                             * its family's default where absent */
    uint64_t experts;       /* MoE experts per layer (0: a dense MLP) */
    uint64_t experts_per_token;
    bool gated_mlp;         /* SwiGLU/GeGLU: gate, up, down; else up, down */
    bool layernorm;         /* LayerNorm with bias; else RMSNorm (weight only) */
    bool qkv_bias;          /* biases on q, k, v (Qwen2, GPT-2, GPT-NeoX) */
    bool o_bias;            /* bias on the attention output projection */
    bool mlp_bias;          /* biases on the MLP's projections */
    bool tied;              /* the LM head shares the token embeddings */
    bool dropout;           /* attention and residual dropout in training */
    uint64_t layer_norms;   /* norms a layer: 2 (4: Gemma-2's pre and post norms) */
    /* Layers whose attention sees the last sliding_window tokens only and
     * keep no more of them in the KV cache (Gemma-2: every other layer);
     * 0: every layer attends to the whole context. */
    uint64_t sliding_window, sliding_layers;
    bool attn_softcap;      /* tanh soft-capping of attention scores (Gemma-2) */
    bool final_softcap;     /* tanh soft-capping of the logits (Gemma-2) */
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
 * layer_norms norms) + final norm + V*h LM head unless tied. */
uint64_t gm_arch_params(const gm_arch *a);
/* Parameters that one token's forward pass multiplies by (MoE: only
 * experts_per_token experts); equal to gm_arch_params for dense models. */
uint64_t gm_arch_active_params(const gm_arch *a);
/* KV cache bytes per token: 2 (K and V) * L * k * d * elem_size. */
uint64_t gm_arch_kv_bytes_per_token(const gm_arch *a, size_t elem_size);
/* KV cache bytes of one sequence of `seq` tokens: every layer holds them
 * all, but a sliding-window layer at most sliding_window of them.
 * UINT64_MAX when it overflows. */
uint64_t gm_arch_kv_bytes_per_sequence(const gm_arch *a, size_t elem_size, uint64_t seq);

/* Reads `model`: a preset name, share/models/NAME.json; else a path (it
 * contains '/', ends in .json, or names a folder) to a Hugging Face
 * config.json, or to a model's folder holding one (FOLDER/config.json).
 * Returns 0; 2 with one line in err on bad input: no such preset (the
 * line lists the presets, or names the one that replaces a retired
 * name), an unreadable file, malformed JSON, a missing or bad field
 * (named), an unknown model_type. */
int gm_arch_load(const char *model, gm_arch *out, char *err, size_t err_len);

/* Parses config.json text already read from `path` (named in messages).
 * Same returns as gm_arch_load. */
int gm_arch_parse(const char *path, const char *text, gm_arch *out, char *err, size_t err_len);

/* The preset names (the NAME of share/models/NAME.json), sorted, joined by ", ", into
 * buf ("" when the folder is not found). */
void gm_arch_presets(char *buf, size_t len);

/* The model_type values gm_arch_parse knows, comma separated. */
extern const char gm_arch_known_types[];

#endif
