/* gpusim: model builders (private to workloads/).
 *
 * One builder per Hugging Face model family records, through the gs_mg_*
 * helpers, the ops transformers 4.36 (with PyTorch 2.1) runs in one forward
 * call of the task model the reference measurements use: the causal-LM head
 * for GPT-2/GPT-BigCode/OPT/GPT-Neo/GPT-NeoX/Falcon/BLOOM/Llama (and
 * GPT-J/MPT, the families newer than 4.36: Phi, and the Llama-layer Qwen, Gemma,
 * Phi-3, OLMo 2, Granite, StableLM,
 * Qwen-MoE)/Mixtral, sequence
 * classification (or the pre-training heads in training) for BERT,
 * sequence classification (or masked LM in training) for RoBERTa,
 * conditional generation for T5 and Switch Transformers.  model-decoder.c
 * holds the decoder-only families, model-encoder.c BERT, RoBERTa and the
 * encoder-decoders, model-blocks.c what they share (attention,
 * activations, RMS norm, masks, MoE).
 */
#ifndef GS_MODEL_BUILD_H
#define GS_MODEL_BUILD_H

#include "workloads/hf-config.h"
#include "workloads/model-graph.h"

typedef struct {
  GsMg *g;
  const GsHfConfig *cfg;
  int64_t batch;
  int64_t seq;             /* query tokens of this forward (1: decode step) */
  int64_t past;            /* tokens already in the KV cache */
  int64_t enc_seq;         /* encoder tokens (encoder-decoder models) */
  gboolean generate;       /* called by generate(): a 2-D attention mask */
  gboolean decoder_only;   /* encoder-decoder: skip the encoder (decode) */
} GsMb;

/* The tensor a loss (or the next token) is computed from. */
typedef struct {
  int logits;              /* value id */
  int64_t rows, cols;      /* [tokens, vocab] */
} GsMbOut;

/* ------------------------------------------------------- model-blocks.c */

typedef enum {
  GS_MB_SCALE_NONE,        /* T5, GPT-Neo; OPT scales q before */
  GS_MB_SCALE_FULL,        /* GPT-2: / torch.full([], sqrt(d)) */
  GS_MB_SCALE_DIV,         /* BERT, Llama: / math.sqrt(d) */
  GS_MB_SCALE_MUL,         /* Gemma-2: * scaling */
} GsMbScale;

typedef enum {
  GS_MB_MASK_NONE,
  GS_MB_MASK_WHERE,        /* GPT-2/Neo: where(bias buffer, w, full(min)) */
  GS_MB_MASK_WHERE_SYNC,   /* GPT-NeoX: where(bias buffer, w, min), the 0-dim
                            * min made on the host and copied over
                            * (torch.tensor(min).to(device): the host
                            * waits for the GPU) */
  GS_MB_MASK_WHERE_KEPT,   /* GPT-BigCode: where(mask, w, mask_value), the
                            * 0-dim value made once and kept by the module */
} GsMbCausal;

/* Scores converted to fp32 before the bias and the mask. */
typedef enum {
  GS_MB_UPCAST_NONE,
  GS_MB_UPCAST_FP16,       /* BLOOM: when they are fp16 (not bf16) */
  GS_MB_UPCAST_HALF,       /* Falcon's ALiBi: when fp16 or bf16 */
} GsMbUpcast;

