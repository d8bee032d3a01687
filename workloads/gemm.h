/* gpusim: GEMM and attention kernels of the kernel library model.
 *
 * Private interface shared by the GEMM half of the library model
 * (lib-gemm.c lowers ops, gemm-kernels.c describes kernels and what their
 * blocks do, gemm-select.c picks the kernel a library launches,
 * gemm-attn.c fused attention) and by its fitter (calibrate/fit-gemm.c).
 *
 * Coordinates.  A GEMM computes batch x [rows, depth] x [depth, cols]:
 * rows are the op's m (tokens for a linear layer), cols its n (output
 * features) and depth its k (the reduction).  cuBLAS sees the column-major
 * transpose, so its m is our cols and its n our rows: a SIMT kernel named
 * `sgemm_128x64` covers 128 cols by 64 rows and walks cols along grid x.
 */
#ifndef GS_GEMM_H
#define GS_GEMM_H

#include <glib.h>
#include <stdint.h>
#include <libconfig.h>
#include "sim/kernel.h"
#include "workloads/op.h"
#include "workloads/library.h"
#include "workloads/residuals.h"

typedef struct GsArch GsArch;

/* Kernel families: how a block computes its tile. */
typedef enum {
  GS_GEMM_SIMT,          /* cuBLAS volta_/ampere_sgemm: FP32 FMA, k tiles of 8 */
  GS_GEMM_XMMA_FFMA,     /* cuBLAS sm80_xmma_gemm_..._ffma (FP32 on Hopper) */
  GS_GEMM_CUTLASS_SIMT,  /* cutlass_80_simt_sgemm inside cuBLAS */
  GS_GEMM_TENSOR,        /* mma.sync tensor cores, cp.async pipeline (sm70-sm89) */
  GS_GEMM_WGMMA,         /* Hopper warpgroup MMA fed by TMA (sm90) */
  GS_GEMM_GEMV,          /* cuBLAS gemv: one row (decode) */
  GS_GEMM_FLASH_FWD,     /* FlashAttention-2 forward: rows = queries, cols = keys */
  GS_GEMM_FLASH_BWD,     /* FlashAttention-2 backward (dq, dk, dv) */
  GS_GEMM_MEMEFF_FWD,    /* memory-efficient attention (cutlass fmha) forward */
  GS_GEMM_MEMEFF_BWD,    /* its backward */
  GS_GEMM_ATTN_AUX,      /* attention pre/post passes (memory bound) */
  GS_GEMM_KIND_COUNT
} GsGemmKind;

/* One kernel configuration: the tile a block owns and its resources. */
typedef struct {
  GsGemmKind kind;
  const char *tag;         /* "128x64", "32x32_sliced1x4", "128x256x64" */
  int tile_rows;           /* output rows per block */
  int tile_cols;           /* output cols per block */
  int tile_k;              /* depth per pipeline stage */
  int threads;             /* per block */
  int regs_tn, regs_nn;    /* registers per thread, by layout */
  int smem_tn, smem_nn;    /* shared memory per block, bytes, by layout */
  int slices;              /* in-block depth slicing (sliced1x4: 4) */
  int stages;              /* shared-memory pipeline stages */
  int warp_rows, warp_cols;/* warps along rows and cols (per slice) */
} GsGemmCfg;

/* A GEMM as the library sees it. */
typedef struct {
  int64_t rows, cols, depth, batch;
  GsDtype dtype;
  GsLayout layout;
  gboolean bias;           /* bias added in the epilogue */
  gboolean c_in;           /* the epilogue reads a full C (beta != 0) */
} GsGemmShape;

/* What the library launches: a configuration and its split-K factor. */
typedef struct {
  const GsGemmCfg *cfg;
  int split;               /* depth slices across blocks (grid z), >= 1 */
} GsGemmChoice;

/* Measured op classes with their own fitted overhead. */
typedef enum {
  GS_GEMM_CLASS_LINEAR,    /* linear / addmm / mm / matmul */
  GS_GEMM_CLASS_BMM,       /* bmm / baddbmm */
  GS_GEMM_CLASS_ATTENTION, /* fused attention */
  GS_GEMM_CLASS_COUNT
} GsGemmClass;

const char *gs_gemm_class_name (GsGemmClass c);
GsGemmClass gs_gemm_class_of (const GsOp *op);

