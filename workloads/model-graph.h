/* gpusim: the dataflow graph model builders record (private to workloads/).
 *
 * Builders call one gs_mg_* helper per framework op PyTorch executes, in
 * the order it executes them.  Each call adds a node: the op it launches (or
 * none, for views and Python-level work that only cost host time), the
 * values it reads and writes, how autograd differentiates it and what class
 * of host work it is.  From that one record come the eager op list, the
 * backward pass (gs_mg_backward: reverse-mode over the recorded nodes, as
 * the autograd engine runs it), the compiled runtime's fusion (which needs
 * to know who reads what) and the host timeline.
 */
#ifndef GS_MODEL_GRAPH_H
#define GS_MODEL_GRAPH_H

#include <glib.h>
#include "workloads/op.h"

/* Classes of host (CPU) work; their costs are in runtime-host.c. */
typedef enum {
  GS_HOST_NONE,      /* no host work of its own */
  GS_HOST_PY,        /* Python-level bookkeeping: size(), getattr, int math */
  GS_HOST_VIEW,      /* view/permute/transpose/slice: a tensor, no kernel */
  GS_HOST_MODULE,    /* an nn.Module call (hooks, forward dispatch) */
  GS_HOST_OP,        /* an aten op called from Python that launches kernels */
  GS_HOST_GEMM,      /* a matmul/linear called from Python (cuBLAS) */
  GS_HOST_AUTOGRAD,  /* a backward kernel the autograd engine issues */
  GS_HOST_SYNC,      /* a blocking copy (nonzero's count, item(), a
                      * tensor made from a Python number): the host waits
                      * for the GPU to drain, then copies */
  GS_HOST_WAIT,      /* torch.cuda.synchronize(): waits, copies nothing */
  GS_HOST_GRAPH,     /* entering a model call: a compiled graph's guards
                      * and wrappers (nothing extra in eager) */
  GS_HOST_COUNT
} GsHostClass;

/* How autograd differentiates a node (see model-backward.c). */
typedef enum {
  GS_BW_NONE,        /* no gradient flows through */
  GS_BW_PASS,        /* gradient passes unchanged to every input (add, clone) */
  GS_BW_ADD_BCAST,   /* in[0] passes; in[1] was broadcast: sum it back */
  GS_BW_GEMM,        /* C = A x B (+ bias in[2]): dA, dB (, d bias) */
  GS_BW_SCALE,       /* y = x * c or x / c (c a number or a 0-dim tensor) */
  GS_BW_MUL,         /* y = a * b (b may be broadcast) */
  GS_BW_POW,         /* y = x ^ c: three kernels (pow, mul, mul) */
  GS_BW_RSQRT,       /* y = rsqrt(x): -0.5 * g * y^3: three kernels */
  GS_BW_UNARY,       /* one kernel named by the node's bw_name */
  GS_BW_DROPOUT,     /* grad * mask * scale */
  GS_BW_LAYERNORM,   /* dx kernel, then d gamma / d beta */
  GS_BW_EMBEDDING,   /* embedding_dense_backward into in[0] (the table) */
  GS_BW_RESHAPE,     /* a view whose backward reshape has to copy */
  GS_BW_SPLIT,       /* split: the gradients of the pieces are concatenated */
  GS_BW_SLICE,       /* narrow/slice: zeros + copy into the slice */
  GS_BW_MEAN,        /* mean over the last dim: expand + divide */
  GS_BW_SOFTMAX,
  GS_BW_LOG_SOFTMAX,
  GS_BW_NLL,         /* nll_loss: zeros + scatter of the loss gradient */
  GS_BW_CAST,        /* dtype conversion: convert the gradient back */
  GS_BW_EXPAND,      /* repeat/expand+reshape copy: sum the copies back */
  GS_BW_GATHER,      /* x[idx]: zeros + index_put(accumulate) */
  GS_BW_INDEX_PUT,   /* y[idx] = v: grad[idx] for v, masked fill for y */
  GS_BW_ATTENTION,   /* fused attention: one backward op */
  GS_BW_BLOOM_GELU,  /* BLOOM's GeLUFunction: in[0] its forward's result,
                      * in[1] the input it saved; its backward formula
                      * (bloom_gelu_back) in eighteen kernels */
  GS_BW_MAXIMUM,     /* maximum(x, c), c a 0-dim tensor needing no
                      * gradient: five kernels (derivatives.yaml) */
  GS_BW_COUNT
} GsBwRule;

#define GS_MG_MAX_IN 4

typedef struct {
  int64_t elems;           /* elements */
  int64_t cols;            /* last dimension (rows = elems / cols) */
  guint8 grad;             /* requires grad */
  guint8 param;            /* a parameter (autograd leaf) */
  guint8 keep;             /* a graph output: always written to memory */
  guint8 bundle;           /* gradients of its pieces are gathered by its
                            * producer (split), not added */
  guint8 cache;            /* a layer's K or V cache after a decode step's
                            * append: held until the generation ends */
  guint8 pgrad;            /* a parameter's finished gradient, which
                            * becomes its .grad (no AccumulateGrad add) */
  guint8 held;             /* returned by the model (a prefill's K or V in
                            * past_key_values): alive until the end, for
                            * the peak memory (model-memory.c) */
  int producer;            /* the node that wrote it (-1: an input or a
                            * parameter) */
} GsMgValue;

