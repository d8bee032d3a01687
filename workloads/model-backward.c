/* gpusim: the backward pass, as PyTorch's autograd engine runs it.
 *
 * The engine runs backward functions from a priority queue keyed by the
 * forward creation order, newest first, each once all gradients for its
 * output have arrived; on one device that is the reverse of the forward
 * node order, which is what this walks.  For each node the rule emits the
 * kernels its backward formula launches (tools/autograd/derivatives.yaml
 * and FunctionsManual.cpp in PyTorch 2.1):
 *
 *   addmm/mm    mm_mat1_backward then mm_mat2_backward; an operand stored
 *               column-major gets its gradient computed transposed; the
 *               bias gradient is the sum_to of the broadcast (a reduction)
 *   bmm         grad.bmm(mat2^T), mat1^T.bmm(grad)
 *   mul         one mul per input; a broadcast input adds a sum
 *   pow(x, c)   grad * (c * x.pow(c - 1)): pow, mul, mul
 *   rsqrt       -0.5 * grad * y.pow(3): pow, mul, mul
 *   dropout     grad * mask * scale (one kernel)
 *   layer norm  grad input kernel, then gamma/beta reduction kernel
 *   embedding   embedding_dense_backward: zeros of the table, then (more
 *               than 3072 indices) a radix sort and segment reduction
 *   softmax     _softmax_backward_data;  log_softmax likewise
 *   nll_loss    zeros of the input + scatter of the loss gradient
 *   BLOOM's GeLUFunction (a Python autograd.Function): its own backward,
 *               bloom_gelu_back's pointwise chain
 *
 * A tensor used by several ops receives several gradients: the input
 * buffer adds each one after the first (one add kernel).  A parameter's
 * AccumulateGrad adds into an existing .grad when gradients are kept from
 * the previous step (the reference measurements call backward repeatedly
 * without zeroing them).
 */
#include "config.h"
#include "workloads/model-graph.h"

#include <string.h>

typedef struct {
  GsMg *g;
  int *grad;        /* value -> its gradient value (-1: none yet) */
  int *received;    /* gradients delivered so far */
  int *uses;        /* gradients it will receive */
  const GsMgNode *node; /* node being differentiated (a copy) */
  int *pieces;      /* value -> the gradients of its pieces, for a value
                     * split into pieces (GS_MG_MAX_IN per value, -1) */
  int dy;           /* the gradient of its output */
  int reads[GS_MG_MAX_IN]; /* what the next backward kernel reads:
                     * gradients and the saved forward tensors its
                     * formula uses (-1: none); the compiled runtime
                     * sizes fused kernels and what the forward keeps
                     * from these */
} Bw;

/* ------------------------------------------------------------ emitters */

/* The full-size tensors the next kernel reads (-1: none). */
static void
bw_reads (Bw *b, int r0, int r1)
{
  b->reads[0] = r0;
  b->reads[1] = r1;
  for (int i = 2; i < GS_MG_MAX_IN; i++)
    b->reads[i] = -1;
}

static void
bw_op (const Bw *b, GsOp *op, GsOpKind kind, const char *name, int64_t rows,
       int64_t cols)
{
  gs_op_init (op);
  op->kind = kind;
  op->name = (char *) name;
  /* Gradients have their forward tensors' dtype: a half-precision
   * model's fp32 sections (a norm's statistics, an upcast softmax) run
   * their backward in fp32 too.  A GEMM's dtype is its inputs' (tf32,
   * fp8), not its gradients'. */
  const GsOp *fw = &b->node->op;
  op->dtype = fw->dtype == GS_DTYPE_FP32 && fw->kind != GS_OP_GEMM
              && fw->kind != GS_OP_ATTENTION ? GS_DTYPE_FP32
                                             : b->g->opt.dtype;
  op->rows = rows;
  op->cols = cols;
  op->tag = b->node->op.tag;
}

/* Adds a backward kernel; returns its output value. */
static int
bw_emit (Bw *b, GsOp *op, int64_t out_elems, int64_t out_cols)
{
  int n = 0, in[GS_MG_MAX_IN];
  for (int i = 0; i < GS_MG_MAX_IN; i++)
    {
      gboolean again = FALSE;
      for (int k = 0; k < n; k++)
        again |= in[k] == b->reads[i];
      if (b->reads[i] >= 0 && !again)
        in[n++] = b->reads[i];
    }
  int v = gs_mg_add (b->g, op, GS_BW_NONE, GS_HOST_AUTOGRAD, in, n,
                     out_elems, out_cols);
  op->name = NULL;
  op->tag = NULL;
  return v;
}

