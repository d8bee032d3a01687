/* gpusim: building blocks the model builders share (see model-build.h).
 *
 * Each follows the transformers 4.36 module it names, op by op, as eager
 * PyTorch 2.1 executes it.  Two facts of eager PyTorch shape these lists:
 *
 *  - torch.matmul on [B,H,S,D] operands reshapes them to [B*H,S,D] for
 *    bmm; a head-split view (view + permute of a [B,S,H*D] tensor) cannot be
 *    merged that way when B > 1, so matmul copies it contiguous first (one
 *    clone kernel per such operand, inside the matmul call).
 *  - a pointwise op over a permuted tensor writes its output in the same
 *    permuted layout (TensorIterator keeps the input's stride order), so
 *    rotary-embedded q/k still need that copy.
 */
#include "config.h"
#include "workloads/model-build.h"

/* A node with an explicit output size (ops whose output shape is not their
 * rows x cols: topk, nonzero, gathers). */
static int
add_node (GsMg *g, GsOpKind kind, const char *name, GsBwRule rule,
          GsHostClass host, const int *in, int n_in, int64_t rows,
          int64_t cols, int64_t out_elems, int64_t out_cols)
{
  GsOp op;
  gs_op_init (&op);
  op.kind = kind;
  op.name = (char *) name;
  op.dtype = g->opt.dtype;
  op.rows = rows;
  op.cols = cols;
  op.reduce_dim = 1;
  op.alu_per_elem = 1;
  int v = gs_mg_add (g, &op, rule, host, in, n_in, out_elems, out_cols);
  op.name = NULL;
  return v;
}

/* The first kernel of a framework call: it starts the call and pays the
 * op's host cost. */
static int
node (GsMg *g, GsOpKind kind, const char *name, GsBwRule rule, const int *in,
      int n_in, int64_t rows, int64_t cols, int64_t out_elems,
      int64_t out_cols)
{
  gs_mg_next_call (g);
  return add_node (g, kind, name, rule, GS_HOST_OP, in, n_in, rows, cols,
                   out_elems, out_cols);
}

static gboolean
half_dtype (const GsMg *g)
{
  return g->opt.dtype == GS_DTYPE_FP16 || g->opt.dtype == GS_DTYPE_BF16;
}

/* ------------------------------------------------------------ attention */

static int
attn_scale (GsMg *g, const GsMbAttn *a, int s, int64_t rows, int64_t cols)
{
  if (a->scale == GS_MB_SCALE_FULL)
    {
      int c = gs_mg_fill (g, "full", 1, 1);
      return gs_mg_pointwise (g, "div", GS_BW_SCALE, s, c, rows, cols, 1, 0,
                              FALSE);
    }
  if (a->scale == GS_MB_SCALE_DIV || a->scale == GS_MB_SCALE_MUL)
    s = gs_mg_pointwise (g, a->scale == GS_MB_SCALE_DIV ? "div" : "mul",
                         GS_BW_SCALE, s, -1, rows, cols, 1, 0, TRUE);
  if (a->softcap)
    {
      /* Gemma-2: attn_weights / cap; torch.tanh; * cap. */
      s = gs_mg_pointwise (g, "div", GS_BW_SCALE, s, -1, rows, cols, 1, 0,
                           TRUE);
      s = gs_mg_unary (g, "tanh", s, rows, cols, 8, 2, "tanh_backward");
      s = gs_mg_pointwise (g, "mul", GS_BW_SCALE, s, -1, rows, cols, 1, 0,
                           TRUE);
    }
  return s;
}

/* Marks the op just added as reading value V broadcast: when V is larger
 * than a row, with PERIOD of its elements streamed between two uses of
 * one (GsOp.bcast_period; 0: all of it) and ESIZE bytes each (0: the
 * op's dtype). */
static void
mark_bcast (GsMg *g, int v, int64_t period, int esize)
{
  GsOp *op = &gs_mg_last (g)->op;
  int64_t e = gs_mg_val (g, v)->elems;
  if (e <= op->cols || e >= gs_op_elems (op))
    return;
  op->bcast_elems = e;
  op->bcast_period = period;
  op->bcast_esize = esize;
}

/* where(causal_mask, w, mask_value) over the scores (ROWS x COLS). */
static int
attn_where (GsMg *g, const GsMbAttn *a, int s, int64_t rows, int64_t cols)
{
  /* where(causal_mask, w, mask_value): the bool buffer slice and the
   * 0-dim mask value broadcast.  GPT-2 makes the value on the GPU
   * (torch.full); GPT-NeoX on the host, then copies it over, which
   * synchronizes the stream (every layer waits for the GPU). */
  int mv;
  if (a->causal_where == GS_MB_MASK_WHERE_SYNC)
    {
      gs_mg_host (g, GS_HOST_SYNC, 1);
      mv = gs_mg_input (g, 1, 1);
    }
  else if (a->causal_where == GS_MB_MASK_WHERE_KEPT)
    mv = gs_mg_input (g, 1, 1);
  else
    mv = gs_mg_fill (g, "full", 1, 1);
  /* GPT-BigCode's upcast_masked_softmax: NNC fuses x.to(float32),
   * * unscale and where into one kernel writing fp32. */
  gboolean fused = a->upcast_fused && half_dtype (g);
  s = gs_mg_pointwise (g, fused ? "fused_to_mul_where" : "where",
                       GS_BW_UNARY, s, mv, rows, cols, fused ? 3 : 1, 0,
                       FALSE);
  GsMgNode *n = gs_mg_last (g);
  n->op.n_small_in = 2;
  n->bw_name = "where";
  if (fused)
    n->op.dtype = GS_DTYPE_FP32;
  if (a->seq_q > 1)        /* the bool buffer's [Sq, Sk] slice */
    {
      n->op.bcast_elems = a->seq_q * cols;
      n->op.bcast_esize = 1;
    }
  return s;
}

/* Masks and biases added to the scores [B,H,Sq,Sk] (ROWS = B x H x Sq,
 * COLS = Sk).  A mask with a batch dimension, [B,1,Sq,Sk] or [B,1,1,Sk],
 * is shared by the heads of its sequence: one slab of Sq x Sk (or Sk)
 * between uses; GPT-2's bool buffer [1,1,Sq,Sk] and T5's bias
 * [1,H,Sq,Sk] are used again only after all of them. */
static int
attn_mask (GsMg *g, const GsMbAttn *a, int s, int64_t rows, int64_t cols)
{
  int64_t batch = rows / MAX (a->heads * a->seq_q, 1);
  if (a->mask >= 0 && a->mask_fill)
    {
      /* torch.masked_fill(scores, mask, finfo.min): the bool mask read
       * broadcast over the heads, one slab per sequence. */
      s = gs_mg_pointwise (g, "masked_fill", GS_BW_UNARY, s, a->mask, rows,
                           cols, 1, 0, FALSE);
      GsMgNode *n = gs_mg_last (g);
      n->bw_name = "masked_fill";
      int64_t m = gs_mg_val (g, a->mask)->elems;
      mark_bcast (g, a->mask, m / MAX (batch, 1), 1);
      return s;
    }
  if (a->causal_where != GS_MB_MASK_NONE && !a->where_first)
    s = attn_where (g, a, s, rows, cols);
  if (a->mask >= 0)
    {
      s = gs_mg_pointwise (g, "add", GS_BW_ADD_BCAST, s, a->mask, rows,
                           cols, 1, 0, FALSE);
      int64_t m = gs_mg_val (g, a->mask)->elems;
      gboolean batched = m == batch * a->seq_q * cols || m == batch * cols;
      mark_bcast (g, a->mask, batched ? m / MAX (batch, 1) : 0, 0);
      if (a->mask_max)
        {
          /* torch.max(w, torch.tensor(min, device=...)): the scalar is
           * copied host-to-device without non_blocking, which synchronizes
           * the stream (every OPT layer waits for the GPU here). */
          gs_mg_host (g, GS_HOST_SYNC, 1);
          s = gs_mg_pointwise (g, "maximum", GS_BW_MAXIMUM, s, -1, rows,
                               cols, 1, 0, FALSE);
          GsMgNode *n = gs_mg_last (g);
          n->op.n_small_in = 1;
        }
    }
  if (a->bias >= 0)
    {
      gboolean full = gs_mg_val (g, a->bias)->elems >= rows * cols;
      s = gs_mg_pointwise (g, "add_", full ? GS_BW_PASS : GS_BW_ADD_BCAST, s,
                           a->bias, rows, cols, 1, 0, FALSE);
      mark_bcast (g, a->bias, 0, 0);
    }
  return s;
}

static int
attn_softmax (GsMg *g, const GsMbAttn *a, int s, int64_t rows, int64_t cols,
              gboolean fp32)
{
  gboolean cast = half_dtype (g) && (a->softmax_fp32 || a->softmax_float);
  if (cast && a->softmax_float)      /* scores.float() */
    s = gs_mg_cast (g, s, rows, cols);
  /* softmax(x, dtype=float32) converts x first (toType) unless it is fp32
   * already or fp16 (ATen's half_to_float kernel takes fp16 only): bf16
   * scores (Llama's family, BLOOM's) take that conversion. */
  if (cast && !a->softmax_float && !a->upcast_fused && !fp32
      && g->opt.dtype == GS_DTYPE_BF16)
    s = gs_mg_cast (g, s, rows, cols);
  /* Falcon's ALiBi scores, fp32, softmax(dtype=hidden dtype): converted
   * back first, the softmax in half precision. */
  if (fp32 && !cast)
    s = gs_mg_cast (g, s, rows, cols);
  int p = gs_mg_softmax (g, s, rows, cols);
  if (cast)
    {
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
      p = gs_mg_cast (g, p, rows, cols);
    }
  return p;
}