typedef struct {
  GsOp op;                 /* op.kind == GS_OP_KIND_COUNT: launches nothing */
  GsBwRule rule;
  GsHostClass host;
  guint8 module;           /* called through an nn.Module */
  guint8 eager;            /* runs outside any compiled graph (the loss,
                            * AccumulateGrad, frames Dynamo skips) */
  guint8 accumulate;       /* AccumulateGrad: adds a finished gradient
                            * into its parameter's .grad */
  guint8 recompute;        /* a checkpointed layer's forward run again in
                            * the backward (GsMgOptions.checkpoint) */
  guint8 n_in;
  int in[GS_MG_MAX_IN];    /* value ids (-1: unused) */
  int out;                 /* value id, -1: none */
  guint call;              /* framework call (kernels of one call share it) */
  double arg;              /* rule parameter (exponent, scale) */
  const char *bw_name;     /* static: name of the backward kernel (UNARY) */
  /* GEMM operands' storage: A (or B) is a transposed view of a contiguous
   * tensor.  Backward layouts follow from these. */
  guint8 a_t, b_t;
} GsMgNode;

/* Switch Transformers' sparse MLP: as the NeuSight harness patches it
 * (every expert runs on a zero-padded buffer of batch x expert_capacity
 * rows) or as transformers 4.36 ships it (each expert on its tokens). */
typedef enum {
  GS_MG_MOE_HARNESS,
  GS_MG_MOE_HF,
} GsMgMoe;

/* Options that shape the graph (from the workload options). */
typedef struct {
  GsDtype dtype;           /* activations and pointwise ops */
  GsDtype gemm_dtype;      /* GEMM inputs (tf32, fp8 differ from dtype) */
  gboolean training;       /* dropout on, autograd records */
  GsAttnImpl attn;
  gboolean sdpa;           /* attn through torch's scaled_dot_product_
                            * attention (Hugging Face "sdpa"): grouped
                            * K/V heads are repeated first (repeat_kv) */
  gboolean accumulate_grads; /* parameter .grad exists: += per parameter */
  gboolean balanced_routing; /* MoE: tokens spread evenly over experts
                              * (else identical tokens: one expert) */
  GsMgMoe moe;             /* how Switch's sparse MLP runs */
  gboolean hf5;            /* the modules of transformers 5 (gpt2, bert,
                            * opt), else 4.36's */
  gboolean compiled;       /* under torch.compile: code guarded by
                            * is_torchdynamo_compiling() takes that branch */
  gboolean checkpoint;     /* training: every transformer layer under
                            * torch.utils.checkpoint, its forward run again
                            * before its backward (model-backward.c) */
} GsMgOptions;

typedef struct {
  GArray *values;          /* GsMgValue */
  GArray *nodes;           /* GsMgNode */
  GsMgOptions opt;
  GsPhase phase;
  gboolean eager;          /* nodes added now run outside compiled graphs */
  int layer;               /* current transformer layer, -1 outside */
  int step;                /* current decode step, 0: the prefill */
  char *scope;             /* current module path, for tags */
  guint call;              /* next framework call id */
} GsMg;

GsMg *gs_mg_new (const GsMgOptions *opt);
/* Bytes of an element of value V: what the op that wrote it writes (its
 * dtype's, a cast's out_esize; a GEMM's output is in the model's dtype
 * unless the GEMM runs in fp32), the model dtype's for inputs and
 * parameters. */
double gs_mg_val_esize (const GsMg *g, int v);
/* Transformer layers its nodes belong to: the largest layer index + 1. */
int gs_mg_layer_count (const GsMg *g);
void gs_mg_free (GsMg *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsMg, gs_mg_free)

static inline GsMgValue *
gs_mg_val (GsMg *g, int id)
{
  g_assert (id >= 0 && (guint) id < g->values->len);
  return &g_array_index (g->values, GsMgValue, id);
}

static inline GsMgNode *
gs_mg_node (GsMg *g, guint i)
{
  return &g_array_index (g->nodes, GsMgNode, i);
}

/* Sets the module path tags name ("h.3.attn"); LAYER -1 outside layers. */
void gs_mg_scope (GsMg *g, const char *scope, int layer);

/* Values. */
int gs_mg_value (GsMg *g, int64_t elems, int64_t cols, gboolean grad);
int gs_mg_param (GsMg *g, int64_t elems, int64_t cols);
int gs_mg_input (GsMg *g, int64_t elems, int64_t cols);

/* Host-only work: COUNT units of class C (views, Python glue). */
void gs_mg_host (GsMg *g, GsHostClass c, int count);
/* An nn.Module call with nothing else to it (dropout in eval). */
void gs_mg_module (GsMg *g);

/* A node from a filled op (name, kind, shapes); takes ownership of nothing:
 * op is copied.  Returns the output value (or -1 when OUT_ELEMS is 0). */