static int
bw_pointwise (Bw *b, const char *name, int64_t rows, int64_t cols, int n_in,
              int n_small, double alu, double sfu)
{
  GsOp op;
  bw_op (b, &op, GS_OP_ELEMENTWISE, name, rows, cols);
  op.n_in = n_in;
  op.n_small_in = n_small;
  op.alu_per_elem = alu;
  op.sfu_per_elem = sfu;
  return bw_emit (b, &op, rows * cols, cols);
}

static int
bw_fill (Bw *b, const char *name, int64_t rows, int64_t cols)
{
  GsOp op;
  bw_op (b, &op, GS_OP_ELEMENTWISE, name, rows, cols);
  op.n_in = 0;
  op.scalar_operand = TRUE;
  return bw_emit (b, &op, rows * cols, cols);
}

/* Sum of ROWS x COLS over DIM (0: to cols, 1: to rows). */
static int
bw_reduce (Bw *b, const char *name, int64_t rows, int64_t cols, int dim)
{
  GsOp op;
  bw_op (b, &op, GS_OP_REDUCE, name, rows, cols);
  op.reduce_dim = dim;
  op.alu_per_elem = 1;
  int64_t out = dim == 0 ? cols : rows;
  return bw_emit (b, &op, out, dim == 0 ? cols : 1);
}

static int
bw_gemm (Bw *b, int64_t batch, int64_t m, int64_t n, int64_t k,
         gboolean a_t, gboolean b_t)
{
  GsOp op;
  bw_op (b, &op, GS_OP_GEMM, batch > 1 ? "bmm" : "mm", 0, 0);
  op.dtype = b->g->opt.gemm_dtype;
  op.batch = batch;
  op.m = m;
  op.n = n;
  op.k = k;
  if (b_t)
    op.layout = a_t ? GS_LAYOUT_TT : GS_LAYOUT_TN;
  else
    op.layout = a_t ? GS_LAYOUT_NT : GS_LAYOUT_NN;
  return bw_emit (b, &op, batch * m * n, n);
}

static int
bw_copy (Bw *b, const char *name, int64_t elems, int64_t cols)
{
  GsOp op;
  bw_op (b, &op, GS_OP_COPY, name, elems / cols, cols);
  return bw_emit (b, &op, elems, cols);
}

/* -------------------------------------------------------- accumulation */

/* Hands gradient GV to value V: the first is kept, later ones are added
 * (pieces of a split are gathered by the split's own backward instead);
 * a parameter whose gradients are all in runs AccumulateGrad. */
static void
deliver (Bw *b, int v, int gv)
{
  if (v < 0 || gv < 0)
    return;
  GsMgValue val = *gs_mg_val (b->g, v);
  if (!val.grad)
    return;
  if (b->received[v] == 0 || val.bundle)
    {
      if (b->received[v] == 0)
        b->grad[v] = gv;
      if (val.bundle && b->received[v] < GS_MG_MAX_IN)
        b->pieces[v * GS_MG_MAX_IN + b->received[v]] = gv;
    }
  else
    {
      bw_reads (b, b->grad[v], gv);
      b->grad[v] = bw_pointwise (b, "add", val.elems / val.cols, val.cols, 2,
                                 0, 1, 0);
    }
  b->received[v]++;
  if (val.param && b->received[v] == b->uses[v]
      && !b->g->opt.accumulate_grads)
    gs_mg_val (b->g, b->grad[v])->pgrad = TRUE;
  if (val.param && b->received[v] == b->uses[v]
      && b->g->opt.accumulate_grads)
    {
      /* AccumulateGrad runs in eager PyTorch, compiled model or not. */
      gboolean saved = b->g->eager;
      b->g->eager = TRUE;
      bw_reads (b, b->grad[v], -1);
      bw_pointwise (b, "add_", val.elems / val.cols, val.cols, 2, 0, 1, 0);
      gs_mg_last (b->g)->accumulate = TRUE;
      b->g->eager = saved;
    }
}