static int
attn_fused (GsMb *b, const GsMbAttn *a, int q, int k, int v)
{
  GsMg *g = b->g;
  int64_t kvh = a->kv_heads > 0 ? a->kv_heads : a->heads;
  /* Hugging Face's SDPA attention (transformers 4.36, PyTorch 2.1)
   * repeats grouped K/V heads before the call, as eager does; its
   * flash_attention_2 passes them to flash_attn_func as they are. */
  if (g->opt.sdpa && kvh < a->heads)
    {
      int64_t rows = b->batch * a->heads * a->seq_k;
      k = gs_mg_copy (g, "clone", GS_BW_EXPAND, k, rows, a->head_dim);
      gs_mg_last (g)->op.strided = TRUE;
      v = gs_mg_copy (g, "clone", GS_BW_EXPAND, v, rows, a->head_dim);
      gs_mg_last (g)->op.strided = TRUE;
      kvh = a->heads;
    }
  /* DeepSeek's values are narrower than its scores' heads: transformers'
   * flash_attention_2 pads them (F.pad) to the scores' width and slices
   * the output back; SDPA takes them as they are (the kernel is modelled
   * at the scores' width). */
  int64_t D = a->head_dim, Dv = a->v_head_dim > 0 ? a->v_head_dim : D;
  gboolean pad_v = Dv < D && !g->opt.sdpa;
  if (pad_v)
    v = gs_mg_copy (g, "constant_pad_nd", GS_BW_PASS, v,
                    b->batch * kvh * a->seq_k, D);
  int o = gs_mg_attention (g, q, k, v, b->batch, a->heads, kvh, a->seq_q,
                           a->seq_k, a->head_dim, a->causal,
                           g->opt.training ? a->p_drop : 0, g->opt.attn, 0);
  /* transformers' flash_attention_2 hands flash_attn the sliding window
   * and (Gemma-2, flash_attn >= 2.6) the soft-cap; SDPA takes neither. */
  if (g->opt.attn == GS_ATTN_FLASH2 && !g->opt.sdpa)
    {
      GsOp *op = &gs_mg_last (g)->op;
      op->window = a->window;
      op->softcap = a->softcap;
    }
  /* FlashAttention-2 takes and returns [B,S,H,D]; SDPA's memory-efficient
   * kernel returns [B,H,S,D], so the head merge copies. */
  int64_t rows = b->batch * a->seq_q;
  if (g->opt.attn == GS_ATTN_MEM_EFF && a->seq_q > 1)
    o = gs_mg_copy (g, "contiguous", GS_BW_PASS, o, rows, a->heads * Dv);
  else if (pad_v)   /* attn_output[..., :v_head_dim].reshape(): a copy */
    o = gs_mg_copy (g, "contiguous", GS_BW_PASS, o, rows, a->heads * Dv);
  else if (Dv < D)
    o = gs_mg_slice (g, o, rows * a->heads * Dv, a->heads * Dv);
  gs_mg_host (g, GS_HOST_VIEW, 2);
  return o;
}

/* Does Inductor replace this eager attention with scaled_dot_product_
 * attention?  Its pattern matcher (torch/_inductor/fx_passes/
 * fuse_attention.py, PyTorch 2.1) rewrites matmul(q, k^T) divided by a
 * Python number, optionally plus an additive mask tensor of the scores'
 * dtype, softmax, optionally dropout, matmul(., v) -- BERT's and Llama's
 * eager attention.  GPT-2 divides by a 0-dim tensor (torch.full), GPT-Neo
 * and T5 do not scale, GPT-2/Neo mask with where() and OPT uses 3-D bmm
 * and torch.max: none of those match, nor Gemma-2's (a multiply and the
 * soft-cap's tanh between the scores and the mask).  Softmax with
 * explicit casts (half dtypes with softmax in fp32) is left as it is. */
static gboolean
inductor_sdpa (const GsMg *g, const GsMbAttn *a)
{
  return g->opt.compiled && !g->eager && g->opt.attn == GS_ATTN_EAGER
         && a->scale == GS_MB_SCALE_DIV && !a->softcap && !a->mq_bmm
         && a->causal_where == GS_MB_MASK_NONE && !a->mask_max
         && a->bias < 0
         && !(half_dtype (g) && (a->softmax_fp32 || a->softmax_float));
}

/* The replacement: aten.scaled_dot_product_attention(q.contiguous(),
 * k.contiguous(), v.contiguous(), attn_mask=mask, dropout_p), from Q, K, V
 * with one K/V head per query head (repeat_kv runs before the pattern) to
 * the [B,H,S,D] context.  With a mask PyTorch 2.1 dispatches to the
 * memory-efficient kernel (flash takes no mask), without one to
 * FlashAttention-2 where it runs (half dtypes, sm80+; gemm-attn.c falls
 * back otherwise).  The mask keeps causality, so every key block is
 * computed. */
static int
attn_inductor_sdpa (GsMb *b, const GsMbAttn *a, int q, int k, int v,
                    gboolean copy_k, gboolean copy_v)
{
  GsMg *g = b->g;
  int64_t B = b->batch, H = a->heads, D = a->head_dim;
  int64_t sq = a->seq_q, sk = a->seq_k;
  if (a->copy_q && sq > 1)
    q = gs_mg_copy (g, "contiguous", GS_BW_PASS, q, B * H * sq, D);
  /* A K/V head broadcast to every query head (Falcon's multi-query) is
   * copied once per head: its gradient sums the copies back. */
  if (copy_k)
    k = gs_mg_copy (g, "contiguous", gs_mg_val (g, k)->elems < B * H * sk * D
                    ? GS_BW_EXPAND : GS_BW_PASS, k, B * H * sk, D);
  if (copy_v)
    v = gs_mg_copy (g, "contiguous", gs_mg_val (g, v)->elems < B * H * sk * D
                    ? GS_BW_EXPAND : GS_BW_PASS, v, B * H * sk, D);
  int64_t mask_rows = a->mask < 0 ? 0 : a->mask_per_query ? sq : 1;
  GsAttnImpl impl = mask_rows > 0 ? GS_ATTN_MEM_EFF : GS_ATTN_FLASH2;
  return gs_mg_attention (g, q, k, v, B, H, H, sq, sk, D, FALSE,
                          g->opt.training ? a->p_drop : 0, impl, mask_rows);
}

/* Eager attention from Q, K, V (one K/V head per query head) to the
 * [B,H,S,D] context: matmul, scale, mask, softmax, dropout, matmul.
 * With one sequence in the batch, matmul's reshape of a head-split view to
 * [H,S,D] is a view (a dimension of size 1 merges with any stride) and
 * bmm takes the strided matrices as they are, so no operand is copied and
 * q @ k^T runs on the transposed view of k (a "tn" kernel). */
static int
attn_eager (GsMb *b, const GsMbAttn *a, int q, int k, int v,
            gboolean copy_k, gboolean copy_v)
{
  GsMg *g = b->g;
  int64_t bh = b->batch * a->heads, D = a->head_dim;
  int64_t sq = a->seq_q, sk = a->seq_k, rows = bh * sq;
  /* The GEMMs' batches: one per head, or (multi-query bmm) one per
   * sequence over all its queries' heads. */
  int64_t gb = a->mq_bmm ? b->batch : bh;
  int64_t gm = a->mq_bmm ? a->heads * sq : sq;
  gboolean copy_q = a->copy_q && sq > 1;
  if (b->batch == 1)
    copy_q = copy_k = copy_v = FALSE;
  gboolean fp32 = a->qk_fp32 && half_dtype (g);
  if (fp32 && !a->qk_fp32_in)
    {
      /* query.to(float32), key.to(float32): copies in their layouts. */
      q = gs_mg_cast (g, q, rows, D);
      k = gs_mg_cast (g, k, gs_mg_val (g, k)->elems / D, D);
    }
  int s;
  guint first = g->nodes->len;      /* matmul's copies, then the GEMM */
  if (a->baddbmm || a->baddbmm_empty)
    {
      /* torch.baddbmm(torch.zeros(...), q, k^T, beta=1, alpha=scale):
       * the epilogue scales and adds the zeros it reads; with
       * torch.empty and beta=0 it only scales.  BLOOM's
       * alibi.baddbmm(q, k, beta=1, alpha=1/sqrt(d)): baddbmm first copies
       * its self, broadcast over the queries, into the output (beta != 0),
       * then reads it there. */
      int c0 = -1;
      if (a->alibi >= 0)
        {
          c0 = gs_mg_pointwise (g, "copy_", GS_BW_NONE, -1, a->alibi, rows,
                                sk, 0, 0, FALSE);
          gs_mg_last (g)->host = GS_HOST_NONE;
          mark_bcast (g, a->alibi, 0, 0);
        }
      else if (a->baddbmm)
        {
          /* The zeros, and baddbmm's copy of them into its output (beta
           * != 0: cuBLAS adds the output it overwrites). */
          c0 = gs_mg_fill (g, "zeros", rows, sk);
          c0 = gs_mg_pointwise (g, "copy_", GS_BW_NONE, c0, -1, rows, sk, 0,
                                0, FALSE);
          gs_mg_last (g)->host = GS_HOST_NONE;
        }
      if (a->baddbmm_empty)
        gs_mg_host (g, GS_HOST_VIEW, 1);          /* torch.empty */
      s = gs_mg_matmul (g, "baddbmm", q, k, gb, gm, sk, D, FALSE, TRUE,
                        copy_q, copy_k);
      GsMgNode *n = gs_mg_last (g);
      g_free (n->op.name);
      n->op.name = g_strdup ("baddbmm");
      if (c0 >= 0)
        {
          n->op.c_in = TRUE;
          n->in[2] = c0;
          n->n_in = 3;
        }
    }
  else
    s = gs_mg_matmul (g, "matmul", q, k, gb, gm, sk, D, FALSE, TRUE, copy_q,
                      copy_k);
  /* The scores are fp32 from the GEMM on (Phi's fp32 q and k) or from
   * their cast after it (scores.to(float32): BLOOM's in fp16, Falcon's
   * ALiBi scores in half precision); the bias, scaling and mask on them
   * run in fp32, and the softmax takes fp32 scores. */
  guint from = fp32 && a->qk_fp32_in ? first : g->nodes->len - 1;
  gboolean up = (a->upcast == GS_MB_UPCAST_FP16
                 && g->opt.dtype == GS_DTYPE_FP16)
                || (a->upcast == GS_MB_UPCAST_HALF && half_dtype (g));
  if (up)
    {
      s = gs_mg_cast (g, s, rows, sk);
      from = g->nodes->len;
    }
  fp32 = fp32 || up;
  if (a->alibi >= 0 && !a->baddbmm && !a->alibi_after_scale)
    {
      /* Falcon: scores + alibi.view(B, H, 1, -1), then *= inv_norm_factor
       * (in place). */
      s = gs_mg_pointwise (g, "add", GS_BW_ADD_BCAST, s, a->alibi, rows, sk,
                           1, 0, FALSE);
      mark_bcast (g, a->alibi, 0, 0);
      s = gs_mg_pointwise (g, "mul_", GS_BW_SCALE, s, -1, rows, sk, 1, 0,
                           TRUE);
    }
  if (a->where_first)
    s = attn_where (g, a, s, rows, sk);
  s = attn_scale (g, a, s, rows, sk);
  if (a->alibi >= 0 && a->alibi_after_scale)
    {
      /* MPT: scores + position_bias, the [H, 1, Sk] slice read again for
       * every sequence. */
      s = gs_mg_pointwise (g, "add", GS_BW_ADD_BCAST, s, a->alibi, rows, sk,
                           1, 0, FALSE);
      mark_bcast (g, a->alibi, 0, 0);
    }
  s = attn_mask (g, a, s, rows, sk);
  for (guint i = from; fp32 && i < g->nodes->len; i++)
    gs_mg_node (g, i)->op.dtype = GS_DTYPE_FP32;
  int p = attn_softmax (g, a, s, rows, sk, fp32);
  p = gs_mg_dropout (g, p, rows, sk, a->p_drop, a->drop_module);
  int64_t Dv = a->v_head_dim > 0 ? a->v_head_dim : D;
  return gs_mg_matmul (g, a->mq_bmm ? "bmm" : "matmul", p, v, gb, gm, Dv, sk,
                       FALSE, FALSE, FALSE, copy_v);
}

