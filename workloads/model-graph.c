/* gpusim: the builders' dataflow graph and its op helpers (see
 * model-graph.h).
 *
 * Work per element (alu/sfu) follows the CUDA implementations: tanh and
 * erf are software sequences around one or two MUFU instructions, exp and
 * rsqrt are one MUFU each, Philox RNG for dropout costs about ten integer
 * operations per 4 elements.  The library model turns them into kernels.
 */
#include "config.h"
#include "workloads/model-graph.h"

#include <string.h>

static void
node_clear (gpointer p)
{
  gs_op_clear (&((GsMgNode *) p)->op);
}

GsMg *
gs_mg_new (const GsMgOptions *opt)
{
  GsMg *g = g_new0 (GsMg, 1);
  g->values = g_array_sized_new (FALSE, TRUE, sizeof (GsMgValue), 1024);
  g->nodes = g_array_sized_new (FALSE, TRUE, sizeof (GsMgNode), 1024);
  g_array_set_clear_func (g->nodes, node_clear);
  g->opt = *opt;
  g->phase = GS_PHASE_FORWARD;
  g->layer = -1;
  g->scope = g_strdup ("");
  return g;
}

void
gs_mg_free (GsMg *g)
{
  if (g == NULL)
    return;
  g_array_unref (g->values);
  g_array_unref (g->nodes);
  g_free (g->scope);
  g_free (g);
}

void
gs_mg_scope (GsMg *g, const char *scope, int layer)
{
  g_free (g->scope);
  g->scope = g_strdup (scope);
  g->layer = layer;
}

int
gs_mg_value (GsMg *g, int64_t elems, int64_t cols, gboolean grad)
{
  g_assert (elems > 0 && cols > 0);
  GsMgValue v = { 0 };
  v.producer = -1;
  v.elems = elems;
  v.cols = cols;
  v.grad = grad && g->opt.training;
  g_array_append_val (g->values, v);
  return (int) g->values->len - 1;
}

int
gs_mg_param (GsMg *g, int64_t elems, int64_t cols)
{
  int id = gs_mg_value (g, elems, cols, TRUE);
  gs_mg_val (g, id)->param = TRUE;
  return id;
}

int
gs_mg_input (GsMg *g, int64_t elems, int64_t cols)
{
  return gs_mg_value (g, elems, cols, FALSE);
}

void
gs_mg_next_call (GsMg *g)
{
  g->call++;
}

GsMgNode *
gs_mg_last (GsMg *g)
{
  g_assert (g->nodes->len > 0);
  return gs_mg_node (g, g->nodes->len - 1);
}

static char *
make_tag (const GsMg *g, const char *name)
{
  if (g->scope[0] == '\0')
    return g_strdup (name);
  return name ? g_strconcat (g->scope, ".", name, NULL) : g_strdup (g->scope);
}

int
gs_mg_add (GsMg *g, const GsOp *op, GsBwRule rule, GsHostClass host,
           const int *in, int n_in, int64_t out_elems, int64_t out_cols)
{
  g_assert (n_in <= GS_MG_MAX_IN);
  GsMgNode n;
  memset (&n, 0, sizeof n);
  gs_op_copy (&n.op, op);
  if (n.op.tag == NULL)
    n.op.tag = make_tag (g, NULL);
  n.op.phase = g->phase;
  n.op.layer = g->layer;
  n.op.step = g->step;
  n.rule = rule;
  n.host = host;
  n.eager = g->eager;
  n.call = g->call;
  n.out = -1;
  gboolean grad = FALSE;
  for (int i = 0; i < GS_MG_MAX_IN; i++)
    n.in[i] = i < n_in ? in[i] : -1;
  n.n_in = (guint8) n_in;
  for (int i = 0; i < n_in; i++)
    if (in[i] >= 0 && gs_mg_val (g, in[i])->grad)
      grad = TRUE;
  if (out_elems > 0)
    {
      n.out = gs_mg_value (g, out_elems, out_cols,
                           grad && rule != GS_BW_NONE);
      gs_mg_val (g, n.out)->producer = (int) g->nodes->len;
    }
  g_array_append_val (g->nodes, n);
  return n.out;
}