static const GsMgValue *
val (const Bw *b, int id)
{
  return id >= 0 ? gs_mg_val (b->g, id) : NULL;
}

static gboolean
wants (const Bw *b, int id)
{
  return id >= 0 && gs_mg_val (b->g, id)->grad;
}

/* ---------------------------------------------------------------- rules */

static void
rule_gemm (Bw *b)
{
  const GsMgNode *n = b->node;
  const GsOp *o = &n->op;
  int A = n->in[0], B = n->in[1];
  gboolean mm = o->batch == 1;
  if (wants (b, A))
    {
      int d;
      bw_reads (b, b->dy, B);
      if (mm && n->a_t)     /* A column-major: dA^T = B G^T */
        d = bw_gemm (b, 1, o->k, o->m, o->n, n->b_t, TRUE);
      else                  /* dA = G B^T */
        d = bw_gemm (b, o->batch, o->m, o->k, o->n, FALSE, !n->b_t);
      deliver (b, A, d);
    }
  if (wants (b, B))
    {
      int d;
      bw_reads (b, A, b->dy);
      if (mm && n->b_t)     /* B column-major: dB^T = G^T A */
        d = bw_gemm (b, 1, o->n, o->k, o->m, TRUE, n->a_t);
      else                  /* dB = A^T G */
        d = bw_gemm (b, o->batch, o->k, o->n, o->m, !n->a_t, FALSE);
      deliver (b, B, d);
    }
  if (n->n_in > 2 && wants (b, n->in[2]))
    {
      bw_reads (b, b->dy, -1);
      deliver (b, n->in[2], bw_reduce (b, "sum", o->m, o->n, 0));
    }
}

static void
rule_mul (Bw *b, int g)
{
  const GsMgNode *n = b->node;
  int64_t rows = n->op.rows, cols = n->op.cols;
  int x = n->in[0], y = n->in[1];
  gboolean small = y >= 0 && val (b, y)->elems < rows * cols;
  if (wants (b, x))
    {
      /* grad * y: a broadcast y is read as a small input. */
      bw_reads (b, b->dy, small ? -1 : y);
      deliver (b, x, bw_pointwise (b, "mul", rows, cols, small ? 1 : 2,
                                   small ? 1 : 0, 1, 0));
    }
  if (wants (b, y))
    {
      bw_reads (b, b->dy, x);
      int d = bw_pointwise (b, "mul", rows, cols, 2, 0, 1, 0);
      if (small)
        {
          /* sum_to the broadcast shape: a weight [cols] sums over rows,
           * a per-row scale [rows] over cols. */
          int dim = val (b, y)->elems == cols ? 0 : 1;
          bw_reads (b, d, -1);
          d = bw_reduce (b, "sum", rows, cols, dim);
        }
      deliver (b, y, d);
    }
  (void) g;
}

static void
rule_layernorm (Bw *b)
{
  const GsMgNode *n = b->node;
  int64_t rows = n->op.rows, cols = n->op.cols;
  /* Both kernels read the gradient and the input, with the saved mean
   * and rstd (and gamma) as small inputs; not the output. */
  bw_reads (b, b->dy, n->in[0]);
  GsOp op;
  bw_op (b, &op, GS_OP_NORM, "native_layer_norm_backward", rows, cols);
  op.n_in = 2;
  op.n_small_in = 3;
  op.alu_per_elem = 10;
  int dx = bw_emit (b, &op, rows * cols, cols);
  int dw = wants (b, n->in[1])
           ? bw_reduce (b, "layer_norm_backward_gamma_beta", rows, cols, 0)
           : -1;
  deliver (b, n->in[0], dx);
  deliver (b, n->in[1], dw);
  if (n->n_in > 2)
    deliver (b, n->in[2], dw);
}

