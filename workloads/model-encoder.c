/* gpusim: BERT, RoBERTa, the T5-style encoder-decoders (T5, Switch
 * Transformers) and BART as transformers 4.36 runs them.
 *
 * BERT: BertForSequenceClassification in inference (pooler + classifier),
 * BertForPreTraining in training (MLM head over every token + NSP head).
 * RoBERTa (and XLM-RoBERTa, CamemBERT: its modules renamed): BERT's
 * encoder layers; position ids computed from the input ids; no pooler
 * (add_pooling_layer=False); RobertaForSequenceClassification in
 * inference, RobertaForMaskedLM in training.
 * T5/Switch (and MT5, UMT5): XxxForConditionalGeneration(input_ids,
 * attention_mask, decoder_input_ids): encoder, decoder with
 * cross-attention, LM head.
 * BART: BartForConditionalGeneration with the same three inputs: post-LN
 * encoder and decoder layers with learned positions, OPT's attention.
 */
#include "config.h"
#include "workloads/model-build.h"

/* -------------------------------------------------------- BERT, RoBERTa */

/* The base model's attribute: its module paths start with it. */
static const char *
bert_base (const GsMb *b)
{
  return b->cfg->family == GS_HF_ROBERTA ? "roberta" : "bert";
}

/* BertSelfOutput and BertOutput of layer I, under
 * %s.encoder.layer.I.NAME: dense from IN features, dropout,
 * LayerNorm(y + RESIDUAL); RoBERTa's are copies. */
static int
bert_output (GsMb *b, int i, const char *name, int y, int64_t in,
             int residual)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  const char *base = bert_base (b);
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "%s.encoder.layer.%d.%s", base, i, name);
  gs_mg_module (g);
  int o = gs_mg_linear (g, "dense", y, T, in, H, -1, TRUE, FALSE);
  o = gs_mg_dropout (g, o, T, H, c->p_resid, TRUE);
  o = gs_mg_pointwise (g, "add", GS_BW_PASS, o, residual, T, H, 1, 0, FALSE);
  gs_mb_scope (b, i, "%s.encoder.layer.%d.%s.LayerNorm", base, i, name);
  return gs_mg_layernorm (g, o, T, H);
}

/* BertSelfAttention + BertSelfOutput; RoBERTa's are copies. */
static int
bert_attention (GsMb *b, int i, int x, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  const char *base = bert_base (b);
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "%s.encoder.layer.%d.attention.self", base, i);
  gs_mg_module (g);
  gs_mg_module (g);
  int q = gs_mg_linear (g, "query", x, T, H, H, -1, TRUE, FALSE);
  int k = gs_mg_linear (g, "key", x, T, H, H, -1, TRUE, FALSE);
  gs_mg_host (g, GS_HOST_PY, 3);
  gs_mg_host (g, GS_HOST_VIEW, 2);
  int v = gs_mg_linear (g, "value", x, T, H, H, -1, TRUE, FALSE);
  gs_mg_host (g, GS_HOST_PY, 6);
  gs_mg_host (g, GS_HOST_VIEW, 5);
  GsMbAttn a = { 0 };
  a.alibi = -1;
  a.heads = a.kv_heads = c->heads;
  a.head_dim = c->head_dim;
  a.seq_q = a.seq_k = b->seq;
  a.copy_q = a.copy_k = a.copy_v = TRUE;
  a.q_view = a.k_view = a.v_view = TRUE;
  /* transformers 5's eager_attention_forward: * scaling, and + the mask
   * only where one is needed (none without padding). */
  a.scale = g->opt.hf5 ? GS_MB_SCALE_MUL : GS_MB_SCALE_DIV;
  a.mask = mask;
  a.bias = -1;
  a.p_drop = c->p_attn;
  a.drop_module = TRUE;
  int ctx = gs_mb_attention (b, &a, q, k, v);
  gs_mg_host (g, GS_HOST_PY, 3);
  return bert_output (b, i, "attention.output", ctx, H, x);
}

static int
bert_layer (GsMb *b, int i, int h, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  const char *base = bert_base (b);
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, i, "%s.encoder.layer.%d", base, i);
  gs_mg_module (g);
  int a = bert_attention (b, i, h, mask);
  gs_mb_scope (b, i, "%s.encoder.layer.%d.intermediate", base, i);
  gs_mg_module (g);
  int m = gs_mg_linear (g, "dense", a, T, H, c->ffn, -1, TRUE, FALSE);
  m = gs_mb_act (b, c->act, m, T, c->ffn);
  return bert_output (b, i, "output", m, c->ffn, a);
}

/* create_position_ids_from_input_ids (RoBERTa): mask = input_ids.ne(pad)
 * .int(); (cumsum(mask, dim=1).type_as(mask) + past_key_values_length) *
 * mask; .long() + padding_idx.  One kernel each over [B, S]: cumsum of
 * int32 gives int64, hence the type_as. */
static void
roberta_position_ids (GsMb *b)
{
  GsMg *g = b->g;
  int64_t B = b->batch, S = b->seq;
  gs_mg_pointwise (g, "ne", GS_BW_NONE, -1, -1, B, S, 1, 0, TRUE);
  gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, B, S, 0, 0, FALSE);
  gs_mg_pointwise (g, "cumsum", GS_BW_NONE, -1, -1, B, S, 1, 0, FALSE);
  gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, B, S, 0, 0, FALSE);
  gs_mg_pointwise (g, "add", GS_BW_NONE, -1, -1, B, S, 1, 0, TRUE);
  gs_mg_pointwise (g, "mul", GS_BW_NONE, -1, -1, B, S, 1, 0, FALSE);
  gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, B, S, 0, 0, FALSE);
  gs_mg_pointwise (g, "add", GS_BW_NONE, -1, -1, B, S, 1, 0, TRUE);
}