/* Fitted per-family parameters (calibration.library.gemm.families). */
typedef struct {
  double eff_compute;      /* (0,1]: fraction of the pipe peak its blocks reach */
  double eff_memory;       /* (0,1]: fraction of L2/DRAM bandwidth its loads reach */
  double block_fixed_ns;   /* prologue and epilogue latency of a block, ns */
  double ilp;              /* >= 1: independent instructions a warp keeps in
                            * flight (latency hiding of a lone block) */
} GsGemmFamily;

/* Learned selection rules: a decision tree over shape features. */
typedef struct GsGemmTree GsGemmTree;

/* Everything the GEMM library model reads from calibration.library.gemm. */
typedef struct {
  GHashTable *families;    /* family key -> GsGemmFamily * (owned) */
  GHashTable *trees;       /* selector key ("fp32_tn") -> GsGemmTree * (owned) */
  /* What the model missed on the training rows predicted from their
   * shape, by selector key: coordinates log2 of batch, rows, depth and
   * cols; r = log (GPU time the measured latency implies / simulated GPU
   * time). */
  GsResiduals *residuals;
  /* Ops timed alone, as the measurements were (gpusim predict, validate,
   * calibrate): only then are the residuals applied. */
  gboolean alone;
  double overhead_us[GS_GEMM_CLASS_COUNT]; /* op alone minus its GPU time, us */
  /* An op timed alone in a loop of short runs runs faster than under
   * sustained load (GPU Boost above the sustained clock until the power
   * averaging catches up): GPU time t becomes t / (1 + speedup x tau /
   * (tau + t)). */
  double burst_speedup;    /* >= 0, at t -> 0 */
  double burst_tau_us;     /* > 0 */
  /* Fraction of L2 that keeps what the previous kernel wrote: the
   * memory calibration's l2_keep (calibration.library.memory), read by
   * the split-K reduction, whose partial sums the GEMM just wrote. */
  double l2_keep;
} GsGemmParams;

/* ------------------------------------------------------------- params */

GsGemmParams *gs_gemm_params_new (void);
void gs_gemm_params_free (GsGemmParams *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsGemmParams, gs_gemm_params_free)
GsGemmParams *gs_gemm_params_copy (const GsGemmParams *p);
/* Reads calibration.library.gemm from the arch's files; without one (no
 * GEMM measurements), what the measured GPUs agree on (gs_gemm_spec).
 * Errors name file:line. */
gboolean gs_gemm_params_load (GsGemmParams *p, const GsArch *arch,
                              GError **error);
/* The family's parameters for a layout ("simt_128x64_tn"), else for any
 * layout ("simt_128x64"), else for the same tile on another layout (tn,
 * nn, nt, tt), else the documented defaults for its kind. */
GsGemmFamily gs_gemm_params_family (const GsGemmParams *p,
                                    const GsGemmCfg *cfg, GsLayout layout);
/* Whether P has fitted parameters for CFG's tile on any layout. */
gboolean gs_gemm_params_fitted (const GsGemmParams *p, const GsGemmCfg *cfg);
/* The layout whose fitted parameters a GEMM of shape S runs with: tn for
 * a single nn GEMM (Conv1D, input gradients), nn for a batched tn one
 * (bmm_nt) or nt one (a bmm's backward), else its own. */
GsLayout gs_gemm_params_layout (const GsGemmShape *s);
/* The family's parameters for shape S: those of gs_gemm_params_layout
 * where fitted, else gs_gemm_params_family's for S's own layout. */
GsGemmFamily gs_gemm_params_family_of (const GsGemmParams *p,
                                       const GsGemmCfg *cfg,
                                       const GsGemmShape *s);
/* The key fitted parameters are stored under: "simt_128x64_tn". */
char *gs_gemm_params_key (const GsGemmCfg *cfg, GsLayout layout);
/* Latency of an op measured alone from its kernels' GPU time, us. */
double gs_gemm_latency_us (const GsGemmParams *p, GsGemmClass c,
                           double gpu_us);
void gs_gemm_params_set_family (GsGemmParams *p, const char *key,
                                const GsGemmFamily *f);