static void
rule_embedding (Bw *b)
{
  const GsMgNode *n = b->node;
  int64_t tokens = n->op.rows, cols = n->op.cols;
  int64_t vocab = (int64_t) n->arg;
  /* embedding_dense_backward_cuda: up to 3072 indices one feature kernel;
   * more are sorted (radix sort of index/position pairs) and reduced by
   * segments. */
  bw_reads (b, -1, -1);
  bw_fill (b, "zeros", vocab, cols);
  if (tokens > 3072)
    {
      GsOp op;
      bw_op (b, &op, GS_OP_COPY, "radix_sort_pairs", tokens, 2);
      bw_emit (b, &op, tokens * 2, 2);
    }
  GsOp op;
  bw_reads (b, b->dy, -1);
  bw_op (b, &op, GS_OP_EMBEDDING, "embedding_dense_backward", tokens, cols);
  op.phase = GS_PHASE_BACKWARD;
  int d = bw_emit (b, &op, vocab * cols, cols);
  deliver (b, n->in[0], d);
}

static void
rule_attention (Bw *b)
{
  const GsMgNode *n = b->node;
  GsOp op;
  gs_op_copy (&op, &n->op);
  g_free (op.name);
  op.name = g_strdup (n->op.attn == GS_ATTN_FLASH2 ? "flash_attn_bwd"
                                                    : "efficient_attention_bwd");
  /* The output's gradient, q, k and v (and the saved output and
   * statistics, which a library kernel reads however it likes). */
  int in[GS_MG_MAX_IN] = { b->dy, n->in[0], n->in[1], n->in[2] };
  int dq = gs_mg_add (b->g, &op, GS_BW_NONE, GS_HOST_AUTOGRAD, in, 4,
                      val (b, n->in[0])->elems, val (b, n->in[0])->cols);
  gs_op_clear (&op);
  for (int i = 0; i < 3; i++)
    {
      int x = n->in[i];
      if (!wants (b, x))
        continue;
      int d = i == 0 ? dq : gs_mg_value (b->g, val (b, x)->elems,
                                         val (b, x)->cols, FALSE);
      deliver (b, x, d);
    }
}

static void
rule_index_put (Bw *b)
{
  const GsMgNode *n = b->node;
  int x = n->in[0], v = n->in[1];
  int64_t cols = val (b, x)->cols;
  bw_reads (b, b->dy, -1);
  if (wants (b, x))
    deliver (b, x, bw_pointwise (b, "masked_fill", val (b, x)->elems / cols,
                                 cols, 1, 1, 1, 0));
  if (wants (b, v))
    {
      GsOp op;
      bw_reads (b, b->dy, -1);
      bw_op (b, &op, GS_OP_EMBEDDING, "index", val (b, v)->elems / cols,
             cols);
      deliver (b, v, bw_emit (b, &op, val (b, v)->elems, cols));
    }
}

/* maximum(x, c) with c a 0-dim tensor that needs no gradient (OPT's
 * torch.max(scores, torch.tensor(finfo.min))): derivatives.yaml's formula
 * for x, at::where(x == c, grad / 2, grad).masked_fill_(x < c, 0), is
 * five kernels over the scores, two of them writing bool masks: 40 bytes
 * an fp32 element where one `where` kernel moved 12.  NeuSight's H100
 * profile of OPT-1.3B training at 1 x 2048 times this node's backward at
 * 1.96 ms a layer over 32 x 2048 x 2048 scores (5.4 GB at 2.7 TB/s). */
static void
rule_maximum (Bw *b)
{
  const GsMgNode *n = b->node;
  int64_t rows = n->op.rows, cols = n->op.cols;
  int x = n->in[0];
  bw_reads (b, x, -1);
  int eq = bw_pointwise (b, "eq", rows, cols, 1, 1, 1, 0);
  gs_mg_last (b->g)->op.out_esize = 1;
  bw_reads (b, b->dy, -1);
  int half = bw_pointwise (b, "mul", rows, cols, 1, 0, 1, 0);
  bw_reads (b, eq, half);
  b->reads[2] = b->dy;
  int w = bw_pointwise (b, "where", rows, cols, 2, 0, 1, 0);
  gs_mg_last (b->g)->op.n_mask_in = 1;
  bw_reads (b, x, -1);
  int lt = bw_pointwise (b, "lt", rows, cols, 1, 1, 1, 0);
  gs_mg_last (b->g)->op.out_esize = 1;
  bw_reads (b, w, lt);
  int d = bw_pointwise (b, "masked_fill", rows, cols, 1, 0, 1, 0);
  gs_mg_last (b->g)->op.n_mask_in = 1;
  deliver (b, x, d);
}