/* BertEmbeddings: word + token type, += position, LayerNorm, dropout.
 * BERT slices its position_ids buffer ([1, S], broadcast over the batch);
 * RobertaEmbeddings computes them per token first and looks up B x S
 * rows. */
static int
bert_embeddings (GsMb *b, int *word_table)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  const char *base = bert_base (b);
  gboolean roberta = c->family == GS_HF_ROBERTA;
  int64_t S = b->seq, T = b->batch * S, H = c->hidden;
  int64_t pos_rows = (int64_t) c->max_pos + c->pos_offset;
  gs_mb_scope (b, -1, "%s.embeddings", base);
  gs_mg_module (g);
  if (roberta)
    roberta_position_ids (b);
  else
    gs_mg_host (g, GS_HOST_VIEW, 1);
  int word = gs_mg_param (g, (int64_t) c->vocab * H, H);
  int type = gs_mg_param (g, (int64_t) c->type_vocab * H, H);
  int pos = gs_mg_param (g, pos_rows * H, H);
  *word_table = word;
  gs_mb_scope (b, -1, "%s.embeddings.word_embeddings", base);
  int e = gs_mg_embedding (g, word, c->vocab, T, H);
  gs_mb_scope (b, -1, "%s.embeddings.token_type_embeddings", base);
  int t = gs_mg_embedding (g, type, c->type_vocab, T, H);
  gs_mb_scope (b, -1, "%s.embeddings", base);
  int h = gs_mg_pointwise (g, "add", GS_BW_PASS, e, t, T, H, 1, 0, FALSE);
  gs_mb_scope (b, -1, "%s.embeddings.position_embeddings", base);
  int p = gs_mg_embedding (g, pos, pos_rows, roberta ? T : S, H);
  gs_mb_scope (b, -1, "%s.embeddings", base);
  h = gs_mg_pointwise (g, "add_", roberta ? GS_BW_PASS : GS_BW_ADD_BCAST, h,
                       p, T, H, 1, 0, FALSE);
  gs_mb_scope (b, -1, "%s.embeddings.LayerNorm", base);
  h = gs_mg_layernorm (g, h, T, H);
  gs_mb_scope (b, -1, "%s.embeddings.dropout", base);
  return gs_mg_dropout (g, h, T, H, c->p_embd, TRUE);
}

/* BertPooler: dense + tanh on the first token. */
static int
bert_pooler (GsMb *b, int h)
{
  GsMg *g = b->g;
  int64_t B = b->batch, H = b->cfg->hidden;
  gs_mb_scope (b, -1, "bert.pooler");
  gs_mg_module (g);
  gs_mg_host (g, GS_HOST_VIEW, 1);      /* hidden_states[:, 0] */
  /* The [CLS] rows are a strided view (every seq-th row); the GEMM reads
   * them in place.  Autograd scatters their gradient back (select
   * backward: zeros + copy). */
  int cls = g->opt.training ? gs_mg_slice (g, h, B * H, H) : h;
  int p = gs_mg_linear (g, "dense", cls, B, H, H, -1, TRUE, FALSE);
  gs_mb_scope (b, -1, "bert.pooler.activation");
  gs_mg_module (g);
  return gs_mg_unary (g, "tanh", p, B, H, 8, 2, "tanh_backward");
}

/* BertPreTrainingHeads: MLM transform + decoder, NSP classifier. */
static GsMbOut
bert_pretraining_heads (GsMb *b, int h, int pooled, int word)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, -1, "cls.predictions.transform");
  gs_mg_module (g);
  gs_mg_module (g);
  int x = gs_mg_linear (g, "dense", h, T, H, H, -1, TRUE, FALSE);
  x = gs_mb_act (b, c->act, x, T, H);
  gs_mb_scope (b, -1, "cls.predictions.transform.LayerNorm");
  x = gs_mg_layernorm (g, x, T, H);
  gs_mb_scope (b, -1, "cls.predictions");
  int logits = gs_mg_linear (g, "decoder", x, T, H, c->vocab, word, TRUE,
                             FALSE);
  gs_mg_val (g, logits)->keep = TRUE;
  gs_mb_scope (b, -1, "cls");
  int nsp = gs_mg_linear (g, "seq_relationship", pooled, b->batch, H, 2, -1,
                          TRUE, FALSE);
  gs_mg_val (g, nsp)->keep = TRUE;
  return (GsMbOut) { logits, T, c->vocab };
}

/* RobertaLMHead: dense, gelu (the exact one, whatever hidden_act says),
 * layer_norm, decoder (tied to the word embeddings, with a bias). */
static GsMbOut
roberta_lm_head (GsMb *b, int h, int word)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * b->seq, H = c->hidden;
  gs_mb_scope (b, -1, "lm_head");
  gs_mg_module (g);
  int x = gs_mg_linear (g, "dense", h, T, H, H, -1, TRUE, FALSE);
  x = gs_mb_act (b, GS_ACT_GELU, x, T, H);
  gs_mb_scope (b, -1, "lm_head.layer_norm");
  x = gs_mg_layernorm (g, x, T, H);
  gs_mb_scope (b, -1, "lm_head");
  int logits = gs_mg_linear (g, "decoder", x, T, H, c->vocab, word, TRUE,
                             FALSE);
  gs_mg_val (g, logits)->keep = TRUE;
  return (GsMbOut) { logits, T, c->vocab };
}