typedef struct {
  int64_t heads, kv_heads, head_dim, seq_q, seq_k;
  int64_t v_head_dim;      /* the values' width per head (0: head_dim;
                            * DeepSeek's latent attention: narrower) */
  gboolean copy_q, copy_k, copy_v; /* matmul must copy the operand */
  gboolean q_view, k_view, v_view; /* operand is a head-split view: its
                                    * gradient's reshape copies */
  GsMbScale scale;
  GsMbCausal causal_where;
  int mask;                /* additive mask value (-1: none) */
  gboolean mask_per_query; /* it has a row per query ([B,1,Sq,Sk], Llama's
                            * causal mask), not one broadcast row (BERT's
                            * [B,1,1,Sk]) */
  gboolean mask_max;       /* OPT: torch.max(w, tensor(min)) after the mask */
  int bias;                /* T5 position bias (scores += bias), -1: none */
  gboolean softmax_fp32;   /* softmax(dtype=float32).to(dtype) */
  gboolean softmax_float;  /* T5: softmax(scores.float()).type_as(scores) */
  double p_drop;
  gboolean drop_module;    /* attention dropout is an nn.Dropout */
  gboolean causal;
  gboolean softcap;        /* Gemma-2: scores / cap, tanh, * cap */
  gboolean baddbmm;        /* GPT-NeoX: scores = baddbmm(zeros, q, k^T,
                            * alpha = scale), no separate scaling */
  gboolean baddbmm_empty;  /* GPT-BigCode: baddbmm(torch.empty(...), q,
                            * k^T, beta = 0, alpha = scale): nothing
                            * filled, nothing read but q and k */
  gboolean mq_bmm;         /* GPT-BigCode's multi_query: q as [B, Sq x
                            * heads, D] (the caller copies it), the one
                            * K/V head read by one bmm per sequence for
                            * the scores and for p @ v; the context is
                            * [B, Sq, heads x D] already (no head merge) */
  gboolean qk_fp32;        /* Phi: q.to(float32) and k.to(float32) before
                            * q @ k^T: the scores GEMM, their scaling and
                            * mask in fp32 */
  gboolean qk_fp32_in;     /* GPT-J: q and k arrive in fp32 already (its
                            * rotary embedding's fp32 tables promote
                            * them), so those casts copy nothing; matmul's
                            * copies of them are fp32 */
  gboolean where_first;    /* GPT-J: where(causal, w, mask value) before
                            * the scaling, not after it */
  gboolean alibi_after_scale; /* MPT: scores * scale + alibi (the [H, 1,
                               * Sk] tensor broadcast over the batch and
                               * the queries), then the mask */
  gboolean upcast_fused;   /* GPT-BigCode's upcast_masked_softmax in half
                            * precision: one TorchScript kernel (NNC)
                            * casts the scores to fp32, multiplies them
                            * by unscale and masks them with where; the
                            * softmax in fp32; the cast back */
  int alibi;               /* the [B*H, 1, Sk] ALiBi tensor, broadcast
                            * over the queries (-1: none): BLOOM's
                            * baddbmm's self; without baddbmm (Falcon)
                            * scores + alibi, then *= scale */
  gboolean mask_fill;      /* BLOOM: mask is a bool [B,1,Sq,Sk] mask,
                            * masked_fill(scores, mask, min), not added */
  GsMbUpcast upcast;       /* scores.to(float32) after the matmul: the
                            * bias and mask after it in fp32, as with
                            * qk_fp32 */
  int64_t window;          /* sliding window flash_attn applies (0: none;
                            * eager attention masks it instead) */
} GsMbAttn;

/* Tags the nodes that follow with a module path built like printf
 * ("h.%d.attn"); LAYER -1 outside the layers. */
void gs_mb_scope (GsMb *b, int layer, const char *fmt, ...)
  G_GNUC_PRINTF (3, 4);

/* Eager (or fused) attention from Q, K, V ([B,H,S,D] values) to the
 * merged [B*S, H*D] context, heads merged (permute + contiguous). */
int gs_mb_attention (GsMb *b, const GsMbAttn *a, int q, int k, int v);
/* The activation ACT over ROWS x COLS (gelu_new: eight kernels). */
int gs_mb_act (GsMb *b, GsHfAct act, int x, int64_t rows, int64_t cols);
/* T5LayerNorm / LlamaRMSNorm: pow, mean, add, rsqrt, mul, mul (plus two
 * casts in half precision). */
int gs_mb_rmsnorm (GsMb *b, int x, int64_t rows, int64_t cols);
/* Olmo2RMSNorm: the same kernels with the weight multiplied before the
 * cast back, in fp32 (in half precision: the last mul writes fp32). */
int gs_mb_olmo2_rmsnorm (GsMb *b, int x, int64_t rows, int64_t cols);
/* GemmaRMSNorm: in fp32, x * rsqrt(mean(x^2) + eps) * (1 + weight), cast
 * back: pow, mean, add, rsqrt, mul, add, mul (plus three casts in half
 * precision: x, the weight, the result). */
int gs_mb_gemma_rmsnorm (GsMb *b, int x, int64_t rows, int64_t cols);
/* CohereLayerNorm (transformers 4.40) over COLS, op by op in fp32 (x
 * cast up, mean, x - mean, pow, mean, x - mean again, + eps, rsqrt, *,
 * the weight of WEIGHT elements cast up and multiplied, the cast back),
 * no bias; the weight is [heads, head_dim] for the per-head q/k norms. */
int gs_mb_cohere_layernorm (GsMb *b, int x, int64_t rows, int64_t cols,
                            int64_t weight);
/* KV cache append (torch.cat along the sequence) of a decode step:
 * returns the [B, heads, past + seq, D] tensor. */
int gs_mb_cache_cat (GsMb *b, int x, int64_t heads, int64_t head_dim);
/* The same for a layer whose cache keeps only the last WINDOW tokens
 * (Gemma-2's sliding layers): [B, heads, min(past + seq, WINDOW), D]. */
int gs_mb_cache_window (GsMb *b, int x, int64_t heads, int64_t head_dim,
                        int64_t window);
