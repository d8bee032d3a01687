/* gpusim: the memory-bound half of the kernel library model.
 *
 * Which kernels PyTorch (2.1, CUDA 12) launches for the ops that stream
 * memory -- elementwise, layer/RMS norm, softmax, reductions, embedding
 * gathers, copies, Inductor-generated (Triton) fused kernels and the
 * optimizer step -- with its grids, blocks and per-block work, and how long
 * such an op takes when timed alone (host framework costs included).
 *
 * The learned parameters live in the arch file's
 * `calibration.library.memory` group (GsMemParams, declared once in the
 * table in mem-params.c); everything else is a documented heuristic
 * (docs/kernel-library.md, "Memory-bound kernels").  lib-memory.c wraps
 * this for workloads/library.h; the fitter (calibrate/fit-memory.c) and
 * `gpusim validate` call it with explicit parameters.
 */
#ifndef GS_MEM_MODEL_H
#define GS_MEM_MODEL_H

#include <glib.h>
#include "sim/engine.h"
#include "sim/kernel.h"
#include "sim/param.h"
#include "workloads/op.h"
#include "workloads/library.h"
#include "workloads/residuals.h"

typedef struct GsArch GsArch;

/* Kernel families: each reaches its own fraction of the DRAM bandwidth
 * that calibration.dram_eff grants a plain streaming kernel. */
typedef enum {
  GS_MEM_FAM_ELEMENTWISE,   /* vectorized_elementwise_kernel and kin */
  GS_MEM_FAM_STRIDED,       /* elementwise_kernel (offset calculator) */
  GS_MEM_FAM_LAYER_NORM,    /* vectorized_layer_norm_kernel and kin */
  GS_MEM_FAM_SOFTMAX_WARP,  /* softmax_warp_forward: a warp per row */
  GS_MEM_FAM_SOFTMAX_BLOCK, /* cunn_SoftMaxForward: a block per row */
  GS_MEM_FAM_REDUCE,        /* reduce_kernel */
  GS_MEM_FAM_GATHER,        /* indexSelectLargeIndex (embedding) */
  GS_MEM_FAM_TRITON,        /* Inductor pointwise and reduction kernels */
  GS_MEM_FAM_OPTIMIZER,     /* multi_tensor_apply_kernel */
  GS_MEM_FAM_COUNT
} GsMemFamily;

const char *gs_mem_family_name (GsMemFamily f);

/* Host (framework) cost of one op called from Python: PRE_US from the call
 * until its first kernel is issued, POST_US from the last issue until the
 * call returns (the timing event after it is recorded then).  An op timed
 * alone therefore takes pre + max(GPU time, post). */
typedef struct {
  double pre_us;
  double post_us;
} GsMemHost;

/* Ops with their own host cost; others use their kind's entry. */
typedef enum {
  GS_MEM_HOST_ADD, GS_MEM_HOST_MUL, GS_MEM_HOST_DIV, GS_MEM_HOST_POW,
  GS_MEM_HOST_ADDU, GS_MEM_HOST_MULU, GS_MEM_HOST_DIVU, GS_MEM_HOST_POWU,
  GS_MEM_HOST_RELU, GS_MEM_HOST_GELU, GS_MEM_HOST_TANH,
  GS_MEM_HOST_LN, GS_MEM_HOST_SOFTMAX,
  /* Defaults per op kind. */
  GS_MEM_HOST_ELEMENTWISE, GS_MEM_HOST_NORM, GS_MEM_HOST_REDUCE,
  GS_MEM_HOST_EMBEDDING, GS_MEM_HOST_COPY, GS_MEM_HOST_FUSED,
  GS_MEM_HOST_OPTIMIZER,
  GS_MEM_HOST_COUNT
} GsMemHostOp;

/* Name of a host-cost entry ("add", "ln", "elementwise" ...). */
const char *gs_mem_host_name (GsMemHostOp h);
/* The host-cost entry an op uses. */
GsMemHostOp gs_mem_host_of (const GsOp *op);

/* calibration.library.memory.  Zero/absent values take the table's
 * defaults (documented heuristics). */