void
gs_mb_scope (GsMb *b, int layer, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *s = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  gs_mg_scope (b->g, s, layer);
}

int
gs_mb_attention (GsMb *b, const GsMbAttn *a, int q, int k, int v)
{
  GsMg *g = b->g;
  gboolean train = g->opt.training;
  /* The head-split views' gradients are reshaped back: one copy each. */
  if (train && a->q_view)
    q = gs_mg_view_bw_copy (g, q);
  if (train && a->k_view)
    k = gs_mg_view_bw_copy (g, k);
  if (train && a->v_view)
    v = gs_mg_view_bw_copy (g, v);
  if (g->opt.attn != GS_ATTN_EAGER)
    return attn_fused (b, a, q, k, v);

  int64_t B = b->batch, H = a->heads, D = a->head_dim;
  int64_t Dv = a->v_head_dim > 0 ? a->v_head_dim : D;
  int64_t kvh = a->kv_heads > 0 ? a->kv_heads : H;
  int64_t sq = a->seq_q, sk = a->seq_k;
  gboolean copy_k = a->copy_k, copy_v = a->copy_v;
  if (kvh < H && !a->mq_bmm)
    {
      /* repeat_kv: expand + reshape copies each KV head n_rep times. */
      k = gs_mg_copy (g, "clone", GS_BW_EXPAND, k, B * H * sk, D);
      gs_mg_last (g)->op.strided = TRUE;
      v = gs_mg_copy (g, "clone", GS_BW_EXPAND, v, B * H * sk, D);
      gs_mg_last (g)->op.strided = TRUE;
      copy_k = copy_v = FALSE;
    }
  int ctx = inductor_sdpa (g, a)
            ? attn_inductor_sdpa (b, a, q, k, v, copy_k, copy_v)
            : attn_eager (b, a, q, k, v, copy_k, copy_v);
  /* Merge heads: permute/transpose then contiguous (a no-op for one query
   * token: the moved dimension has size 1). */
  if (sq > 1 && !a->mq_bmm)
    {
      if (train)
        ctx = gs_mg_view_bw_copy (g, ctx);
      ctx = gs_mg_copy (g, "contiguous", GS_BW_PASS, ctx, B * sq, H * Dv);
    }
  gs_mg_host (g, GS_HOST_VIEW, 2);
  return ctx;
}

/* ------------------------------------------------------------ activations */

/* NewGELUActivation: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
 * evaluated left to right: mul, pow, mul, add, mul, tanh, add, mul. */
static int
gelu_new (GsMg *g, int x, int64_t rows, int64_t cols)
{
  int half = gs_mg_pointwise (g, "mul", GS_BW_SCALE, x, -1, rows, cols, 1, 0,
                              TRUE);
  int cube = gs_mg_pointwise (g, "pow", GS_BW_POW, x, -1, rows, cols, 2, 0,
                              TRUE);
  int w = gs_mg_pointwise (g, "mul", GS_BW_SCALE, cube, -1, rows, cols, 1, 0,
                           TRUE);
  int inner = gs_mg_pointwise (g, "add", GS_BW_PASS, x, w, rows, cols, 1, 0,
                               FALSE);
  int u = gs_mg_pointwise (g, "mul", GS_BW_SCALE, inner, -1, rows, cols, 1,
                           0, TRUE);
  int t = gs_mg_unary (g, "tanh", u, rows, cols, 8, 2, "tanh_backward");
  int one = gs_mg_pointwise (g, "add", GS_BW_PASS, t, -1, rows, cols, 1, 0,
                             TRUE);
  return gs_mg_pointwise (g, "mul", GS_BW_MUL, half, one, rows, cols, 1, 0,
                          FALSE);
}

int
gs_mb_act (GsMb *b, GsHfAct act, int x, int64_t rows, int64_t cols)
{
  GsMg *g = b->g;
  gs_mg_module (g);
  switch (act)
    {
    case GS_ACT_GELU:
      return gs_mg_unary (g, "gelu", x, rows, cols, 20, 0, "gelu_backward");
    case GS_ACT_GELU_TANH:
      return gs_mg_unary (g, "gelu", x, rows, cols, 10, 2, "gelu_backward");
    case GS_ACT_RELU:
      return gs_mg_unary (g, "relu", x, rows, cols, 1, 0,
                          "threshold_backward");
    case GS_ACT_SILU:
      return gs_mg_unary (g, "silu", x, rows, cols, 4, 2, "silu_backward");
    case GS_ACT_GELU_NEW:
      return gelu_new (g, x, rows, cols);
    }
  g_assert_not_reached ();
}

/* X times a norm's weight of COLS. */
static int
weight_mul (GsMg *g, int x, int64_t rows, int64_t cols)
{
  int w = gs_mg_param (g, cols, cols);
  return gs_mg_pointwise (g, "mul", GS_BW_MUL, x, w, rows, cols, 1, 0,
                          FALSE);
}

/* The op just added runs in fp32 (a half-precision model's upcast
 * section).  Under torch.compile the section fuses into one kernel that
 * loads and stores the model's dtype, so its ops keep it there. */
static void
in_fp32 (GsMg *g)
{
  if (!g->opt.compiled)
    gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
}

/* X * torch.rsqrt(VAR + eps) in fp32 (a norm's upcast section): add,
 * rsqrt, mul. */
static int
scale_by_rsqrt (GsMg *g, int x, int var, int64_t rows, int64_t cols)
{
  int e = gs_mg_pointwise (g, "add", GS_BW_PASS, var, -1, rows, 1, 1, 0,
                           TRUE);
  in_fp32 (g);
  int r = gs_mg_pointwise (g, "rsqrt", GS_BW_RSQRT, e, -1, rows, 1, 1, 1,
                           FALSE);
  in_fp32 (g);
  int y = gs_mg_pointwise (g, "mul", GS_BW_MUL, x, r, rows, cols, 1, 0,
                           FALSE);
  in_fp32 (g);
  return y;
}

/* LlamaRMSNorm, or with WEIGHT_FIRST Olmo2RMSNorm: (weight * x).to(dtype),
 * the weight multiplied in fp32 before the cast back.  In half precision
 * the norm computes in fp32 (hidden_states.to(torch.float32)). */
static int
rmsnorm (GsMb *b, int x, int64_t rows, int64_t cols, gboolean weight_first)
{
  GsMg *g = b->g;
  gboolean half = half_dtype (g);
  gs_mg_module (g);
  if (half)   /* hidden_states.to(torch.float32) */
    x = gs_mg_cast (g, x, rows, cols);
  int p = gs_mg_pointwise (g, "pow", GS_BW_POW, x, -1, rows, cols, 1, 0,
                           TRUE);
  in_fp32 (g);
  int m = gs_mg_reduce (g, "mean", GS_BW_MEAN, p, rows, cols, 1);
  in_fp32 (g);
  int y = scale_by_rsqrt (g, x, m, rows, cols);
  if (weight_first)   /* self.weight * x, the product in fp32 */
    {
      y = weight_mul (g, y, rows, cols);
      in_fp32 (g);
    }
  if (half)   /* .to(input_dtype) */
    y = gs_mg_cast (g, y, rows, cols);
  return weight_first ? y : weight_mul (g, y, rows, cols);
}

int
gs_mb_rmsnorm (GsMb *b, int x, int64_t rows, int64_t cols)
{
  return rmsnorm (b, x, rows, cols, FALSE);
}

int
gs_mb_olmo2_rmsnorm (GsMb *b, int x, int64_t rows, int64_t cols)
{
  return rmsnorm (b, x, rows, cols, TRUE);
}

