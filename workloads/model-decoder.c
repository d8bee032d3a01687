/* gpusim: decoder-only causal language models (GPT-2 and GPT-3-style
 * configs, GPT-BigCode, GPT-Neo, GPT-NeoX, Falcon, BLOOM, Phi, OPT,
 * GPT-J, MPT, Llama/Mistral, Qwen2/Qwen3, Gemma/Gemma-2/Gemma 3, Phi-3,
 * OLMo 2, Granite, StableLM, StarCoder2, Cohere, Mixtral,
 * Qwen-MoE, DeepSeek-V2/V3) as
 * transformers 4.36 runs them (the newer families with their own modules'
 * differences):
 * XxxForCausalLM.forward(input_ids), and, inside generate(), with a 2-D
 * attention mask and a KV cache.
 *
 * Module paths in tags follow the Hugging Face parameter names
 * ("transformer.h.0.attn.c_attn"), so an op can be traced back to the
 * model's state dict and to profiler traces.
 */
#include "config.h"
#include "workloads/model-build.h"

/* Query/key/value as head-split views of projections. */
static void
attn_defaults (const GsMb *b, GsMbAttn *a)
{
  const GsHfConfig *c = b->cfg;
  *a = (GsMbAttn) { 0 };
  a->heads = c->heads;
  a->kv_heads = c->kv_heads;
  a->head_dim = c->head_dim;
  a->seq_q = b->seq;
  a->seq_k = b->past + b->seq;
  a->mask = a->bias = a->alibi = -1;
  a->causal = TRUE;
  a->q_view = a->k_view = a->v_view = TRUE;
  /* Prefill: head-split views must be copied by matmul; a decode step's q
   * has one token (mergeable) and k/v come from the cache's cat. */
  a->copy_q = TRUE;
  a->copy_k = a->copy_v = b->past == 0;
}

/* The attention A over Q, K and V as Llama's, DeepSeek's and Phi's eager
 * code runs it: + the 4-D MASK sliced per query, softmax in fp32,
 * attn_dropout's probability; after the module's eight Python ops. */
static int
masked_fp32_attention (GsMb *b, GsMbAttn *a, int mask, int q, int k, int v)
{
  a->mask = mask;
  a->mask_per_query = TRUE;
  a->softmax_fp32 = TRUE;
  a->p_drop = b->cfg->p_attn;
  gs_mg_host (b->g, GS_HOST_PY, 8);
  return gs_mb_attention (b, a, q, k, v);
}

/* The LM head: logits = lm_head(hidden) over every position (Phi's and
 * GPT-J's with a bias); Gemma-2 soft-caps them (logits / cap, tanh, * cap)
 * before logits.float(); Granite divides them by logits_scaling, Cohere
 * multiplies them by logit_scale (Python floats). */
static GsMbOut
lm_head (GsMb *b, int h, int w_tied, gboolean float_logits)
{
  GsMg *g = b->g;
  int64_t T = b->batch * b->seq;
  int64_t V = b->cfg->vocab, H = b->cfg->hidden;
  gboolean bias = b->cfg->family == GS_HF_PHI
                  || b->cfg->family == GS_HF_GPTJ;
  gs_mb_scope (b, -1, "lm_head");
  int logits = gs_mg_linear (g, NULL, h, T, H, V, w_tied, bias, FALSE);
  if (b->cfg->logit_softcap)
    {
      logits = gs_mg_pointwise (g, "div", GS_BW_SCALE, logits, -1, T, V, 1,
                                0, TRUE);
      logits = gs_mg_unary (g, "tanh", logits, T, V, 8, 2, "tanh_backward");
      logits = gs_mg_pointwise (g, "mul", GS_BW_SCALE, logits, -1, T, V, 1,
                                0, TRUE);
    }
  if (b->cfg->granite)
    logits = gs_mg_pointwise (g, "div", GS_BW_SCALE, logits, -1, T, V, 1, 0,
                              TRUE);
  if (b->cfg->cohere)   /* logits * self.logit_scale */
    logits = gs_mg_pointwise (g, "mul", GS_BW_SCALE, logits, -1, T, V, 1, 0,
                              TRUE);
  gs_mg_val (g, logits)->keep = TRUE;
  if (float_logits && g->opt.dtype != GS_DTYPE_FP32)  /* logits.float() */
    logits = gs_mg_cast (g, logits, T, V);
  return (GsMbOut) { logits, T, V };
}

/* The final LayerNorm under SCOPE, VIEWS host views, then lm_head. */
static GsMbOut
layernorm_head (GsMb *b, const char *scope, int h, int views, int w_tied,
                gboolean float_logits)
{
  gs_mb_scope (b, -1, scope);
  h = gs_mg_layernorm (b->g, h, b->batch * b->seq, b->cfg->hidden);
  gs_mg_host (b->g, GS_HOST_VIEW, views);
  return lm_head (b, h, w_tied, float_logits);
}

/* An MLP module of layer I under SCOPE: nn.Linear UP (with bias when
 * BIAS) to the inner width, the activation, nn.Linear DOWN back
 * (GPT-Neo's, GPT-NeoX's, Phi's, StarCoder2's, GPT-J's, MPT's). */
static int
linear_act_mlp (GsMb *b, int i, const char *scope, const char *up,
                const char *down, int x, gboolean bias)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, scope, i);
  gs_mg_module (g);
  int h = gs_mg_linear (g, up, x, T, H, c->ffn, -1, bias, FALSE);
  h = gs_mb_act (b, c->act, h, T, c->ffn);
  return gs_mg_linear (g, down, h, T, c->ffn, H, -1, bias, FALSE);
}

/* ---------------------------------------------------------------- GPT-2 */

/* transformers 5's DynamicCache.update on an empty cache: torch.cat of
 * the layer's head-split view X ([B, S, heads, D] seen as [B, heads, S,
 * D]) onto an empty tensor, which copies it contiguous; the forward
 * returns it (use_cache defaults on, in training too). */
static int
dynamic_cache_cat (GsMb *b, int x)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int y = gs_mg_copy (g, "cat", GS_BW_PASS, x,
                      b->batch * b->seq * c->heads, c->head_dim);
  if (!g->opt.checkpoint)
    gs_mg_val (g, y)->held = TRUE;
  return y;
}

/* transformers 5's create_causal_mask for eager attention, as traced:
 * arange for the cache positions and key indices, their le() as a bool
 * [S, S], and where() over it into a [B, 1, S, S] mask of the model's
 * dtype (0 or finfo.min), which every layer adds to its scores. */
static int
causal_mask_v5 (GsMb *b)
{
  GsMg *g = b->g;
  int64_t B = b->batch, S = b->seq;
  gs_mg_host (g, GS_HOST_PY, 20);
  gs_mg_fill (g, "arange", 1, S);
  gs_mg_fill (g, "arange", 1, S);
  gs_mg_pointwise (g, "le", GS_BW_NONE, -1, -1, S, S, 1, 0, FALSE);
  gs_mg_fill (g, "full", 1, 1);
  return gs_mg_pointwise (g, "where", GS_BW_NONE, -1, -1, B * S, S, 1, 0,
                          FALSE);
}

/* GPT2Attention of transformers 5 (5.17, traced on an H100): the key and
 * value views go through DynamicCache.update, a torch.cat onto an empty
 * cache that copies each head-split view contiguous (the forward's
 * use_cache default, in training too); so matmul copies only q.  Then
 * eager_attention_forward: * scaling (a Python float), + the [B, 1, S, S]
 * causal mask the model made once, softmax in the scores' dtype,
 * attn_dropout, matmul with v, the heads merged. */
static int
gpt2_attn_v5 (GsMb *b, int x, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  int qkv = gs_mg_linear (g, "c_attn", x, T, H, 3 * H, -1, TRUE, TRUE);
  int p[3];
  gs_mg_split (g, qkv, 3, p);
  gs_mg_host (g, GS_HOST_PY, 9);
  gs_mg_host (g, GS_HOST_VIEW, 6);         /* view + transpose, each */
  int k = dynamic_cache_cat (b, p[1]), v = dynamic_cache_cat (b, p[2]);
  GsMbAttn a;
  attn_defaults (b, &a);
  a.copy_k = a.copy_v = FALSE;
  a.scale = c->scale_attn ? GS_MB_SCALE_MUL : GS_MB_SCALE_NONE;
  a.mask = mask;
  a.mask_per_query = TRUE;
  a.p_drop = c->p_attn;
  a.drop_module = TRUE;
  gs_mg_host (g, GS_HOST_PY, 12);
  int ctx = gs_mb_attention (b, &a, p[0], k, v);
  gs_mg_host (g, GS_HOST_PY, 6);
  int o = gs_mg_linear (g, "c_proj", ctx, T, H, H, -1, TRUE, TRUE);
  return gs_mg_dropout (g, o, T, H, c->p_resid, TRUE);
}

static int
gpt2_attn (GsMb *b, int i, int x, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "transformer.h.%d.attn", i);
  gs_mg_module (g);
  if (g->opt.hf5)
    return gpt2_attn_v5 (b, x, mask);
  int qkv = gs_mg_linear (g, "c_attn", x, T, H, 3 * H, -1, TRUE, TRUE);
  int p[3];
  gs_mg_split (g, qkv, 3, p);
  gs_mg_host (g, GS_HOST_PY, 9);
  gs_mg_host (g, GS_HOST_VIEW, 6);         /* _split_heads: view + permute */
  int k = gs_mb_cache_cat (b, p[1], c->heads, c->head_dim);
  int v = gs_mb_cache_cat (b, p[2], c->heads, c->head_dim);
  GsMbAttn a;
  attn_defaults (b, &a);
  a.scale = c->scale_attn ? GS_MB_SCALE_FULL : GS_MB_SCALE_NONE;
  a.causal_where = GS_MB_MASK_WHERE;
  a.mask = mask;
  a.p_drop = c->p_attn;
  a.drop_module = TRUE;
  gs_mg_host (g, GS_HOST_PY, 12);          /* sizes, finfo, bias slice */
  int ctx = gs_mb_attention (b, &a, p[0], k, v);
  gs_mg_host (g, GS_HOST_PY, 6);
  int o = gs_mg_linear (g, "c_proj", ctx, T, H, H, -1, TRUE, TRUE);
  return gs_mg_dropout (g, o, T, H, c->p_resid, TRUE);
}

/* GPTBigCodeAttention, eager (_attn): c_attn, one nn.Linear of hidden +
 * 2 x kv heads x head_dim columns, split into the queries and key_value
 * (multi_query: [B, S, hidden] and [B, S, 2 x head_dim]; otherwise viewed
 * as [B, S, heads, 3 x head_dim], transposed and split per head); the
 * cache cat of key_value; key and value its two halves (views).  _attn:
 * multi_query reshapes the queries to [B, S x heads, head_dim] (a copy
 * when S > 1: the split's rows are hidden + 2 x head_dim apart) and runs
 * baddbmm(torch.empty, q, k^T, beta = 0, alpha = scale) as one batch per
 * sequence against the one key head; otherwise q and k reshape to [B x
 * heads, ...] (copies unless one sequence or a decode step).  Then, in
 * half precision with attention_softmax_in_fp32, upcast_masked_softmax
 * (TorchScript: to(float32), * unscale and where fused by NNC, softmax,
 * the cast back), else where(mask, w, mask_value) and softmax; the
 * module's 0-dim mask_value is made once and kept.  attn_dropout, p @ v
 * (multi_query: bmm against the one value head, already [B, S, hidden]),
 * the heads merged otherwise, c_proj, resid_dropout. */
static int
bigcode_attn (GsMb *b, int i, int x, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, S = b->seq, T = B * S, H = c->hidden;
  int64_t D = c->head_dim, KV = c->kv_heads;
  int64_t L = b->past + S;
  gboolean mq = c->multi_query;
  gs_mb_scope (b, i, "transformer.h.%d.attn", i);
  gs_mg_module (g);
  int qkv = gs_mg_linear (g, "c_attn", x, T, H, H + 2 * KV * D, -1, TRUE,
                          FALSE);
  gs_mg_host (g, GS_HOST_VIEW, mq ? 1 : 3);  /* (view, transpose,) split */
  int q = gs_mg_slice (g, qkv, T * H, mq ? H : D);
  int kv = gs_mg_slice (g, qkv, T * KV * 2 * D, 2 * D);
  kv = gs_mb_cache_cat (b, kv, KV, 2 * D);
  gs_mg_host (g, GS_HOST_VIEW, 2);           /* split, transpose */
  int k = gs_mg_slice (g, kv, B * KV * L * D, D);
  int v = gs_mg_slice (g, kv, B * KV * L * D, D);
  GsMbAttn a;
  attn_defaults (b, &a);
  a.kv_heads = KV;
  /* The slices' gradients are written into zeros of their sources. */
  a.q_view = a.k_view = a.v_view = FALSE;
  gs_mg_host (g, GS_HOST_PY, 10);            /* dtypes, scale, shapes */
  if (mq)
    {
      a.mq_bmm = TRUE;
      a.copy_q = a.copy_k = a.copy_v = FALSE;
      gs_mg_host (g, GS_HOST_VIEW, 1);
      if (S > 1 && g->opt.attn == GS_ATTN_EAGER)
        q = gs_mg_copy (g, "clone", GS_BW_PASS, q, T * c->heads, D);
    }
  a.baddbmm_empty = TRUE;
  a.causal_where = GS_MB_MASK_WHERE_KEPT;
  a.upcast_fused = c->softmax_fp32;
  a.softmax_fp32 = c->softmax_fp32;
  a.p_drop = c->p_attn;
  a.drop_module = TRUE;
  (void) mask;              /* where() reads it: the bool mask */
  int ctx = gs_mb_attention (b, &a, q, k, v);
  int o = gs_mg_linear (g, "c_proj", ctx, T, H, H, -1, TRUE, FALSE);
  return gs_mg_dropout (g, o, T, H, c->p_resid, TRUE);
}

static int
gpt2_mlp (GsMb *b, int i, int x)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "transformer.h.%d.mlp", i);
  gs_mg_module (g);
  gboolean conv1d = c->family == GS_HF_GPT2;   /* GPT-BigCode: nn.Linear */
  gs_mg_host (g, GS_HOST_PY, 3);
  int h = gs_mg_linear (g, "c_fc", x, T, H, c->ffn, -1, TRUE, conv1d);
  gs_mb_scope (b, i, "transformer.h.%d.mlp.act", i);
  h = gs_mb_act (b, c->act, h, T, c->ffn);
  gs_mb_scope (b, i, "transformer.h.%d.mlp", i);
  gs_mg_host (g, GS_HOST_PY, 3);
  h = gs_mg_linear (g, "c_proj", h, T, c->ffn, H, -1, TRUE, conv1d);
  return gs_mg_dropout (g, h, T, H, c->p_resid, TRUE);
}