void
gs_mg_host (GsMg *g, GsHostClass c, int count)
{
  if (count <= 0)
    return;
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_KIND_COUNT;
  gs_mg_add (g, &op, GS_BW_NONE, c, NULL, 0, 0, 1);
  gs_mg_last (g)->arg = count;
}

void
gs_mg_module (GsMg *g)
{
  gs_mg_host (g, GS_HOST_MODULE, 1);
}

/* An op template with the graph's defaults. */
static void
op_start (const GsMg *g, GsOp *op, GsOpKind kind, const char *name,
          int64_t rows, int64_t cols)
{
  gs_op_init (op);
  op->kind = kind;
  op->name = (char *) name;        /* copied by gs_mg_add */
  op->dtype = g->opt.dtype;
  op->rows = rows;
  op->cols = cols;
}

static int
add_op (GsMg *g, GsOp *op, GsBwRule rule, GsHostClass host, const int *in,
        int n_in, int64_t out_elems, int64_t out_cols)
{
  int v = gs_mg_add (g, op, rule, host, in, n_in, out_elems, out_cols);
  op->name = NULL;                  /* the template never owned it */
  return v;
}

int
gs_mg_linear (GsMg *g, const char *name, int x, int64_t rows, int64_t k,
              int64_t n, int w, gboolean bias, gboolean conv1d)
{
  gs_mg_next_call (g);
  if (w < 0)
    w = gs_mg_param (g, n * k, conv1d ? n : k);
  int b = bias ? gs_mg_param (g, n, n) : -1;
  GsOp op;
  op_start (g, &op, GS_OP_GEMM, bias ? "addmm" : "mm", 0, 0);
  op.dtype = g->opt.gemm_dtype;
  op.m = rows;
  op.n = n;
  op.k = k;
  op.bias = bias;
  /* cuBLAS's A is PyTorch's second operand: nn.Linear passes W^T, a
   * transposed view ("t"); Conv1D passes W as stored ("n"). */
  op.layout = conv1d ? GS_LAYOUT_NN : GS_LAYOUT_TN;
  op.tag = make_tag (g, name);
  int in[3] = { x, w, b };
  int y = add_op (g, &op, GS_BW_GEMM, GS_HOST_GEMM, in, bias ? 3 : 2,
                  rows * n, n);
  g_free (op.tag);
  GsMgNode *nd = gs_mg_last (g);
  nd->module = TRUE;
  nd->b_t = !conv1d;
  return y;
}

static GsLayout
layout_of (gboolean a_t, gboolean b_t)
{
  /* First letter: op of cuBLAS's A = PyTorch's B; second: PyTorch's A. */
  if (b_t)
    return a_t ? GS_LAYOUT_TT : GS_LAYOUT_TN;
  return a_t ? GS_LAYOUT_NT : GS_LAYOUT_NN;
}

/* A bmm node of an already-started call. */
static int
bmm_node (GsMg *g, const char *name, int a, int b, int64_t batch, int64_t m,
          int64_t n, int64_t k, gboolean a_t, gboolean b_t, GsHostClass host)
{
  GsOp op;
  op_start (g, &op, GS_OP_GEMM, batch > 1 ? "bmm" : "mm", 0, 0);
  op.dtype = g->opt.gemm_dtype;
  op.batch = batch;
  op.m = m;
  op.n = n;
  op.k = k;
  op.layout = layout_of (a_t, b_t);
  op.tag = make_tag (g, name);
  int in[2] = { a, b };
  int y = add_op (g, &op, GS_BW_GEMM, host, in, 2, batch * m * n, n);
  g_free (op.tag);
  GsMgNode *nd = gs_mg_last (g);
  nd->a_t = a_t;
  nd->b_t = b_t;
  return y;
}

/* Marks the head view (gs_mg_view_bw_copy) that produced V, if any, as
 * one whose gradient arrives transposed. */
static void
mark_view_transposed (GsMg *g, int v)
{
  int p = gs_mg_val (g, v)->producer;
  if (p < 0)
    return;
  GsMgNode *n = gs_mg_node (g, (guint) p);
  if (n->rule == GS_BW_RESHAPE)
    n->op.transpose = TRUE;
}