int
gs_mb_gemma_rmsnorm (GsMb *b, int x, int64_t rows, int64_t cols)
{
  GsMg *g = b->g;
  gboolean half = half_dtype (g);
  gs_mg_module (g);
  if (half)   /* self._norm(x.float()) */
    x = gs_mg_cast (g, x, rows, cols);
  int p = gs_mg_pointwise (g, "pow", GS_BW_POW, x, -1, rows, cols, 1, 0,
                           TRUE);
  in_fp32 (g);
  int m = gs_mg_reduce (g, "mean", GS_BW_MEAN, p, rows, cols, 1);
  in_fp32 (g);
  int y = scale_by_rsqrt (g, x, m, rows, cols);
  /* output * (1.0 + self.weight.float()) */
  int w = gs_mg_param (g, cols, cols);
  if (half)
    w = gs_mg_cast (g, w, 1, cols);
  int w1 = gs_mg_pointwise (g, "add", GS_BW_PASS, w, -1, 1, cols, 1, 0,
                            TRUE);
  in_fp32 (g);
  y = gs_mg_pointwise (g, "mul", GS_BW_MUL, y, w1, rows, cols, 1, 0, FALSE);
  in_fp32 (g);
  if (half)   /* .type_as(x) */
    y = gs_mg_cast (g, y, rows, cols);
  return y;
}

int
gs_mb_cohere_layernorm (GsMb *b, int x, int64_t rows, int64_t cols,
                        int64_t weight)
{
  GsMg *g = b->g;
  gboolean half = half_dtype (g);
  gs_mg_module (g);
  if (half)   /* hidden_states.to(torch.float32) */
    x = gs_mg_cast (g, x, rows, cols);
  int mean = gs_mg_reduce (g, "mean", GS_BW_MEAN, x, rows, cols, 1);
  in_fp32 (g);
  /* variance = (x - mean).pow(2).mean(-1) */
  int d = gs_mg_pointwise (g, "sub", GS_BW_ADD_BCAST, x, mean, rows, cols, 1,
                           0, FALSE);
  in_fp32 (g);
  int p = gs_mg_pointwise (g, "pow", GS_BW_POW, d, -1, rows, cols, 1, 0,
                           TRUE);
  in_fp32 (g);
  int var = gs_mg_reduce (g, "mean", GS_BW_MEAN, p, rows, cols, 1);
  in_fp32 (g);
  /* (x - mean) * torch.rsqrt(variance + eps) */
  d = gs_mg_pointwise (g, "sub", GS_BW_ADD_BCAST, x, mean, rows, cols, 1, 0,
                       FALSE);
  in_fp32 (g);
  int y = scale_by_rsqrt (g, d, var, rows, cols);
  /* self.weight.to(torch.float32) * hidden_states */
  int w = gs_mg_param (g, weight, cols);
  if (half)
    w = gs_mg_cast (g, w, weight / cols, cols);
  y = gs_mg_pointwise (g, "mul", GS_BW_MUL, y, w, rows, cols, 1, 0, FALSE);
  in_fp32 (g);
  if (half)   /* .to(input_dtype) */
    y = gs_mg_cast (g, y, rows, cols);
  return y;
}

/* ------------------------------------------------------------ caches/masks */

int
gs_mb_cache_cat (GsMb *b, int x, int64_t heads, int64_t head_dim)
{
  /* A forward with use_cache (the models' default, which Hugging Face
   * turns off under gradient checkpointing) returns every layer's K and V
   * in past_key_values: they outlive the layer. */
  if (b->past == 0 && !b->g->opt.checkpoint)
    gs_mg_val (b->g, x)->held = TRUE;
  if (b->past == 0)
    return x;
  GsMg *g = b->g;
  int64_t len = b->past + b->seq;
  gs_mg_input (g, b->batch * heads * b->past * head_dim, head_dim);
  int y = gs_mg_copy (g, "cat", GS_BW_NONE, x, b->batch * heads * len,
                      head_dim);
  gs_mg_val (g, y)->keep = TRUE;
  gs_mg_val (g, y)->cache = TRUE;
  return y;
}

int
gs_mb_cache_window (GsMb *b, int x, int64_t heads, int64_t head_dim,
                    int64_t window)
{
  if (b->past == 0 || window <= 0 || b->past + b->seq <= window)
    return gs_mb_cache_cat (b, x, heads, head_dim);
  GsMg *g = b->g;
  int64_t keep = window - b->seq;
  gs_mg_input (g, b->batch * heads * keep * head_dim, head_dim);
  int y = gs_mg_copy (g, "cat", GS_BW_NONE, x, b->batch * heads * window,
                      head_dim);
  gs_mg_val (g, y)->keep = TRUE;
  gs_mg_val (g, y)->cache = TRUE;
  return y;
}

int
gs_mb_causal_mask_4d (GsMb *b, gboolean have_2d, int64_t window)
{
  GsMg *g = b->g;
  int64_t S = b->seq, L = b->past + b->seq, B = b->batch;
  int causal = -1;
  gs_mg_host (g, GS_HOST_PY, 6);
  if (S > 1 || window > 0)
    {
      /* _make_causal_mask: full, arange, +1, <, masked_fill_ (+ zeros and
       * cat for the cached part). */
      gs_mg_fill (g, "full", S, S);
      gs_mg_fill (g, "arange", 1, S);
      gs_mg_pointwise (g, "add", GS_BW_NONE, -1, -1, 1, S, 1, 0, TRUE);
      gs_mg_pointwise (g, "lt", GS_BW_NONE, -1, -1, S, S, 1, 0, FALSE);
      causal = gs_mg_pointwise (g, "masked_fill_", GS_BW_NONE, -1, -1, S, S,
                                1, 0, TRUE);
      if (b->past > 0)
        {
          gs_mg_fill (g, "zeros", S, b->past);
          causal = gs_mg_copy (g, "cat", GS_BW_NONE, -1, S, L);
        }
      if (window > 0)
        {
          /* context_mask = 1 - triu(ones_like(mask, int), diagonal);
           * mask.masked_fill_(context_mask.bool(), min) */
          gs_mg_fill (g, "ones_like", S, L);
          gs_mg_pointwise (g, "triu", GS_BW_NONE, -1, -1, S, L, 1, 0, FALSE);
          gs_mg_pointwise (g, "rsub", GS_BW_NONE, -1, -1, S, L, 1, 0, TRUE);
          gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, S, L, 0, 0,
                           FALSE);
          causal = gs_mg_pointwise (g, "masked_fill_", GS_BW_NONE, causal,
                                    -1, S, L, 1, 0, TRUE);
        }
      gs_mg_host (g, GS_HOST_VIEW, 2);
    }
  if (!have_2d)
    return causal;
  /* _expand_mask: 1 - mask, then masked_fill(mask.to(bool), min). */
  int m = gs_mg_pointwise (g, "rsub", GS_BW_NONE, -1, -1, B * S, L, 1, 0,
                           TRUE);
  gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, m, -1, B * S, L, 0, 0, FALSE);
  gs_mg_copy (g, "clone", GS_BW_NONE, m, B * S, L);
  m = gs_mg_pointwise (g, "masked_fill_", GS_BW_NONE, m, -1, B * S, L, 1, 0,
                       TRUE);
  if (causal >= 0)
    {
      /* causal.masked_fill(expanded.bool(), min) */
      gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, m, -1, B * S, L, 0, 0,
                       FALSE);
      gs_mg_copy (g, "clone", GS_BW_NONE, causal, B * S, L);
      m = gs_mg_pointwise (g, "masked_fill_", GS_BW_NONE, m, -1, B * S, L, 1,
                           0, TRUE);
    }
  return m;
}

/* build_alibi_tensor (transformers 4.36's, BLOOM's and Falcon's): the
 * base of the closest power of two P <= HEADS made with torch.tensor(x,
 * device=...) (a Python number copied to the GPU: the host waits),
 * arange(1, 1 + P), pow; for heads beyond P a second base, arange of
 * every other power, pow, cat; then ((mask.cumsum(-1) - 1) * mask)[:,
 * None, :], slopes[..., None] * that ([B, H, Sk] in fp32), reshape (a
 * view) and .to(dtype). */
int
gs_mb_alibi (GsMb *b, int64_t heads)
{
  GsMg *g = b->g;
  int64_t B = b->batch, L = b->past + b->seq;
  int64_t p2 = 1;
  while (p2 * 2 <= heads)
    p2 *= 2;
  gs_mg_host (g, GS_HOST_PY, 6);     /* log2, floor, the bases' powers */
  int64_t n = p2;
  int slopes = -1;
  for (int part = 0; part < 2 && n > 0; part++)
    {
      gs_mg_host (g, GS_HOST_SYNC, 1);
      int base = gs_mg_input (g, 1, 1);
      gs_mg_fill (g, "arange", 1, n);
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
      int pw = gs_mg_pointwise (g, "pow", GS_BW_NONE, -1, base, 1, n, 2, 0,
                                FALSE);
      gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
      if (part == 1)
        {
          pw = gs_mg_copy (g, "cat", GS_BW_NONE, pw, 1, heads);
          gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
        }
      slopes = pw;
      n = MIN (p2, heads - p2);
    }
  /* The mask: the model's torch.ones (fp32), or generate()'s. */
  int pos = gs_mg_pointwise (g, "cumsum", GS_BW_NONE, -1, -1, B, L, 1, 0,
                             FALSE);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  pos = gs_mg_pointwise (g, "sub", GS_BW_NONE, pos, -1, B, L, 1, 0, TRUE);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  pos = gs_mg_pointwise (g, "mul", GS_BW_NONE, pos, -1, B, L, 1, 0, FALSE);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  gs_mg_host (g, GS_HOST_VIEW, 2);   /* [:, None, :], slopes[..., None] */
  int alibi = gs_mg_pointwise (g, "mul", GS_BW_NONE, -1, slopes, B * heads,
                               L, 1, 0, FALSE);
  GsMgNode *nd = gs_mg_last (g);
  nd->op.dtype = GS_DTYPE_FP32;
  nd->op.n_small_in = 2;             /* slopes [H, 1] and positions [B, 1, L] */
  nd->in[0] = pos;
  gs_mg_host (g, GS_HOST_VIEW, 1);   /* reshape */
  if (half_dtype (g))
    alibi = gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, alibi, -1, B * heads,
                             L, 0, 0, FALSE);
  return alibi;
}

/* ------------------------------------------------------------ MoE */

