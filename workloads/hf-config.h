/* gpusim: Hugging Face config.json files, read into one normalized form.
 *
 * Each model family names its sizes differently (GPT-2's n_embd, BERT's
 * hidden_size, T5's d_model); gs_hf_config_load maps them onto one struct,
 * fills the defaults the transformers config classes use for keys a file
 * leaves out, and rejects what cannot describe a model (a missing size, a
 * wrong type, a size <= 0, an unknown model_type) with an error naming the
 * file and the key.
 */
#ifndef GS_HF_CONFIG_H
#define GS_HF_CONFIG_H

#include <glib.h>

typedef enum {
  GS_HF_GPT2,      /* gpt2 (and GPT-3-style configs with model_type gpt2) */
  GS_HF_BERT,
  GS_HF_ROBERTA,   /* roberta, xlm-roberta, camembert */
  GS_HF_OPT,
  GS_HF_GPT_NEO,
  GS_HF_GPT_NEOX,  /* gpt_neox (Pythia) */
  GS_HF_FALCON,    /* falcon */
  GS_HF_BLOOM,     /* bloom (BLOOM, BLOOMZ) */
  GS_HF_PHI,       /* phi (Phi-1, Phi-1.5, Phi-2) */
  GS_HF_GPT_BIGCODE, /* gpt_bigcode (SantaCoder, StarCoder) */
  GS_HF_GPTJ,      /* gptj (GPT-J) */
  GS_HF_MPT,       /* mpt (MPT-7B, MPT-30B) */
  GS_HF_LLAMA,     /* llama, mistral, qwen2, qwen3, gemma, gemma2, phi3,
                    * gemma3_text, gemma3 (its text_config), olmo2,
                    * granite, stablelm, starcoder2, cohere */
  GS_HF_MIXTRAL,   /* mixtral, qwen2_moe, qwen3_moe: Llama attention,
                    * sparse MoE MLP;
                    * deepseek_v2, deepseek_v3: latent attention,
                    * DeepSeek's MoE */
  GS_HF_SWITCH,    /* switch_transformers */
  GS_HF_T5,        /* t5, mt5, umt5 */
  GS_HF_BART,      /* bart */
  GS_HF_FAMILY_COUNT
} GsHfFamily;

/* The activation functions transformers' ACT2FN maps config strings to. */
typedef enum {
  GS_ACT_GELU,       /* "gelu": exact erf GELU, one kernel */
  GS_ACT_GELU_NEW,   /* "gelu_new": tanh approximation in eight pointwise ops */
  GS_ACT_GELU_TANH,  /* "gelu_pytorch_tanh": one kernel */
  GS_ACT_RELU,
  GS_ACT_SILU,       /* "silu"/"swish" */
} GsHfAct;

/* How DeepSeek's router picks a token's experts. */
typedef enum {
  GS_HF_TOPK_NOAUX_TC,   /* DeepSeek-V3: sigmoid scores + the correction
                          * bias, groups ranked by their best two */
  GS_HF_TOPK_GREEDY,     /* DeepSeek-V2 "greedy": softmax scores, top_k */
  GS_HF_TOPK_GROUP_MAX,  /* DeepSeek-V2 "group_limited_greedy": softmax
                          * scores, groups ranked by their best one */
} GsHfTopkMethod;