/* AttentionMaskConverter masks (transformers >= 4.36) for a causal model:
 * returns the additive [B,1,S,L] mask, or -1 when none is applied.
 * WINDOW > 0: the converter's sliding window (Mistral, Phi-3), which also
 * makes it build the causal part for a single query. */
int gs_mb_causal_mask_4d (GsMb *b, gboolean have_2d, int64_t window);
/* build_alibi_tensor (BLOOM, Falcon's alibi) from the [B, Sk] attention
 * mask: the HEADS slopes (from two numbers the host copies over), the
 * positions (the mask's cumsum), their product, cast to the model's
 * dtype; returns the [B*H, 1, Sk] tensor. */
int gs_mb_alibi (GsMb *b, int64_t heads);
/* OPTAttention and BartAttention (transformers 4.36, eager). */
typedef struct {
  int x;                   /* the queries' input, [B x Sq, hidden] */
  gboolean encoder;        /* the encoder's self-attention: over its
                            * enc_seq tokens, not causal, no cache */
  int kv;                  /* cross-attention: the keys' and values' input
                            * (the encoder output); -1: self-attention on X */
  int64_t kv_seq;          /* cross-attention: the encoder's tokens */
  gboolean kv_cached;      /* cross-attention in a decode step: K and V
                            * from past_key_values, not projected */
  int mask;                /* additive mask (-1: none) */
  gboolean mask_per_query; /* the mask is [B, 1, Sq, Sk], one row a query */
  gboolean copy_one_token; /* OPT's builder: _shape's contiguous copies k
                            * and v even of a decode step's one token */
} GsMbOptAttn;
/* q_proj(x) * scaling, k_proj and v_proj through _shape's contiguous, the
 * self-attention cache's cat, bmm, + mask (OPT: torch.max with the
 * minimum, its fp16 softmax in fp32), softmax, dropout, bmm, the heads
 * merged, out_proj.  The caller sets the module scope. */
int gs_mb_opt_attention (GsMb *b, const GsMbOptAttn *o);
/* Mixtral's sparse MoE block over T tokens of width H (returns its output);
 * Qwen2/Qwen3-MoE's with their differences (GsHfConfig's norm_topk,
 * qwen_moe, shared_ffn). */
int gs_mb_mixtral_moe (GsMb *b, int x, int64_t tokens, int64_t hidden);
/* DeepSeek's MoE block over T tokens of width H: the router (V3's sigmoid
 * one with group-limited top-k, or V2's softmax one, greedy or
 * group-limited), the routed experts (V3's torch.where loop, or V2's over
 * the rows sorted by expert), the shared experts (returns its output). */
int gs_mb_deepseek_moe (GsMb *b, int x, int64_t tokens, int64_t hidden);
/* Switch Transformers' sparse MLP (router + experts). */
int gs_mb_switch_moe (GsMb *b, int x, int64_t tokens, int64_t hidden);
/* Tokens each expert receives: balanced routing spreads TOKENS x TOP_K
 * evenly (capped at CAPACITY per sequence when > 0); otherwise every token
 * picks the same experts, as identical inputs do. */
int64_t gs_mb_expert_tokens (const GsMb *b, int expert, int64_t tokens,
                             int top_k, int capacity);
/* generate()'s per-step work around the forward (greedy search). */
void gs_mb_generate_glue (GsMb *b, int64_t vocab);
/* Position ids from the 2-D attention mask (prepare_inputs_for_generation). */
void gs_mb_generate_positions (GsMb *b);

/* ------------------------------------------------------- the builders */
GsMbOut gs_mb_gpt2 (GsMb *b);      /* gpt2, gpt_bigcode */
GsMbOut gs_mb_gpt_neo (GsMb *b);
GsMbOut gs_mb_gpt_neox (GsMb *b);
GsMbOut gs_mb_falcon (GsMb *b);
GsMbOut gs_mb_bloom (GsMb *b);
GsMbOut gs_mb_phi (GsMb *b);
GsMbOut gs_mb_gptj (GsMb *b);
GsMbOut gs_mb_mpt (GsMb *b);
GsMbOut gs_mb_opt (GsMb *b);
GsMbOut gs_mb_llama (GsMb *b);     /* llama, mistral, qwen2, qwen3,
                                    * gemma, gemma2, phi3, gemma3_text,
                                    * olmo2, granite, stablelm, mixtral,
                                    * qwen2_moe, qwen3_moe,
                                    * deepseek_v2, deepseek_v3 */
GsMbOut gs_mb_bert (GsMb *b);     /* bert, roberta */
GsMbOut gs_mb_t5 (GsMb *b);        /* t5, mt5, umt5, switch_transformers */
GsMbOut gs_mb_bart (GsMb *b);

#endif