int
gs_mg_matmul (GsMg *g, const char *name, int a, int b, int64_t batch,
              int64_t m, int64_t n, int64_t k, gboolean a_t, gboolean b_t,
              gboolean copy_a, gboolean copy_b)
{
  gs_mg_next_call (g);
  GsHostClass host = GS_HOST_GEMM;
  g_autofree char *tag = make_tag (g, name);
  /* matmul reshapes [B,H,S,D] views to [B*H,S,D]; views whose batch dims
   * cannot merge are copied contiguous first (same framework call:
   * reshape's clone of a permuted view, PyTorch's strided copy kernel).  An
   * operand broadcast over a batch dim (one K/V head for every query
   * head) is copied once per use: its gradient sums the copies back. */
  /* A head view copied transposed (k^T made contiguous) gets its
   * gradient in the transposed layout: the view's backward copy
   * transposes too. */
  if (copy_a && a_t)
    mark_view_transposed (g, a);
  if (copy_b && b_t)
    mark_view_transposed (g, b);
  if (copy_a)
    {
      GsOp op;
      op_start (g, &op, GS_OP_COPY, "clone", batch * m, k);
      op.strided = TRUE;
      op.transpose = a_t;
      op.tag = tag;
      int in[1] = { a };
      GsBwRule rule = gs_mg_val (g, a)->elems < batch * m * k
                      ? GS_BW_EXPAND : GS_BW_PASS;
      a = add_op (g, &op, rule, host, in, 1, batch * m * k, k);
      host = GS_HOST_NONE;
      a_t = FALSE;
    }
  if (copy_b)
    {
      GsOp op;
      op_start (g, &op, GS_OP_COPY, "clone", batch * k, n);
      op.strided = TRUE;
      op.transpose = b_t;
      op.tag = tag;
      int in[1] = { b };
      GsBwRule rule = gs_mg_val (g, b)->elems < batch * k * n
                      ? GS_BW_EXPAND : GS_BW_PASS;
      b = add_op (g, &op, rule, host, in, 1, batch * k * n, n);
      host = GS_HOST_NONE;
      b_t = FALSE;
    }
  return bmm_node (g, name, a, b, batch, m, n, k, a_t, b_t, host);
}

int
gs_mg_layer_count (const GsMg *g)
{
  int n = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    n = MAX (n, g_array_index (g->nodes, GsMgNode, i).op.layer + 1);
  return n;
}

double
gs_mg_val_esize (const GsMg *g, int v)
{
  double model = gs_dtype_bytes (g->opt.dtype);
  int p = g_array_index (g->values, GsMgValue, v).producer;
  if (p < 0)
    return model;
  const GsOp *op = &g_array_index (g->nodes, GsMgNode, p).op;
  if (op->out_esize > 0)
    return op->out_esize;
  if (op->kind == GS_OP_GEMM || op->kind == GS_OP_KIND_COUNT)
    return op->dtype == GS_DTYPE_FP32 ? 4 : model;
  return gs_dtype_bytes (op->dtype);
}

/* A cast in a half-precision model (GS_BW_CAST) goes to fp32 or back: it
 * reads its input's element size and writes the other's. */
static void
cast_sizes (GsMg *g, GsMgNode *n, int x)
{
  if (gs_dtype_bytes (g->opt.dtype) != 2 || x < 0)
    return;
  if (gs_mg_val_esize (g, x) == 4)
    {
      n->op.dtype = GS_DTYPE_FP32;
      n->op.out_esize = (int) gs_dtype_bytes (g->opt.dtype);
    }
  else
    n->op.out_esize = 4;
}

int
gs_mg_pointwise (GsMg *g, const char *name, GsBwRule rule, int a, int b,
                 int64_t rows, int64_t cols, double alu, double sfu,
                 gboolean scalar)
{
  gs_mg_next_call (g);
  GsOp op;
  op_start (g, &op, GS_OP_ELEMENTWISE, name, rows, cols);
  op.alu_per_elem = alu;
  op.sfu_per_elem = sfu;
  op.scalar_operand = scalar;
  op.n_in = a >= 0 ? 1 : 0;
  if (b >= 0)
    {
      if (gs_mg_val (g, b)->elems >= rows * cols)
        op.n_in++;
      else
        op.n_small_in = 1;
    }
  int in[2] = { a, b };
  int n_in = b >= 0 ? 2 : (a >= 0 ? 1 : 0);
  int v = add_op (g, &op, rule, GS_HOST_OP, in, n_in, rows * cols, cols);
  if (rule == GS_BW_CAST)
    cast_sizes (g, gs_mg_last (g), a);
  return v;
}