int64_t
gs_mb_expert_tokens (const GsMb *b, int expert, int64_t tokens, int top_k,
                     int capacity)
{
  int64_t E = b->cfg->experts, B = b->batch;
  if (b->g->opt.balanced_routing)
    {
      /* The batch's tokens x top_k choices dealt out evenly: a decode
       * step's B tokens reach min (B x top_k, E) experts, not top_k.  A
       * capacity caps each sequence's tokens per expert. */
      int64_t n = (tokens * top_k + E - 1 - expert) / E;
      return capacity > 0 ? MIN (n, B * (int64_t) capacity) : n;
    }
  /* All pick the same top_k experts, every sequence its tokens. */
  int64_t n = expert < top_k ? tokens / B : 0;
  if (capacity > 0)
    n = MIN (n, capacity);
  return B * n;
}

/* torch.nonzero / boolean-mask indexing: cub select kernels and a
 * device-to-host read of the count (the host waits for the GPU). */
static void
nonzero (GsMg *g, int64_t elems)
{
  int in[1] = { -1 };
  node (g, GS_OP_REDUCE, "nonzero", GS_BW_NONE, in, 0, 1, elems, 1, 1);
  gs_mg_host (g, GS_HOST_SYNC, 1);
  gs_mg_copy (g, "nonzero_select", GS_BW_NONE, -1, elems, 1);
}

/* The weights of an expert no token chose: N matrices of HIDDEN x FFN that
 * take device memory and no part in the pass (no kernel, no gradient). */
static void
idle_expert_weights (GsMg *g, int n, int64_t hidden, int64_t ffn)
{
  for (int i = 0; i < n; i++)
    gs_mg_val (g, gs_mg_param (g, hidden * ffn, ffn))->grad = FALSE;
}

/* One SwiGLU expert of width FFN over its N tokens: down(act(gate(x)) *
 * up(x)), as Mixtral's w1/w3/w2 or Qwen-MoE's and DeepSeek's
 * gate_proj/up_proj/down_proj (their shared experts too). */
static int
moe_expert (GsMb *b, int x, int64_t n, int64_t hidden, int64_t ffn)
{
  GsMg *g = b->g;
  gboolean qwen = b->cfg->qwen_moe || b->cfg->deepseek;
  gs_mg_module (g);
  int h1 = gs_mg_linear (g, qwen ? "gate_proj" : "w1", x, n, hidden, ffn, -1,
                         FALSE, FALSE);
  int a = gs_mb_act (b, b->cfg->act, h1, n, ffn);
  int h3 = gs_mg_linear (g, qwen ? "up_proj" : "w3", x, n, hidden, ffn, -1,
                         FALSE, FALSE);
  int m = gs_mg_pointwise (g, "mul", GS_BW_MUL, a, h3, n, ffn, 1, 0, FALSE);
  return gs_mg_linear (g, qwen ? "down_proj" : "w2", m, n, ffn, hidden, -1,
                       FALSE, FALSE);
}

/* The Python of an expert no token chose.  Mixtral (4.36) skips it once
 * torch.where comes back empty.  Qwen-MoE's loop goes on with empty
 * tensors: the gather, the expert's three linears, its activation and
 * multiply, the routing-weight gather and multiply and index_add_ are
 * dispatched and launch nothing. */
static void
idle_expert (GsMb *b)
{
  GsMg *g = b->g;
  gs_mg_host (g, GS_HOST_PY, 2);
  if (!b->cfg->qwen_moe)
    return;
  gs_mg_host (g, GS_HOST_VIEW, 1);
  gs_mg_host (g, GS_HOST_MODULE, 4);
  gs_mg_host (g, GS_HOST_GEMM, 3);
  gs_mg_host (g, GS_HOST_OP, 6);
}

int
gs_mb_mixtral_moe (GsMb *b, int x, int64_t T, int64_t H)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t E = c->experts, K = c->top_k;
  /* torch.where in the expert loop breaks the graph inside a loop:
   * Dynamo runs the block eagerly (as for Switch, below). */
  gboolean saved_eager = g->eager;
  g->eager = TRUE;
  gs_mg_module (g);
  gs_mg_host (g, GS_HOST_VIEW, 1);
  int logits = gs_mg_linear (g, "gate", x, T, H, E, -1, FALSE, FALSE);
  int probs = gs_mg_softmax (g, logits, T, E);
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
  int in[2] = { probs, -1 };
  int rw = node (g, GS_OP_REDUCE, "topk", GS_BW_GATHER, in, 1, T, E, T * K,
                 K);
  if (c->norm_topk)
    {
      in[0] = rw;
      int sum = node (g, GS_OP_REDUCE, "sum", GS_BW_PASS, in, 1, T, K, T, 1);
      rw = gs_mg_pointwise (g, "div", GS_BW_MUL, rw, sum, T, K, 1, 0, FALSE);
    }
  /* routing_weights.to(hidden_states.dtype), modelled for Qwen-MoE only
   * (docs/models.md). */
  if (c->qwen_moe && g->opt.dtype != GS_DTYPE_FP32
      && g->opt.dtype != GS_DTYPE_TF32)
    rw = gs_mg_cast (g, rw, T, K);
  int final = gs_mg_fill (g, "zeros", T, H);
  gs_mg_fill (g, "zeros", T * K, E);             /* one_hot */
  gs_mg_pointwise (g, "scatter_", GS_BW_NONE, -1, -1, T, K, 1, 0, TRUE);
  gs_mg_host (g, GS_HOST_VIEW, 1);
  for (int e = 0; e < E; e++)
    {
      int64_t n = gs_mb_expert_tokens (b, e, T, (int) K, 0);
      g_autofree char *scope = g_strdup_printf ("%s.experts.%d", g->scope, e);
      nonzero (g, K * T);                        /* torch.where(mask[e]) */
      if (n == 0)
        {
          idle_expert (b);
          idle_expert_weights (g, 3, H, c->expert_ffn);
          continue;
        }
      gs_mg_host (g, GS_HOST_PY, 2);
      /* Mixtral indexes with top_x.tolist() and idx.tolist(): two more
       * blocking copies, and each list made a tensor again. */
      if (!c->qwen_moe)
        gs_mg_host (g, GS_HOST_SYNC, 2);
      in[0] = x;
      if (!c->qwen_moe)
        gs_mg_host (g, GS_HOST_OP, 1);
      int cur = node (g, GS_OP_EMBEDDING, "index", GS_BW_GATHER, in, 1, n, H,
                      n * H, H);
      /* Mixtral passes routing_weights[top_x, idx] to its expert, which
       * multiplies by it; Qwen-MoE's block gathers and multiplies once
       * the expert returns. */
      int w = -1;
      in[0] = rw;
      if (!c->qwen_moe)
        {
          gs_mg_host (g, GS_HOST_OP, 1);
          w = node (g, GS_OP_EMBEDDING, "index", GS_BW_GATHER, in, 1, n, 1,
                    n, 1);
        }
      char *saved = g_strdup (g->scope);
      gs_mg_scope (g, scope, g->layer);
      int y = moe_expert (b, cur, n, H, c->expert_ffn);
      if (c->qwen_moe)
        {
          gs_mg_scope (g, saved, g->layer);
          w = node (g, GS_OP_EMBEDDING, "index", GS_BW_GATHER, in, 1, n, 1,
                    n, 1);
        }
      y = gs_mg_pointwise (g, "mul", GS_BW_MUL, y, w, n, H, 1, 0, FALSE);
      gs_mg_scope (g, saved, g->layer);
      g_free (saved);
      int put[2] = { final, y };
      final = node (g, GS_OP_EMBEDDING, "index_add_", GS_BW_INDEX_PUT, put,
                    2, n, H, T * H, H);
    }
  if (c->shared_ffn > 0)
    {
      /* Qwen2-MoE: final + sigmoid(shared_expert_gate(x)) *
       * shared_expert(x), over every token. */
      char *saved = g_strdup (g->scope);
      g_autofree char *shared = g_strdup_printf ("%s.shared_expert", saved);
      gs_mg_scope (g, shared, g->layer);
      int s = moe_expert (b, x, T, H, c->shared_ffn);
      gs_mg_scope (g, saved, g->layer);
      g_free (saved);
      gs_mg_module (g);
      int sg = gs_mg_linear (g, "shared_expert_gate", x, T, H, 1, -1, FALSE,
                             FALSE);
      sg = gs_mg_unary (g, "sigmoid", sg, T, 1, 4, 2, "sigmoid_backward");
      s = gs_mg_pointwise (g, "mul", GS_BW_MUL, s, sg, T, H, 1, 0, FALSE);
      final = gs_mg_pointwise (g, "add", GS_BW_PASS, final, s, T, H, 1, 0,
                               FALSE);
    }
  gs_mg_host (g, GS_HOST_VIEW, 1);
  g->eager = saved_eager;
  gs_mg_host (g, GS_HOST_GRAPH, 1);
  return final;
}

/* The hidden states are narrower than fp32 (fp16, bf16, fp8's bf16 ones):
 * DeepSeek's fp32 steps cast. */
static gboolean
below_fp32 (const GsMg *g)
{
  return g->opt.dtype != GS_DTYPE_FP32 && g->opt.dtype != GS_DTYPE_TF32;
}

/* The op just added runs in fp32 whatever the model's dtype. */
static void
fp32_op (GsMg *g)
{
  gs_mg_last (g)->op.dtype = GS_DTYPE_FP32;
}

/* The group-limited choice both DeepSeek routers share, under no_grad:
 * the topk_group best of the n_group group scores already reduced, a
 * zeros_like group mask scattered with them, expanded to every expert
 * (a copy), made bool and inverted: the mask of the experts to drop, [T,
 * experts], for the caller's masked_fill. */