/* RobertaClassificationHead on features[:, 0, :]: dropout, dense,
 * torch.tanh, dropout, out_proj.  Inference only: the dropouts are module
 * calls, and the dense reads the strided [CLS] rows in place. */
static int
roberta_classifier (GsMb *b, int h)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, H = c->hidden;
  gs_mb_scope (b, -1, "classifier");
  gs_mg_module (g);
  gs_mg_host (g, GS_HOST_VIEW, 1);      /* features[:, 0, :] */
  gs_mb_scope (b, -1, "classifier.dropout");
  h = gs_mg_dropout (g, h, B, H, c->p_resid, TRUE);
  gs_mb_scope (b, -1, "classifier");
  int x = gs_mg_linear (g, "dense", h, B, H, H, -1, TRUE, FALSE);
  x = gs_mg_unary (g, "tanh", x, B, H, 8, 2, "tanh_backward");
  gs_mb_scope (b, -1, "classifier.dropout");
  x = gs_mg_dropout (g, x, B, H, c->p_resid, TRUE);
  gs_mb_scope (b, -1, "classifier");
  int logits = gs_mg_linear (g, "out_proj", x, B, H, c->num_labels, -1, TRUE,
                             FALSE);
  gs_mg_val (g, logits)->keep = TRUE;
  return logits;
}

/* warn_if_padding_and_no_attention_mask (transformers >= 4.31), with no
 * attention mask given: `pad_token_id in input_ids[:, [-1, 0]]`.  The
 * list index is copied to the GPU (a blocking copy), gathered, compared,
 * reduced by any(), and item() reads the answer (a second wait).  Under
 * torch.compile (is_torchdynamo_compiling()) it returns at once.  (The
 * reference inputs are ones: RoBERTa's padding token, so its check finds
 * one and logs a warning, host work only.) */
static void
bert_pad_check (GsMb *b)
{
  GsMg *g = b->g;
  int64_t B = b->batch;
  if (!b->cfg->pad_check || g->opt.compiled)
    return;
  gs_mb_scope (b, -1, "%s.pad_check", bert_base (b));
  gs_mg_host (g, GS_HOST_PY, 4);
  gs_mg_host (g, GS_HOST_SYNC, 1);
  gs_mg_copy (g, "index", GS_BW_NONE, -1, B, 2);
  gs_mg_pointwise (g, "eq", GS_BW_NONE, -1, -1, B, 2, 1, 0, TRUE);
  gs_mg_reduce (g, "any", GS_BW_NONE, -1, 1, 2 * B, 1);
  gs_mg_host (g, GS_HOST_SYNC, 1);
  gs_mb_scope (b, -1, "%s", bert_base (b));
}

/* BertModel / RobertaModel and the task head: BERT's pooler and
 * classifier (or pre-training heads), RoBERTa's classification head (or
 * LM head), which take the sequence output. */
GsMbOut
gs_mb_bert (GsMb *b)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  gboolean roberta = c->family == GS_HF_ROBERTA;
  int64_t B = b->batch, S = b->seq, H = c->hidden;
  gs_mb_scope (b, -1, "%s", bert_base (b));
  bert_pad_check (b);
  gs_mg_host (g, GS_HOST_PY, 12);
  int mask = -1;
  if (g->opt.hf5)
    {
      /* transformers 5 (traced): no mask without padding; the buffered
       * token_type_ids gathered and expanded to [B, S]. */
      gs_mg_copy (g, "index", GS_BW_NONE, -1, 1, S);
      gs_mg_copy (g, "expand", GS_BW_NONE, -1, B, S);
    }
  else
    {
      /* attention_mask = torch.ones(B, S); extended: (1.0 - m) *
       * finfo.min. */
      gs_mg_fill (g, "ones", B, S);
      gs_mg_host (g, GS_HOST_VIEW, 3);
      gs_mg_pointwise (g, "rsub", GS_BW_NONE, -1, -1, B, S, 1, 0, TRUE);
      mask = gs_mg_pointwise (g, "mul", GS_BW_NONE, -1, -1, B, S, 1, 0,
                              TRUE);
    }
  int word;
  int h = bert_embeddings (b, &word);
  for (int i = 0; i < c->layers; i++)
    h = bert_layer (b, i, h, mask);
  if (roberta)
    {
      if (g->opt.training)
        return roberta_lm_head (b, h, word);
      return (GsMbOut) { roberta_classifier (b, h), B, c->num_labels };
    }
  int pooled = bert_pooler (b, h);
  if (g->opt.training)
    return bert_pretraining_heads (b, h, pooled, word);
  gs_mb_scope (b, -1, "dropout");
  pooled = gs_mg_dropout (g, pooled, B, H, c->p_resid, TRUE);
  gs_mb_scope (b, -1, "classifier");
  int logits = gs_mg_linear (g, NULL, pooled, B, H, c->num_labels, -1, TRUE,
                             FALSE);
  gs_mg_val (g, logits)->keep = TRUE;
  return (GsMbOut) { logits, B, c->num_labels };
}