int
gs_mg_unary (GsMg *g, const char *name, int x, int64_t rows, int64_t cols,
             double alu, double sfu, const char *bw_name)
{
  int y = gs_mg_pointwise (g, name, bw_name ? GS_BW_UNARY : GS_BW_NONE, x,
                           -1, rows, cols, alu, sfu, FALSE);
  gs_mg_last (g)->bw_name = bw_name;
  return y;
}

int
gs_mg_fill (GsMg *g, const char *name, int64_t rows, int64_t cols)
{
  return gs_mg_pointwise (g, name, GS_BW_NONE, -1, -1, rows, cols, 0, 0,
                          TRUE);
}

int
gs_mg_cast (GsMg *g, int x, int64_t rows, int64_t cols)
{
  return gs_mg_pointwise (g, "_to_copy", GS_BW_CAST, x, -1, rows, cols, 0, 0,
                          FALSE);
}

int
gs_mg_dropout (GsMg *g, int x, int64_t rows, int64_t cols, double p,
               gboolean module)
{
  /* F.dropout returns its input untouched unless training with
   * 0 < p < 1; then native_dropout writes the output and a bool mask. */
  if (!g->opt.training || p <= 0)
    {
      gs_mg_host (g, module ? GS_HOST_MODULE : GS_HOST_PY, 1);
      return x;
    }
  int y = gs_mg_pointwise (g, "native_dropout", GS_BW_DROPOUT, x, -1, rows,
                           cols, 4, 0, FALSE);
  GsMgNode *n = gs_mg_last (g);
  n->op.n_mask_out = 1;
  n->module = module;
  n->arg = p;
  return y;
}

/* nn.LayerNorm over COLS, with a bias (BETA) or without. */
static int
layernorm (GsMg *g, int x, int64_t rows, int64_t cols, gboolean beta)
{
  gs_mg_next_call (g);
  int in[3] = { x, gs_mg_param (g, cols, cols), -1 };
  if (beta)
    in[2] = gs_mg_param (g, cols, cols);
  GsOp op;
  op_start (g, &op, GS_OP_NORM, "native_layer_norm", rows, cols);
  op.alu_per_elem = 8;
  op.n_small_in = beta ? 2 : 1;
  int y = add_op (g, &op, GS_BW_LAYERNORM, GS_HOST_OP, in, beta ? 3 : 2,
                  rows * cols, cols);
  gs_mg_last (g)->module = TRUE;
  return y;
}

int
gs_mg_layernorm (GsMg *g, int x, int64_t rows, int64_t cols)
{
  return layernorm (g, x, rows, cols, TRUE);
}

int
gs_mg_layernorm_nobias (GsMg *g, int x, int64_t rows, int64_t cols)
{
  return layernorm (g, x, rows, cols, FALSE);
}

int
gs_mg_softmax (GsMg *g, int x, int64_t rows, int64_t cols)
{
  gs_mg_next_call (g);
  GsOp op;
  op_start (g, &op, GS_OP_SOFTMAX, "_softmax", rows, cols);
  op.alu_per_elem = 4;
  op.sfu_per_elem = 1;
  int in[1] = { x };
  return add_op (g, &op, GS_BW_SOFTMAX, GS_HOST_OP, in, 1, rows * cols,
                 cols);
}

int
gs_mg_log_softmax (GsMg *g, int x, int64_t rows, int64_t cols)
{
  gs_mg_next_call (g);
  GsOp op;
  op_start (g, &op, GS_OP_SOFTMAX, "_log_softmax", rows, cols);
  op.alu_per_elem = 4;
  op.sfu_per_elem = 1;
  int in[1] = { x };
  return add_op (g, &op, GS_BW_LOG_SOFTMAX, GS_HOST_OP, in, 1, rows * cols,
                 cols);
}

int
gs_mg_copy (GsMg *g, const char *name, GsBwRule rule, int x, int64_t rows,
            int64_t cols)
{
  gs_mg_next_call (g);
  GsOp op;
  op_start (g, &op, GS_OP_COPY, name, rows, cols);
  int in[1] = { x };
  return add_op (g, &op, rule, GS_HOST_OP, in, x >= 0 ? 1 : 0, rows * cols,
                 cols);
}