static void
group_mask (GsMb *b, int64_t T)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t E = c->experts, G = c->n_group, TG = c->topk_group;
  int in[1] = { -1 };
  node (g, GS_OP_REDUCE, "topk", GS_BW_NONE, in, 0, T, G, T * TG, TG);
  fp32_op (g);
  gs_mg_fill (g, "zeros_like", T, G);
  fp32_op (g);
  gs_mg_pointwise (g, "scatter_", GS_BW_NONE, -1, -1, T, TG, 1, 0, TRUE);
  fp32_op (g);
  gs_mg_host (g, GS_HOST_VIEW, 2);
  gs_mg_copy (g, "clone", GS_BW_NONE, -1, T, E);    /* expand + reshape */
  fp32_op (g);
  gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, T, E, 0, 0, FALSE);
  gs_mg_pointwise (g, "bitwise_not", GS_BW_NONE, -1, -1, T, E, 1, 0, FALSE);
}

/* DeepseekV2MoEGate's choice from the fp32 LOGITS [T, E] (transformers
 * 4.54): softmax scores; "group_limited_greedy" first ranks each of n_group
 * groups by its best score (max), keeps the topk_group best (topk), and
 * zeroes the other groups' scores (zeros_like, scatter_, the mask expanded
 * to every expert: a copy, .bool(), ~, masked_fill); then the top_k
 * scores (topk, whose values carry the gradient) times
 * routed_scaling_factor, never renormalised.  Returns the [T, top_k]
 * weights. */
static int
softmax_choice (GsMb *b, int logits, int64_t T)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t E = c->experts, K = c->top_k, G = c->n_group;
  int in[2] = { -1, -1 };
  gs_mg_host (g, GS_HOST_VIEW, 1);
  int scores = gs_mg_softmax (g, logits, T, E);
  fp32_op (g);
  if (c->topk_method == GS_HF_TOPK_GROUP_MAX)
    {
      gs_mg_host (g, GS_HOST_VIEW, 1);
      in[0] = scores;
      node (g, GS_OP_REDUCE, "max", GS_BW_NONE, in, 1, T * G, E / G, T * G,
            1);
      fp32_op (g);
      group_mask (b, T);
      scores = gs_mg_unary (g, "masked_fill", scores, T, E, 1, 0,
                            "masked_fill");
      fp32_op (g);
    }
  in[0] = scores;
  int rw = node (g, GS_OP_REDUCE, "topk", GS_BW_GATHER, in, 1, T, E, T * K,
                 K);
  fp32_op (g);
  rw = gs_mg_pointwise (g, "mul", GS_BW_SCALE, rw, -1, T, K, 1, 0, TRUE);
  fp32_op (g);
  return rw;
}

/* DeepSeek's router (DeepseekV3TopkRouter, DeepseekV2MoEGate) over T
 * tokens of width H: returns the [T, top_k] routing weights.  The logits
 * in fp32 (the hidden states and the weight cast each call); V2 goes on
 * in softmax_choice.  V3: sigmoid scores; then, without gradient, the
 * choice: scores + e_score_correction_bias, each group's best two summed,
 * the topk_group best groups kept (zeros_like, scatter_, the mask expanded
 * to every expert, bool, ~, masked_fill) and the top_k of what is left;
 * the chosen scores gathered, renormalised (norm_topk_prob) and scaled by
 * routed_scaling_factor. */
static int
deepseek_router (GsMb *b, int x, int64_t T, int64_t H)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t E = c->experts, K = c->top_k, G = c->n_group;
  gs_mg_module (g);
  gs_mg_host (g, GS_HOST_VIEW, 1);
  int w = gs_mg_param (g, E * H, H);
  if (below_fp32 (g))
    {
      x = gs_mg_cast (g, x, T, H);
      fp32_op (g);
      w = gs_mg_cast (g, w, E, H);
      fp32_op (g);
    }
  int logits = gs_mg_linear (g, NULL, x, T, H, E, w, FALSE, FALSE);
  fp32_op (g);
  if (c->topk_method != GS_HF_TOPK_NOAUX_TC)
    return softmax_choice (b, logits, T);
  int scores = gs_mg_unary (g, "sigmoid", logits, T, E, 4, 2,
                            "sigmoid_backward");
  fp32_op (g);
  /* get_topk_indices, under torch.no_grad(). */
  int in[2] = { -1, -1 };
  gs_mg_host (g, GS_HOST_VIEW, 2);
  gs_mg_pointwise (g, "add", GS_BW_NONE, -1, -1, T, E, 1, 0, FALSE);
  fp32_op (g);
  node (g, GS_OP_REDUCE, "topk", GS_BW_NONE, in, 0, T * G, E / G,
        T * G * 2, 2);
  fp32_op (g);
  node (g, GS_OP_REDUCE, "sum", GS_BW_NONE, in, 0, T * G, 2, T * G, 1);
  fp32_op (g);
  group_mask (b, T);
  gs_mg_pointwise (g, "masked_fill", GS_BW_NONE, -1, -1, T, E, 1, 0, TRUE);
  fp32_op (g);
  node (g, GS_OP_REDUCE, "topk", GS_BW_NONE, in, 0, T, E, T * K, K);
  fp32_op (g);
  /* scores.gather(1, topk_indices) */
  in[0] = scores;
  int rw = node (g, GS_OP_EMBEDDING, "gather", GS_BW_GATHER, in, 1, T, K,
                 T * K, K);
  fp32_op (g);
  if (c->norm_topk)
    {
      in[0] = rw;
      int sum = node (g, GS_OP_REDUCE, "sum", GS_BW_PASS, in, 1, T, K, T, 1);
      fp32_op (g);
      sum = gs_mg_pointwise (g, "add", GS_BW_PASS, sum, -1, T, 1, 1, 0,
                             TRUE);
      fp32_op (g);
      rw = gs_mg_pointwise (g, "div_", GS_BW_MUL, rw, sum, T, K, 1, 0,
                            FALSE);
      fp32_op (g);
    }
  rw = gs_mg_pointwise (g, "mul", GS_BW_SCALE, rw, -1, T, K, 1, 0, TRUE);
  fp32_op (g);
  return rw;
}

/* DeepseekV3MoE.moe(): an fp32 output (zeros_like with the weights'
 * dtype), the one_hot expert mask, then for every expert torch.where on
 * its mask; an expert with tokens gathers its weights and rows, runs, is
 * weighted (in fp32) and index_add_ed into the output, cast back at the
 * end. */
static int
where_experts (GsMb *b, int x, int rw, int64_t T, int64_t H,
               const char *scope)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t E = c->experts, K = c->top_k;
  gs_mg_host (g, GS_HOST_VIEW, 1);
  int final = gs_mg_fill (g, "zeros_like", T, H);
  fp32_op (g);
  gs_mg_fill (g, "zeros", T * K, E);             /* one_hot */
  gs_mg_pointwise (g, "scatter_", GS_BW_NONE, -1, -1, T, K, 1, 0, TRUE);
  gs_mg_host (g, GS_HOST_VIEW, 1);
  int in[2] = { -1, -1 };
  for (int e = 0; e < E; e++)
    {
      int64_t n = gs_mb_expert_tokens (b, e, T, (int) K, 0);
      nonzero (g, K * T);                        /* torch.where(mask) */
      gs_mg_host (g, GS_HOST_PY, 2);
      if (n == 0)
        {
          /* token_indices.numel() > 0 is false: nothing more runs. */
          idle_expert_weights (g, 3, H, c->expert_ffn);
          continue;
        }
      /* topk_weights[token_indices, weight_indices], then
       * hidden_states[token_indices], both with torch.where's tensors. */
      in[0] = rw;
      int w = node (g, GS_OP_EMBEDDING, "index", GS_BW_GATHER, in, 1, n, 1,
                    n, 1);
      fp32_op (g);
      in[0] = x;
      int cur = node (g, GS_OP_EMBEDDING, "index", GS_BW_GATHER, in, 1, n, H,
                      n * H, H);
      g_autofree char *es = g_strdup_printf ("%s.experts.%d", scope, e);
      gs_mg_scope (g, es, g->layer);
      int y = moe_expert (b, cur, n, H, c->expert_ffn);
      gs_mg_scope (g, scope, g->layer);
      /* expert_output * expert_weights.unsqueeze(-1): promoted to fp32. */
      y = gs_mg_pointwise (g, "mul", GS_BW_MUL, y, w, n, H, 1, 0, FALSE);
      fp32_op (g);
      int put[2] = { final, y };
      final = node (g, GS_OP_EMBEDDING, "index_add_", GS_BW_INDEX_PUT, put,
                    2, n, H, T * H, H);
      fp32_op (g);
    }
  /* final_hidden_states.type(hidden_states.dtype) */
  if (below_fp32 (g))
    final = gs_mg_cast (g, final, T, H);
  return final;
}

/* torch.cat of the N values in V along the rows (ROWS x COLS in all): one
 * kernel.  A node reads at most GS_MG_MAX_IN values, so the first ones are
 * joined by nodes that launch nothing and pass the gradient through, as
 * the cat's own backward (views of its gradient) does. */
static int
cat_rows (GsMg *g, const int *v, int n, int64_t rows, int64_t cols)
{
  int in[GS_MG_MAX_IN];
  int at = 0, joined = -1;
  while ((n - at) + (joined >= 0) > GS_MG_MAX_IN)
    {
      int k = 0;
      if (joined >= 0)
        in[k++] = joined;
      while (k < GS_MG_MAX_IN)
        in[k++] = v[at++];
      GsOp op;
      gs_op_init (&op);
      op.kind = GS_OP_KIND_COUNT;
      joined = gs_mg_add (g, &op, GS_BW_PASS, GS_HOST_NONE, in, k,
                          rows * cols, cols);
    }
  int k = 0;
  if (joined >= 0)
    in[k++] = joined;
  while (at < n)
    in[k++] = v[at++];
  return node (g, GS_OP_COPY, "cat", GS_BW_PASS, in, k, rows, cols,
               rows * cols, cols);
}

/* DeepseekV2MoE.moe() (transformers 4.54): the tokens each expert gets
 * counted (new_zeros, scatter_, sum over the tokens), the T x top_k
 * choices sorted by expert (argsort) and their rows gathered
 * (indices // top_k, index); then for every expert the Python compares
 * its 0-dim count with 0 (a kernel, read back by the host); an expert
 * with tokens advances the running end index (add) and takes its slice
 * of the sorted rows, whose bounds, 0-dim tensors, the host reads back
 * again (item()); its output is kept.  Then cat, the rows scattered back
 * to their places (new_x[indices] = outs, index_put_), cast to fp32, *=
 * the weights, summed over top_k and cast back. */