int gs_mg_add (GsMg *g, const GsOp *op, GsBwRule rule, GsHostClass host,
               const int *in, int n_in, int64_t out_elems, int64_t out_cols);
/* The node gs_mg_add last added. */
GsMgNode *gs_mg_last (GsMg *g);
/* Starts a new framework call: ops added until the next call share it. */
void gs_mg_next_call (GsMg *g);

/* ---------------------------------------------------- framework op helpers
 * ROWS x COLS is the output shape seen as a matrix.  Each helper starts a
 * new framework call. */

/* nn.Linear / Conv1D / addmm: Y[rows,n] = X[rows,k] W (+ b).  W: an
 * existing parameter value or -1 for a new one.  CONV1D: GPT-2's Conv1D
 * stores W as [k,n] (addmm without transpose); nn.Linear stores [n,k]. */
int gs_mg_linear (GsMg *g, const char *name, int x, int64_t rows, int64_t k,
                  int64_t n, int w, gboolean bias, gboolean conv1d);
/* torch.matmul/bmm of BATCH [m,k] x [k,n].  A_T/B_T: the operand is a
 * transposed view of a contiguous tensor.  COPY_A/COPY_B: matmul has to
 * make the operand contiguous first (its batch dims cannot be merged). */
int gs_mg_matmul (GsMg *g, const char *name, int a, int b, int64_t batch,
                  int64_t m, int64_t n, int64_t k, gboolean a_t,
                  gboolean b_t, gboolean copy_a, gboolean copy_b);

/* Pointwise over ROWS x COLS.  B may be -1 (unary or tensor-scalar), a
 * full-size value or a broadcast one (fewer elements).  ALU/SFU: work per
 * element.  SCALAR: a Python-number operand. */
int gs_mg_pointwise (GsMg *g, const char *name, GsBwRule rule, int a, int b,
                     int64_t rows, int64_t cols, double alu, double sfu,
                     gboolean scalar);
/* A unary op whose backward is one kernel named BW_NAME (NULL: no grad). */
int gs_mg_unary (GsMg *g, const char *name, int x, int64_t rows,
                 int64_t cols, double alu, double sfu, const char *bw_name);
/* A kernel creating a tensor (zeros, ones, full, arange). */
int gs_mg_fill (GsMg *g, const char *name, int64_t rows, int64_t cols);
/* X.to(dtype) in a half-precision model: `_to_copy` over ROWS x COLS, to
 * fp32 or back (GS_BW_CAST: its backward converts the gradient back). */
int gs_mg_cast (GsMg *g, int x, int64_t rows, int64_t cols);
/* Dropout with probability P: a kernel in training (p > 0), else nothing
 * but the module call (MODULE) or the functional call. */
int gs_mg_dropout (GsMg *g, int x, int64_t rows, int64_t cols, double p,
                   gboolean module);
int gs_mg_layernorm (GsMg *g, int x, int64_t rows, int64_t cols);
/* nn.LayerNorm(bias=False): the weight only (StableLM's per-head norms). */
int gs_mg_layernorm_nobias (GsMg *g, int x, int64_t rows, int64_t cols);
int gs_mg_softmax (GsMg *g, int x, int64_t rows, int64_t cols);
int gs_mg_log_softmax (GsMg *g, int x, int64_t rows, int64_t cols);
/* A copy (contiguous, cat, clone): out has ROWS x COLS elements. */
int gs_mg_copy (GsMg *g, const char *name, GsBwRule rule, int x,
                int64_t rows, int64_t cols);
/* Reduction of ROWS x COLS over DIM (1: over cols, to rows). */
int gs_mg_reduce (GsMg *g, const char *name, GsBwRule rule, int x,
                  int64_t rows, int64_t cols, int dim);
/* Embedding lookup of ROWS indices in TABLE (vocab x cols). */
int gs_mg_embedding (GsMg *g, int table, int64_t vocab, int64_t rows,
                     int64_t cols);
/* A view whose backward reshape copies (see GS_BW_RESHAPE). */
int gs_mg_view_bw_copy (GsMg *g, int x);
/* split/chunk of X into N equal pieces (views): PIECES receives their ids.
 * In backward the pieces' gradients are concatenated by one kernel. */
void gs_mg_split (GsMg *g, int x, int n, int *pieces);
/* x[..., a:b] as a view of ELEMS elements (backward: zeros + copy). */
int gs_mg_slice (GsMg *g, int x, int64_t elems, int64_t cols);
/* Fused attention (FlashAttention-2 / memory-efficient) by IMPL; an
 * additive mask of MASK_ROWS rows per batch (0: none, 1: broadcast over
 * the queries, SEQ_Q: one per query) x SEQ_K is read with the scores. */
int gs_mg_attention (GsMg *g, int q, int k, int v, int64_t batch,
                     int64_t heads, int64_t kv_heads, int64_t seq_q,
                     int64_t seq_k, int64_t head_dim, gboolean causal,
                     double dropout, GsAttnImpl impl, int64_t mask_rows);

/* The backward pass of the recorded forward, from LOSS (a value). */
void gs_mg_backward (GsMg *g, int loss);

#endif