int
gs_mg_reduce (GsMg *g, const char *name, GsBwRule rule, int x, int64_t rows,
              int64_t cols, int dim)
{
  gs_mg_next_call (g);
  GsOp op;
  op_start (g, &op, GS_OP_REDUCE, name, rows, cols);
  op.reduce_dim = dim;
  op.alu_per_elem = 1;
  int in[1] = { x };
  int64_t out = dim == 1 ? rows : cols;
  return add_op (g, &op, rule, GS_HOST_OP, in, 1, out, dim == 1 ? 1 : cols);
}

int
gs_mg_embedding (GsMg *g, int table, int64_t vocab, int64_t rows,
                 int64_t cols)
{
  gs_mg_next_call (g);
  GsOp op;
  op_start (g, &op, GS_OP_EMBEDDING, "embedding", rows, cols);
  int in[1] = { table };
  int y = add_op (g, &op, GS_BW_EMBEDDING, GS_HOST_OP, in, 1, rows * cols,
                  cols);
  GsMgNode *n = gs_mg_last (g);
  n->module = TRUE;
  n->arg = (double) vocab;
  return y;
}

int
gs_mg_view_bw_copy (GsMg *g, int x)
{
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_KIND_COUNT;
  /* The head views are activations of the model's dtype: their
   * gradients' copies move its bytes. */
  op.dtype = g->opt.dtype;
  const GsMgValue *v = gs_mg_val (g, x);
  int in[1] = { x };
  int64_t e = v->elems, c = v->cols;
  int y = gs_mg_add (g, &op, GS_BW_RESHAPE, GS_HOST_VIEW, in, 1, e, c);
  gs_mg_last (g)->arg = 1;
  return y;
}

int
gs_mg_attention (GsMg *g, int q, int k, int v, int64_t batch, int64_t heads,
                 int64_t kv_heads, int64_t seq_q, int64_t seq_k,
                 int64_t head_dim, gboolean causal, double dropout,
                 GsAttnImpl impl, int64_t mask_rows)
{
  gs_mg_next_call (g);
  GsOp op;
  const char *name = impl == GS_ATTN_FLASH2
                     ? "flash_attn_fwd" : "efficient_attention_fwd";
  op_start (g, &op, GS_OP_ATTENTION, name, 0, 0);
  op.dtype = g->opt.gemm_dtype == GS_DTYPE_FP8 ? GS_DTYPE_BF16
                                               : g->opt.dtype;
  op.batch = batch;
  op.heads = heads;
  op.kv_heads = kv_heads;
  op.seq_q = seq_q;
  op.seq_k = seq_k;
  op.head_dim = head_dim;
  op.causal = causal;
  op.dropout = dropout > 0;
  op.attn = impl;
  op.bias = mask_rows > 0;
  op.rows = mask_rows;
  int in[3] = { q, k, v };
  int y = add_op (g, &op, GS_BW_ATTENTION, GS_HOST_OP, in, 3,
                  batch * heads * seq_q * head_dim, head_dim);
  gs_mg_last (g)->arg = dropout;
  return y;
}

void
gs_mg_split (GsMg *g, int x, int n, int *pieces)
{
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_KIND_COUNT;
  const GsMgValue *v = gs_mg_val (g, x);
  int64_t e = v->elems, c = v->cols;
  int in[1] = { x };
  int bundle = gs_mg_add (g, &op, GS_BW_SPLIT, GS_HOST_VIEW, in, 1, e, c);
  gs_mg_val (g, bundle)->bundle = TRUE;
  for (int i = 0; i < n; i++)
    {
      in[0] = bundle;
      pieces[i] = gs_mg_add (g, &op, GS_BW_PASS, GS_HOST_PY, in, 1, e / n,
                             c / n);
    }
}

int
gs_mg_slice (GsMg *g, int x, int64_t elems, int64_t cols)
{
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_KIND_COUNT;
  int in[1] = { x };
  return gs_mg_add (g, &op, GS_BW_SLICE, GS_HOST_VIEW, in, 1, elems, cols);
}