static int
gpt2_block (GsMb *b, int i, int h, int mask)
{
  GsMg *g = b->g;
  int64_t T = b->batch * b->seq, H = b->cfg->hidden;
  gs_mb_scope (b, i, "transformer.h.%d", i);
  gs_mg_module (g);
  gs_mb_scope (b, i, "transformer.h.%d.ln_1", i);
  int x = gs_mg_layernorm (g, h, T, H);
  int a = b->cfg->family == GS_HF_GPT_BIGCODE ? bigcode_attn (b, i, x, mask)
                                              : gpt2_attn (b, i, x, mask);
  gs_mb_scope (b, i, "transformer.h.%d", i);
  h = gs_mg_pointwise (g, "add", GS_BW_PASS, a, h, T, H, 1, 0, FALSE);
  gs_mb_scope (b, i, "transformer.h.%d.ln_2", i);
  x = gs_mg_layernorm (g, h, T, H);
  int m = gpt2_mlp (b, i, x);
  gs_mb_scope (b, i, "transformer.h.%d", i);
  return gs_mg_pointwise (g, "add", GS_BW_PASS, h, m, T, H, 1, 0, FALSE);
}

/* GPT2Model's 2-D mask: m[:, None, None, :].to(dtype); (1 - m) * min. */
static int
gpt2_mask (GsMb *b)
{
  GsMg *g = b->g;
  int64_t B = b->batch, L = b->past + b->seq;
  gs_mg_host (g, GS_HOST_VIEW, 2);
  gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, B, L, 0, 0, FALSE);
  gs_mg_pointwise (g, "rsub", GS_BW_NONE, -1, -1, B, L, 1, 0, TRUE);
  return gs_mg_pointwise (g, "mul", GS_BW_NONE, -1, -1, B, L, 1, 0, TRUE);
}

/* GPTBigCodeModel's mask from generate()'s 2-D one: the causal buffer's
 * slice times attention_mask.view(B, 1, -1).to(bool), a bool [B, S, L]
 * that where() reads. */
static int
bigcode_mask (GsMb *b)
{
  GsMg *g = b->g;
  int64_t B = b->batch, S = b->seq, L = b->past + b->seq;
  gs_mg_host (g, GS_HOST_VIEW, 3);
  int m = gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, B, L, 0, 0,
                           FALSE);
  return gs_mg_pointwise (g, "mul", GS_BW_NONE, m, -1, B * S, L, 1, 0,
                          FALSE);
}

/* GPT2Model's and GPTNeoModel's start: wte and wpe; the position ids,
 * generate()'s from its mask, else an arange; VIEWS host views before the
 * parameters and after the arange (GPT-2's one, GPT-Neo's none).  Returns
 * the rows of position embeddings: every token's with generate(), else
 * one sequence's, broadcast over the batch. */
static int64_t
learned_positions (GsMb *b, int views, int *wte, int *wpe)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t H = c->hidden;
  gs_mb_scope (b, -1, "transformer");
  gs_mg_host (g, GS_HOST_PY, 12);
  gs_mg_host (g, GS_HOST_VIEW, views);
  *wte = gs_mg_param (g, (int64_t) c->vocab * H, H);
  *wpe = gs_mg_param (g, (int64_t) c->max_pos * H, H);
  if (b->generate)
    {
      gs_mb_generate_positions (b);
      return b->batch * b->seq;
    }
  gs_mg_fill (g, "arange", 1, b->seq);      /* position_ids */
  gs_mg_host (g, GS_HOST_VIEW, views);
  return b->seq;
}

/* GPT2LMHeadModel, and GPTBigCodeForCausalLM (learned positions, its own
 * attention and mask, nn.Linear projections, a tied head). */
GsMbOut
gs_mb_gpt2 (GsMb *b)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  int wte, wpe;
  int64_t pos_rows = learned_positions (b, 1, &wte, &wpe);
  int mask = g->opt.hf5 ? causal_mask_v5 (b)
             : !b->generate ? -1
             : c->family == GS_HF_GPT_BIGCODE ? bigcode_mask (b)
                                              : gpt2_mask (b);
  gs_mb_scope (b, -1, "transformer.wte");
  int e = gs_mg_embedding (g, wte, c->vocab, T, H);
  gs_mb_scope (b, -1, "transformer.wpe");
  int p = gs_mg_embedding (g, wpe, c->max_pos, pos_rows, H);
  gs_mb_scope (b, -1, "transformer");
  int h = gs_mg_pointwise (g, "add", pos_rows < T ? GS_BW_ADD_BCAST
                                                   : GS_BW_PASS,
                           e, p, T, H, 1, 0, FALSE);
  gs_mb_scope (b, -1, "transformer.drop");
  h = gs_mg_dropout (g, h, T, H, c->p_embd, TRUE);
  for (int i = 0; i < c->layers; i++)
    h = gpt2_block (b, i, h, mask);
  return layernorm_head (b, "transformer.ln_f", h, 1,
                         c->tie_embeddings ? wte : -1, FALSE);
}

/* -------------------------------------------------------------- GPT-Neo */

static int
neo_attn (GsMb *b, int i, int x, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "transformer.h.%d.attn.attention", i);
  gs_mg_module (g);
  gs_mg_module (g);
  int q = gs_mg_linear (g, "q_proj", x, T, H, H, -1, FALSE, FALSE);
  int k = gs_mg_linear (g, "k_proj", x, T, H, H, -1, FALSE, FALSE);
  int v = gs_mg_linear (g, "v_proj", x, T, H, H, -1, FALSE, FALSE);
  gs_mg_host (g, GS_HOST_VIEW, 6);
  k = gs_mb_cache_cat (b, k, c->heads, c->head_dim);
  v = gs_mb_cache_cat (b, v, c->heads, c->head_dim);
  GsMbAttn a;
  attn_defaults (b, &a);
  a.causal_where = GS_MB_MASK_WHERE;  /* bias buffer (local: windowed) */
  a.mask = mask;
  a.p_drop = c->p_attn;
  a.drop_module = TRUE;
  if (g->opt.dtype != GS_DTYPE_FP32)  /* query/key .to(torch.float32) */
    {
      int64_t n = b->batch * c->heads * b->seq;
      q = gs_mg_cast (g, q, n, c->head_dim);
      a.copy_q = FALSE;
    }
  gs_mg_host (g, GS_HOST_PY, 10);
  int ctx = gs_mb_attention (b, &a, q, k, v);
  int o = gs_mg_linear (g, "out_proj", ctx, T, H, H, -1, TRUE, FALSE);
  return gs_mg_dropout (g, o, T, H, c->p_resid, TRUE);
}

GsMbOut
gs_mb_gpt_neo (GsMb *b)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  int wte, wpe;
  int64_t pos_rows = learned_positions (b, 0, &wte, &wpe);
  gs_mb_scope (b, -1, "transformer.wte");
  int e = gs_mg_embedding (g, wte, c->vocab, T, H);
  gs_mb_scope (b, -1, "transformer.wpe");
  int p = gs_mg_embedding (g, wpe, c->max_pos, pos_rows, H);
  gs_mb_scope (b, -1, "transformer");
  /* 4.36 prepares a 4-D causal mask for the eager attention too. */
  int mask = gs_mb_causal_mask_4d (b, b->generate, 0);
  int h = gs_mg_pointwise (g, "add", pos_rows < T ? GS_BW_ADD_BCAST
                                                   : GS_BW_PASS,
                           e, p, T, H, 1, 0, FALSE);
  h = gs_mg_dropout (g, h, T, H, c->p_embd, TRUE);
  for (int i = 0; i < c->layers; i++)
    {
      gs_mb_scope (b, i, "transformer.h.%d.ln_1", i);
      int x = gs_mg_layernorm (g, h, T, H);
      int a = neo_attn (b, i, x, mask);
      gs_mb_scope (b, i, "transformer.h.%d", i);
      h = gs_mg_pointwise (g, "add", GS_BW_PASS, a, h, T, H, 1, 0, FALSE);
      gs_mb_scope (b, i, "transformer.h.%d.ln_2", i);
      x = gs_mg_layernorm (g, h, T, H);
      int m = linear_act_mlp (b, i, "transformer.h.%d.mlp", "c_fc",
                              "c_proj", x, TRUE);
      m = gs_mg_dropout (g, m, T, H, c->p_resid, TRUE);
      gs_mb_scope (b, i, "transformer.h.%d", i);
      h = gs_mg_pointwise (g, "add", GS_BW_PASS, h, m, T, H, 1, 0, FALSE);
    }
  return layernorm_head (b, "transformer.ln_f", h, 0, wte, FALSE);
}

/* ------------------------------------------------------------------ OPT */

int
gs_mb_opt_attention (GsMb *b, const GsMbOptAttn *o)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, S = o->encoder ? b->enc_seq : b->seq, T = B * S;
  int64_t H = c->hidden, D = c->head_dim, n = B * c->heads * S;
  gboolean bias = c->linear_bias, cross = o->kv >= 0;
  /* q_proj(h) * scaling; _shape(...) = view + transpose + contiguous, a
   * copy unless the projection holds one token per sequence. */
  int q = gs_mg_linear (g, "q_proj", o->x, T, H, H, -1, bias, FALSE);
  q = gs_mg_pointwise (g, "mul", GS_BW_SCALE, q, -1, T, H, 1, 0, TRUE);
  int64_t kv_tokens = cross ? o->kv_seq : S;
  int k, v;
  if (o->kv_cached)
    {
      /* past_key_values keeps every decoder layer's K and V of the
       * encoder output until the generation ends. */
      k = gs_mg_input (g, B * c->heads * kv_tokens * D, D);
      v = gs_mg_input (g, B * c->heads * kv_tokens * D, D);
      gs_mg_val (g, k)->cache = TRUE;
      gs_mg_val (g, v)->cache = TRUE;
    }
  else
    {
      int src = cross ? o->kv : o->x;
      int64_t rows = B * kv_tokens, kn = B * c->heads * kv_tokens;
      gboolean copy = kv_tokens > 1 || o->copy_one_token;
      k = gs_mg_linear (g, "k_proj", src, rows, H, H, -1, bias, FALSE);
      if (copy)
        k = gs_mg_copy (g, "contiguous", GS_BW_PASS, k, kn, D);
      v = gs_mg_linear (g, "v_proj", src, rows, H, H, -1, bias, FALSE);
      if (copy)
        v = gs_mg_copy (g, "contiguous", GS_BW_PASS, v, kn, D);
      if (!cross && !o->encoder)
        {
          k = gs_mb_cache_cat (b, k, c->heads, D);
          v = gs_mb_cache_cat (b, v, c->heads, D);
        }
    }
  if (S > 1)
    q = gs_mg_copy (g, "contiguous", GS_BW_PASS, q, n, D);
  gs_mg_host (g, GS_HOST_VIEW, 9);
  GsMbAttn a;
  attn_defaults (b, &a);
  if (cross || o->encoder)
    a.seq_k = kv_tokens;
  a.seq_q = S;
  a.causal = !cross && !o->encoder;
  a.copy_q = a.copy_k = a.copy_v = FALSE;
  a.q_view = a.k_view = a.v_view = FALSE;
  a.mask = o->mask;
  a.mask_per_query = o->mask_per_query;
  a.mask_max = o->mask >= 0 && c->family == GS_HF_OPT;
  a.softmax_fp32 = c->family == GS_HF_OPT && g->opt.dtype == GS_DTYPE_FP16;
  a.p_drop = c->p_attn;
  gs_mg_host (g, GS_HOST_PY, 10);
  int ctx = gs_mb_attention (b, &a, q, k, v);
  return gs_mg_linear (g, "out_proj", ctx, T, H, H, -1, bias, FALSE);
}

/* OPTAttention of transformers 5 (the module read in the 5 series'
 * source; not traced): q_proj(h) * scaling; k_proj and v_proj viewed and
 * transposed, then DynamicCache.update's torch.cat copies them contiguous
 * (as GPT-2's, traced); eager_attention_forward with scaling 1.0:
 * matmul (copying q's head-split view), * 1.0 (still a kernel), + the
 * [B, 1, S, S] mask, softmax(dtype=float32) and .to(query.dtype) (in bf16
 * a conversion, the softmax in fp32 and a conversion back; fp16 converts
 * inside the softmax kernel), dropout, matmul with v, the heads merged,
 * out_proj.  No torch.max, so no host-to-device copy of its scalar. */
static int
opt_attn_v5 (GsMb *b, int x, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gboolean bias = c->linear_bias;
  int q = gs_mg_linear (g, "q_proj", x, T, H, H, -1, bias, FALSE);
  q = gs_mg_pointwise (g, "mul", GS_BW_SCALE, q, -1, T, H, 1, 0, TRUE);
  gs_mg_host (g, GS_HOST_VIEW, 2);
  int k = gs_mg_linear (g, "k_proj", x, T, H, H, -1, bias, FALSE);
  gs_mg_host (g, GS_HOST_VIEW, 2);
  int v = gs_mg_linear (g, "v_proj", x, T, H, H, -1, bias, FALSE);
  gs_mg_host (g, GS_HOST_VIEW, 2);
  k = dynamic_cache_cat (b, k);
  v = dynamic_cache_cat (b, v);
  GsMbAttn a;
  attn_defaults (b, &a);
  a.copy_k = a.copy_v = FALSE;
  a.scale = GS_MB_SCALE_MUL;
  a.mask = mask;
  a.mask_per_query = TRUE;
  a.softmax_fp32 = TRUE;
  a.p_drop = c->p_attn;
  gs_mg_host (g, GS_HOST_PY, 10);
  int ctx = gs_mb_attention (b, &a, q, k, v);
  return gs_mg_linear (g, "out_proj", ctx, T, H, H, -1, bias, FALSE);
}

static int
opt_attn (GsMb *b, int i, int x, int mask)
{
  gs_mb_scope (b, i, "model.decoder.layers.%d.self_attn", i);
  gs_mg_module (b->g);
  if (b->g->opt.hf5)
    return opt_attn_v5 (b, x, mask);
  GsMbOptAttn o = { x, FALSE, -1, 0, FALSE, mask, FALSE, TRUE };
  return gs_mb_opt_attention (b, &o);
}