/* BLOOM's GeLUFunction.backward (transformers' bloom_gelu_back): from the
 * saved input x, tanh_out = tanh(0.79788456 * x * (1 + 0.044715 * x * x)),
 * ff = 0.5 * x * ((1 - tanh_out * tanh_out) * (0.79788456 + 0.1070322243
 * * x * x)) + 0.5 * (1 + tanh_out), then ff * grad: eighteen kernels, in
 * Python's evaluation order.  Operands: X the input, G the gradient, or an
 * earlier step's result (its index). */
static void
rule_bloom_gelu (Bw *b)
{
  enum { X = -2, G = -3, NONE = -1 };
  static const struct { const char *name; int a, c; double sfu; } steps[] = {
    { "mul", X, NONE, 0 },  /* 0: 0.79788456 * x */
    { "mul", X, NONE, 0 },  /* 1: 0.044715 * x */
    { "mul", 1, X, 0 },     /* 2: * x */
    { "add", 2, NONE, 0 },  /* 3: 1 + . */
    { "mul", 0, 3, 0 },     /* 4 */
    { "tanh", 4, NONE, 2 }, /* 5: tanh_out */
    { "mul", X, NONE, 0 },  /* 6: 0.5 * x */
    { "mul", 5, 5, 0 },     /* 7: tanh_out * tanh_out */
    { "rsub", 7, NONE, 0 }, /* 8: 1 - . */
    { "mul", X, NONE, 0 },  /* 9: 0.1070322243 * x */
    { "mul", 9, X, 0 },     /* 10: * x */
    { "add", 10, NONE, 0 }, /* 11: 0.79788456 + . */
    { "mul", 8, 11, 0 },    /* 12 */
    { "mul", 6, 12, 0 },    /* 13 */
    { "add", 5, NONE, 0 },  /* 14: 1 + tanh_out */
    { "mul", 14, NONE, 0 }, /* 15: 0.5 * . */
    { "add", 13, 15, 0 },   /* 16: ff */
    { "mul", 16, G, 0 },    /* 17: ff * grad */
  };
  const GsMgNode *n = b->node;
  int x = n->in[1];
  int64_t rows = n->op.rows, cols = n->op.cols;
  int out[G_N_ELEMENTS (steps)];
  for (guint i = 0; i < G_N_ELEMENTS (steps); i++)
    {
      int r[2] = { steps[i].a, steps[i].c };
      for (int j = 0; j < 2; j++)
        r[j] = r[j] == X ? x : r[j] == G ? b->dy : r[j] >= 0 ? out[r[j]]
                                                            : -1;
      /* A read of one tensor twice is one input. */
      if (r[1] == r[0])
        r[1] = -1;
      bw_reads (b, r[0], r[1]);
      int n_in = r[1] >= 0 ? 2 : 1;
      out[i] = bw_pointwise (b, steps[i].name, rows, cols, n_in, 0,
                             steps[i].sfu > 0 ? 8 : 1, steps[i].sfu);
    }
  deliver (b, x, out[G_N_ELEMENTS (steps) - 1]);
}

/* The forward tensor a unary derivative formula reads besides the
 * gradient (derivatives.yaml): relu's threshold_backward, tanh and
 * sigmoid use the result; maximum's where compares the input with the
 * bound; where(cond, x, c) and masked_fill need only their condition, a
 * buffer read as a small input; the others (gelu, silu) recompute from the input. */
static int
unary_saved (const GsMgNode *n)
{
  static const char *const from_result[] = {
    "threshold_backward", "tanh_backward", "sigmoid_backward"
  };
  for (guint i = 0; i < G_N_ELEMENTS (from_result); i++)
    if (strcmp (n->bw_name, from_result[i]) == 0)
      return n->out;
  if (strcmp (n->bw_name, "where") == 0 && strcmp (n->op.name, "where") == 0)
    return -1;
  /* masked_fill(mask, value): grad.masked_fill(mask, 0) reads the bool
   * mask, a broadcast buffer, besides the gradient. */
  if (strcmp (n->bw_name, "masked_fill") == 0)
    return -1;
  return n->in[0];
}