/* ------------------------------------------------------------ T5/Switch */

typedef struct {
  const char *stack;       /* "encoder" / "decoder" */
  gboolean decoder;
  int64_t seq_q;           /* this stack's query tokens */
  int64_t past;            /* cached decoder tokens */
  int self_mask;           /* additive mask value for self-attention */
  int cross_mask;          /* encoder mask for cross-attention */
  int enc_out;             /* encoder hidden states (decoder only) */
  int self_bias;           /* position bias + mask, made by layer 0 */
  int cross_bias;
} T5Stack;

/* T5Attention.compute_bias: relative position buckets ([ROWS, Sk] int
 * ops) looked up in the bias table; the last SQ rows + mask make it
 * [B, H, Sq, Sk].  T5's buckets are built over the step's SQ rows;
 * UMT5's over every query position so far (ROWS = past + SQ), then
 * sliced. */
static int
t5_position_bias (GsMb *b, const T5Stack *st, int64_t rows, int64_t sq,
                  int64_t sk, int mask)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  gs_mg_fill (g, "arange", 1, rows);
  gs_mg_fill (g, "arange", 1, sk);
  gs_mg_pointwise (g, "sub", GS_BW_NONE, -1, -1, rows, sk, 1, 0, FALSE);
  /* _relative_position_bucket: bidirectional (encoder) or causal. */
  static const char *const enc_ops[] = {
    "gt", "_to_copy", "mul", "add", "abs", "lt", "_to_copy", "div", "log",
    "div", "mul", "_to_copy", "add", "full_like", "minimum", "where", "add_"
  };
  static const char *const dec_ops[] = {
    "zeros_like", "minimum", "neg", "lt", "_to_copy", "div", "log", "div",
    "mul", "_to_copy", "add", "full_like", "minimum", "where", "add_"
  };
  const char *const *ops = st->decoder ? dec_ops : enc_ops;
  guint n = st->decoder ? G_N_ELEMENTS (dec_ops) : G_N_ELEMENTS (enc_ops);
  for (guint i = 0; i < n; i++)
    gs_mg_pointwise (g, ops[i], GS_BW_NONE, -1, -1, rows, sk, 2,
                     g_str_equal (ops[i], "log") ? 1 : 0, FALSE);
  int table = gs_mg_param (g, (int64_t) c->rel_buckets * c->heads,
                           c->heads);
  gs_mg_module (g);
  int bias = gs_mg_embedding (g, table, c->rel_buckets, rows * sk,
                              c->heads);
  gs_mg_host (g, GS_HOST_VIEW, 2);
  if (mask < 0)
    return bias;
  int64_t full = b->batch * c->heads * sq;
  return gs_mg_pointwise (g, "add", GS_BW_ADD_BCAST, bias, mask, full, sk, 1,
                          0, FALSE);
}

static int
t5_attention (GsMb *b, T5Stack *st, int i, int x, gboolean cross)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, sq = st->seq_q, T = B * sq, H = c->hidden;
  int64_t inner = (int64_t) c->heads * c->head_dim;
  int64_t sk = cross ? b->enc_seq : st->past + sq;
  gboolean cached_kv = cross && st->past > 0;   /* cross K/V from step 0 */
  gs_mg_module (g);
  /* UMT5Attention projects k and v first, then q. */
  int q = c->umt5 ? -1 : gs_mg_linear (g, "q", x, T, H, inner, -1, FALSE,
                                       FALSE);
  int k, v;
  if (cached_kv)
    {
      /* past_key_values keeps every decoder layer's K and V of the
       * encoder output until the generation ends, beside its self-
       * attention cache. */
      k = gs_mg_input (g, B * sk * inner, inner);
      v = gs_mg_input (g, B * sk * inner, inner);
      gs_mg_val (g, k)->cache = TRUE;
      gs_mg_val (g, v)->cache = TRUE;
    }
  else
    {
      int src = cross ? st->enc_out : x;
      int64_t rows = cross ? B * b->enc_seq : T;
      k = gs_mg_linear (g, "k", src, rows, H, inner, -1, FALSE, FALSE);
      v = gs_mg_linear (g, "v", src, rows, H, inner, -1, FALSE, FALSE);
      if (!cross)
        {
          k = gs_mb_cache_cat (b, k, c->heads, c->head_dim);
          v = gs_mb_cache_cat (b, v, c->heads, c->head_dim);
        }
    }
  if (c->umt5)
    q = gs_mg_linear (g, "q", x, T, H, inner, -1, FALSE, FALSE);
  gs_mg_host (g, GS_HOST_VIEW, 6);
  int *bias = cross ? &st->cross_bias : &st->self_bias;
  if (*bias < 0 || c->umt5)
    {
      int mask = cross ? st->cross_mask : st->self_mask;
      if (cross)
        {
          /* No relative bias: zeros((1, H, Sq, Sk)) + mask. */
          int z = gs_mg_fill (g, "zeros", c->heads * sq, sk);
          *bias = mask < 0 ? z
                  : gs_mg_pointwise (g, "add", GS_BW_NONE, z, mask,
                                     B * c->heads * sq, sk, 1, 0, FALSE);
        }
      else
        *bias = t5_position_bias (b, st, c->umt5 ? st->past + sq : sq, sq,
                                  sk, mask);
    }
  GsMbAttn a = { 0 };
  a.alibi = -1;
  a.heads = a.kv_heads = c->heads;
  a.head_dim = c->head_dim;
  a.seq_q = sq;
  a.seq_k = sk;
  gboolean views = st->past == 0 || cross;
  a.copy_q = TRUE;
  a.copy_k = a.copy_v = views && !cached_kv;
  a.q_view = TRUE;
  a.k_view = a.v_view = !cached_kv;
  a.mask = -1;
  a.bias = *bias;
  a.softmax_float = TRUE;
  a.p_drop = c->p_attn;
  a.causal = st->decoder && !cross;
  int ctx = gs_mb_attention (b, &a, q, k, v);
  return gs_mg_linear (g, "o", ctx, T, inner, H, -1, FALSE, FALSE);
}