typedef struct {
  int rows;                       /* measured rows of the fit; 0: not
                                   * fitted (defaults or transferred) */
  double eff[GS_MEM_FAM_COUNT];   /* (0,1]: relative DRAM efficiency */
  double l2_keep;                 /* fraction of L2 that keeps recent data */
  double l1_keep;                 /* fraction of free L1 that keeps a row */
  double row_sector_bytes;        /* extra bytes a row kernel moves per
                                   * misaligned row start */
  double row_ops_layer_norm;      /* instructions per thread per row
                                   * besides the per-element work:
                                   * reductions, divisions, setup */
  double row_ops_softmax_block;
  double row_ops_softmax_warp;
  double block_ns_layer_norm;     /* latency of a row block beyond its
                                   * memory round trips and work: waits
                                   * at barriers and reductions, ns */
  double block_ns_softmax_block;
  double block_ns_softmax_warp;
  int regs_layer_norm;            /* registers per thread of the row
                                   * kernels as compiled for this arch */
  int regs_softmax_block;
  int regs_softmax_warp;          /* at 1024 columns; fewer elements held
                                   * per thread need fewer */
  GsMemHost host[GS_MEM_HOST_COUNT];
} GsMemParams;

/* The parameter table (keys relative to calibration.library.memory). */
const GsParam *gs_mem_params_table (guint *n);
void gs_mem_params_init (GsMemParams *p);         /* the defaults */
/* Loads calibration.library.memory from ARCH's files (unknown keys are
 * errors naming file:line). */
gboolean gs_mem_params_load (GsMemParams *p, const GsArch *arch,
                             GError **error);
/* The group as libconfig text, one "key = value;" per line with nested
 * groups, each line prefixed by INDENT (g_free). */
char *gs_mem_params_to_cfg (const GsMemParams *p, const char *indent);

/* Appends the kernels OP launches (see gs_library_lower). */
gboolean gs_mem_lower (const GsArch *arch, const GsMemParams *p,
                       const GsOp *op, GsRuntime runtime,
                       const GsKernelHint *hint, GArray *kernels,
                       GError **error);

/* Latency of OP timed alone, ps, from the simulated GPU time of its
 * kernels (issue of the first to end of the last, launch gaps included). */
GsTime gs_mem_op_latency (const GsMemParams *p, const GsOp *op,
                          GsTime gpu_time);

/* Per-element work of a pointwise op by its PyTorch name ("add", "gelu",
 * "tanh" ...): ALU and special-function operations in fp32.  FALSE when
 * the name is unknown (ALU 1, SFU 0 are returned then). */
gboolean gs_mem_pointwise_cost (const char *name, double *alu, double *sfu);

/* The ops of `gpusim predict` and kernels.csv that are memory-bound: ln
 * (layer norm over rows of H), softmax, and the pointwise ops over a B x H
 * tensor -- add, mul, div, pow (tensor-tensor), addu, mulu, divu, powu
 * (tensor-scalar), relu, gelu, tanh. */
gboolean gs_mem_is_shape_op (const char *name);
/* The name of the Ith of them, in the order above; NULL past the last. */
const char *gs_mem_shape_op_name (guint i);
/* Builds the GsOp of such an op over B rows of H elements.  FALSE when
 * NAME is not one of them or a size is not positive; *BAD_COLUMN then
 * names the column at fault ("op", "B" or "H"). */
gboolean gs_mem_op_from_shape (const char *name, int64_t B, int64_t H,
                               GsDtype dtype, GsOp *op,
                               const char **bad_column);

/* Residuals (residuals.h) of the ops of `gpusim predict`: keyed by dtype
 * and op ("fp32_ln", "fp32_gelu"), at coordinates log2 B and log2 H, with
 * r = log (measured / predicted latency of the op timed alone): host costs
 * and GPU time together, as the measurements give them.  In the arch file
 * as calibration.library.memory.residuals. */
GsResiduals *gs_mem_residuals_new (void);
/* Loads ARCH's table: the one beside the nearest memory group of its
 * file chain (empty when that group has none); errors name file:line. */
gboolean gs_mem_residuals_load (GsResiduals *t, const GsArch *arch,
                                GError **error);
/* OP's key (g_free), or NULL when OP is not one of predict's shape ops. */
char *gs_mem_residual_key (const GsOp *op);
void gs_mem_residual_features (const GsOp *op, double f[2]);
/* The factor OP's latency alone is multiplied by (1: no correction). */
double gs_mem_residual_scale (const GsResiduals *t, const GsOp *op);

/* Fraction of a recently touched footprint of BYTES that is still in L2
 * (1 when it fits with room to spare, falling steeply past the capacity
 * the arch keeps for it). */
double gs_mem_l2_hit (const GsArch *arch, const GsMemParams *p, double bytes);
/* The same for KEEP, the fraction of L2 kept (GsMemParams.l2_keep, by
 * default GS_L2_KEEP_DEFAULT). */
#define GS_L2_KEEP_DEFAULT 0.75
double gs_l2_hit (const GsArch *arch, double keep, double bytes);

#endif