/* Rules whose kernels all have the node's own shape and feed in[0]. */
static void
rule_simple (Bw *b)
{
  const GsMgNode *n = b->node;
  int64_t rows = n->op.rows, cols = n->op.cols;
  int x = n->in[0];
  /* A copy: the kernels emitted below append to the values array, which
   * may move it. */
  const GsMgValue xcopy = *val (b, x);
  const GsMgValue *xv = &xcopy;
  int d = -1;
  /* Most formulas read the gradient alone. */
  bw_reads (b, b->dy, -1);
  switch (n->rule)
    {
    case GS_BW_SCALE:
      d = bw_pointwise (b, "mul", rows, cols, 1, 0, 1, 0);
      break;
    case GS_BW_POW:
    case GS_BW_RSQRT:
      {
        /* grad * c * x^(c-1) from the input; -0.5 * grad * y^3 from the
         * output. */
        bw_reads (b, n->rule == GS_BW_POW ? x : n->out, -1);
        int p = bw_pointwise (b, "pow", rows, cols, 1, 0, 2, 0);
        bw_reads (b, p, -1);
        int m = bw_pointwise (b, "mul", rows, cols, 1, 0, 1, 0);
        bw_reads (b, b->dy, m);
        d = bw_pointwise (b, "mul", rows, cols, 2, 0, 1, 0);
      }
      break;
    case GS_BW_UNARY:
      bw_reads (b, b->dy, unary_saved (n));
      d = bw_pointwise (b, n->bw_name, rows, cols, 2, 0,
                        n->op.alu_per_elem + 2, n->op.sfu_per_elem);
      break;
    case GS_BW_DROPOUT:
      /* native_dropout_backward: the gradient times the bool mask the
       * forward saved (n_mask_out there), times 1 / (1 - p). */
      bw_reads (b, b->dy, -1);
      d = bw_pointwise (b, "masked_scale", rows, cols, 1, 0, 2, 0);
      gs_mg_last (b->g)->op.n_mask_in = 1;
      break;
    case GS_BW_CAST:
      /* The gradient converted back: from the cast's output size to its
       * input's (cast_sizes in model-graph.c). */
      d = bw_pointwise (b, "_to_copy", rows, cols, 1, 0, 0, 0);
      if (n->op.out_esize > 0)
        {
          GsOp *back = &gs_mg_last (b->g)->op;
          gboolean up = n->op.out_esize == 4;
          back->dtype = up ? GS_DTYPE_FP32 : b->g->opt.dtype;
          back->out_esize = up ? (int) gs_dtype_bytes (b->g->opt.dtype) : 4;
        }
      break;
    case GS_BW_RESHAPE:
      /* The gradient of a head view ([B,H,S,D] of [B,S,H*D]) made
       * contiguous in the view's layout: the offset-calculator kernel,
       * transposing where the forward copied the view transposed (the
       * H100 traces: [8,512,16,64] 13.9 us, the key's [8,512,1024] 31.6
       * us, bf16). */
      d = bw_copy (b, "clone", xv->elems, xv->cols);
      {
        GsOp *c = &gs_mg_last (b->g)->op;
        c->strided = TRUE;
        c->transpose = n->op.transpose;
      }
      break;
    case GS_BW_SPLIT:
      /* The gradients of the pieces (up to GS_MG_MAX_IN of them). */
      memcpy (b->reads, &b->pieces[n->out * GS_MG_MAX_IN],
              sizeof b->reads);
      d = bw_copy (b, "cat", xv->elems, xv->cols);
      break;
    case GS_BW_SLICE:
      bw_reads (b, -1, -1);
      bw_fill (b, "zeros", xv->elems / xv->cols, xv->cols);
      bw_reads (b, b->dy, -1);
      d = bw_copy (b, "copy_", val (b, n->out)->elems, val (b, n->out)->cols);
      break;
    case GS_BW_MEAN:
      d = bw_pointwise (b, "div", rows, cols, 0, 1, 1, 0);
      break;
    case GS_BW_EXPAND:
      d = bw_reduce (b, "sum", val (b, n->out)->elems / xv->elems,
                     xv->elems, 0);
      break;
    case GS_BW_GATHER:
      bw_reads (b, -1, -1);
      bw_fill (b, "zeros", xv->elems / xv->cols, xv->cols);
      bw_reads (b, b->dy, -1);
      {
        GsOp op;
        bw_op (b, &op, GS_OP_EMBEDDING, "index_put_", rows, cols);
        d = bw_emit (b, &op, xv->elems, xv->cols);
      }
      break;
    case GS_BW_SOFTMAX:
    case GS_BW_LOG_SOFTMAX:
      {
        /* The gradient and the forward's output.  In the transformers
         * 5 runs' PyTorch (2.11), _softmax_backward_data of 16-bit rows
         * first multiplies the two in a vectorized kernel of its own
         * (the H100 traces: a Mul of [B,H,S,S] by [B,H,S,S] inside it,
         * 68.8 us for BERT-Large's at batch 8, before
         * softmax_warp_backward); PyTorch 2.1 has no such kernel, and
         * no fp32 run of 2.11 was traced. */
        int gy = b->dy;
        if (b->g->opt.hf5 && n->rule == GS_BW_SOFTMAX
            && n->op.dtype != GS_DTYPE_FP32)
          {
            bw_reads (b, b->dy, n->out);
            gy = bw_pointwise (b, "mul", rows, cols, 2, 0, 1, 0);
          }
        bw_reads (b, gy, n->out);
        GsOp op;
        bw_op (b, &op, GS_OP_SOFTMAX, n->rule == GS_BW_SOFTMAX
                                       ? "_softmax_backward_data"
                                       : "_log_softmax_backward_data",
               rows, cols);
        op.n_in = 2;
        op.alu_per_elem = 3;
        op.sfu_per_elem = n->rule == GS_BW_LOG_SOFTMAX ? 1 : 0;
        d = bw_emit (b, &op, rows * cols, cols);
      }
      break;
    case GS_BW_NLL:
      bw_reads (b, -1, -1);
      bw_fill (b, "zeros", xv->elems / xv->cols, xv->cols);
      {
        GsOp op;
        bw_op (b, &op, GS_OP_ELEMENTWISE, "nll_loss_backward",
               xv->elems / xv->cols, 1);
        op.n_in = 0;
        op.n_small_in = 1;
        bw_emit (b, &op, xv->elems / xv->cols, 1);
        d = b->grad[n->out] >= 0 ? gs_mg_value (b->g, xv->elems, xv->cols,
                                                FALSE) : -1;
      }
      break;
    default:
      g_assert_not_reached ();
    }
  deliver (b, x, d);
}