static int
sorted_experts (GsMb *b, int x, int rw, int64_t T, int64_t H,
                const char *scope)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t E = c->experts, K = c->top_k;
  int in[2] = { -1, -1 };
  gs_mg_host (g, GS_HOST_VIEW, 1);
  gs_mg_fill (g, "zeros", T, E);
  gs_mg_pointwise (g, "scatter_", GS_BW_NONE, -1, -1, T, K, 1, 0, TRUE);
  gs_mg_reduce (g, "sum", GS_BW_NONE, -1, T, E, 0);
  gs_mg_host (g, GS_HOST_VIEW, 1);
  node (g, GS_OP_REDUCE, "sort", GS_BW_NONE, in, 0, 1, T * K, T * K, T * K);
  gs_mg_pointwise (g, "floor_divide", GS_BW_NONE, -1, -1, 1, T * K, 1, 0,
                   TRUE);
  in[0] = x;
  int sorted = node (g, GS_OP_EMBEDDING, "index", GS_BW_GATHER, in, 1, T * K,
                     H, T * K * H, H);
  gs_mg_host (g, GS_HOST_VIEW, 1);               /* iterating: unbind */
  int *outs = g_new (int, E);
  int n_out = 0;
  int64_t rows = 0;
  for (int e = 0; e < E; e++)
    {
      int64_t n = gs_mb_expert_tokens (b, e, T, (int) K, 0);
      gs_mg_host (g, GS_HOST_PY, 2);
      /* if num_tokens == 0 */
      gs_mg_pointwise (g, "eq", GS_BW_NONE, -1, -1, 1, 1, 1, 0, TRUE);
      gs_mg_host (g, GS_HOST_SYNC, 1);
      if (n == 0)
        {
          idle_expert_weights (g, 3, H, c->expert_ffn);
          continue;
        }
      /* end_idx = start_idx + num_tokens; sorted_tokens[start_idx:end_idx]
       * reads end_idx back, and start_idx once it is a tensor too. */
      gs_mg_pointwise (g, "add", GS_BW_NONE, -1, -1, 1, 1, 1, 0, n_out == 0);
      gs_mg_host (g, GS_HOST_SYNC, n_out == 0 ? 1 : 2);
      int cur = gs_mg_slice (g, sorted, n * H, H);
      g_autofree char *es = g_strdup_printf ("%s.experts.%d", scope, e);
      gs_mg_scope (g, es, g->layer);
      outs[n_out++] = moe_expert (b, cur, n, H, c->expert_ffn);
      gs_mg_scope (g, scope, g->layer);
      rows += n;
    }
  gs_mg_host (g, GS_HOST_PY, 2);
  int y = cat_rows (g, outs, n_out, rows, H);
  g_free (outs);
  /* new_x = torch.empty_like(outs) (no kernel); new_x[indices] = outs */
  int put[2] = { gs_mg_value (g, rows * H, H, FALSE), y };
  y = node (g, GS_OP_EMBEDDING, "index_put_", GS_BW_INDEX_PUT, put, 2, rows,
            H, rows * H, H);
  gs_mg_host (g, GS_HOST_VIEW, 2);
  if (below_fp32 (g))
    {
      y = gs_mg_cast (g, y, rows, H);
      fp32_op (g);
    }
  y = gs_mg_pointwise (g, "mul_", GS_BW_MUL, y, rw, rows, H, 1, 0, FALSE);
  fp32_op (g);
  /* .sum(dim=1) over the top_k rows of each token */
  in[0] = y;
  y = node (g, GS_OP_REDUCE, "sum", GS_BW_PASS, in, 1, K, T * H, T * H, H);
  gs_mg_last (g)->op.reduce_dim = 0;
  fp32_op (g);
  if (below_fp32 (g))
    y = gs_mg_cast (g, y, T, H);
  return y;
}

int
gs_mb_deepseek_moe (GsMb *b, int x, int64_t T, int64_t H)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  /* A data-dependent expert loop (torch.where, or V2's `if num_tokens ==
   * 0`) breaks the graph inside a loop, as in Mixtral's block: Dynamo runs
   * the block eagerly. */
  gboolean saved_eager = g->eager;
  g->eager = TRUE;
  char *saved = g_strdup (g->scope);
  gs_mg_module (g);
  g_autofree char *gate = g_strdup_printf ("%s.gate", saved);
  gs_mg_scope (g, gate, g->layer);
  int rw = deepseek_router (b, x, T, H);
  gs_mg_scope (g, saved, g->layer);
  int final = c->moe_sorted ? sorted_experts (b, x, rw, T, H, saved)
                            : where_experts (b, x, rw, T, H, saved);
  gs_mg_host (g, GS_HOST_VIEW, 1);
  /* + shared_experts(residuals): n_shared_experts as one MLP. */
  g_autofree char *shared = g_strdup_printf ("%s.shared_experts", saved);
  gs_mg_scope (g, shared, g->layer);
  int s = moe_expert (b, x, T, H, c->shared_ffn);
  gs_mg_scope (g, saved, g->layer);
  g_free (saved);
  final = gs_mg_pointwise (g, "add", GS_BW_PASS, final, s, T, H, 1, 0,
                           FALSE);
  g->eager = saved_eager;
  gs_mg_host (g, GS_HOST_GRAPH, 1);
  return final;
}

/* A kernel of an already-started framework call (the second and later
 * kernels of one aten op): only its launch costs host time. */
static int
node_more (GsMg *g, GsOpKind kind, const char *name, GsBwRule rule,
           const int *in, int n_in, int64_t rows, int64_t cols,
           int64_t out_elems, int64_t out_cols)
{
  return add_node (g, kind, name, rule, GS_HOST_NONE, in, n_in, rows, cols,
                   out_elems, out_cols);
}

/* Boolean-mask indexing turns the mask of MASK elements into indices
 * first: aten::nonzero counts (cub), copies the count to the host (a
 * blocking copy: the host waits for the GPU) and selects. */
static void
mask_to_indices (GsMg *g, int64_t mask)
{
  int in[1] = { -1 };
  node (g, GS_OP_REDUCE, "nonzero", GS_BW_NONE, in, 0, 1, mask, 1, 1);
  gs_mg_host (g, GS_HOST_SYNC, 1);
  node_more (g, GS_OP_COPY, "nonzero_select", GS_BW_NONE, in, 0, mask, 1,
             mask, 1);
}

/* x[mask] with a mask of MASK elements selecting N rows of width H. */
static int
mask_gather (GsMg *g, int x, int64_t mask, int64_t n, int64_t H)
{
  mask_to_indices (g, mask);
  if (n == 0)
    return -1;                   /* an empty result launches nothing */
  int in[1] = { x };
  return node_more (g, GS_OP_EMBEDDING, "index", GS_BW_GATHER, in, 1, n, H,
                    n * H, H);
}

/* x[mask] = v: N rows of width H scattered into X ([rows, H]). */
static int
mask_scatter (GsMg *g, int x, int v, int64_t mask, int64_t n, int64_t H)
{
  mask_to_indices (g, mask);
  if (n == 0)
    return x;
  int in[2] = { x, v };
  return node_more (g, GS_OP_EMBEDDING, "index_put_", GS_BW_INDEX_PUT, in, 2,
                    n, H, gs_mg_val (g, x)->elems, H);
}

/* torch.count_nonzero(mask): (mask != 0).sum() on CUDA, two kernels. */
static void
count_nonzero (GsMg *g, int64_t mask)
{
  int in[1] = { -1 };
  node (g, GS_OP_ELEMENTWISE, "ne", GS_BW_NONE, in, 0, 1, mask, mask, 1);
  node_more (g, GS_OP_REDUCE, "sum", GS_BW_NONE, in, 0, 1, mask, 1, 1);
}

/* SwitchTransformersTop1Router (4.36): float32 cast, jitter (training),
 * classifier, softmax, argmax, one_hot, capacity mask by the cumsum over
 * each sequence, max of the probabilities.  Returns the [T, 1] probs. */
static int
switch_router (GsMb *b, int x, int64_t T, int64_t H)
{
  GsMg *g = b->g;
  int64_t E = b->cfg->experts;
  gs_mg_module (g);
  if (half_dtype (g))      /* router_dtype float32 */
    x = gs_mg_cast (g, x, T, H);
  if (g->opt.training && b->cfg->router_jitter)
    {
      int noise = gs_mg_fill (g, "uniform_", T, H);
      x = gs_mg_pointwise (g, "mul_", GS_BW_MUL, x, noise, T, H, 1, 0,
                           FALSE);
    }
  /* _cast_classifier: classifier.to(float32) walks the module's
   * parameters in Python every call (no kernel; about two module calls of
   * work, estimate). */
  gs_mg_host (g, GS_HOST_MODULE, 2);
  int logits = gs_mg_linear (g, "classifier", x, T, H, E, -1, FALSE, FALSE);
  int probs = gs_mg_softmax (g, logits, T, E);
  int in[1] = { probs };
  node (g, GS_OP_REDUCE, "argmax", GS_BW_NONE, in, 1, T, E, T, 1);
  gs_mg_fill (g, "zeros", T, E);                 /* one_hot */
  gs_mg_pointwise (g, "scatter_", GS_BW_NONE, -1, -1, T, 1, 1, 0, TRUE);
  gs_mg_pointwise (g, "cumsum", GS_BW_NONE, -1, -1, T, E, 1, 0, FALSE);
  gs_mg_pointwise (g, "le", GS_BW_NONE, -1, -1, T, E, 1, 0, TRUE);
  gs_mg_pointwise (g, "mul", GS_BW_NONE, -1, -1, T, E, 1, 0, FALSE);
  /* max(router_probs, dim=-1).values.unsqueeze(-1) */
  return node (g, GS_OP_REDUCE, "max", GS_BW_GATHER, in, 1, T, E, T, 1);
}