static int
opt_layer (GsMb *b, int i, int h, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "model.decoder.layers.%d", i);
  gs_mg_module (g);
  int x = h;
  if (c->pre_norm)
    {
      gs_mb_scope (b, i, "model.decoder.layers.%d.self_attn_layer_norm", i);
      x = gs_mg_layernorm (g, h, T, H);
    }
  int a = opt_attn (b, i, x, mask);
  gs_mb_scope (b, i, "model.decoder.layers.%d", i);
  a = gs_mg_dropout (g, a, T, H, c->p_resid, FALSE);
  h = gs_mg_pointwise (g, "add", GS_BW_PASS, h, a, T, H, 1, 0, FALSE);
  if (!c->pre_norm)
    {
      gs_mb_scope (b, i, "model.decoder.layers.%d.self_attn_layer_norm", i);
      h = gs_mg_layernorm (g, h, T, H);
    }
  x = h;
  if (c->pre_norm)
    {
      gs_mb_scope (b, i, "model.decoder.layers.%d.final_layer_norm", i);
      x = gs_mg_layernorm (g, h, T, H);
    }
  gs_mb_scope (b, i, "model.decoder.layers.%d", i);
  int m = gs_mg_linear (g, "fc1", x, T, H, c->ffn, -1, c->linear_bias,
                        FALSE);
  m = gs_mb_act (b, c->act, m, T, c->ffn);
  m = gs_mg_dropout (g, m, T, c->ffn, c->p_act, FALSE);
  m = gs_mg_linear (g, "fc2", m, T, c->ffn, H, -1, c->linear_bias, FALSE);
  m = gs_mg_dropout (g, m, T, H, c->p_resid, FALSE);
  h = gs_mg_pointwise (g, "add", GS_BW_PASS, h, m, T, H, 1, 0, FALSE);
  if (!c->pre_norm)
    {
      gs_mb_scope (b, i, "model.decoder.layers.%d.final_layer_norm", i);
      h = gs_mg_layernorm (g, h, T, H);
    }
  return h;
}

/* OPTLearnedPositionalEmbedding: positions from the mask's cumsum. */
static int
opt_positions (GsMb *b)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, L = b->past + b->seq;
  gs_mb_scope (b, -1, "model.decoder.embed_positions");
  gs_mg_module (g);
  gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, B, L, 0, 0, FALSE);
  gs_mg_pointwise (g, "cumsum", GS_BW_NONE, -1, -1, B, L, 1, 0, FALSE);
  gs_mg_pointwise (g, "mul", GS_BW_NONE, -1, -1, B, L, 1, 0, FALSE);
  gs_mg_pointwise (g, "sub", GS_BW_NONE, -1, -1, B, L, 1, 0, TRUE);
  gs_mg_host (g, GS_HOST_VIEW, 1);
  gs_mg_pointwise (g, "add", GS_BW_NONE, -1, -1, B, b->seq, 1, 0, TRUE);
  int table = gs_mg_param (g, (int64_t) (c->max_pos + 2) * c->hidden,
                           c->hidden);
  return gs_mg_embedding (g, table, c->max_pos + 2, B * b->seq, c->hidden);
}

GsMbOut
gs_mb_opt (GsMb *b)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, S = b->seq, T = B * S, H = c->hidden;
  int64_t P = c->proj_dim;
  gs_mb_scope (b, -1, "model.decoder");
  gs_mg_host (g, GS_HOST_PY, 14);
  int embed = gs_mg_param (g, (int64_t) c->vocab * P, P);
  gs_mb_scope (b, -1, "model.decoder.embed_tokens");
  int e = gs_mg_embedding (g, embed, c->vocab, T, P);
  gs_mb_scope (b, -1, "model.decoder");
  if (!b->generate)       /* attention_mask = torch.ones(B, L) */
    gs_mg_fill (g, "ones", B, b->past + S);
  int mask = g->opt.hf5 ? causal_mask_v5 (b)
                        : gs_mb_causal_mask_4d (b, TRUE, 0);
  int pos = opt_positions (b);
  gs_mb_scope (b, -1, "model.decoder");
  if (P != H)
    e = gs_mg_linear (g, "project_in", e, T, P, H, -1, FALSE, FALSE);
  int h = gs_mg_pointwise (g, "add", GS_BW_PASS, e, pos, T, H, 1, 0, FALSE);
  h = gs_mg_dropout (g, h, T, H, c->p_embd, FALSE);
  for (int i = 0; i < c->layers; i++)
    h = opt_layer (b, i, h, mask);
  if (c->pre_norm)
    {
      gs_mb_scope (b, -1, "model.decoder.final_layer_norm");
      h = gs_mg_layernorm (g, h, T, H);
    }
  if (P != H)
    {
      gs_mb_scope (b, -1, "model.decoder");
      h = gs_mg_linear (g, "project_out", h, T, H, P, -1, FALSE, FALSE);
    }
  /* The head maps P features (the tied embedding's width). */
  gs_mb_scope (b, -1, "lm_head");
  int logits = gs_mg_linear (g, NULL, h, T, P, c->vocab, embed, FALSE,
                             FALSE);
  gs_mg_val (g, logits)->keep = TRUE;
  return (GsMbOut) { logits, T, c->vocab };
}

/* ---------------------------------------------------------------- Llama */

/* torch.cat of the N tensors IN into ROWS x COLS (one kernel). */
static int
catn (GsMg *g, const int *in, int n, int64_t rows, int64_t cols)
{
  gs_mg_next_call (g);
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_COPY;
  op.name = (char *) "cat";
  op.dtype = g->opt.dtype;
  op.rows = rows;
  op.cols = cols;
  int r = gs_mg_add (g, &op, GS_BW_PASS, GS_HOST_OP, in, n, rows * cols,
                     cols);
  op.name = NULL;
  return r;
}

/* torch.cat((a, b), dim=-1) into ROWS x COLS. */
static int
cat2 (GsMg *g, int a, int b, int64_t rows, int64_t cols)
{
  int in[2] = { a, b };
  return catn (g, in, 2, rows, cols);
}

/* Dimensions of a head the rotary embedding turns. */
static int64_t
rotary_dims (const GsHfConfig *c)
{
  return c->rotary_dim > 0 ? c->rotary_dim : c->head_dim;
}

/* rotary_emb(v, seq_len): the cached cos/sin tables' first past + seq
 * rows (cast in half precision); then the cos[position_ids],
 * sin[position_ids] gathers of apply_rotary_pos_emb. */
static void
rotary_tables (GsMb *b, int *cos, int *sin)
{
  GsMg *g = b->g;
  int64_t L = b->past + b->seq, R = rotary_dims (b->cfg);
  gs_mg_module (g);
  gs_mg_host (g, GS_HOST_VIEW, 2);
  if (g->opt.dtype != GS_DTYPE_FP32)
    {
      gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, L, R, 0, 0, FALSE);
      gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, L, R, 0, 0, FALSE);
    }
  *cos = gs_mg_copy (g, "index", GS_BW_NONE, -1, b->seq, R);
  *sin = gs_mg_copy (g, "index", GS_BW_NONE, -1, b->seq, R);
}

/* The start of a rotary embedding module run once a forward (Gemma 3's,
 * DeepSeek-V2's) under SCOPE, under no_grad and autocast off:
 * position_ids.float() and inv_freq @ positions, a GEMM of depth 1.
 * LAYER: the layer whose module it is (Cohere's), or -1.
 * Returns the angles, [*ROWS positions, D / 2] in fp32: position_ids is
 * cache_position.unsqueeze(0), one row, where generate() passes one per
 * sequence. */
static int
rotary_angles (GsMb *b, int layer, const char *scope, int64_t D,
               int64_t *rows)
{
  GsMg *g = b->g;
  int64_t n = b->generate ? b->batch : 1;
  *rows = n * b->seq;
  gs_mb_scope (b, layer, "%s", scope);
  gs_mg_module (g);
  gs_mg_host (g, GS_HOST_VIEW, 4);
  int inv = gs_mg_input (g, D / 2, D / 2);
  int pos = gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, *rows, 1, 0,
                             0, FALSE);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  int f = gs_mg_matmul (g, "matmul", inv, pos, n, D / 2, b->seq, 1, FALSE,
                        FALSE, FALSE, FALSE);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  return f;
}

/* Gemma 3's rotary embedding module (Gemma3RotaryEmbedding, transformers
 * 4.50), run once a forward for all layers of its kind, under no_grad
 * and autocast off: position_ids.float(), inv_freq @ positions (a GEMM
 * of depth 1 over the positions' rows), cat((freqs, freqs)), cos, sin,
 * each times attention_scaling, then cast to the model's dtype: COS and
 * SIN, [rows of positions, head_dim]. */
static void
rotary_emb (GsMb *b, const char *name, int *cos, int *sin)
{
  GsMg *g = b->g;
  int64_t D = b->cfg->head_dim, rows;
  int f = rotary_angles (b, -1, name, D, &rows);
  int e = cat2 (g, f, f, rows, D);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  int t[2];
  static const char *const fn[2] = { "cos", "sin" };
  for (int j = 0; j < 2; j++)
    {
      t[j] = gs_mg_pointwise (g, fn[j], GS_BW_NONE, e, -1, rows, D, 1, 1,
                              FALSE);
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
    }
  for (int j = 0; j < 2; j++)
    {
      t[j] = gs_mg_pointwise (g, "mul", GS_BW_NONE, t[j], -1, rows, D, 1, 0,
                              TRUE);
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
    }
  if (g->opt.dtype != GS_DTYPE_FP32)
    for (int j = 0; j < 2; j++)
      t[j] = gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, t[j], -1, rows, D,
                              0, 0, FALSE);
  *cos = t[0];
  *sin = t[1];
}

/* DeepSeek-V2's rotary embedding module (Llama 4's, transformers 4.54),
 * run once a forward for every layer, under no_grad and autocast off:
 * position_ids.float(), inv_freq @ positions (a GEMM of depth 1 over the
 * positions' rows), ones_like, torch.polar (the cos and sin of each
 * angle), times attention_scaling.  Returns the complex64 table, [rows of
 * positions, qk_rope_head_dim / 2] complex numbers held as
 * qk_rope_head_dim floats a row; it is never cast to the model's dtype. */
static int
rotary_polar (GsMb *b, const char *name)
{
  GsMg *g = b->g;
  int64_t R = b->cfg->qk_rope_dim, rows;
  int f = rotary_angles (b, -1, name, R, &rows);
  gs_mg_host (g, GS_HOST_VIEW, 1);             /* transpose(1, 2) */
  gs_mg_fill (g, "ones_like", rows, R / 2);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  int t = gs_mg_pointwise (g, "polar", GS_BW_NONE, f, -1, rows, R, 1, 1,
                           FALSE);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  t = gs_mg_pointwise (g, "mul", GS_BW_NONE, t, -1, rows, R, 1, 0, TRUE);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  return t;
}

/* CohereRotaryEmbedding (transformers 4.40), run by layer I's attention
 * under no_grad and autocast off: position_ids.float(), inv_freq @
 * positions, transpose (a view), repeat_interleave(freqs, 2, dim=-1)
 * (unsqueeze, expand and one contiguous clone), cos, sin, all in fp32 and
 * not cast: COS and SIN, [rows of positions, head_dim]. */
static void
cohere_rotary_emb (GsMb *b, int i, int *cos, int *sin)
{
  GsMg *g = b->g;
  int64_t D = b->cfg->head_dim, rows;
  g_autofree char *scope =
    g_strdup_printf ("model.layers.%d.self_attn.rotary_emb", i);
  int f = rotary_angles (b, i, scope, D, &rows);
  gs_mg_host (g, GS_HOST_VIEW, 4);        /* transpose, unsqueeze, expand */
  int e = gs_mg_copy (g, "clone", GS_BW_NONE, f, rows, D);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  *cos = gs_mg_pointwise (g, "cos", GS_BW_NONE, e, -1, rows, D, 1, 1, FALSE);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  *sin = gs_mg_pointwise (g, "sin", GS_BW_NONE, e, -1, rows, D, 1, 1, FALSE);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  gs_mb_scope (b, i, "model.layers.%d.self_attn", i);
}

/* DeepSeek-V2's apply_rotary_emb on the query's rotary parts (Q, HEADS
 * heads) and the key's one head (K), R dimensions each: both in fp32
 * first (.float(): a copy each below fp32), viewed as complex pairs, each
 * times the table FREQS (a complex multiply: three operations per float),
 * viewed back and cast to the model's dtype (type_as), q then k. */
static void
rotary_complex (GsMb *b, int *q, int *k, int64_t heads, int64_t R,
                int freqs)
{
  GsMg *g = b->g;
  gboolean cast = g->opt.dtype != GS_DTYPE_FP32
                  && g->opt.dtype != GS_DTYPE_TF32;
  int64_t rows[2] = { b->batch * heads * b->seq, b->batch * b->seq };
  int *x[2] = { q, k };
  gs_mg_host (g, GS_HOST_PY, 1);
  gs_mg_host (g, GS_HOST_VIEW, 4);             /* reshape, view_as_complex */
  for (int j = 0; j < 2 && cast; j++)
    {
      *x[j] = gs_mg_cast (g, *x[j], rows[j], R);
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
    }
  gs_mg_host (g, GS_HOST_VIEW, 1);             /* freqs_cis.unsqueeze(1) */
  for (int j = 0; j < 2; j++)
    {
      *x[j] = gs_mg_pointwise (g, "mul", GS_BW_MUL, *x[j], freqs, rows[j], R,
                               3, 0, FALSE);
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
      gs_mg_host (g, GS_HOST_VIEW, 2);         /* view_as_real, flatten */
      if (cast)
        *x[j] = gs_mg_cast (g, *x[j], rows[j], R);
    }
}

static gboolean
half (const GsMg *g)
{
  return g->opt.dtype == GS_DTYPE_FP16 || g->opt.dtype == GS_DTYPE_BF16;
}

/* The op just added writes fp32 in a half-precision run when FP32
 * (Cohere's upcast rotary; GPT-J's products with its fp32 sin/cos
 * tables). */
static void
promoted (GsMb *b, gboolean fp32)
{
  if (fp32 && half (b->g))
    gs_mg_last (b->g)->op.dtype = GS_DTYPE_FP32;
}

/* apply_rotary_pos_emb for one of q/k: x * cos + rotate_half(x) * sin,
 * rotate_half = cat(-x2, x1).  A partial rotary embedding (Phi-3's
 * partial_rotary_factor) turns x[..., :R] and concatenates x[..., R:]
 * after it; StableLM concatenates the rest even when it is empty (a copy
 * of the turned part).  Cohere's (4.40) runs in fp32: x.float() first
 * (a copy below fp32), rotate_half as stack([-x[..., 1::2], x[..., ::2]],
 * -1).flatten(-2) (strided halves; the stack one kernel), the result cast
 * back to the model's dtype.  GPT-J's rotate_every_two stacks
 * -x[..., 1::2] and x[..., ::2] pairwise (one stack kernel, then a view),
 * and its fp32 tables make the products and their sum fp32. */