static int
t5_ff (GsMb *b, const T5Stack *st, int i, int x)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * st->seq_q, H = c->hidden;
  if (gs_hf_layer_sparse (c, i, st->decoder))
    return gs_mb_switch_moe (b, x, T, H);
  gs_mg_module (g);
  if (c->gated)
    {
      int a = gs_mg_linear (g, "wi_0", x, T, H, c->ffn, -1, FALSE, FALSE);
      a = gs_mb_act (b, c->act, a, T, c->ffn);
      int l = gs_mg_linear (g, "wi_1", x, T, H, c->ffn, -1, FALSE, FALSE);
      int m = gs_mg_pointwise (g, "mul", GS_BW_MUL, a, l, T, c->ffn, 1, 0,
                               FALSE);
      m = gs_mg_dropout (g, m, T, c->ffn, c->p_act, TRUE);
      return gs_mg_linear (g, "wo", m, T, c->ffn, H, -1, FALSE, FALSE);
    }
  int h = gs_mg_linear (g, "wi", x, T, H, c->ffn, -1, FALSE, FALSE);
  h = gs_mb_act (b, c->act, h, T, c->ffn);
  h = gs_mg_dropout (g, h, T, c->ffn, c->p_act, TRUE);
  return gs_mg_linear (g, "wo", h, T, c->ffn, H, -1, FALSE, FALSE);
}

/* One sub-layer: h + dropout(f(layer_norm(h))). */
static int
t5_sublayer (GsMb *b, T5Stack *st, int i, int j, int h, int kind)
{
  GsMg *g = b->g;
  int64_t T = b->batch * st->seq_q, H = b->cfg->hidden;
  gs_mb_scope (b, i, "%s.block.%d.layer.%d.layer_norm", st->stack, i, j);
  gs_mg_module (g);
  int x = gs_mb_rmsnorm (b, h, T, H);
  int y;
  if (kind == 2)
    {
      gs_mb_scope (b, i, "%s.block.%d.layer.%d.mlp", st->stack, i, j);
      y = t5_ff (b, st, i, x);
    }
  else
    {
      gs_mb_scope (b, i, "%s.block.%d.layer.%d.%s", st->stack, i, j,
             kind == 1 ? "EncDecAttention" : "SelfAttention");
      y = t5_attention (b, st, i, x, kind == 1);
    }
  gs_mb_scope (b, i, "%s.block.%d.layer.%d", st->stack, i, j);
  y = gs_mg_dropout (g, y, T, H, b->cfg->p_resid, TRUE);
  return gs_mg_pointwise (g, "add", GS_BW_PASS, h, y, T, H, 1, 0, FALSE);
}

/* get_extended_attention_mask: m[:, None, None, :].to(dtype); (1-m)*min;
 * the decoder's causal version first builds [B, 1, S, L]. */
static int
t5_mask (GsMb *b, int64_t sq, int64_t sk, gboolean causal)
{
  GsMg *g = b->g;
  int64_t B = b->batch;
  gs_mg_host (g, GS_HOST_VIEW, 2);
  if (causal && sq > 1)
    {
      gs_mg_fill (g, "arange", 1, sk);
      gs_mg_copy (g, "repeat", GS_BW_NONE, -1, B * sq, sk);
      gs_mg_pointwise (g, "le", GS_BW_NONE, -1, -1, B * sq, sk, 1, 0, FALSE);
      gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, B * sq, sk, 0, 0,
                       FALSE);
      gs_mg_pointwise (g, "mul", GS_BW_NONE, -1, -1, B * sq, sk, 1, 0, FALSE);
      gs_mg_pointwise (g, "rsub", GS_BW_NONE, -1, -1, B * sq, sk, 1, 0, TRUE);
      return gs_mg_pointwise (g, "mul", GS_BW_NONE, -1, -1, B * sq, sk, 1, 0,
                              TRUE);
    }
  gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, B, sk, 0, 0, FALSE);
  gs_mg_pointwise (g, "rsub", GS_BW_NONE, -1, -1, B, sk, 1, 0, TRUE);
  return gs_mg_pointwise (g, "mul", GS_BW_NONE, -1, -1, B, sk, 1, 0, TRUE);
}