/* SwitchTransformersDenseActDense on ROWS rows: wi, act, dropout, wo.
 * With no rows (an expert no token chose) the Python still runs: module
 * calls and the ops' dispatch, no kernel. */
static int
switch_expert (GsMb *b, const char *scope, int x, int64_t rows, int64_t H)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  g_autofree char *saved = g_strdup (g->scope);
  gs_mg_scope (g, scope, g->layer);
  gs_mg_module (g);
  int h = -1;
  if (rows == 0)
    {
      idle_expert_weights (g, 2, H, c->ffn);      /* wi, wo */
      gs_mg_host (g, GS_HOST_MODULE, 4);
      gs_mg_host (g, GS_HOST_GEMM, 2);
      gs_mg_host (g, GS_HOST_OP, 1);
    }
  else
    {
      h = gs_mg_linear (g, "wi", x, rows, H, c->ffn, -1, FALSE, FALSE);
      h = gs_mb_act (b, c->act, h, rows, c->ffn);
      h = gs_mg_dropout (g, h, rows, c->ffn, c->p_act, TRUE);
      h = gs_mg_linear (g, "wo", h, rows, c->ffn, H, -1, FALSE, FALSE);
    }
  gs_mg_scope (g, saved, g->layer);
  return h;
}

/* `buf[:n] = v` for a buffer of ROWS x H: a copy kernel into the slice
 * (autograd: CopySlices, whose backward clears the slice of the buffer's
 * gradient and hands the slice to V). */
static int
copy_into_rows (GsMg *g, int buf, int v, int64_t rows, int64_t n, int64_t H)
{
  gs_mg_next_call (g);
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_COPY;
  op.name = (char *) "copy_";
  op.dtype = g->opt.dtype;
  op.rows = n;
  op.cols = H;
  int in[2] = { buf, v };
  int y = gs_mg_add (g, &op, GS_BW_INDEX_PUT, GS_HOST_OP, in, 2, rows * H,
                     H);
  op.name = NULL;
  return y;
}

/* The sparse MLP as the reference harness patches it: a zero buffer of
 * batch x expert_capacity rows; per expert the boolean token mask, its
 * count_nonzero, the gather into buffer[:count], the expert over the
 * WHOLE buffer (its output becomes the next buffer) and the scatter of
 * buffer[:count] back into the tokens' rows.  Slicing with the 0-dim
 * count calls item(): two more blocking copies per expert. */
static int
switch_moe_harness (GsMb *b, int x, int64_t T, int64_t H, int probs)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int64_t rows = b->batch * c->capacity;
  int next = gs_mg_copy (g, "clone", GS_BW_PASS, x, T, H);
  int buf = gs_mg_fill (g, "zeros", rows, H);
  for (int e = 0; e < c->experts; e++)
    {
      int64_t n = gs_mb_expert_tokens (b, e, T, 1, c->capacity);
      g_autofree char *scope = g_strdup_printf ("%s.experts.expert_%d",
                                                g->scope, e);
      gs_mg_host (g, GS_HOST_VIEW, 1);          /* router_mask[:, :, idx] */
      gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, T, 1, 0, 0, FALSE);
      count_nonzero (g, T);
      int cur = mask_gather (g, x, T, n, H);    /* hidden_states[mask] */
      gs_mg_host (g, GS_HOST_SYNC, 1);          /* [:num_chosen] */
      gs_mg_host (g, GS_HOST_VIEW, 1);
      if (n > 0)
        buf = copy_into_rows (g, buf, cur, rows, n, H);
      buf = switch_expert (b, scope, buf, rows, H);
      gs_mg_host (g, GS_HOST_SYNC, 1);          /* [:num_chosen] */
      int v = -1;
      if (n > 0)
        v = gs_mg_slice (g, buf, n * H, H);
      else
        gs_mg_host (g, GS_HOST_VIEW, 1);
      next = mask_scatter (g, next, v, T, n, H);  /* next_states[mask] = */
    }
  return gs_mg_pointwise (g, "mul", GS_BW_MUL, next, probs, T, H, 1, 0,
                          FALSE);
}

/* SwitchTransformersSparseMLP as transformers 4.36 ships it: clone the
 * states, then per expert gather its tokens, run it on them and scatter
 * the result back. */
static int
switch_moe_hf (GsMb *b, int x, int64_t T, int64_t H, int probs)
{
  GsMg *g = b->g;
  const GsHfConfig *c = b->cfg;
  int next = gs_mg_copy (g, "clone", GS_BW_PASS, x, T, H);
  for (int e = 0; e < c->experts; e++)
    {
      int64_t n = gs_mb_expert_tokens (b, e, T, 1, c->capacity);
      g_autofree char *scope = g_strdup_printf ("%s.experts.expert_%d",
                                                g->scope, e);
      gs_mg_host (g, GS_HOST_VIEW, 1);          /* router_mask[:, :, idx] */
      gs_mg_pointwise (g, "_to_copy", GS_BW_NONE, -1, -1, T, 1, 0, 0, FALSE);
      int cur = mask_gather (g, x, T, n, H);
      int y = switch_expert (b, scope, cur, n, H);
      gs_mg_host (g, GS_HOST_PY, 1);            /* .to(next_states.dtype) */
      next = mask_scatter (g, next, y, T, n, H);
    }
  return gs_mg_pointwise (g, "mul", GS_BW_MUL, next, probs, T, H, 1, 0,
                          FALSE);
}

int
gs_mb_switch_moe (GsMb *b, int x, int64_t T, int64_t H)
{
  GsMg *g = b->g;
  /* The expert loop's data-dependent shapes break the graph inside a
   * loop, so Dynamo skips the whole frame: under torch.compile the sparse
   * MLP runs eagerly (its router and experts would be compiled as frames
   * of their own, but 2.1 guards each module instance and stops
   * recompiling after 8: most run eager too), and the rest of the layer
   * resumes in a new compiled graph. */
  gboolean saved_eager = g->eager;
  g->eager = TRUE;
  gs_mg_module (g);
  char *mlp_scope = g_strdup (g->scope);
  g_autofree char *router_scope = g_strconcat (mlp_scope, ".router", NULL);
  gs_mg_scope (g, router_scope, g->layer);
  int probs = switch_router (b, x, T, H);
  gs_mg_scope (g, mlp_scope, g->layer);
  int in[1] = { -1 };
  node (g, GS_OP_REDUCE, "argmax", GS_BW_NONE, in, 0, T, b->cfg->experts, T,
        1);
  int y = g->opt.moe == GS_MG_MOE_HF ? switch_moe_hf (b, x, T, H, probs)
                                     : switch_moe_harness (b, x, T, H, probs);
  g_free (mlp_scope);
  g->eager = saved_eager;
  gs_mg_host (g, GS_HOST_GRAPH, 1);
  return y;
}

/* ------------------------------------------------------------ generate() */

void
gs_mb_generate_positions (GsMb *b)
{
  GsMg *g = b->g;
  int64_t B = b->batch, L = b->past + b->seq;
  /* position_ids = mask.long().cumsum(-1) - 1; masked_fill_(mask == 0, 1) */
  gs_mg_pointwise (g, "cumsum", GS_BW_NONE, -1, -1, B, L, 1, 0, FALSE);
  gs_mg_pointwise (g, "sub", GS_BW_NONE, -1, -1, B, L, 1, 0, TRUE);
  gs_mg_pointwise (g, "eq", GS_BW_NONE, -1, -1, B, L, 1, 0, TRUE);
  gs_mg_pointwise (g, "masked_fill_", GS_BW_NONE, -1, -1, B, L, 1, 0, TRUE);
  gs_mg_host (g, GS_HOST_VIEW, 1);
}

void
gs_mb_generate_glue (GsMb *b, int64_t vocab)
{
  GsMg *g = b->g;
  int64_t B = b->batch, L = b->past + b->seq;
  gboolean saved_eager = g->eager;
  g->eager = TRUE;             /* generate()'s loop is Python, not compiled */
  gs_mg_scope (g, "generate", -1);
  gs_mg_host (g, GS_HOST_PY, 20);         /* logits processors, kwargs */
  gs_mg_host (g, GS_HOST_VIEW, 1);        /* logits[:, -1, :] */
  int in[1] = { -1 };
  node (g, GS_OP_REDUCE, "argmax", GS_BW_NONE, in, 0, B, vocab, B, 1);
  /* next * unfinished + pad * (1 - unfinished) */
  gs_mg_pointwise (g, "mul", GS_BW_NONE, -1, -1, 1, B, 1, 0, FALSE);
  gs_mg_pointwise (g, "rsub", GS_BW_NONE, -1, -1, 1, B, 1, 0, TRUE);
  gs_mg_pointwise (g, "mul", GS_BW_NONE, -1, -1, 1, B, 1, 0, TRUE);
  gs_mg_pointwise (g, "add", GS_BW_NONE, -1, -1, 1, B, 1, 0, FALSE);
  gs_mg_copy (g, "cat", GS_BW_NONE, -1, B, L + 1);      /* input_ids */
  gs_mg_fill (g, "new_ones", B, 1);                     /* attention mask */
  gs_mg_copy (g, "cat", GS_BW_NONE, -1, B, L + 1);
  /* unfinished.mul(next.tile(...).ne(eos).prod(dim=0)) */
  gs_mg_copy (g, "tile", GS_BW_NONE, -1, 1, B);
  gs_mg_pointwise (g, "ne", GS_BW_NONE, -1, -1, 1, B, 1, 0, FALSE);
  node (g, GS_OP_REDUCE, "prod", GS_BW_NONE, in, 0, 1, B, B, 1);
  gs_mg_pointwise (g, "mul", GS_BW_NONE, -1, -1, 1, B, 1, 0, FALSE);
  /* if unfinished_sequences.max() == 0: the host reads the result */
  node (g, GS_OP_REDUCE, "max", GS_BW_NONE, in, 0, 1, B, 1, 1);
  gs_mg_host (g, GS_HOST_SYNC, 1);
  g->eager = saved_eager;
}