static int
rotary_part (GsMb *b, int x, int64_t heads, int64_t D, int64_t R, int cos,
             int sin)
{
  GsMg *g = b->g;
  int64_t rows = b->batch * heads * b->seq;
  gboolean up = b->cfg->cohere;            /* every op in fp32 */
  gboolean gptj = b->cfg->family == GS_HF_GPTJ;
  gboolean products = up || gptj;          /* the products and their sum */
  if (up && half (g))
    {
      x = gs_mg_cast (g, x, rows, D);
      promoted (b, up);
    }
  int xr = R < D ? gs_mg_slice (g, x, rows * R, R) : x;
  int xc = gs_mg_pointwise (g, "mul", GS_BW_MUL, xr, cos, rows, R, 1, 0,
                            FALSE);
  promoted (b, products);
  int x1 = gs_mg_slice (g, xr, rows * R / 2, R / 2);
  int x2 = gs_mg_slice (g, xr, rows * R / 2, R / 2);
  int nx2 = gs_mg_pointwise (g, "neg", GS_BW_SCALE, x2, -1, rows, R / 2, 1,
                             0, FALSE);
  promoted (b, up);
  int r = cat2 (g, nx2, x1, rows, R);
  promoted (b, up);
  if (gptj)
    {
      GsMgNode *n = gs_mg_last (g);
      g_free (n->op.name);
      n->op.name = g_strdup ("stack");
    }
  int rs = gs_mg_pointwise (g, "mul", GS_BW_MUL, r, sin, rows, R, 1, 0,
                            FALSE);
  promoted (b, products);
  int e = gs_mg_pointwise (g, "add", GS_BW_PASS, xc, rs, rows, R, 1, 0,
                           FALSE);
  promoted (b, products);
  if (up && half (g))     /* .to(dtype=dtype) */
    return gs_mg_cast (g, e, rows, D);
  if (R < D || b->cfg->stablelm)
    e = cat2 (g, e, gs_mg_slice (g, x, rows * (D - R), D - R), rows, D);
  return e;
}

static int
rotary (GsMb *b, int x, int64_t heads, int cos, int sin)
{
  return rotary_part (b, x, heads, b->cfg->head_dim, rotary_dims (b->cfg),
                      cos, sin);
}

/* The sliding window of Llama-family layer I (0: none). */
static int64_t
layer_window (const GsHfConfig *c, int i)
{
  return c->window > 0 && (c->local == NULL || c->local[i]) ? c->window : 0;
}

/* The layer's norm: Llama's RMSNorm, Gemma's ((1 + weight) in fp32),
 * OLMo 2's (the weight before the cast back), StableLM's and StarCoder2's
 * LayerNorm or Cohere's. */
static int
llama_norm (GsMb *b, int x, int64_t rows, int64_t cols)
{
  const GsHfConfig *c = b->cfg;
  if (c->stablelm || c->starcoder2)
    return gs_mg_layernorm (b->g, x, rows, cols);
  if (c->cohere)
    return gs_mb_cohere_layernorm (b, x, rows, cols, cols);
  if (c->post_norm)
    return gs_mb_olmo2_rmsnorm (b, x, rows, cols);
  return c->gemma ? gs_mb_gemma_rmsnorm (b, x, rows, cols)
                  : gs_mb_rmsnorm (b, x, rows, cols);
}

/* StableLmLayerNormPerHead (q_layernorm, k_layernorm; NAME) over X, the
 * [B, HEADS, S, D] head-split view of a projection in layer I:
 * torch.split into heads (views), each head through its own LayerNorm
 * (no bias), which first copies its slice contiguous (one head of a
 * transposed view is strided unless it holds a single token), then
 * torch.cat of the heads. */
static int
head_layernorm (GsMb *b, int i, const char *name, int x, int64_t heads)
{
  GsMg *g = b->g;
  int64_t D = b->cfg->head_dim, rows = b->batch * b->seq;
  gs_mb_scope (b, i, "model.layers.%d.self_attn.%s", i, name);
  gs_mg_module (g);
  gs_mg_host (g, GS_HOST_PY, 2);               /* split, the list */
  int *out = g_new (int, heads);
  for (int64_t h = 0; h < heads; h++)
    {
      int s = gs_mg_slice (g, x, rows * D, D);
      gs_mb_scope (b, i, "model.layers.%d.self_attn.%s.norms.%d", i, name,
                   (int) h);
      gs_mg_module (g);
      if (rows > 1)
        s = gs_mg_copy (g, "contiguous", GS_BW_PASS, s, rows, D);
      out[h] = gs_mg_layernorm_nobias (g, s, rows, D);
    }
  gs_mb_scope (b, i, "model.layers.%d.self_attn.%s", i, name);
  int y = catn (g, out, (int) heads, rows * heads, D);
  g_free (out);
  gs_mb_scope (b, i, "model.layers.%d.self_attn", i);
  return y;
}

/* ROPE: the cos and sin tables the model computed once for this layer
 * (Gemma 3's, OLMo 2's, Granite's), or NULL for the layer's own
 * (Llama's 4.36 gathers, Mistral's as StarCoder2 4.39 runs them, Cohere's
 * per-layer module). */
static int
llama_attn (GsMb *b, int i, int x, int mask, const int *rope)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden, D = c->head_dim;
  int64_t KV = c->kv_heads, L = b->past + b->seq;
  /* Gemma-2's sliding layers keep the last window tokens in their cache
   * (HybridCache), so a decode step attends to at most that many. */
  int64_t window = layer_window (c, i);
  gboolean local_cache = c->sandwich_norm && window > 0;
  gboolean bias = c->linear_bias;
  gs_mb_scope (b, i, "model.layers.%d.self_attn", i);
  gs_mg_module (g);
  int q, k, v;
  if (c->fused_qkv)
    {
      /* Phi-3: one projection, then qkv[..., :q_pos], [q_pos:k_end],
       * [k_end:] as views. */
      int qkv = gs_mg_linear (g, "qkv_proj", x, T, H, (c->heads + 2 * KV) * D,
                              -1, FALSE, FALSE);
      gs_mg_host (g, GS_HOST_PY, 2);
      q = gs_mg_slice (g, qkv, T * c->heads * D, c->heads * D);
      k = gs_mg_slice (g, qkv, T * KV * D, KV * D);
      v = gs_mg_slice (g, qkv, T * KV * D, KV * D);
    }
  else
    {
      /* Qwen3: q_norm over each head, before the transpose; OLMo 2: over
       * the whole projection. */
      gboolean qwen3_norm = c->qk_norm && !c->gemma3 && !c->post_norm
                            && !c->cohere;
      q = gs_mg_linear (g, "q_proj", x, T, H, c->heads * D, -1, bias, FALSE);
      if (qwen3_norm)
        q = gs_mb_rmsnorm (b, q, T * c->heads, D);
      if (c->post_norm)
        {
          gs_mb_scope (b, i, "model.layers.%d.self_attn.q_norm", i);
          q = gs_mb_olmo2_rmsnorm (b, q, T, c->heads * D);
          gs_mb_scope (b, i, "model.layers.%d.self_attn", i);
        }
      k = gs_mg_linear (g, "k_proj", x, T, H, KV * D, -1, bias, FALSE);
      if (qwen3_norm)
        k = gs_mb_rmsnorm (b, k, T * KV, D);
      if (c->post_norm)
        {
          gs_mb_scope (b, i, "model.layers.%d.self_attn.k_norm", i);
          k = gs_mb_olmo2_rmsnorm (b, k, T, KV * D);
          gs_mb_scope (b, i, "model.layers.%d.self_attn", i);
        }
      v = gs_mg_linear (g, "v_proj", x, T, H, KV * D, -1, bias, FALSE);
    }
  if (c->cohere && c->qk_norm)
    {
      /* Cohere's use_qk_norm: q_norm and k_norm over each head of the
       * [B, S, heads, D] views (contiguous), weights [heads, D]. */
      gs_mb_scope (b, i, "model.layers.%d.self_attn.q_norm", i);
      q = gs_mb_cohere_layernorm (b, q, T * c->heads, D, c->heads * D);
      gs_mb_scope (b, i, "model.layers.%d.self_attn.k_norm", i);
      k = gs_mb_cohere_layernorm (b, k, T * KV, D, KV * D);
      gs_mb_scope (b, i, "model.layers.%d.self_attn", i);
    }
  if (c->gemma3)
    {
      /* Gemma 3: q_norm(q.view().transpose()), then k_norm, Gemma's
       * RMSNorm over each head's D features (the transposed views keep
       * their strides through it). */
      gs_mb_scope (b, i, "model.layers.%d.self_attn.q_norm", i);
      q = gs_mb_gemma_rmsnorm (b, q, T * c->heads, D);
      gs_mb_scope (b, i, "model.layers.%d.self_attn.k_norm", i);
      k = gs_mb_gemma_rmsnorm (b, k, T * KV, D);
      gs_mb_scope (b, i, "model.layers.%d.self_attn", i);
    }
  gs_mg_host (g, GS_HOST_VIEW, 6);
  if (g->opt.training)
    {
      q = gs_mg_view_bw_copy (g, q);
      k = gs_mg_view_bw_copy (g, k);
    }
  if (c->head_layernorm)
    {
      q = head_layernorm (b, i, "q_layernorm", q, c->heads);
      k = head_layernorm (b, i, "k_layernorm", k, KV);
    }
  int cos, sin;
  if (rope != NULL)
    {
      cos = rope[0];
      sin = rope[1];
    }
  else if (c->cohere)
    cohere_rotary_emb (b, i, &cos, &sin);
  else
    rotary_tables (b, &cos, &sin);
  q = rotary (b, q, c->heads, cos, sin);
  k = rotary (b, k, KV, cos, sin);
  GsMbAttn a;
  attn_defaults (b, &a);
  if (local_cache)
    {
      k = gs_mb_cache_window (b, k, KV, D, window);
      v = gs_mb_cache_window (b, v, KV, D, window);
      a.seq_k = MIN (L, MAX (window, b->seq));
    }
  else
    {
      k = gs_mb_cache_cat (b, k, KV, D);
      v = gs_mb_cache_cat (b, v, KV, D);
    }
  a.q_view = a.k_view = FALSE;    /* handled above, before the rotary */
  a.copy_k = b->past == 0;        /* rotary output keeps q/k's layout */
  a.scale = c->scale_mul ? GS_MB_SCALE_MUL : GS_MB_SCALE_DIV;
  a.softcap = c->attn_softcap;
  a.window = window;
  a.drop_module = c->stablelm;      /* StableLM's nn.Dropout */
  int ctx = masked_fp32_attention (b, &a, mask, q, k, v);
  int o = gs_mg_linear (g, "o_proj", ctx, T, c->heads * D, H, -1, c->o_bias,
                        FALSE);
  if (c->starcoder2)    /* F.dropout(attn_output, residual_dropout) */
    o = gs_mg_dropout (g, o, T, H, c->p_resid, FALSE);
  return o;
}

/* DeepseekV3Attention and DeepseekV2Attention (multi-head latent
 * attention), heads of D =
 * qk_nope + qk_rope for the scores and Dv for the values.  q: q_a_proj,
 * q_a_layernorm, q_b_proj (or one q_proj), viewed per head and split into
 * its nope and rotary parts (views).  kv_a_proj_with_mqa to the latent and
 * one rotary key head, split (views); the latent through kv_a_layernorm and
 * kv_b_proj to every head's key (nope part) and value, split (views).  The
 * rotary parts (rope_interleave: each first viewed as pairs and
 * transposed, a copy) turned as Llama's, or (DeepSeek-V2) as complex
 * numbers by the table FREQS; the key's one head expanded to
 * every head (a view); q and k each concatenated from their parts.  The
 * cache holds these per-head keys and values, not the latent.  Eager
 * attention scales the scores by a multiply (qk_head_dim^-0.5). */
static int
deepseek_attn (GsMb *b, int i, int x, int mask, int freqs)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden, NH = c->heads;
  int64_t D = c->head_dim, Dn = c->qk_nope_dim, Dr = c->qk_rope_dim;
  int64_t Dv = c->v_head_dim, R = c->kv_lora_rank, Q = c->q_lora_rank;
  gboolean bias = c->linear_bias;
  gs_mb_scope (b, i, "model.layers.%d.self_attn", i);
  gs_mg_module (g);
  int q;
  if (Q > 0)
    {
      q = gs_mg_linear (g, "q_a_proj", x, T, H, Q, -1, bias, FALSE);
      gs_mb_scope (b, i, "model.layers.%d.self_attn.q_a_layernorm", i);
      q = gs_mb_rmsnorm (b, q, T, Q);
      gs_mb_scope (b, i, "model.layers.%d.self_attn", i);
      q = gs_mg_linear (g, "q_b_proj", q, T, Q, NH * D, -1, FALSE, FALSE);
    }
  else
    q = gs_mg_linear (g, "q_proj", x, T, H, NH * D, -1, FALSE, FALSE);
  gs_mg_host (g, GS_HOST_VIEW, 3);
  int q_pass = gs_mg_slice (g, q, T * NH * Dn, Dn);
  int q_rot = gs_mg_slice (g, q, T * NH * Dr, Dr);
  int kv = gs_mg_linear (g, "kv_a_proj_with_mqa", x, T, H, R + Dr, -1, bias,
                         FALSE);
  gs_mg_host (g, GS_HOST_VIEW, 1);
  int latent = gs_mg_slice (g, kv, T * R, R);
  int k_rot = gs_mg_slice (g, kv, T * Dr, Dr);
  gs_mb_scope (b, i, "model.layers.%d.self_attn.kv_a_layernorm", i);
  latent = gs_mb_rmsnorm (b, latent, T, R);
  gs_mb_scope (b, i, "model.layers.%d.self_attn", i);
  int kvb = gs_mg_linear (g, "kv_b_proj", latent, T, R, NH * (Dn + Dv), -1,
                          FALSE, FALSE);
  gs_mg_host (g, GS_HOST_VIEW, 4);
  int k_pass = gs_mg_slice (g, kvb, T * NH * Dn, Dn);
  int v = gs_mg_slice (g, kvb, T * NH * Dv, Dv);
  if (c->rope_complex)
    rotary_complex (b, &q_rot, &k_rot, NH, Dr, freqs);
  else
    {
      int cos, sin;
      rotary_tables (b, &cos, &sin);
      if (c->rope_interleave)
        {
          /* view(b, h, s, d / 2, 2).transpose(4, 3).reshape(b, h, s, d) */
          gs_mg_host (g, GS_HOST_VIEW, 4);
          q_rot = gs_mg_copy (g, "clone", GS_BW_PASS, q_rot, T * NH, Dr);
          k_rot = gs_mg_copy (g, "clone", GS_BW_PASS, k_rot, T, Dr);
        }
      q_rot = rotary_part (b, q_rot, NH, Dr, Dr, cos, sin);
      k_rot = rotary_part (b, k_rot, 1, Dr, Dr, cos, sin);
    }
  gs_mg_host (g, GS_HOST_VIEW, 1);           /* k_rot.expand */
  q = cat2 (g, q_pass, q_rot, T * NH, D);
  int k = cat2 (g, k_pass, k_rot, T * NH, D);
  k = gs_mb_cache_cat (b, k, NH, D);
  v = gs_mb_cache_cat (b, v, NH, Dv);
  GsMbAttn a;
  attn_defaults (b, &a);
  a.v_head_dim = Dv;
  /* torch.cat makes q and k contiguous: matmul copies neither; the value
   * is a head-split view of kv_b_proj's output (a cached one is not). */
  a.q_view = a.k_view = FALSE;
  a.copy_q = a.copy_k = FALSE;
  a.scale = GS_MB_SCALE_MUL;
  int ctx = masked_fp32_attention (b, &a, mask, q, k, v);
  return gs_mg_linear (g, "o_proj", ctx, T, NH * Dv, H, -1, c->o_bias,
                       FALSE);
}