static int
t5_stack (GsMb *b, T5Stack *st, int embed)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t T = b->batch * st->seq_q, H = c->hidden;
  int64_t L = st->past + st->seq_q;
  int layers = st->decoder ? c->dec_layers : c->layers;
  gs_mb_scope (b, -1, "%s", st->stack);
  gs_mg_module (g);
  gs_mg_host (g, GS_HOST_PY, 10);
  gs_mb_scope (b, -1, "%s.embed_tokens", st->stack);
  int h = gs_mg_embedding (g, embed, c->vocab, T, H);
  gs_mb_scope (b, -1, "%s", st->stack);
  /* The caller passes the encoder's attention mask (the reference harness
   * calls model(input_ids, ones, ones): the second is attention_mask, the
   * third decoder_input_ids); the decoder makes its own of ones, and uses
   * the encoder's for cross-attention. */
  if (st->decoder)
    gs_mg_fill (g, "ones", b->batch, L);
  st->self_mask = t5_mask (b, st->seq_q, L, st->decoder);
  if (st->decoder)
    st->cross_mask = t5_mask (b, 1, b->enc_seq, FALSE);
  h = gs_mg_dropout (g, h, T, H, c->p_resid, TRUE);
  for (int i = 0; i < layers; i++)
    {
      gs_mb_scope (b, i, "%s.block.%d", st->stack, i);
      gs_mg_module (g);
      h = t5_sublayer (b, st, i, 0, h, 0);
      if (st->decoder)
        h = t5_sublayer (b, st, i, 1, h, 1);
      h = t5_sublayer (b, st, i, st->decoder ? 2 : 1, h, 2);
    }
  gs_mb_scope (b, -1, "%s.final_layer_norm", st->stack);
  h = gs_mb_rmsnorm (b, h, T, H);
  gs_mb_scope (b, -1, "%s", st->stack);
  return gs_mg_dropout (g, h, T, H, c->p_resid, TRUE);
}

/* SwitchTransformersForConditionalGeneration computes router z-loss and
 * load-balancing loss (output_router_logits defaults to True). */
static void
switch_router_losses (GsMb *b, int64_t tokens, int sparse_layers)
{
  GsMg *g = b->g;
  int64_t E = b->cfg->experts;
  if (sparse_layers <= 0)
    return;
  /* _unpack_router_logits (cat), router_z_loss_func (logsumexp, square,
   * sum, mean), softmax, load_balancing_loss_func (one_hot, max, cast,
   * means, products). */
  static const struct { const char *name; GsOpKind kind; } ops[] = {
    { "cat", GS_OP_COPY }, { "cat", GS_OP_COPY },
    { "logsumexp", GS_OP_REDUCE }, { "pow", GS_OP_ELEMENTWISE },
    { "sum", GS_OP_REDUCE }, { "div", GS_OP_ELEMENTWISE },
    { "_softmax", GS_OP_SOFTMAX }, { "zeros", GS_OP_ELEMENTWISE },
    { "scatter_", GS_OP_ELEMENTWISE }, { "max", GS_OP_REDUCE },
    { "_to_copy", GS_OP_ELEMENTWISE }, { "mean", GS_OP_REDUCE },
    { "mean", GS_OP_REDUCE }, { "mul", GS_OP_ELEMENTWISE },
    { "mean", GS_OP_REDUCE }, { "mul", GS_OP_ELEMENTWISE },
  };
  int64_t n = tokens * sparse_layers;
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    switch (ops[i].kind)
      {
      case GS_OP_COPY:
        gs_mg_copy (g, ops[i].name, GS_BW_NONE, -1, n, E);
        break;
      case GS_OP_REDUCE:
        gs_mg_reduce (g, ops[i].name, GS_BW_NONE, -1, n, E, 1);
        break;
      case GS_OP_SOFTMAX:
        gs_mg_softmax (g, -1, n, E);
        break;
      default:
        gs_mg_pointwise (g, ops[i].name, GS_BW_NONE, -1, -1, n, E, 2, 0,
                         FALSE);
      }
}

static int
count_sparse (const GsHfConfig *c, int layers, gboolean decoder)
{
  int n = 0;
  for (int i = 0; i < layers; i++)
    n += gs_hf_layer_sparse (c, i, decoder);
  return n;
}

GsMbOut
gs_mb_t5 (GsMb *b)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t H = c->hidden;
  gs_mb_scope (b, -1, "shared");
  int embed = gs_mg_param (g, (int64_t) c->vocab * H, H);
  T5Stack enc = { "encoder", FALSE, b->enc_seq, 0, -1, -1, -1, -1, -1 };
  int enc_out;
  if (b->decoder_only)   /* a decode step: the encoder ran at prefill */
    enc_out = gs_mg_input (g, b->batch * b->enc_seq * H, H);
  else
    enc_out = t5_stack (b, &enc, embed);
  T5Stack dec = { "decoder", TRUE, b->seq, b->past, -1, -1, enc_out, -1, -1 };
  int h = t5_stack (b, &dec, embed);
  int64_t T = b->batch * b->seq;
  gs_mb_scope (b, -1, "lm_head");
  if (c->tie_embeddings)   /* sequence_output * d_model ** -0.5 */
    h = gs_mg_pointwise (g, "mul", GS_BW_SCALE, h, -1, T, H, 1, 0, TRUE);
  int logits = gs_mg_linear (g, NULL, h, T, H, c->vocab,
                             c->tie_embeddings ? embed : -1, FALSE, FALSE);
  gs_mg_val (g, logits)->keep = TRUE;
  if (c->family == GS_HF_SWITCH)
    {
      gs_mb_scope (b, -1, "router_losses");
      if (!b->decoder_only)
        switch_router_losses (b, b->batch * b->enc_seq,
                              count_sparse (c, c->layers, FALSE));
      switch_router_losses (b, T, count_sparse (c, c->dec_layers, TRUE));
    }
  return (GsMbOut) { logits, T, c->vocab };
}