static void
differentiate (Bw *b, int g)
{
  const GsMgNode *n = b->node;
  switch (n->rule)
    {
    case GS_BW_NONE:
      return;
    case GS_BW_PASS:
      for (int i = 0; i < n->n_in; i++)
        deliver (b, n->in[i], g);
      return;
    case GS_BW_ADD_BCAST:
      deliver (b, n->in[0], g);
      if (wants (b, n->in[1]))
        {
          const GsMgValue *s = val (b, n->in[1]);
          int64_t full = val (b, n->out)->elems;
          bw_reads (b, g, -1);
          deliver (b, n->in[1], bw_reduce (b, "sum", full / s->elems,
                                           s->elems, 0));
        }
      return;
    case GS_BW_GEMM:
      rule_gemm (b);
      return;
    case GS_BW_MUL:
      rule_mul (b, g);
      return;
    case GS_BW_LAYERNORM:
      rule_layernorm (b);
      return;
    case GS_BW_EMBEDDING:
      rule_embedding (b);
      return;
    case GS_BW_ATTENTION:
      rule_attention (b);
      return;
    case GS_BW_INDEX_PUT:
      rule_index_put (b);
      return;
    case GS_BW_BLOOM_GELU:
      rule_bloom_gelu (b);
      return;
    case GS_BW_MAXIMUM:
      rule_maximum (b);
      return;
    default:
      rule_simple (b);
      return;
    }
}

/* ------------------------------------------------------------- driver */

/* Which inputs a node hands gradients to (all that require grad). */
static void
count_uses (GsMg *g, guint n_nodes, int loss, gboolean *reached, int *uses)
{
  reached[loss] = TRUE;
  for (guint i = n_nodes; i-- > 0;)
    {
      const GsMgNode *n = gs_mg_node (g, i);
      if (n->out < 0 || !reached[n->out] || n->rule == GS_BW_NONE)
        continue;
      for (int j = 0; j < n->n_in; j++)
        {
          int x = n->in[j];
          if (x < 0 || !gs_mg_val (g, x)->grad)
            continue;
          reached[x] = TRUE;
          uses[x]++;
        }
    }
}