static int
llama_mlp (GsMb *b, int i, int x)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  if (c->deepseek && gs_hf_layer_sparse (c, i, FALSE))
    {
      gs_mb_scope (b, i, "model.layers.%d.mlp", i);
      return gs_mb_deepseek_moe (b, x, T, H);
    }
  if (gs_hf_layer_sparse (c, i, FALSE))
    {
      gs_mb_scope (b, i, c->qwen_moe ? "model.layers.%d.mlp"
                                     : "model.layers.%d.block_sparse_moe", i);
      return gs_mb_mixtral_moe (b, x, T, H);
    }
  if (c->starcoder2)
    {
      /* Starcoder2MLP: c_fc, act, c_proj, F.dropout(residual_dropout). */
      int m = linear_act_mlp (b, i, "model.layers.%d.mlp", "c_fc", "c_proj",
                              x, c->mlp_bias);
      return gs_mg_dropout (g, m, T, H, c->p_resid, FALSE);
    }
  gs_mb_scope (b, i, "model.layers.%d.mlp", i);
  gs_mg_module (g);
  if (c->fused_qkv)
    {
      /* Phi-3: gate, up = gate_up_proj(x).chunk(2); up * act(gate). */
      int gu = gs_mg_linear (g, "gate_up_proj", x, T, H, 2 * c->ffn, -1,
                             FALSE, FALSE);
      int p[2];
      gs_mg_split (g, gu, 2, p);
      int a = gs_mb_act (b, c->act, p[0], T, c->ffn);
      int m = gs_mg_pointwise (g, "mul", GS_BW_MUL, p[1], a, T, c->ffn, 1, 0,
                               FALSE);
      return gs_mg_linear (g, "down_proj", m, T, c->ffn, H, -1, FALSE,
                           FALSE);
    }
  gboolean bias = c->mlp_bias;
  int gate = gs_mg_linear (g, "gate_proj", x, T, H, c->ffn, -1, bias, FALSE);
  int a = gs_mb_act (b, c->act, gate, T, c->ffn);
  int up = gs_mg_linear (g, "up_proj", x, T, H, c->ffn, -1, bias, FALSE);
  int m = gs_mg_pointwise (g, "mul", GS_BW_MUL, a, up, T, c->ffn, 1, 0,
                           FALSE);
  return gs_mg_linear (g, "down_proj", m, T, c->ffn, H, -1, bias, FALSE);
}

/* Gemma2DecoderLayer on a sliding layer with a 4-D mask (any attention
 * but flash_attention_2, which takes the window itself): ones_like(mask,
 * bool), tril(diagonal=-window), where(sliding, min, mask), over the
 * mask's [B, 1, S, L]. */
static int
gemma2_sliding_mask (GsMb *b, int mask)
{
  GsMg *g = b->g;
  int64_t rows = b->batch * b->seq, L = b->past + b->seq;
  gs_mg_host (g, GS_HOST_PY, 2);
  gs_mg_fill (g, "ones_like", rows, L);
  gs_mg_pointwise (g, "tril", GS_BW_NONE, -1, -1, rows, L, 1, 0, FALSE);
  return gs_mg_pointwise (g, "where", GS_BW_NONE, mask, -1, rows, L, 1, 0,
                          FALSE);
}

/* The start of a rotary model's forward under SCOPE: its Python, the
 * token embedding's weight (returned) and the position ids (generate()'s,
 * or an arange with VIEWS views of it). */
static int
model_start (GsMb *b, const char *scope, int views)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  gs_mb_scope (b, -1, scope);
  gs_mg_host (g, GS_HOST_PY, 12);
  int embed = gs_mg_param (g, (int64_t) c->vocab * c->hidden, c->hidden);
  if (b->generate)
    gs_mb_generate_positions (b);
  else
    {
      gs_mg_fill (g, "arange", 1, b->seq);     /* position_ids */
      gs_mg_host (g, GS_HOST_VIEW, views);
    }
  return embed;
}

/* The token embeddings under EMBED_SCOPE, then the embedding dropout
 * module under DROP_SCOPE (GPT-NeoX's, Phi's, GPT-J's). */
static int
embed_dropout (GsMb *b, int embed, const char *embed_scope,
               const char *drop_scope)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, -1, embed_scope);
  int h = gs_mg_embedding (g, embed, c->vocab, T, H);
  gs_mb_scope (b, -1, drop_scope);
  return gs_mg_dropout (g, h, T, H, c->p_embd, TRUE);
}

/* The residual add after a sublayer's output Y: h + y, Granite's
 * h + y * residual_multiplier (a Python float). */
static int
residual_add (GsMb *b, int h, int y)
{
  GsMg *g = b->g;
  int64_t T = b->batch * b->seq, H = b->cfg->hidden;
  if (b->cfg->granite)
    y = gs_mg_pointwise (g, "mul", GS_BW_SCALE, y, -1, T, H, 1, 0, TRUE);
  return gs_mg_pointwise (g, "add", GS_BW_PASS, h, y, T, H, 1, 0, FALSE);
}

GsMbOut
gs_mb_llama (GsMb *b)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  int embed = model_start (b, "model", 2);
  gs_mb_scope (b, -1, "model.embed_tokens");
  int h = gs_mg_embedding (g, embed, c->vocab, T, H);
  if (c->gemma3)
    {
      /* Gemma3TextScaledWordEmbedding: * embed_scale, a 0-dim buffer on
       * the GPU in the model's dtype. */
      h = gs_mg_pointwise (g, "mul", GS_BW_SCALE, h, -1, T, H, 1, 0, TRUE);
    }
  gs_mb_scope (b, -1, "model");
  if (c->granite)     /* inputs_embeds * embedding_multiplier */
    h = gs_mg_pointwise (g, "mul", GS_BW_SCALE, h, -1, T, H, 1, 0, TRUE);
  /* The mask converter's sliding window: every layer's (Mistral's,
   * Phi-3's), not Gemma-2's, whose layers build their own. */
  int mask = gs_mb_causal_mask_4d (b, b->generate,
                                   c->local == NULL ? c->window : 0);
  if (c->starcoder2)    /* F.dropout(inputs_embeds, embedding_dropout) */
    h = gs_mg_dropout (g, h, T, H, c->p_embd, FALSE);
  /* Gemma 3: the global layers' table (rope_theta, rope_scaling), then
   * the sliding layers' (rope_local_base_freq); OLMo 2 (transformers
   * 4.47) and Granite (4.45): Llama's one table a forward. */
  int rope[2][2];
  int freqs = -1;
  gboolean model_rope = c->gemma3 || c->post_norm || c->granite;
  if (c->rope_complex)
    {
      freqs = rotary_polar (b, "model.rotary_emb");
      gs_mb_scope (b, -1, "model");
    }
  else if (model_rope)
    {
      rotary_emb (b, "model.rotary_emb", &rope[0][0], &rope[0][1]);
      if (c->gemma3)
        rotary_emb (b, "model.rotary_emb_local", &rope[1][0], &rope[1][1]);
      gs_mb_scope (b, -1, "model");
    }
  else if (c->gemma)
    {
      /* hidden_states * torch.tensor(hidden_size ** 0.5): a 0-dim CPU
       * tensor, a scalar to the kernel. */
      gs_mg_host (g, GS_HOST_PY, 1);
      h = gs_mg_pointwise (g, "mul", GS_BW_SCALE, h, -1, T, H, 1, 0, TRUE);
    }
  gboolean hf_flash = g->opt.attn == GS_ATTN_FLASH2 && !g->opt.sdpa;
  for (int i = 0; i < c->layers; i++)
    {
      gs_mb_scope (b, i, "model.layers.%d", i);
      gs_mg_module (g);
      int layer_mask = mask;
      if (c->sandwich_norm && layer_window (c, i) > 0 && mask >= 0
          && !hf_flash)
        layer_mask = gemma2_sliding_mask (b, mask);
      int x = h;
      if (!c->post_norm)    /* OLMo 2 has no input norms */
        {
          gs_mb_scope (b, i, "model.layers.%d.input_layernorm", i);
          x = llama_norm (b, h, T, H);
        }
      int a = c->deepseek
              ? deepseek_attn (b, i, x, layer_mask, freqs)
              : llama_attn (b, i, x, layer_mask,
                            model_rope ? rope[layer_window (c, i) > 0]
                                       : NULL);
      if (c->sandwich_norm || c->post_norm)
        {
          gs_mb_scope (b, i, "model.layers.%d.post_attention_layernorm", i);
          a = llama_norm (b, a, T, H);
        }
      if (c->parallel_residual)
        {
          /* StableLM: residual + attn(ln1(x)) + dropout(mlp(ln1(x)));
           * Cohere: residual + attn(ln(x)) + mlp(ln(x)). */
          int m = llama_mlp (b, i, x);
          gs_mb_scope (b, i, "model.layers.%d", i);
          if (c->stablelm)
            m = gs_mg_dropout (g, m, T, H, c->p_resid, TRUE);
          h = gs_mg_pointwise (g, "add", GS_BW_PASS, h, a, T, H, 1, 0,
                               FALSE);
          h = gs_mg_pointwise (g, "add", GS_BW_PASS, h, m, T, H, 1, 0,
                               FALSE);
          continue;
        }
      gs_mb_scope (b, i, "model.layers.%d", i);
      if (c->fused_qkv)   /* Phi-3's resid_attn_dropout */
        a = gs_mg_dropout (g, a, T, H, c->p_resid, TRUE);
      h = residual_add (b, h, a);
      x = h;
      if (!c->post_norm)
        {
          gs_mb_scope (b, i, c->sandwich_norm
                             ? "model.layers.%d.pre_feedforward_layernorm"
                             : "model.layers.%d.post_attention_layernorm",
                       i);
          x = llama_norm (b, h, T, H);
        }
      int m = llama_mlp (b, i, x);
      if (c->sandwich_norm || c->post_norm)
        {
          gs_mb_scope (b, i, "model.layers.%d.post_feedforward_layernorm",
                       i);
          m = llama_norm (b, m, T, H);
        }
      gs_mb_scope (b, i, "model.layers.%d", i);
      /* Phi-3's resid_mlp_dropout; StableLM's dropout (hidden_dropout). */
      if (c->fused_qkv || c->stablelm)
        m = gs_mg_dropout (g, m, T, H, c->p_resid, TRUE);
      h = residual_add (b, h, m);
    }
  gs_mb_scope (b, -1, "model.norm");
  h = llama_norm (b, h, T, H);
  /* Gemma3ForCausalLM (4.50), Olmo2ForCausalLM (4.47), GraniteForCausalLM
   * (4.45) and StableLmForCausalLM (4.40) leave the logits in the
   * model's dtype when no labels are given. */
  return lm_head (b, h, c->tie_embeddings ? embed : -1,
                  !(c->gemma3 || model_rope || c->stablelm));
}

/* ------------------------------------------------------------- GPT-NeoX */

/* GPTNeoXAttention (transformers 4.36): query_key_value, viewed as
 * [B, S, heads, 3 x head_dim] and sliced per head into q, k, v (views);
 * the rotary embedding over the first rotary_ndims of q and k, the rest
 * concatenated after it; _attn: zeros, baddbmm(zeros, q, k^T, alpha =
 * head_dim^-0.5), where(causal buffer, w, mask value copied from the host),
 * + the 2-D mask when given, softmax in the scores' dtype, dropout,
 * matmul with v; heads merged; dense. */
static int
neox_attn (GsMb *b, int i, int x, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden, D = c->head_dim;
  int64_t n = T * c->heads * D;
  gs_mb_scope (b, i, "gpt_neox.layers.%d.attention", i);
  gs_mg_module (g);
  int qkv = gs_mg_linear (g, "query_key_value", x, T, H, 3 * H, -1,
                          c->linear_bias, FALSE);
  gs_mg_host (g, GS_HOST_PY, 4);
  int q = gs_mg_slice (g, qkv, n, D);
  int k = gs_mg_slice (g, qkv, n, D);
  int v = gs_mg_slice (g, qkv, n, D);
  gs_mg_host (g, GS_HOST_VIEW, 7);   /* permutes, rot/pass slices */
  int cos, sin;
  rotary_tables (b, &cos, &sin);
  q = rotary (b, q, c->heads, cos, sin);
  k = rotary (b, k, c->heads, cos, sin);
  k = gs_mb_cache_cat (b, k, c->heads, D);
  v = gs_mb_cache_cat (b, v, c->heads, D);
  GsMbAttn a;
  attn_defaults (b, &a);
  /* q and k are the cats' contiguous outputs; the slices' gradients are
   * written into a zero tensor of qkv's size, so no view needs a copy. */
  a.q_view = a.k_view = a.v_view = FALSE;
  a.copy_q = a.copy_k = FALSE;
  a.baddbmm = TRUE;
  a.causal_where = GS_MB_MASK_WHERE_SYNC;
  a.mask = mask;
  a.p_drop = c->p_attn;
  a.drop_module = TRUE;
  gs_mg_host (g, GS_HOST_PY, 8);
  int ctx = gs_mb_attention (b, &a, q, k, v);
  return gs_mg_linear (g, "dense", ctx, T, H, H, -1, c->linear_bias, FALSE);
}