/* ----------------------------------------------------------------- BART */

/* BartLearnedPositionalEmbedding: arange(past, past + S), expanded over
 * the batch, + offset 2 (a [B, S] kernel), looked up in the table of
 * max_position_embeddings + 2 rows. */
static int
bart_positions (GsMb *b, const char *stack, int64_t S)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, rows = (int64_t) c->max_pos + c->pos_offset;
  gs_mb_scope (b, -1, "model.%s.embed_positions", stack);
  gs_mg_module (g);
  gs_mg_fill (g, "arange", 1, S);
  gs_mg_host (g, GS_HOST_VIEW, 1);        /* expand */
  gs_mg_pointwise (g, "add", GS_BW_NONE, -1, -1, B, S, 1, 0, TRUE);
  int table = gs_mg_param (g, rows * c->hidden, c->hidden);
  return gs_mg_embedding (g, table, rows, B * S, c->hidden);
}

/* _prepare_4d_attention_mask (AttentionMaskConverter._expand_mask) of
 * the [B, Sk] mask to [B, 1, Sq, Sk]: the expanded view .to(dtype) (a
 * copy), 1.0 - it, .to(bool), masked_fill (clone + masked_fill_). */
static int
bart_expand_mask (GsMb *b, int64_t sq, int64_t sk)
{
  GsMg *g = b->g;
  int64_t rows = b->batch * sq;
  gs_mg_host (g, GS_HOST_VIEW, 2);
  gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, rows, sk, 0, 0, FALSE);
  int m = gs_mg_pointwise (g, "rsub", GS_BW_NONE, -1, -1, rows, sk, 1, 0,
                           TRUE);
  gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, m, -1, rows, sk, 0, 0, FALSE);
  gs_mg_copy (g, "clone", GS_BW_NONE, m, rows, sk);
  return gs_mg_pointwise (g, "masked_fill_", GS_BW_NONE, m, -1, rows, sk, 1,
                          0, TRUE);
}

/* embed_tokens(ids) * embed_scale + embed_positions, layernorm_embedding,
 * dropout (the positions made where the stack makes them: POS). */
static int
bart_embed_sum (GsMb *b, const char *stack, int e, int pos, int64_t T)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t H = c->hidden;
  gs_mb_scope (b, -1, "model.%s", stack);
  int h = gs_mg_pointwise (g, "add", GS_BW_PASS, e, pos, T, H, 1, 0, FALSE);
  gs_mb_scope (b, -1, "model.%s.layernorm_embedding", stack);
  h = gs_mg_layernorm (g, h, T, H);
  gs_mb_scope (b, -1, "model.%s", stack);
  return gs_mg_dropout (g, h, T, H, c->p_embd, FALSE);
}

/* embed_tokens(input_ids) * embed_scale (1.0 unless scale_embedding: a
 * kernel either way). */
static int
bart_tokens (GsMb *b, const char *stack, int embed, int64_t T)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  gs_mb_scope (b, -1, "model.%s.embed_tokens", stack);
  int e = gs_mg_embedding (g, embed, c->vocab, T, c->hidden);
  gs_mb_scope (b, -1, "model.%s", stack);
  return gs_mg_pointwise (g, "mul", GS_BW_SCALE, e, -1, T, c->hidden, 1, 0,
                          TRUE);
}

/* One post-LN sub-layer's end: dropout, residual + x, then the LayerNorm
 * BASE.NORM. */
static int
bart_residual_norm (GsMb *b, int i, const char *base, const char *norm,
                    int res, int x, int64_t T)
{
  GsMg *g = b->g;
  int64_t H = b->cfg->hidden;
  gs_mb_scope (b, i, "%s", base);
  x = gs_mg_dropout (g, x, T, H, b->cfg->p_resid, FALSE);
  x = gs_mg_pointwise (g, "add", GS_BW_PASS, res, x, T, H, 1, 0, FALSE);
  gs_mb_scope (b, i, "%s.%s", base, norm);
  return gs_mg_layernorm (g, x, T, H);
}

/* The attention module BASE.ATTN (O: its inputs), then its residual and
 * LayerNorm BASE.NORM. */
static int
bart_attn_block (GsMb *b, int i, const char *base, const char *attn,
                 const char *norm, const GsMbOptAttn *o, int64_t T)
{
  gs_mb_scope (b, i, "%s.%s", base, attn);
  gs_mg_module (b->g);
  int a = gs_mb_opt_attention (b, o);
  return bart_residual_norm (b, i, base, norm, o->x, a, T);
}

/* fc1, activation_function, dropout(activation_dropout), fc2; the
 * residual and final_layer_norm. */
static int
bart_ffn (GsMb *b, int i, const char *base, int h, int64_t T)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t H = c->hidden, F = c->ffn;
  gs_mb_scope (b, i, "%s", base);
  int m = gs_mg_linear (g, "fc1", h, T, H, F, -1, TRUE, FALSE);
  m = gs_mb_act (b, c->act, m, T, F);
  m = gs_mg_dropout (g, m, T, F, c->p_act, FALSE);
  m = gs_mg_linear (g, "fc2", m, T, F, H, -1, TRUE, FALSE);
  return bart_residual_norm (b, i, base, "final_layer_norm", h, m, T);
}

/* BartEncoderLayer: self-attention, its residual and LayerNorm, the
 * feed-forward, its residual and LayerNorm; in fp16 the clamp check
 * (isinf(h).any() or isnan(h).any(): each read back by the host). */