/* torch.utils.checkpoint (reentrant, Hugging Face's default) ran layer
 * LAYER's forward without saving anything; when the backward reaches the
 * layer it runs the forward again, kernels and Python alike, then the
 * layer's backward.  The first N_NODES nodes are the recorded ones. */
static void
recompute_layer (GsMg *g, guint n_nodes, int layer)
{
  guint last_call = G_MAXUINT;
  for (guint i = 0; i < n_nodes; i++)
    {
      GsMgNode node = *gs_mg_node (g, i);   /* nodes grow: copy */
      if (node.op.layer != layer || node.op.phase != GS_PHASE_FORWARD)
        continue;
      if (node.call != last_call)
        gs_mg_next_call (g);
      last_call = node.call;
      int64_t elems = 0, cols = 1;
      if (node.out >= 0)
        {
          elems = gs_mg_val (g, node.out)->elems;
          cols = gs_mg_val (g, node.out)->cols;
        }
      gs_mg_add (g, &node.op, GS_BW_NONE, node.host, node.in, node.n_in,
                 elems, cols);
      GsMgNode *copy = gs_mg_last (g);
      copy->module = node.module;
      copy->arg = node.arg;
      copy->recompute = TRUE;
    }
}

void
gs_mg_backward (GsMg *g, int loss)
{
  guint n_nodes = g->nodes->len;
  guint n_vals = g->values->len;
  Bw b = { g, NULL, NULL, NULL, NULL, NULL, -1, { -1, -1, -1, -1 } };
  gboolean *reached = g_new0 (gboolean, n_vals);
  b.uses = g_new0 (int, n_vals);
  b.pieces = g_new (int, (gsize) n_vals * GS_MG_MAX_IN);
  for (gsize i = 0; i < (gsize) n_vals * GS_MG_MAX_IN; i++)
    b.pieces[i] = -1;
  b.received = g_new0 (int, n_vals);
  b.grad = g_new (int, n_vals);
  for (guint i = 0; i < n_vals; i++)
    b.grad[i] = -1;
  count_uses (g, n_nodes, loss, reached, b.uses);

  GsPhase saved_phase = g->phase;
  int saved_layer = g->layer;
  gboolean saved_eager = g->eager;
  g->phase = GS_PHASE_BACKWARD;
  gs_mg_host (g, GS_HOST_GRAPH, 1);   /* the compiled backward graph */
  g->eager = TRUE;                    /* the engine's seed */
  /* loss.backward() seeds the graph with ones_like(loss). */
  GsMgNode seed_ctx;
  memset (&seed_ctx, 0, sizeof seed_ctx);
  seed_ctx.op.tag = (char *) "loss";
  b.node = &seed_ctx;
  gs_mg_next_call (g);
  g->layer = -1;
  b.grad[loss] = bw_fill (&b, "ones_like", 1, 1);

  g_autofree gboolean *recomputed = g_new0 (gboolean,
                                            gs_mg_layer_count (g) + 1);
  for (guint i = n_nodes; i-- > 0;)
    {
      GsMgNode node = *gs_mg_node (g, i);   /* nodes may grow: copy */
      if (node.out < 0 || (guint) node.out >= n_vals
          || b.grad[node.out] < 0 || node.rule == GS_BW_NONE)
        continue;
      if (g->opt.checkpoint && node.op.layer >= 0
          && !recomputed[node.op.layer])
        {
          recomputed[node.op.layer] = TRUE;
          g->layer = node.op.layer;
          g->eager = node.eager;
          recompute_layer (g, n_nodes, node.op.layer);
        }
      b.node = &node;
      b.dy = b.grad[node.out];
      g->layer = node.op.layer;
      /* The backward of what ran outside the compiled graphs (the loss)
       * runs outside them too. */
      g->eager = node.eager;
      gs_mg_next_call (g);
      differentiate (&b, b.grad[node.out]);
    }
  g->phase = saved_phase;
  g->layer = saved_layer;
  g->eager = saved_eager;
  g_free (reached);
  g_free (b.uses);
  g_free (b.pieces);
  g_free (b.received);
  g_free (b.grad);
}