static int
neox_mlp (GsMb *b, int i, int x)
{
  return linear_act_mlp (b, i, "gpt_neox.layers.%d.mlp", "dense_h_to_4h",
                         "dense_4h_to_h", x, TRUE);
}

GsMbOut
gs_mb_gpt_neox (GsMb *b)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  int embed = model_start (b, "gpt_neox", 1);
  /* The 2-D mask generate() passes: (1 - m[:, None, None, :]) * min. */
  int mask = b->generate ? gpt2_mask (b) : -1;
  int h = embed_dropout (b, embed, "gpt_neox.embed_in",
                         "gpt_neox.emb_dropout");
  for (int i = 0; i < c->layers; i++)
    {
      gs_mb_scope (b, i, "gpt_neox.layers.%d", i);
      gs_mg_module (g);
      gs_mb_scope (b, i, "gpt_neox.layers.%d.input_layernorm", i);
      int x = gs_mg_layernorm (g, h, T, H);
      int a = neox_attn (b, i, x, mask);
      gs_mb_scope (b, i, "gpt_neox.layers.%d", i);
      a = gs_mg_dropout (g, a, T, H, c->p_resid, TRUE);
      /* parallel_residual: x + attn(ln1(x)) + mlp(ln2(x)), both branches
       * reading x; otherwise the MLP reads the residual sum y = x +
       * attn(ln1(x)) and y + mlp(ln2(y)) is the output. */
      if (!c->parallel_residual)
        h = a = gs_mg_pointwise (g, "add", GS_BW_PASS, a, h, T, H, 1, 0,
                                 FALSE);
      gs_mb_scope (b, i, "gpt_neox.layers.%d.post_attention_layernorm", i);
      x = gs_mg_layernorm (g, h, T, H);
      int m = neox_mlp (b, i, x);
      gs_mb_scope (b, i, "gpt_neox.layers.%d", i);
      m = gs_mg_dropout (g, m, T, H, c->p_resid, TRUE);
      m = gs_mg_pointwise (g, "add", GS_BW_PASS, m, a, T, H, 1, 0, FALSE);
      h = !c->parallel_residual ? m
          : gs_mg_pointwise (g, "add", GS_BW_PASS, m, h, T, H, 1, 0, FALSE);
    }
  gs_mb_scope (b, -1, "gpt_neox.final_layer_norm");
  h = gs_mg_layernorm (g, h, T, H);
  /* embed_out: no bias, no .float() of the logits. */
  gs_mb_scope (b, -1, "embed_out");
  int logits = gs_mg_linear (g, NULL, h, T, H, c->vocab,
                             c->tie_embeddings ? embed : -1, FALSE, FALSE);
  gs_mg_val (g, logits)->keep = TRUE;
  return (GsMbOut) { logits, T, c->vocab };
}

/* --------------------------------------------------------------- Falcon */

/* FalconLinear (transformers 4.36): input @ weight.T, then + bias as a
 * kernel of its own (Falcon was trained with the two unfused). */
static int
falcon_linear (GsMb *b, const char *name, int x, int64_t rows, int64_t k,
               int64_t n)
{
  GsMg *g = b->g;
  int y = gs_mg_linear (g, name, x, rows, k, n, -1, FALSE, FALSE);
  if (!b->cfg->linear_bias)
    return y;
  int bias = gs_mg_param (g, n, n);
  return gs_mg_pointwise (g, "add", GS_BW_ADD_BCAST, y, bias, rows, n, 1, 0,
                          FALSE);
}

/* FalconAttention, eager (transformers 4.36, attn_implementation "eager";
 * not ALiBi): query_key_value, then _split_heads --
 *   new_decoder_architecture: viewed as [B, S, kv_heads, heads / kv_heads
 *     + 2, D]; the queries a slice, the key and the value gathered with a
 *     list index ([[-2]], [[-1]]) and broadcast to every query head of
 *     their group; flatten(2, 3) cannot view any of the three, so each is
 *     copied to [B, S, heads, D];
 *   multi_query: viewed as [B, S, heads + 2, D]; the queries a slice, the
 *     one key and value head gathered ([[-2]], [[-1]]);
 *   otherwise: viewed as [B, S, heads, 3, D], q, k, v per-head slices;
 * transposed to [B, heads, S, D] (reshape to the same shape: a view); the
 * rotary embedding on q and k (Llama's); the cache cat; q @ k^T (matmul
 * copies q and k when their batch dims cannot merge, and expands multi-
 * query's one K/V head to every query head with a copy when there is more
 * than one sequence); /= sqrt(D); + the 4-D mask; softmax in the hidden
 * dtype; no dropout; @ v; view, permute, reshape (a copy); dense. */
static int
falcon_attn (GsMb *b, int i, int x, int alibi, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, T = B * b->seq, H = c->hidden, D = c->head_dim;
  int64_t NH = c->heads, KV = c->kv_heads;
  gs_mb_scope (b, i, "transformer.h.%d.self_attention", i);
  gs_mg_module (g);
  int qkv = falcon_linear (b, "query_key_value", x, T, H, (NH + 2 * KV) * D);
  gs_mg_host (g, GS_HOST_PY, 4);
  int q, k, v;
  if (c->new_decoder)
    {
      q = gs_mg_slice (g, qkv, T * NH * D, D);
      k = gs_mg_copy (g, "index", GS_BW_GATHER, qkv, T * KV, D);
      v = gs_mg_copy (g, "index", GS_BW_GATHER, qkv, T * KV, D);
      gs_mg_host (g, GS_HOST_VIEW, 3);          /* broadcast_to */
      q = gs_mg_copy (g, "clone", GS_BW_PASS, q, T * NH, D);
      k = gs_mg_copy (g, "clone", GS_BW_EXPAND, k, T * NH, D);
      v = gs_mg_copy (g, "clone", GS_BW_EXPAND, v, T * NH, D);
      KV = NH;                 /* the heads are expanded from here on */
    }
  else if (c->multi_query)
    {
      q = gs_mg_slice (g, qkv, T * NH * D, D);
      k = gs_mg_copy (g, "index", GS_BW_GATHER, qkv, T, D);
      v = gs_mg_copy (g, "index", GS_BW_GATHER, qkv, T, D);
    }
  else
    {
      q = gs_mg_slice (g, qkv, T * NH * D, D);
      k = gs_mg_slice (g, qkv, T * NH * D, D);
      v = gs_mg_slice (g, qkv, T * NH * D, D);
    }
  gs_mg_host (g, GS_HOST_VIEW, 6);   /* transposes and reshapes */
  if (alibi < 0)
    {
      int cos, sin;
      rotary_tables (b, &cos, &sin);
      q = rotary (b, q, NH, cos, sin);
      k = rotary (b, k, KV, cos, sin);
    }
  k = gs_mb_cache_cat (b, k, KV, D);
  v = gs_mb_cache_cat (b, v, KV, D);
  GsMbAttn a;
  attn_defaults (b, &a);
  a.kv_heads = KV;
  /* No view's gradient needs a reshape copy: the slices' and gathers'
   * gradients are written into zeros of qkv's size. */
  a.q_view = a.k_view = a.v_view = FALSE;
  if (KV < NH && g->opt.attn == GS_ATTN_EAGER)
    {
      /* No repeat_kv: matmul's expand + reshape of the one K/V head is a
       * view (batch stride 0) for one sequence and copies it for every
       * query head otherwise, prefill or decode step. */
      a.kv_heads = NH;
      a.copy_k = a.copy_v = TRUE;
    }
  a.scale = GS_MB_SCALE_DIV;
  a.mask = mask;
  a.mask_per_query = TRUE;
  if (alibi >= 0)
    {
      /* scores in fp32, + alibi, *= 1/sqrt(D), + mask, softmax(dtype=
       * hidden dtype), attention_dropout. */
      a.scale = GS_MB_SCALE_NONE;
      a.alibi = alibi;
      a.upcast = GS_MB_UPCAST_HALF;
      a.p_drop = c->p_attn;
      a.drop_module = TRUE;
    }
  gs_mg_host (g, GS_HOST_PY, 6);
  int ctx = gs_mb_attention (b, &a, q, k, v);
  return falcon_linear (b, "dense", ctx, T, H, H);
}

static int
falcon_mlp (GsMb *b, int i, int x)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "transformer.h.%d.mlp", i);
  gs_mg_module (g);
  int h = falcon_linear (b, "dense_h_to_4h", x, T, H, c->ffn);
  h = gs_mb_act (b, c->act, h, T, c->ffn);
  return falcon_linear (b, "dense_4h_to_h", h, T, c->ffn, H);
}

/* FalconDecoderLayer: new_decoder_architecture: ln_attn(x) and ln_mlp(x),
 * attention and MLP on them; parallel_attn: one input_layernorm feeds
 * both; then mlp += attn, dropout_add(mlp, x).  Otherwise
 * input_layernorm, attention, dropout_add(attn, x) (with
 * attention_dropout), post_attention_layernorm, MLP, dropout_add. */
static int
falcon_layer (GsMb *b, int i, int h, int alibi, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "transformer.h.%d", i);
  gs_mg_module (g);
  int xa, xm = -1;
  if (c->new_decoder)
    {
      gs_mb_scope (b, i, "transformer.h.%d.ln_attn", i);
      xa = gs_mg_layernorm (g, h, T, H);
      gs_mb_scope (b, i, "transformer.h.%d.ln_mlp", i);
      xm = gs_mg_layernorm (g, h, T, H);
    }
  else
    {
      gs_mb_scope (b, i, "transformer.h.%d.input_layernorm", i);
      xa = gs_mg_layernorm (g, h, T, H);
      if (c->parallel_residual)
        xm = xa;
    }
  int a = falcon_attn (b, i, xa, alibi, mask);
  gs_mb_scope (b, i, "transformer.h.%d", i);
  if (!c->parallel_residual)
    {
      a = gs_mg_dropout (g, a, T, H, c->p_attn, FALSE);
      h = gs_mg_pointwise (g, "add", GS_BW_PASS, h, a, T, H, 1, 0, FALSE);
      gs_mb_scope (b, i, "transformer.h.%d.post_attention_layernorm", i);
      xm = gs_mg_layernorm (g, h, T, H);
    }
  int m = falcon_mlp (b, i, xm);
  gs_mb_scope (b, i, "transformer.h.%d", i);
  if (c->parallel_residual)          /* mlp_output += attention_output */
    m = gs_mg_pointwise (g, "add_", GS_BW_PASS, m, a, T, H, 1, 0, FALSE);
  m = gs_mg_dropout (g, m, T, H, c->p_resid, FALSE);
  return gs_mg_pointwise (g, "add", GS_BW_PASS, h, m, T, H, 1, 0, FALSE);
}

GsMbOut
gs_mb_falcon (GsMb *b)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, -1, "transformer");
  gs_mg_host (g, GS_HOST_PY, 12);
  int embed = gs_mg_param (g, (int64_t) c->vocab * H, H);
  /* generate() makes position ids for the rotary models only. */
  if (b->generate && !c->alibi)
    gs_mb_generate_positions (b);
  gs_mb_scope (b, -1, "transformer.word_embeddings");
  int h = gs_mg_embedding (g, embed, c->vocab, T, H);
  gs_mb_scope (b, -1, "transformer");
  int alibi = -1;
  if (c->alibi)
    {
      /* build_alibi_tensor from the 2-D mask, or torch.ones((B, L),
       * dtype=torch.long) without one. */
      if (!b->generate)
        gs_mg_fill (g, "ones", b->batch, b->past + b->seq);
      alibi = gs_mb_alibi (b, c->heads);
    }
  else if (!b->generate)
    {
      gs_mg_fill (g, "arange", 1, b->seq);     /* position_ids */
      gs_mg_host (g, GS_HOST_VIEW, 1);
    }
  /* _prepare_4d_causal_attention_mask, as Llama's. */
  int mask = gs_mb_causal_mask_4d (b, b->generate, 0);
  for (int i = 0; i < c->layers; i++)
    h = falcon_layer (b, i, h, alibi, mask);
  /* lm_head: no bias, no .float() of the logits. */
  return layernorm_head (b, "transformer.ln_f", h, 0,
                         c->tie_embeddings ? embed : -1, FALSE);
}

/* ------------------------------------------------------------------ Phi */

/* PhiAttention, eager (transformers 4.37): q_proj, k_proj, v_proj with
 * bias; qk_layernorm: a LayerNorm over each head of q and of k (on the
 * transposed views, which it copies contiguous first when S > 1); the
 * rotary tables (Llama's, over the rotary part), q and k each sliced into
 * a rotary part, turned, and concatenated with the rest (with a
 * partial_rotary_factor of 1 the rest is empty and the cat copies the
 * whole head); the cache cat; repeat_kv; q and k cast to fp32 (in half
 * precision) for q @ k^T / sqrt(d) and the mask; softmax in fp32, cast to
 * the values' dtype; dropout; @ v; heads merged; dense. */