static int
bart_encoder_layer (GsMb *b, int i, int h, int mask)
{
  GsMg *g = b->g;
  int64_t T = b->batch * b->enc_seq, H = b->cfg->hidden;
  g_autofree char *base = g_strdup_printf ("model.encoder.layers.%d", i);
  gs_mb_scope (b, i, "%s", base);
  gs_mg_module (g);
  GsMbOptAttn o = { h, TRUE, -1, 0, FALSE, mask, TRUE, FALSE };
  h = bart_attn_block (b, i, base, "self_attn", "self_attn_layer_norm", &o,
                       T);
  h = bart_ffn (b, i, base, h, T);
  if (g->opt.dtype == GS_DTYPE_FP16)
    {
      gs_mb_scope (b, i, "%s", base);
      gs_mg_pointwise (g, "isinf", GS_BW_NONE, h, -1, T, H, 1, 0, FALSE);
      gs_mg_reduce (g, "any", GS_BW_NONE, -1, 1, T * H, 1);
      gs_mg_host (g, GS_HOST_SYNC, 1);
      gs_mg_pointwise (g, "isnan", GS_BW_NONE, h, -1, T, H, 1, 0, FALSE);
      gs_mg_reduce (g, "any", GS_BW_NONE, -1, 1, T * H, 1);
      gs_mg_host (g, GS_HOST_SYNC, 1);
    }
  return h;
}

/* BartDecoderLayer: self-attention (causal, cached), its residual and
 * LayerNorm; cross-attention over the encoder output (its K and V
 * cached from the first step of a generation), its residual and
 * LayerNorm; the feed-forward, its residual and LayerNorm. */
static int
bart_decoder_layer (GsMb *b, int i, int h, int self_mask, int cross_mask,
                    int enc)
{
  int64_t T = b->batch * b->seq;
  g_autofree char *base = g_strdup_printf ("model.decoder.layers.%d", i);
  gs_mb_scope (b, i, "%s", base);
  gs_mg_module (b->g);
  GsMbOptAttn o = { h, FALSE, -1, 0, FALSE, self_mask, TRUE, FALSE };
  h = bart_attn_block (b, i, base, "self_attn", "self_attn_layer_norm", &o,
                       T);
  GsMbOptAttn x = { h, FALSE, enc, b->enc_seq, b->past > 0, cross_mask,
                    TRUE, FALSE };
  h = bart_attn_block (b, i, base, "encoder_attn", "encoder_attn_layer_norm",
                       &x, T);
  return bart_ffn (b, i, base, h, T);
}

/* BartEncoder on input_ids with the attention mask of ones the harness
 * passes. */
static int
bart_encoder (GsMb *b, int embed)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t S = b->enc_seq, T = b->batch * S;
  gs_mb_scope (b, -1, "model.encoder");
  gs_mg_module (g);
  gs_mg_host (g, GS_HOST_PY, 10);
  int e = bart_tokens (b, "encoder", embed, T);
  int pos = bart_positions (b, "encoder", S);
  int h = bart_embed_sum (b, "encoder", e, pos, T);
  int mask = bart_expand_mask (b, S, S);
  for (int i = 0; i < c->layers; i++)
    h = bart_encoder_layer (b, i, h, mask);
  return h;
}

/* BartForConditionalGeneration(input_ids, attention_mask,
 * decoder_input_ids): the encoder, the decoder (its causal mask from
 * _prepare_4d_causal_attention_mask without a decoder mask; the
 * encoder's mask expanded to the decoder's queries; the positions after
 * the cached tokens), lm_head tied to the shared embedding, +
 * final_logits_bias. */
GsMbOut
gs_mb_bart (GsMb *b)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t B = b->batch, S = b->seq, T = B * S, H = c->hidden;
  gs_mb_scope (b, -1, "model.shared");
  int embed = gs_mg_param (g, (int64_t) c->vocab * H, H);
  int enc = b->decoder_only ? gs_mg_input (g, B * b->enc_seq * H, H)
                            : bart_encoder (b, embed);
  gs_mb_scope (b, -1, "model.decoder");
  gs_mg_module (g);
  gs_mg_host (g, GS_HOST_PY, 10);
  int e = bart_tokens (b, "decoder", embed, T);
  gs_mb_scope (b, -1, "model.decoder");
  int self_mask = gs_mb_causal_mask_4d (b, FALSE, 0);
  int cross_mask = bart_expand_mask (b, S, b->enc_seq);
  int pos = bart_positions (b, "decoder", S);
  int h = bart_embed_sum (b, "decoder", e, pos, T);
  for (int i = 0; i < c->dec_layers; i++)
    h = bart_decoder_layer (b, i, h, self_mask, cross_mask, enc);
  gs_mb_scope (b, -1, "lm_head");
  int logits = gs_mg_linear (g, NULL, h, T, H, c->vocab,
                             c->tie_embeddings ? embed : -1, FALSE, FALSE);
  gs_mb_scope (b, -1, "final_logits_bias");
  int bias = gs_mg_input (g, c->vocab, c->vocab);
  logits = gs_mg_pointwise (g, "add", GS_BW_PASS, logits, bias, T, c->vocab,
                            1, 0, FALSE);
  gs_mg_val (g, logits)->keep = TRUE;
  return (GsMbOut) { logits, T, c->vocab };
}