/* The libconfig text of the `gemm = { ... };` group, indented by INDENT. */
void gs_gemm_params_format (const GsGemmParams *p, GString *out, int indent);
/* The features of S that residuals are matched on. */
void gs_gemm_residual_features (const GsGemmShape *s, double f[4]);
/* The factor S's predicted time is multiplied by: exp of the median
 * residual of its nearest training rows, or 1 when P has none near it. */
double gs_gemm_residual_scale (const GsGemmParams *p, const GsGemmShape *s);

/* ------------------------------------------------------------- kernels */

/* Compute-capability generation: which kernels a library has for it. */
typedef enum {
  GS_GEMM_GEN_VOLTA,       /* sm70, sm72 */
  GS_GEMM_GEN_TURING,      /* sm75 */
  GS_GEMM_GEN_AMPERE,      /* sm80, sm86, sm87 */
  GS_GEMM_GEN_ADA,         /* sm89 */
  GS_GEMM_GEN_HOPPER,      /* sm90 and later */
  GS_GEMM_GEN_COUNT
} GsGemmGen;

GsGemmGen gs_gemm_gen (const GsArch *arch);
/* The FP32 kernel library a generation runs (cuBLAS's own kernels and
 * their selection heuristics): volta_sgemm on Volta and Turing, ampere_sgemm
 * on Ampere and Ada, the xmma FFMA kernels on Hopper; the first generation
 * of each. */
GsGemmGen gs_gemm_library (GsGemmGen gen);
/* The configurations cuBLAS has for a generation and dtype, an array of
 * *N (NULL with *N = 0 when there are none: e.g. fp8 before Ada). */
const GsGemmCfg *gs_gemm_catalogue (GsGemmGen gen, GsDtype dtype, guint *n);
/* Bytes to which every row of S's operands and result is aligned: the
 * largest power of two, at most 16, dividing the row lengths in bytes
 * (the depth of the depth-fastest operands, the columns of B and C). */
int gs_gemm_align_bytes (const GsGemmShape *s);
/* The configurations cuBLAS can run S with: gs_gemm_catalogue(), except
 * that Hopper's wgmma kernels need 16-byte aligned rows (their operands
 * move by TMA); other shapes run Ampere's mma.sync kernels, with loads as
 * wide as the alignment (docs/kernel-library.md, "Rows that are not
 * 16-byte aligned"). */
const GsGemmCfg *gs_gemm_catalogue_for (GsGemmGen gen, const GsGemmShape *s,
                                        guint *n);
/* "simt", "xmma", "tensor" ...: the family key's prefix of a kind. */
const char *gs_gemm_kind_prefix (GsGemmKind kind);
/* Family key: "simt_128x64", "xmma_128x128", "tensor_128x128x32" ... */
char *gs_gemm_family_key (const GsGemmCfg *cfg);
/* Finds a configuration of the generation's catalogue by family key. */
const GsGemmCfg *gs_gemm_cfg_find (GsGemmGen gen, GsDtype dtype,
                                   const char *key);
/* Parses a measured kernel name ("ampere_sgemm_32x32_sliced1x4_tn",
 * "sm80_xmma_gemm_..._tilesize128x64x8_...") into a configuration. */
const GsGemmCfg *gs_gemm_cfg_from_name (GsGemmGen gen, GsDtype dtype,
                                        const char *name);
/* Split-K factor from a measured grid (z = batch x split). */
int gs_gemm_split_from_grid (const GsGemmShape *s, const uint32_t grid[3]);

/* Blocks resident per SM for a configuration (0: does not fit). */
int gs_gemm_blocks_per_sm (const GsArch *arch, const GsGemmCfg *cfg,
                           GsLayout layout);

/* Appends the kernels of CHOICE for SHAPE (the GEMM and, with split-K, its
 * reduction) to KERNELS. */
void gs_gemm_build (const GsArch *arch, const GsGemmParams *p,
                    const GsGemmShape *s, const GsGemmChoice *choice,
                    GArray *kernels);
/* Seconds of an SM's shared-memory and L1 pipe per FLOP of CFG's blocks on
 * S at the arch's clock (0 when unknown): the heuristic's smem/L1 bound. */
double gs_gemm_lsu_s_per_flop (const GsArch *arch, const GsGemmCfg *cfg,
                               const GsGemmShape *s);
/* Bytes the kernel of CFG with SPLIT and BPS blocks per SM moves to and
 * from DRAM on S. */