static int
phi_attn (GsMb *b, int i, int x, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden, D = c->head_dim;
  int64_t NH = c->heads, KV = c->kv_heads;
  gs_mb_scope (b, i, "model.layers.%d.self_attn", i);
  gs_mg_module (g);
  int q = gs_mg_linear (g, "q_proj", x, T, H, NH * D, -1, TRUE, FALSE);
  int k = gs_mg_linear (g, "k_proj", x, T, H, KV * D, -1, TRUE, FALSE);
  int v = gs_mg_linear (g, "v_proj", x, T, H, KV * D, -1, TRUE, FALSE);
  gs_mg_host (g, GS_HOST_VIEW, 6);
  if (g->opt.training)
    {
      q = gs_mg_view_bw_copy (g, q);
      k = gs_mg_view_bw_copy (g, k);
    }
  if (c->qk_norm)
    {
      static const char *const name[2] = { "q_layernorm", "k_layernorm" };
      int *t[2] = { &q, &k };
      int64_t heads[2] = { NH, KV };
      for (int j = 0; j < 2; j++)
        {
          gs_mb_scope (b, i, "model.layers.%d.self_attn.%s", i, name[j]);
          if (b->seq > 1)
            *t[j] = gs_mg_copy (g, "contiguous", GS_BW_PASS, *t[j],
                                T * heads[j], D);
          *t[j] = gs_mg_layernorm (g, *t[j], T * heads[j], D);
        }
      gs_mb_scope (b, i, "model.layers.%d.self_attn", i);
    }
  /* q[..., :R], q[..., R:], k's the same; both rotary parts turned,
   * then cat((rot, pass)) for q and for k (with an empty pass a copy all
   * the same). */
  int64_t R = rotary_dims (c);
  int part[2][2] = { { q, -1 }, { k, -1 } };
  int64_t rows[2] = { T * NH, T * KV };
  gs_mg_host (g, GS_HOST_VIEW, 4);
  for (int j = 0; j < 2 && R < D; j++)
    {
      int whole = part[j][0];
      part[j][0] = gs_mg_slice (g, whole, rows[j] * R, R);
      part[j][1] = gs_mg_slice (g, whole, rows[j] * (D - R), D - R);
    }
  int cos, sin;
  rotary_tables (b, &cos, &sin);
  for (int j = 0; j < 2; j++)
    part[j][0] = rotary_part (b, part[j][0], j == 0 ? NH : KV, R, R, cos,
                              sin);
  for (int j = 0; j < 2; j++)
    part[j][0] = R < D ? cat2 (g, part[j][0], part[j][1], rows[j], D)
                       : gs_mg_copy (g, "cat", GS_BW_PASS, part[j][0],
                                     rows[j], D);
  q = part[0][0];
  k = part[1][0];
  k = gs_mb_cache_cat (b, k, KV, D);
  v = gs_mb_cache_cat (b, v, KV, D);
  GsMbAttn a;
  attn_defaults (b, &a);
  /* q and k are the cats' contiguous outputs. */
  a.q_view = a.k_view = FALSE;
  a.copy_q = a.copy_k = FALSE;
  a.qk_fp32 = TRUE;
  a.scale = GS_MB_SCALE_DIV;
  int ctx = masked_fp32_attention (b, &a, mask, q, k, v);
  return gs_mg_linear (g, "dense", ctx, T, NH * D, H, -1, TRUE, FALSE);
}

/* PhiDecoderLayer: input_layernorm; the attention and the MLP (fc1,
 * hidden_act, fc2) both on its output; resid_dropout on each; attn + mlp
 * + residual. */
static int
phi_layer (GsMb *b, int i, int h, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "model.layers.%d", i);
  gs_mg_module (g);
  gs_mb_scope (b, i, "model.layers.%d.input_layernorm", i);
  int x = gs_mg_layernorm (g, h, T, H);
  int a = phi_attn (b, i, x, mask);
  gs_mb_scope (b, i, "model.layers.%d", i);
  a = gs_mg_dropout (g, a, T, H, c->p_resid, TRUE);
  int m = linear_act_mlp (b, i, "model.layers.%d.mlp", "fc1", "fc2", x,
                          TRUE);
  gs_mb_scope (b, i, "model.layers.%d", i);
  m = gs_mg_dropout (g, m, T, H, c->p_resid, TRUE);
  a = gs_mg_pointwise (g, "add", GS_BW_PASS, a, m, T, H, 1, 0, FALSE);
  return gs_mg_pointwise (g, "add", GS_BW_PASS, a, h, T, H, 1, 0, FALSE);
}

/* PhiForCausalLM (transformers 4.37): position ids, embed_tokens,
 * embed_dropout, the 4-D causal mask, the layers, final_layernorm,
 * lm_head with bias, logits.float(). */
GsMbOut
gs_mb_phi (GsMb *b)
{
  const GsHfConfig *c = b->cfg;
  int embed = model_start (b, "model", 1);
  int h = embed_dropout (b, embed, "model.embed_tokens",
                         "model.embed_dropout");
  gs_mb_scope (b, -1, "model");
  int mask = gs_mb_causal_mask_4d (b, b->generate, 0);
  for (int i = 0; i < c->layers; i++)
    h = phi_layer (b, i, h, mask);
  return layernorm_head (b, "model.final_layernorm", h, 0,
                         c->tie_embeddings ? embed : -1, TRUE);
}

/* ---------------------------------------------------------------- BLOOM */

/* BloomGelu: bloom_gelu_forward's Python expression x * 0.5 * (1.0 +
 * torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x))), nine kernels in
 * evaluation order.  In training GeLUFunction runs the same nine under
 * its forward (no autograd inside) and differentiates them with its own
 * backward formula (GS_BW_BLOOM_GELU). */
static int
bloom_gelu (GsMb *b, int x, int64_t rows, int64_t cols)
{
  GsMg *g = b->g;
  gboolean fn = g->opt.training;
  GsBwRule scale = fn ? GS_BW_NONE : GS_BW_SCALE;
  GsBwRule mul = fn ? GS_BW_NONE : GS_BW_MUL;
  GsBwRule pass = fn ? GS_BW_NONE : GS_BW_PASS;
  gs_mg_module (g);
  if (fn)
    gs_mg_host (g, GS_HOST_PY, 2);   /* GeLUFunction.apply, save_for_backward */
  int half = gs_mg_pointwise (g, "mul", scale, x, -1, rows, cols, 1, 0, TRUE);
  int u = gs_mg_pointwise (g, "mul", scale, x, -1, rows, cols, 1, 0, TRUE);
  int w = gs_mg_pointwise (g, "mul", scale, x, -1, rows, cols, 1, 0, TRUE);
  w = gs_mg_pointwise (g, "mul", mul, w, x, rows, cols, 1, 0, FALSE);
  w = gs_mg_pointwise (g, "add", pass, w, -1, rows, cols, 1, 0, TRUE);
  u = gs_mg_pointwise (g, "mul", mul, u, w, rows, cols, 1, 0, FALSE);
  int t = fn ? gs_mg_pointwise (g, "tanh", GS_BW_NONE, u, -1, rows, cols, 8,
                                2, FALSE)
             : gs_mg_unary (g, "tanh", u, rows, cols, 8, 2, "tanh_backward");
  t = gs_mg_pointwise (g, "add", pass, t, -1, rows, cols, 1, 0, TRUE);
  int y = gs_mg_pointwise (g, "mul", mul, half, t, rows, cols, 1, 0, FALSE);
  if (!fn)
    return y;
  /* The Function's output: y's storage (in[0]), x saved for backward. */
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_KIND_COUNT;
  op.rows = rows;
  op.cols = cols;
  int in[2] = { y, x };
  return gs_mg_add (g, &op, GS_BW_BLOOM_GELU, GS_HOST_NONE, in, 2,
                    rows * cols, cols);
}

/* BloomAttention (transformers 4.36; eager is its only attention):
 * query_key_value, viewed as [B, S, heads, 3, D] and sliced per head
 * (views); q.transpose(1, 2).reshape(B*H, S, D), k.permute(0, 2, 3,
 * 1).reshape(B*H, D, S), v likewise: copies when B > 1 and S > 1 (one
 * sequence, or one token, merges the dims); the cache's cats;
 * alibi.baddbmm(q, k, beta=1, alpha=1/sqrt(D)); fp16 scores .to(float);
 * masked_fill with the bool mask; softmax(dtype=float32) and .to(dtype);
 * attention_dropout; bmm with v; _merge_heads (view, permute, reshape: a
 * copy when S > 1); dense. */
static int
bloom_attn (GsMb *b, int i, int x, int alibi, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, T = B * b->seq, H = c->hidden, D = c->head_dim;
  int64_t n = T * c->heads * D;
  gs_mb_scope (b, i, "transformer.h.%d.self_attention", i);
  gs_mg_module (g);
  gs_mg_host (g, GS_HOST_PY, 2);     /* alibi.to(hidden_states.device) */
  int qkv = gs_mg_linear (g, "query_key_value", x, T, H, 3 * H, -1, TRUE,
                          FALSE);
  gs_mg_host (g, GS_HOST_PY, 3);
  int q = gs_mg_slice (g, qkv, n, D);
  int k = gs_mg_slice (g, qkv, n, D);
  int v = gs_mg_slice (g, qkv, n, D);
  gs_mg_host (g, GS_HOST_VIEW, 4);   /* view, three selects */
  int qkv3[3] = { q, k, v };
  for (int j = 0; j < 3; j++)
    {
      gs_mg_host (g, GS_HOST_VIEW, 1);   /* transpose or permute */
      if (B > 1 && b->seq > 1)
        qkv3[j] = gs_mg_copy (g, "clone", GS_BW_PASS, qkv3[j], n / D, D);
      else
        gs_mg_host (g, GS_HOST_VIEW, 1);
    }
  q = qkv3[0];
  k = gs_mb_cache_cat (b, qkv3[1], c->heads, D);
  v = gs_mb_cache_cat (b, qkv3[2], c->heads, D);
  GsMbAttn a;
  attn_defaults (b, &a);
  /* The reshapes above made q, k and v what bmm takes; the slices'
   * gradients are written into zeros of qkv's size. */
  a.q_view = a.k_view = a.v_view = FALSE;
  a.copy_q = a.copy_k = a.copy_v = FALSE;
  a.baddbmm = TRUE;
  a.alibi = alibi;
  a.upcast = GS_MB_UPCAST_FP16;
  a.mask = mask;
  a.mask_fill = TRUE;
  a.mask_per_query = TRUE;
  a.softmax_fp32 = TRUE;
  a.p_drop = c->p_attn;
  a.drop_module = TRUE;
  gs_mg_host (g, GS_HOST_PY, 8);
  int ctx = gs_mb_attention (b, &a, q, k, v);
  return gs_mg_linear (g, "dense", ctx, T, H, H, -1, TRUE, FALSE);
}

/* BloomBlock: input_layernorm; the attention, then dropout_add(attn,
 * residual, hidden_dropout) (F.dropout: a kernel only in training with
 * p > 0); post_attention_layernorm; the MLP (dense_h_to_4h, BloomGelu,
 * dense_4h_to_h), dropout_add.  The residual is the layer norm's input,
 * or its output with apply_residual_connection_post_layernorm. */
static int
bloom_block (GsMb *b, int i, int h, int alibi, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "transformer.h.%d", i);
  gs_mg_module (g);
  gs_mb_scope (b, i, "transformer.h.%d.input_layernorm", i);
  int x = gs_mg_layernorm (g, h, T, H);
  int res = c->post_ln_residual ? x : h;
  int a = bloom_attn (b, i, x, alibi, mask);
  a = gs_mg_dropout (g, a, T, H, c->p_resid, FALSE);
  h = gs_mg_pointwise (g, "add", GS_BW_PASS, res, a, T, H, 1, 0, FALSE);
  gs_mb_scope (b, i, "transformer.h.%d.post_attention_layernorm", i);
  x = gs_mg_layernorm (g, h, T, H);
  res = c->post_ln_residual ? x : h;
  gs_mb_scope (b, i, "transformer.h.%d.mlp", i);
  gs_mg_module (g);
  int m = gs_mg_linear (g, "dense_h_to_4h", x, T, H, c->ffn, -1, TRUE,
                        FALSE);
  gs_mb_scope (b, i, "transformer.h.%d.mlp.gelu_impl", i);
  m = bloom_gelu (b, m, T, c->ffn);
  gs_mb_scope (b, i, "transformer.h.%d.mlp", i);
  m = gs_mg_linear (g, "dense_4h_to_h", m, T, c->ffn, H, -1, TRUE, FALSE);
  m = gs_mg_dropout (g, m, T, H, c->p_resid, FALSE);
  return gs_mg_pointwise (g, "add", GS_BW_PASS, res, m, T, H, 1, 0, FALSE);
}

/* BloomForCausalLM (transformers 4.36): word_embeddings,
 * word_embeddings_layernorm; without an attention mask torch.ones((B,
 * L)); build_alibi_tensor once a forward; the 4-D mask of
 * _prepare_4d_causal_attention_mask from that 2-D mask, then .bool();
 * the blocks; ln_f; lm_head tied to the embedding (no bias, no .float()).
 * No position ids: generate() passes none. */
GsMbOut
gs_mb_bloom (GsMb *b)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, S = b->seq, T = B * S, H = c->hidden;
  int64_t L = b->past + S;
  gs_mb_scope (b, -1, "transformer");
  gs_mg_host (g, GS_HOST_PY, 14);
  int embed = gs_mg_param (g, (int64_t) c->vocab * H, H);
  gs_mb_scope (b, -1, "transformer.word_embeddings");
  int h = gs_mg_embedding (g, embed, c->vocab, T, H);
  gs_mb_scope (b, -1, "transformer.word_embeddings_layernorm");
  h = gs_mg_layernorm (g, h, T, H);
  gs_mb_scope (b, -1, "transformer");
  if (!b->generate)
    {
      gs_mg_fill (g, "ones", B, L);
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
    }
  int alibi = gs_mb_alibi (b, c->heads);
  int mask = gs_mb_causal_mask_4d (b, TRUE, 0);
  mask = gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, mask, -1, B * S, L, 0,
                          0, FALSE);
  for (int i = 0; i < c->layers; i++)
    h = bloom_block (b, i, h, alibi, mask);
  return layernorm_head (b, "transformer.ln_f", h, 0,
                         c->tie_embeddings ? embed : -1, FALSE);
}

/* ---------------------------------------------------------------- GPT-J */

/* GPTJAttention (transformers 4.36, eager; its only attention):
 * q_proj, k_proj, v_proj without bias, viewed as [B, S, heads, D] (v
 * permuted); each layer gathers its sin/cos rows: embed_positions (an
 * fp32 [n_positions, rotary_dim] attribute, not a buffer: never cast)
 * .repeat(P, 1, 1), position_ids.unsqueeze(-1).repeat(1, 1, R), gather,
 * split (views).  k's and then q's first rotary_dim dimensions turned:
 * repeat_interleave(2) of sin and of cos (PyTorch 2.1: expand and one
 * contiguous clone each), x * cos, rotate_every_two (neg, stack), * sin,
 * add, all fp32 from the fp32 tables; then cat with the rest (fp32).
 * The cache's cats; with use_cache the keys cast back to the model's
 * dtype for the cache.  _attn: query.to(float32) and key.to(float32)
 * (no-ops: already fp32), q @ k^T in fp32 (matmul's copies of them
 * fp32), where(causal buffer, w, mask value copied from the host: the
 * host waits), / scale_attn (a CPU 0-dim tensor: a scalar), + the 2-D
 * mask when generate() passes one, softmax in fp32, .to(value.dtype),
 * attn_dropout, @ v; heads merged; out_proj (no bias); resid_dropout. */
