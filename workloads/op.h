/* gpusim: framework-level operations.
 *
 * Model builders turn a model (a Hugging Face config) into a list of ops,
 * one per framework op PyTorch would execute; runtimes fuse them (compiled)
 * or not (eager); the kernel library model lowers each op to the kernel(s) a
 * real library launches on a given arch.
 */
#ifndef GS_OP_H
#define GS_OP_H

#include <glib.h>
#include <stdint.h>
#include "sim/kernel.h"

typedef enum {
  GS_OP_GEMM,         /* C[b] = A[b] x B[b]: linear (addmm/mm) and bmm */
  GS_OP_ELEMENTWISE,  /* pointwise over rows x cols elements */
  GS_OP_NORM,         /* layer norm or RMS norm over rows of `cols` */
  GS_OP_SOFTMAX,      /* softmax over rows of `cols` */
  GS_OP_REDUCE,       /* sum/mean over rows (to cols) or cols (to rows) */
  GS_OP_EMBEDDING,    /* gather `rows` rows of width `cols` from a table */
  GS_OP_ATTENTION,    /* fused attention: FlashAttention-2 / memory-efficient */
  GS_OP_COPY,         /* permute/contiguous/cat/expand copies of rows x cols */
  GS_OP_FUSED,        /* a generated kernel fusing pointwise/reduction ops */
  GS_OP_OPTIMIZER,    /* optimizer step over `params` parameters */
  GS_OP_KIND_COUNT
} GsOpKind;

/* GEMM layout as the BLAS sees it (column major): the first letter is op(A)
 * of cuBLAS's A (PyTorch's weight for linear), "n" not transposed. */
typedef enum { GS_LAYOUT_NN, GS_LAYOUT_NT, GS_LAYOUT_TN, GS_LAYOUT_TT } GsLayout;

typedef enum {
  GS_PHASE_FORWARD,    /* the model's forward call */
  GS_PHASE_LOSS,       /* the loss computed between forward and backward */
  GS_PHASE_BACKWARD,   /* loss.backward() */
  GS_PHASE_OPTIMIZER,  /* optimizer.step() */
  GS_PHASE_COUNT
} GsPhase;

typedef enum {
  GS_ATTN_EAGER,      /* bmm, scale, mask, softmax, (dropout), bmm as separate ops */
  GS_ATTN_FLASH2,     /* FlashAttention-2 */
  GS_ATTN_MEM_EFF,    /* memory-efficient (xformers/cutlass) attention */
} GsAttnImpl;

/* The largest head dimension FlashAttention-2 has kernels for (the
 * flash-attention v2 sources: hdim32 to hdim256). */
#define GS_FLASH2_MAX_HEAD_DIM 256

typedef struct {
  GsOpKind kind;
  char *name;              /* framework op: "addmm", "bmm", "gelu", "add" ... */
  char *tag;               /* module path: "h.3.mlp.c_fc" (may be NULL) */
  GsDtype dtype;           /* compute dtype */
  GsPhase phase;
  int layer;               /* transformer layer, -1 outside layers */
  int step;                /* generation: 0 the prefill (and every op of
                            * a plain forward or training step), t >= 1
                            * the t-th decode step */

  /* GEMM: batch x [m,k] x [k,n]; linear has batch 1, m = tokens,
   * n = out features, k = in features. */
  int64_t batch, m, n, k;
  GsLayout layout;
  gboolean bias;           /* bias added in the GEMM epilogue (addmm) */
  gboolean c_in;           /* the epilogue reads a full [m,n] C (baddbmm
                            * with beta != 0) */

  /* Elementwise, norm, softmax, reduce, copy, embedding: rows x cols. */
  int64_t rows, cols;
  int n_in;                /* full-size input tensors read */
  int n_out;               /* full-size output tensors written */
  int n_small_in;          /* broadcast inputs (a row, a column or a scalar) */
  int n_mask_in;           /* full-size bool tensors read (one byte an
                            * element): dropout's mask in its backward */
  int n_mask_out;          /* full-size bool tensors written: the mask
                            * native_dropout saves for the backward */
  /* One broadcast input larger than a row: an attention mask [B,1,S,L]
   * added to scores [B,H,S,L], T5's position bias [1,H,S,L] over the
   * batch.  Its elements, how many of them the op streams before it uses
   * one again (the mask: S x L, one head's slab; 0: all of them) and its
   * element size in bytes (0: the op's dtype; GPT-2's causal buffer is
   * bool).  0 elements: none, every broadcast input stays in cache. */
  int64_t bcast_elems, bcast_period;
  int bcast_esize;
  /* Element size of what an elementwise op writes when it differs from
   * its dtype's (0: the dtype's): a cast, .to(torch.float32) of bf16
   * (dtype bf16, 4) or back (dtype fp32, 2). */
  int out_esize;
  double alu_per_elem;     /* ALU operations per element */
  double sfu_per_elem;     /* transcendental operations per element */
  gboolean scalar_operand; /* tensor-scalar form (addu, mulu ...) */
  gboolean strided;        /* COPY: reads a view no contiguous walk covers
                            * (a permuted or expanded one reshaped), so
                            * PyTorch's offset-calculator kernel runs it */
  gboolean transpose;      /* COPY (strided): the innermost dimension
                            * changes (a transposed view made
                            * contiguous), so a warp's reads fall one
                            * element to a 32-byte sector */
  int reduce_dim;          /* REDUCE: 0 over rows (-> cols), 1 over cols (-> rows) */

  /* Attention (GS_OP_ATTENTION, and the eager pieces' metadata).  An
   * additive mask read by fused attention sets bias, with rows = its rows
   * per batch (1: one row broadcast over the queries, seq_q: a row per
   * query) of seq_k columns, broadcast over the heads. */
  int64_t heads, kv_heads, seq_q, seq_k, head_dim;
  gboolean causal;
  gboolean dropout;        /* dropout on the probabilities (training) */
  GsAttnImpl attn;
  int64_t window;          /* sliding window: a query attends to the
                            * window + 1 keys ending at its own position
                            * (flash_attn's window_size; 0: every key) */
  gboolean softcap;        /* scores soft-capped in the kernel, cap *
                            * tanh(s / cap) (flash_attn's softcap) */

  /* Optimizer. */
  int64_t params;

  /* Fused: the ops this one replaced (names, '+'-joined). */
  char *fused;
  /* Run as eager PyTorch runs it whatever the program's runtime: outside
   * the compiled graphs (the loss, AccumulateGrad, graph breaks). */
  gboolean eager;
} GsOp;

const char *gs_op_kind_name (GsOpKind k);
const char *gs_phase_name (GsPhase p);
void gs_op_init (GsOp *op);
void gs_op_clear (GsOp *op);
void gs_op_copy (GsOp *dst, const GsOp *src);
/* Elements of the op's output (or of the input for reductions). */
int64_t gs_op_elems (const GsOp *op);
/* FLOPs the op performs (GEMM 2mnk*batch, attention 4*b*h*sq*sk*d ...). */
double gs_op_flops (const GsOp *op);

/* A growable list of ops (GArray of GsOp with clear func). */
GArray *gs_op_list_new (void);

#endif