double gs_gemm_dram_bytes (const GsArch *arch, const GsGemmCfg *cfg,
                           const GsGemmShape *s, int split, int bps);
/* A one-row GEMM as cuBLAS's gemv kernel. */
void gs_gemm_build_gemv (const GsArch *arch, const GsGemmParams *p,
                         const GsGemmShape *s, GArray *kernels);

/* ------------------------------------------------------------- selection */

/* Selector key of a shape: "<dtype>_<layout>", e.g. "fp32_tn". */
char *gs_gemm_selector_key (const GsGemmShape *s);

/* Shape features the learned rules split on (log2 of sizes, waves). */
#define GS_GEMM_N_FEATURES 8
void gs_gemm_features (const GsArch *arch, const GsGemmShape *s,
                       double f[GS_GEMM_N_FEATURES]);
const char *gs_gemm_feature_name (int i);

/* The documented heuristic: the configuration and split-K with the best
 * estimated time (wave quantization, tile efficiency, split-K cost). */
gboolean gs_gemm_select_heuristic (const GsArch *arch, const GsGemmParams *p,
                                   const GsGemmShape *s, GsGemmChoice *out);
/* Bagged selection rules: beside the tree "<dtype>_<layout>" learned on
 * every training example, calibrate keeps GS_GEMM_BAGS - 1 more learned
 * on bootstrap resamples of them, "<dtype>_<layout>_bag1" ... */
#define GS_GEMM_BAGS 15
/* The heuristic's estimate of CHOICE's time for S, ns (INFINITY when it
 * does not fit on an SM). */
double gs_gemm_estimate_ns (const GsArch *arch, const GsGemmParams *p,
                            const GsGemmShape *s, const GsGemmChoice *choice);
/* The choice of every tree of the shape's selector (the full-data tree
 * first), when P has one and the shape is inside its training domain;
 * else the heuristic's, alone.  VOTES holds GS_GEMM_BAGS entries; returns
 * how many were filled (0: no kernel fits). */
guint gs_gemm_select_votes (const GsArch *arch, const GsGemmParams *p,
                            const GsGemmShape *s, GsGemmChoice *votes);
/* Learned rules when P has a tree for the shape's selector and the shape
 * is inside its training domain, else the heuristic: the first vote. */
gboolean gs_gemm_select (const GsArch *arch, const GsGemmParams *p,
                         const GsGemmShape *s, GsGemmChoice *out);
/* The measured kernel, when HINT names one this model knows. */
gboolean gs_gemm_select_hint (const GsArch *arch, const GsGemmShape *s,
                              const GsKernelHint *hint, GsGemmChoice *out);

/* Decision trees.  A node is a split (feature, threshold, left, right) or
 * a leaf (class index, split-K factor). */
typedef struct {
  int feature;             /* -1: leaf */
  double threshold;        /* go left when feature <= threshold */
  int left, right;         /* node indices */
  int cls;                 /* leaf: index into classes */
  int split;               /* leaf: split-K factor */
} GsGemmTreeNode;

GsGemmTree *gs_gemm_tree_new (const char *const *classes, guint n_classes);
void gs_gemm_tree_free (GsGemmTree *t);
GsGemmTree *gs_gemm_tree_copy (const GsGemmTree *t);
/* Appends a node; returns its index. */
int gs_gemm_tree_add (GsGemmTree *t, const GsGemmTreeNode *node);
void gs_gemm_tree_set (GsGemmTree *t, int index, const GsGemmTreeNode *node);
guint gs_gemm_tree_size (const GsGemmTree *t);
/* The box of feature values the tree was learned on (every feature's
 * smallest and largest training value).  A tree without one (older arch
 * files) covers every shape. */
void gs_gemm_tree_set_domain (GsGemmTree *t, const double *lo,
                              const double *hi);
/* Whether F is inside the tree's domain: none of rows, cols, depth and
 * batch more than a factor of two below its smallest training value.
 * Below that the tree would extrapolate from the nearest leaf, and the
 * heuristic decides instead (above the range, see gemm-select.c). */
gboolean gs_gemm_tree_covers (const GsGemmTree *t, const double *f);
/* The leaf's class and split for features F. */
const char *gs_gemm_tree_eval (const GsGemmTree *t, const double *f,
                               int *split);