typedef struct {
  char *file;              /* where it came from (for messages) */
  char *model_type;        /* as the file says it */
  char *note;              /* what the model leaves out, for reports
                            * (NULL: nothing) */
  GsHfFamily family;

  int hidden;              /* model width (d_model) */
  int layers;              /* (encoder) layers */
  int dec_layers;          /* decoder layers (encoder-decoder models) */
  int heads;               /* attention heads */
  int kv_heads;            /* key/value heads (GQA); = heads otherwise */
  int head_dim;            /* per head (T5's d_kv may differ from hidden/heads) */
  int ffn;                 /* feed-forward inner width */
  int vocab;
  int max_pos;             /* positions a learned table serves (0: none) */
  int pos_offset;          /* RoBERTa: table rows before the first position
                            * (padding_idx + 1); BART: its offset 2; the
                            * table has max_pos + pos_offset rows */
  int type_vocab;          /* BERT/RoBERTa token types */
  int proj_dim;            /* OPT word_embed_proj_dim */
  int num_labels;          /* BERT/RoBERTa classification head outputs */

  GsHfAct act;
  gboolean gated;          /* gated FFN: SwiGLU (Llama) or gated-gelu (T5 v1.1) */
  gboolean pre_norm;       /* layer norm before attention/FFN (OPT flag) */
  gboolean tie_embeddings; /* LM head shares the token embedding */
  gboolean scale_attn;     /* GPT-2 scale_attn_weights */
  gboolean linear_bias;    /* projections carry a bias (Llama family: q/k/v) */
  gboolean o_bias;         /* Llama family: the attention output projection
                            * carries a bias (Llama's attention_bias; never
                            * Qwen2's, whose q/k/v always do) */
  gboolean mlp_bias;       /* Llama family: gate/up/down carry a bias */
  gboolean qk_norm;        /* Qwen3: RMSNorm over each head of q and k
                            * (OLMo 2: over the whole projections); Phi's
                            * qk_layernorm: a LayerNorm over each head */
  gboolean gemma;          /* Gemma, Gemma-2: embeddings times
                            * sqrt(hidden); RMSNorm in fp32 times
                            * (1 + weight) */
  gboolean sandwich_norm;  /* Gemma-2: an RMSNorm after attention and after
                            * the MLP too (four per layer) */
  gboolean scale_mul;      /* Gemma-2: scores * query_pre_attn_scalar^-0.5
                            * (a multiply, not a divide); Granite's
                            * attention_multiplier */
  gboolean attn_softcap;   /* Gemma-2: scores soft-capped, cap * tanh(s /
                            * cap) (attn_logit_softcapping) */
  gboolean logit_softcap;  /* Gemma-2, Gemma 3: logits soft-capped
                            * (final_logit_softcapping) */
  gboolean gemma3;         /* Gemma 3: q_norm and k_norm are Gemma
                            * RMSNorms after v_proj; two rotary tables
                            * (global, local) computed once a forward;
                            * the embedding scaled inside embed_tokens;
                            * logits left in the model's dtype */
  gboolean fused_qkv;      /* Phi-3: one qkv_proj GEMM (q, k, v its column
                            * slices) and one gate_up_proj (chunked) */
  int rotary_dim;          /* rotary embedding over the first rotary_dim
                            * dimensions of a head (0: all of them);
                            * GPT-J: rotary_dim as given (its rest is
                            * always concatenated), 0 for null */
  gboolean use_cache;      /* GPT-J: the forward returns its keys cast to
                            * the model's dtype for the cache */
  gboolean post_norm;      /* OLMo 2: RMSNorms only after the sublayers
                            * (post_attention_layernorm,
                            * post_feedforward_layernorm), the weight
                            * multiplied in fp32 before the cast; q_norm
                            * and k_norm over the whole projections */
  gboolean granite;        /* Granite: the embedding, each sublayer's
                            * output and the logits scaled by a multiplier
                            * (a kernel each); scores * attention_multiplier */
  gboolean stablelm;       /* StableLM: LayerNorms; the rotary part and the
                            * rest of each head always concatenated; the
                            * attention's and the MLP's dropout modules */
  gboolean starcoder2;     /* StarCoder2: LayerNorms, a plain MLP (c_fc,
                            * c_proj), functional dropouts on the
                            * embeddings and on each sublayer's output */
  gboolean cohere;         /* Cohere: CohereLayerNorm op by op, attention
                            * and MLP in parallel, interleaved rotary in
                            * fp32 per layer, logits * logit_scale;
                            * qk_norm: its per-head q/k norms */
  gboolean head_layernorm; /* StableLM's qk_layernorm: a LayerNorm (no
                            * bias) per head of q and of k */
  gboolean parallel_residual; /* GPT-NeoX: x + attn(ln1(x)) + mlp(ln2(x));
                               * Falcon's parallel_attn; StableLM's
                               * x + attn(ln1(x)) + mlp(ln1(x)) */
  gboolean multi_query;    /* Falcon: one K and one V head, the last two
                            * head-sized columns of query_key_value;
                            * GPT-BigCode: of c_attn */
  gboolean softmax_fp32;   /* GPT-BigCode's attention_softmax_in_fp32: in
                            * half precision the scores upcast, masked and
                            * softmaxed in fp32 by one TorchScript
                            * function */
  gboolean new_decoder;    /* Falcon's new_decoder_architecture: K/V heads
                            * grouped in query_key_value (kv_heads groups
                            * of heads / kv_heads queries, a key, a
                            * value); ln_attn and ln_mlp both on the
                            * layer's input */
  gboolean alibi;          /* BLOOM, Falcon's alibi: ALiBi biases on the
                            * scores instead of positions */
  gboolean post_ln_residual; /* BLOOM's apply_residual_connection_post_
                              * layernorm: each residual branch adds to
                              * its layer norm's output, not its input */
  gboolean pad_check;      /* BERT/RoBERTa: without an attention mask the
                            * model looks for pad_token_id in input_ids */

  /* Dropout probabilities (active in training). */
  double p_embd, p_attn, p_resid, p_act;

  /* GPT-Neo, Gemma-2, Gemma 3: layer i is local when local[i]; window in
   * tokens.
   * Without local[], a window applies to every layer (Mistral's
   * sliding_window). */
  gboolean *local;         /* layers entries, or NULL */
  int window;              /* 0: none */

  /* Mixture of experts (Switch, Mixtral, Qwen2-MoE, Qwen3-MoE). */
  int experts;
  int top_k;
  int expert_ffn;          /* each expert's inner width (Mixtral: ffn;
                            * Qwen-MoE: moe_intermediate_size) */
  gboolean norm_topk;      /* the top-k routing weights divided by their
                            * sum (Mixtral always; norm_topk_prob) */
  int shared_ffn;          /* Qwen2-MoE: the shared expert's inner width
                            * (shared_expert_intermediate_size; 0: none) */
  gboolean qwen_moe;       /* Qwen2/Qwen3-MoE's block: experts named
                            * gate/up/down_proj under "mlp", the routing
                            * weights cast back to the hidden dtype, the
                            * experts indexed with torch.where's tensors
                            * (no .tolist()) */
  gboolean *dense_layers;  /* layers entries, or NULL: layer i runs a dense
                            * MLP of ffn (mlp_only_layers) */
  /* DeepSeek-V2 and V3 (deepseek_v2, deepseek_v3): multi-head latent
   * attention and DeepSeek's MoE. */
  gboolean deepseek;       /* the DeepSeek layer (the fields below) */
  int q_lora_rank;         /* q_a_proj's width (0: one q_proj) */
  int kv_lora_rank;        /* kv_a_proj_with_mqa's latent width */
  int qk_nope_dim;         /* per head: the query/key part without rotary */
  int qk_rope_dim;         /* per head: the rotary part (one key head's,
                            * shared by every head) */
  int v_head_dim;          /* per head: the value's width (head_dim is
                            * qk_nope_dim + qk_rope_dim) */
  gboolean rope_interleave; /* q/k's rotary part viewed as pairs and
                             * transposed first (one copy each) */
  gboolean rope_complex;   /* DeepSeek-V2: one complex table a forward
                            * (torch.polar), q/k's rotary parts turned by
                            * a complex multiply in fp32 */
  GsHfTopkMethod topk_method; /* the router's scores and choice */
  gboolean moe_sorted;     /* DeepSeek-V2's moe(): the chosen rows sorted
                            * by expert (argsort), each expert on its slice
                            * of them, cat, scattered back, weighted, summed
                            * over top_k (else V3's torch.where loop) */
  int n_group;             /* the experts' groups for the router */
  int topk_group;          /* groups a token's experts are chosen from */
  int first_dense;         /* first_k_dense_replace: layers below run a
                            * dense MLP of ffn */
  int capacity;            /* Switch expert_capacity, tokens per sequence */
  int enc_sparse_step;     /* every this many layers is sparse (0: none) */
  int dec_sparse_step;
  gboolean router_jitter;  /* Switch jitter noise multiplies inputs in training */

  int rel_buckets;         /* T5 relative attention buckets */
  gboolean umt5;           /* UMT5: every self-attention layer has its own
                            * relative bias table, its buckets computed
                            * in each layer; each cross-attention makes
                            * its zeros + mask anew */
} GsHfConfig;

GsHfConfig *gs_hf_config_load (const char *file, GError **error);
/* The same for the LEN bytes of DATA, named NAME in messages (standard
 * input). */
GsHfConfig *gs_hf_config_load_data (const char *name, const char *data,
                                    gsize len, GError **error);
void gs_hf_config_free (GsHfConfig *cfg);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsHfConfig, gs_hf_config_free)

const char *gs_hf_family_name (GsHfFamily f);
/* The model_type strings gpusim understands, comma-separated. */
const char *gs_hf_supported_types (void);
/* Layer I of the encoder (or the only stack) / decoder has a sparse FFN. */
gboolean gs_hf_layer_sparse (const GsHfConfig *cfg, int i, gboolean decoder);

#endif