static int
gptj_attn (GsMb *b, int i, int x, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, S = b->seq, T = B * S, H = c->hidden;
  int64_t D = c->head_dim, NH = c->heads, rows = T * NH;
  int64_t R = rotary_dims (c), P = b->generate ? B : 1;
  gs_mb_scope (b, i, "transformer.h.%d.attn", i);
  gs_mg_module (g);
  int q = gs_mg_linear (g, "q_proj", x, T, H, H, -1, FALSE, FALSE);
  int k = gs_mg_linear (g, "k_proj", x, T, H, H, -1, FALSE, FALSE);
  int v = gs_mg_linear (g, "v_proj", x, T, H, H, -1, FALSE, FALSE);
  gs_mg_host (g, GS_HOST_VIEW, 4);       /* three views, v's permute */
  gs_mg_host (g, GS_HOST_PY, 3);         /* device check, shapes */
  int table = gs_mg_input (g, (int64_t) c->max_pos * R, R);
  table = gs_mg_copy (g, "repeat", GS_BW_NONE, table, P * c->max_pos, R);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  gs_mg_host (g, GS_HOST_VIEW, 1);       /* unsqueeze */
  gs_mg_copy (g, "repeat", GS_BW_NONE, -1, P * S, R);
  int sincos = gs_mg_copy (g, "gather", GS_BW_NONE, table, P * S, R);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  gs_mg_host (g, GS_HOST_VIEW, 2);       /* split */
  int sin = gs_mg_slice (g, sincos, P * S * R / 2, R / 2);
  int cos = gs_mg_slice (g, sincos, P * S * R / 2, R / 2);
  gboolean cat = c->rotary_dim > 0;
  int part[2][2] = { { k, -1 }, { q, -1 } };
  if (cat)
    {
      gs_mg_host (g, GS_HOST_VIEW, 4);   /* the rot and pass slices */
      for (int j = 0; j < 2; j++)
        {
          int whole = part[j][0];
          part[j][0] = gs_mg_slice (g, whole, rows * R, R);
          part[j][1] = gs_mg_slice (g, whole, rows * (D - R), D - R);
        }
    }
  for (int j = 0; j < 2; j++)
    {
      gs_mg_host (g, GS_HOST_VIEW, 2);   /* sin/cos[:, :, None, :] */
      int s2 = gs_mg_copy (g, "clone", GS_BW_NONE, sin, P * S, R);
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
      int c2 = gs_mg_copy (g, "clone", GS_BW_NONE, cos, P * S, R);
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
      gs_mg_host (g, GS_HOST_VIEW, 4);   /* ::2, 1::2, flatten, views */
      part[j][0] = rotary_part (b, part[j][0], NH, R, R, c2, s2);
    }
  for (int j = 0; j < 2 && cat; j++)
    {
      part[j][0] = cat2 (g, part[j][0], part[j][1], rows, D);
      promoted (b, TRUE);
    }
  k = part[0][0];
  q = part[1][0];
  gs_mg_host (g, GS_HOST_VIEW, 2);       /* the permutes */
  k = gs_mb_cache_cat (b, k, NH, D);
  if (b->past > 0)                       /* cat(fp16 past, fp32 key) */
    promoted (b, TRUE);
  v = gs_mb_cache_cat (b, v, NH, D);
  if (c->use_cache && half (g))
    {
      /* present = (key.to(hidden_states.dtype), value) */
      int kc = gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, k, -1,
                                gs_mg_val (g, k)->elems / D, D, 0, 0, FALSE);
      gs_mg_val (g, kc)->keep = TRUE;
    }
  GsMbAttn a;
  attn_defaults (b, &a);
  /* q and k are the cats' contiguous [B, S, heads, D] outputs, permuted:
   * matmul copies them (in fp32); their gradients need no reshape copy. */
  a.q_view = a.k_view = FALSE;
  a.qk_fp32 = a.qk_fp32_in = TRUE;
  a.causal_where = GS_MB_MASK_WHERE_SYNC;
  a.where_first = TRUE;
  a.scale = GS_MB_SCALE_DIV;
  a.mask = mask;
  a.softmax_fp32 = TRUE;
  a.p_drop = c->p_attn;
  a.drop_module = TRUE;
  gs_mg_host (g, GS_HOST_PY, 10);        /* sizes, finfo, buffer slice */
  int ctx = gs_mb_attention (b, &a, q, k, v);
  int o = gs_mg_linear (g, "out_proj", ctx, T, H, H, -1, FALSE, FALSE);
  return gs_mg_dropout (g, o, T, H, c->p_resid, TRUE);
}

/* GPTJBlock: ln_1; the attention and the MLP (fc_in, the activation,
 * fc_out, dropout) both on its output; attn + mlp + residual. */
static int
gptj_block (GsMb *b, int i, int h, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "transformer.h.%d", i);
  gs_mg_module (g);
  gs_mb_scope (b, i, "transformer.h.%d.ln_1", i);
  int x = gs_mg_layernorm (g, h, T, H);
  int a = gptj_attn (b, i, x, mask);
  int m = linear_act_mlp (b, i, "transformer.h.%d.mlp", "fc_in", "fc_out",
                          x, TRUE);
  m = gs_mg_dropout (g, m, T, H, c->p_resid, TRUE);
  gs_mb_scope (b, i, "transformer.h.%d", i);
  a = gs_mg_pointwise (g, "add", GS_BW_PASS, a, m, T, H, 1, 0, FALSE);
  return gs_mg_pointwise (g, "add", GS_BW_PASS, a, h, T, H, 1, 0, FALSE);
}

/* GPTJForCausalLM (transformers 4.36): position ids; generate()'s 2-D
 * mask as (1 - m[:, None, None, :].to(dtype)) * min; wte; drop; the
 * blocks; ln_f; lm_head with bias, .to(torch.float32). */
GsMbOut
gs_mb_gptj (GsMb *b)
{
  const GsHfConfig *c = b->cfg;
  int embed = model_start (b, "transformer", 1);
  int mask = b->generate ? gpt2_mask (b) : -1;
  int h = embed_dropout (b, embed, "transformer.wte", "transformer.drop");
  for (int i = 0; i < c->layers; i++)
    h = gptj_block (b, i, h, mask);
  return layernorm_head (b, "transformer.ln_f", h, 1,
                         c->tie_embeddings ? embed : -1, TRUE);
}

/* ------------------------------------------------------------------ MPT */

/* build_alibi_bias (transformers 4.36's MPT), every forward, over
 * max_seq_len positions whatever the sequence: arange(1 - M, 1) (int32),
 * gen_slopes' arange(1, P + 1) for P the power of two >= heads, * (8 /
 * P), pow(2, m), 1.0 / slopes (reciprocal, then * 1.0), for heads not a
 * power of two a cat of the odd and even slopes; positions x slopes
 * ([H, 1, M] in fp32), .to(dtype).  Returns the [H, 1, M] tensor. */
static int
mpt_alibi (GsMb *b)
{
  GsMg *g = b->g;
  int64_t n = b->cfg->heads, M = b->cfg->max_pos, p2 = 1;
  while (p2 < n)
    p2 *= 2;
  gs_mg_host (g, GS_HOST_PY, 4);         /* log2, ceil, the factor */
  int pos = gs_mg_fill (g, "arange", 1, M);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;   /* int32: four bytes */
  gs_mg_host (g, GS_HOST_VIEW, 1);
  int m = gs_mg_fill (g, "arange", 1, p2);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  static const char *const fn[4] = { "mul", "pow", "reciprocal", "mul" };
  for (int j = 0; j < 4; j++)
    {
      m = gs_mg_pointwise (g, fn[j], GS_BW_NONE, m, -1, 1, p2, j == 1 ? 2 : 1,
                           0, j != 2);
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
    }
  if (p2 != n)
    {
      gs_mg_host (g, GS_HOST_VIEW, 3);   /* [1::2], [::2], [:n] */
      m = gs_mg_copy (g, "cat", GS_BW_NONE, m, 1, p2);
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
    }
  gs_mg_host (g, GS_HOST_VIEW, 1);       /* view(1, n, 1, 1) */
  int alibi = gs_mg_pointwise (g, "mul", GS_BW_NONE, pos, m, n, M, 1, 0,
                               FALSE);
  GsMgNode *nd = gs_mg_last (g);
  nd->op.dtype = GS_DTYPE_FP32;
  nd->op.n_small_in = 2;                 /* [1, 1, 1, M] and [1, n, 1, 1] */
  if (half (g))
    alibi = gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, alibi, -1, n, M, 0,
                             0, FALSE);
  gs_mg_host (g, GS_HOST_VIEW, 1);       /* squeeze(0) */
  return alibi;
}

/* MptModel._prepare_attn_mask (transformers 4.36): for more than one
 * query _make_causal_mask (torch.empty, arange, seq_ids[:, None] <
 * seq_ids[None, :] copied into the mask's new columns, the cached ones
 * filled with False); _expand_mask (.to(bool), ~); their | for more than
 * one query.  Returns the bool [B, 1, S, L] (or [B, 1, 1, L]) mask. */
static int
mpt_mask (GsMb *b)
{
  GsMg *g = b->g;
  int64_t B = b->batch, S = b->seq, L = b->past + b->seq;
  int causal = -1;
  gs_mg_host (g, GS_HOST_PY, 6);
  if (S > 1)
    {
      gs_mg_host (g, GS_HOST_VIEW, 1);   /* torch.empty */
      gs_mg_fill (g, "arange", 1, S);
      int lt = gs_mg_pointwise (g, "lt", GS_BW_NONE, -1, -1, S, S, 1, 0,
                                FALSE);
      causal = gs_mg_pointwise (g, "copy_", GS_BW_NONE, lt, -1, S, S, 0, 0,
                                FALSE);
      if (b->past > 0)
        gs_mg_fill (g, "fill_", S, b->past);
      gs_mg_host (g, GS_HOST_VIEW, 2);   /* [None, None], expand */
    }
  gs_mg_host (g, GS_HOST_VIEW, 1);
  int m = gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, B, L, 0, 0,
                           FALSE);
  m = gs_mg_pointwise (g, "bitwise_not", GS_BW_NONE, m, -1, B, L, 1, 0,
                       FALSE);
  gs_mg_host (g, GS_HOST_VIEW, 1);       /* expand */
  if (causal >= 0)
    m = gs_mg_pointwise (g, "bitwise_or", GS_BW_NONE, m, causal, B * S, L,
                         1, 0, FALSE);
  return m;
}

/* MptAttention (transformers 4.36): Wqkv, chunk(3) and per-head reshapes
 * and transposes (views: each chunk's rows are contiguous); the cache's
 * cats; q @ k^T * softmax_scale; + position_bias sliced to the keys;
 * masked_fill with the bool mask; softmax(scores.float()) and
 * .type_as(scores); F.dropout(attn_pdrop); @ v; heads merged
 * (permute, contiguous); out_proj. */
static int
mpt_attn (GsMb *b, int i, int x, int alibi, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden, L = b->past + b->seq;
  gs_mb_scope (b, i, "transformer.blocks.%d.attn", i);
  gs_mg_module (g);
  int qkv = gs_mg_linear (g, "Wqkv", x, T, H, 3 * H, -1, FALSE, FALSE);
  int p[3];
  gs_mg_split (g, qkv, 3, p);
  gs_mg_host (g, GS_HOST_VIEW, 6);       /* reshapes, transposes */
  int k = gs_mb_cache_cat (b, p[1], c->heads, c->head_dim);
  int v = gs_mb_cache_cat (b, p[2], c->heads, c->head_dim);
  gs_mg_host (g, GS_HOST_VIEW, 2);       /* position_bias[:, qi:, ki:] */
  GsMbAttn a;
  attn_defaults (b, &a);
  a.scale = GS_MB_SCALE_MUL;
  a.alibi = gs_mg_slice (g, alibi, c->heads * L, L);
  a.alibi_after_scale = TRUE;
  a.mask = mask;
  a.mask_fill = TRUE;
  a.mask_per_query = TRUE;
  a.softmax_float = TRUE;
  a.p_drop = c->p_attn;
  gs_mg_host (g, GS_HOST_PY, 8);
  int ctx = gs_mb_attention (b, &a, p[0], k, v);
  return gs_mg_linear (g, "out_proj", ctx, T, H, H, -1, FALSE, FALSE);
}

/* MptBlock: norm_1 (LayerNorm without bias); the attention;
 * resid_attn_dropout (attn_pdrop) + residual; norm_2; the MLP (up_proj,
 * nn.GELU, down_proj, F.dropout(attn_pdrop)) + residual. */
static int
mpt_block (GsMb *b, int i, int h, int alibi, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "transformer.blocks.%d", i);
  gs_mg_module (g);
  gs_mb_scope (b, i, "transformer.blocks.%d.norm_1", i);
  int x = gs_mg_layernorm_nobias (g, h, T, H);
  int a = mpt_attn (b, i, x, alibi, mask);
  gs_mb_scope (b, i, "transformer.blocks.%d", i);
  a = gs_mg_dropout (g, a, T, H, c->p_resid, TRUE);
  h = gs_mg_pointwise (g, "add", GS_BW_PASS, a, h, T, H, 1, 0, FALSE);
  gs_mb_scope (b, i, "transformer.blocks.%d.norm_2", i);
  x = gs_mg_layernorm_nobias (g, h, T, H);
  int m = linear_act_mlp (b, i, "transformer.blocks.%d.ffn", "up_proj",
                          "down_proj", x, FALSE);
  m = gs_mg_dropout (g, m, T, H, c->p_resid, FALSE);
  return gs_mg_pointwise (g, "add", GS_BW_PASS, m, h, T, H, 1, 0, FALSE);
}

/* MptForCausalLM (transformers 4.36): wte; without an attention mask
 * torch.ones((B, L)); the ALiBi tensor and the bool mask once a forward;
 * the blocks; norm_f (no bias); lm_head tied to wte by default (no bias,
 * no .float()).  No position ids. */
GsMbOut
gs_mb_mpt (GsMb *b)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, T = B * b->seq, H = c->hidden;
  gs_mb_scope (b, -1, "transformer");
  gs_mg_host (g, GS_HOST_PY, 14);
  int embed = gs_mg_param (g, (int64_t) c->vocab * H, H);
  gs_mb_scope (b, -1, "transformer.wte");
  int h = gs_mg_embedding (g, embed, c->vocab, T, H);
  gs_mb_scope (b, -1, "transformer");
  if (!b->generate)
    {
      gs_mg_fill (g, "ones", B, b->past + b->seq);
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
    }
  int alibi = mpt_alibi (b);
  int mask = mpt_mask (b);
  for (int i = 0; i < c->layers; i++)
    h = mpt_block (b, i, h, alibi, mask);
  gs_mb_scope (b, -1, "transformer.norm_f");
  h = gs_mg_layernorm_nobias (g, h, T, H);
  return lm_head (b, h, c->tie_embeddings ? embed : -1, FALSE);
}