/* Parses a tree group ({ classes = [...]; nodes = ( ... ); }); errors name
 * file:line. */
GsGemmTree *gs_gemm_tree_parse (const config_setting_t *group,
                                GError **error);
void gs_gemm_tree_format (const GsGemmTree *t, GString *out, int indent);

/* ------------------------------------------------------ no measurements */

/* What the GEMM library model of a GPU without GEMM measurements (no
 * calibration.library.gemm) runs on, learned from the GPUs that were
 * measured (gemm-spec.c; calibrate/fit-spec.c derives it from their arch
 * files and measured kernels). */
typedef struct {
  GsGemmKind kind;
  const char *tag;         /* "128x64": family key kind prefix + "_" + tag */
  double eff_compute;      /* median of the fitted GPUs' values */
} GsGemmSpecEff;

/* A kernel that the measured GPUs of one kernel library chose for nearly
 * every shape of a selector (Ampere and Ada: ampere_sgemm_128x128 for
 * every batched fp32 GEMM), over the box of shapes they were measured
 * on. */
typedef struct {
  GsGemmGen library;       /* gs_gemm_library () of the GPUs it holds for */
  const char *selector;    /* "fp32_nn" */
  const char *cls;         /* family key, "simt_128x128" */
  int split;
  double lo[GS_GEMM_N_FEATURES], hi[GS_GEMM_N_FEATURES]; /* the box */
} GsGemmSpecRule;

typedef struct {
  const GsGemmSpecEff *eff;
  guint n_eff;
  const GsGemmSpecRule *rules;
  guint n_rules;
  double overhead_us[GS_GEMM_CLASS_COUNT]; /* medians of the fitted GPUs' */
} GsGemmSpec;

/* The shipped one: learned from the six calibrated arch files. */
const GsGemmSpec *gs_gemm_spec (void);
/* Fills P (fresh from gs_gemm_params_new) as SPEC gives ARCH: the
 * overheads, every family of SPEC's table ARCH's library has, and the
 * rules of ARCH's library as one-leaf selection trees. */
void gs_gemm_params_spec (GsGemmParams *p, const GsArch *arch,
                          const GsGemmSpec *spec);

/* Lowers a GEMM: the hinted kernel, a one-row GEMM as gemv, or the
 * selected one.  Fails (GS_ERROR_PREDICT) for impossible requests. */
gboolean gs_gemm_lower (const GsArch *arch, const GsGemmParams *p,
                        const GsGemmShape *s, const GsKernelHint *hint,
                        GArray *kernels, GError **error);

/* ------------------------------------------------------------- attention */

/* Appends the fused-attention kernels of OP (FlashAttention-2 or
 * memory-efficient; forward, or backward when op->phase is backward). */
gboolean gs_gemm_build_attention (const GsArch *arch, const GsGemmParams *p,
                                  const GsOp *op, GArray *kernels,
                                  GError **error);

/* Does FlashAttention-2 run attention in DTYPE with heads of HEAD_DIM on
 * ARCH (NULL: any compute capability)?  fp16/bf16, sm80+, head dimension
 * at most GS_FLASH2_MAX_HEAD_DIM; scaled_dot_product_attention falls back
 * to the memory-efficient kernels otherwise. */
gboolean gs_flash2_runs (const GsArch *arch, GsDtype dtype, int64_t head_dim);

/* Does FlashAttention-2's backward run heads of HEAD_DIM (with attention
 * dropout when DROPOUT) on ARCH (NULL: any)?  Not on compute capability
 * 8.6 to 8.9, whose blocks get 99 KB of shared memory, for heads of 193
 * to 224 dimensions, or of more than 224 with dropout: flash-attention's
 * mha_bwd refuses them there, and PyTorch's scaled_dot_product_attention
 * does not pick FlashAttention for inputs that need gradients
 * (sdp_utils.cpp, check_requires_grad_and_head_dim_gt192_constraints_on_
 * sm86_89). */
gboolean gs_flash2_trains (const GsArch *arch, int64_t head_dim,
                           gboolean dropout);

/* Shape of a GEMM op (rows, cols, depth, batch, dtype, layout, bias). */
void gs_gemm_shape_from_op (const GsOp *op, GsGemmShape *s);

#endif
