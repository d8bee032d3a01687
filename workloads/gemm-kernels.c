/* gpusim: the GEMM kernels cuBLAS has, and what their blocks do.
 *
 * Resources of the FP32 kernels (registers per thread, shared memory per
 * block, threads) are those of the kernels in cuBLAS 13.0's fatbinaries,
 * read from each cubin's .nv.info attributes (EIATTR_REGCOUNT) and
 * .nv.shared sections: sm_75 cubins for volta_sgemm (used on Volta and
 * Turing), sm_80 for ampere_sgemm (Ampere and Ada), sm_90 for the
 * sm80_xmma FFMA kernels cuBLAS runs on Hopper, with their dynamic shared
 * memory computed from the tile (stages x (rows + cols) x k x 4 bytes).
 * The measured kernels (NeuSight, cuBLAS 12.1) have the same names and
 * threads per block.  Tensor-core configurations are the tile shapes
 * CUTLASS and cuBLAS name (cutlass/gemm/device/default_gemm_configuration.h:
 * 128x256x32 / 256x128x32 with 3 stages on sm80; 128x256x64 warp-specialised
 * on sm90), with registers estimated from their accumulators.
 *
 * A block computes a tile_rows x tile_cols tile of C over its depth slice
 * in steps of tile_k: it stages A and B panels through shared memory,
 * every thread keeps a register micro-tile of accumulators and issues one
 * FMA (or its warp one MMA) per element pair.  Edge tiles compute full
 * tiles (their loads are predicated off) but move only their valid bytes.
 */
#include "config.h"
#include "workloads/gemm.h"
#include "workloads/mem-model.h"
#include "sim/arch.h"
#include "sim/occupancy.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------ catalogue */

#define SIMT(tag, c, r, thr, rtn, rnn, stn, snn, sl, wr, wc)                 \
  { GS_GEMM_SIMT, tag, r, c, 8, thr, rtn, rnn, stn, snn, sl, 2, wr, wc }
#define XMMA(r, c, thr, rtn, rnn, wr, wc)                                    \
  { GS_GEMM_XMMA_FFMA, #r "x" #c, r, c, 8, thr, rtn, rnn,                    \
    3 * (r + c) * 8 * 4, 3 * (r + c) * 8 * 4, 1, 3, wr, wc }
#define CUTL(c, r, st, thr, regs, wr, wc)                                    \
  { GS_GEMM_CUTLASS_SIMT, #c "x" #r, r, c, 8, thr, regs, regs,               \
    st * (r + c) * 8 * 4, st * (r + c) * 8 * 4, 1, st, wr, wc }
/* Tensor-core tiles: K and shared memory given for 16-bit inputs (the
 * depth per stage scales with 2/bytes so a stage keeps its bytes). */
#define TC(kind, r, c, k, st, thr, regs, wr, wc)                             \
  { kind, #r "x" #c "x" #k, r, c, k, thr, regs, regs,                        \
    st * (r + c) * k * 2, st * (r + c) * k * 2, 1, st, wr, wc }

/* cuBLAS's hand-written SIMT kernels: the tag's first number is cols. */
static const GsGemmCfg simt_cfgs[] = {
  SIMT ("128x128", 128, 128, 256, 118, 118, 16896, 16640, 1, 4, 2),
  SIMT ("128x64", 128, 64, 128, 122, 122, 12800, 12544, 1, 2, 2),
  SIMT ("128x32", 128, 32, 256, 57, 57, 16384, 16384, 1, 2, 4),
  SIMT ("32x128", 32, 128, 256, 57, 57, 16384, 16384, 1, 4, 2),
  SIMT ("64x64", 64, 64, 64, 126, 126, 8704, 8448, 1, 1, 2),
  SIMT ("32x32_sliced1x4", 32, 32, 128, 86, 86, 32768, 32768, 4, 1, 1),
  SIMT ("64x32_sliced1x4", 64, 32, 256, 82, 82, 26624, 25600, 4, 1, 2),
  SIMT ("128x32_sliced1x4", 128, 32, 256, 134, 134, 43008, 41984, 4, 1, 2),
};

/* cuBLAS's FP32 kernels on Hopper: tilesize is rows x cols x 8, three
 * stages, warpsize the warp grid. */
static const GsGemmCfg xmma_cfgs[] = {
  XMMA (128, 128, 128, 255, 254, 2, 2),
  XMMA (128, 64, 128, 218, 224, 2, 2),
  XMMA (128, 32, 128, 126, 118, 2, 2),
  XMMA (256, 64, 128, 255, 255, 2, 2),
  XMMA (64, 128, 128, 190, 220, 1, 4),
  XMMA (64, 64, 128, 128, 121, 1, 4),
  XMMA (64, 32, 64, 126, 121, 1, 2),
  XMMA (32, 32, 64, 80, 80, 1, 2),
  XMMA (32, 64, 64, 102, 102, 1, 2),
  XMMA (64, 256, 128, 255, 255, 1, 4),
  XMMA (128, 256, 256, 254, 255, 2, 4),
  XMMA (256, 128, 256, 255, 254, 4, 2),
  XMMA (32, 128, 64, 254, 255, 1, 2),
};

/* CUTLASS SIMT kernels cuBLAS also ships for sm80+ (seen on L4 and H100):
 * 128 accumulators per thread need about 240 registers. */
static const GsGemmCfg cutlass_cfgs[] = {
  CUTL (128, 256, 4, 256, 240, 2, 4),
  CUTL (256, 128, 4, 256, 240, 4, 2),
  CUTL (128, 32, 5, 128, 96, 1, 4),
};

/* mma.sync kernels, Volta and Turing: two-stage register-staged (ldg8). */
static const GsGemmCfg tc_volta_cfgs[] = {
  TC (GS_GEMM_TENSOR, 256, 128, 32, 2, 256, 255, 4, 2),
  TC (GS_GEMM_TENSOR, 128, 128, 32, 2, 256, 128, 2, 4),
  TC (GS_GEMM_TENSOR, 128, 64, 32, 2, 128, 128, 2, 2),
  TC (GS_GEMM_TENSOR, 64, 64, 32, 2, 128, 80, 2, 2),
};

/* mma.sync kernels with cp.async multistage pipelines (sm80, sm86, sm89). */
static const GsGemmCfg tc_ampere_cfgs[] = {
  TC (GS_GEMM_TENSOR, 256, 128, 32, 3, 256, 232, 4, 2),
  TC (GS_GEMM_TENSOR, 128, 256, 32, 3, 256, 232, 2, 4),
  TC (GS_GEMM_TENSOR, 128, 128, 32, 4, 128, 232, 2, 2),
  TC (GS_GEMM_TENSOR, 128, 64, 32, 4, 128, 168, 2, 2),
  TC (GS_GEMM_TENSOR, 64, 128, 32, 4, 128, 168, 2, 2),
  TC (GS_GEMM_TENSOR, 64, 64, 32, 6, 128, 96, 2, 2),
};

/* Warp-specialised wgmma kernels (sm90): a producer warpgroup issues TMA
 * loads, one or two consumer warpgroups issue wgmma; registers are the
 * launch value before setmaxnreg rebalances them. */
static const GsGemmCfg tc_hopper_cfgs[] = {
  TC (GS_GEMM_WGMMA, 128, 256, 64, 4, 384, 168, 2, 1),
  TC (GS_GEMM_WGMMA, 256, 128, 64, 4, 384, 168, 2, 1),
  TC (GS_GEMM_WGMMA, 128, 128, 64, 6, 384, 168, 2, 1),
  TC (GS_GEMM_WGMMA, 64, 128, 64, 8, 256, 240, 1, 1),
  TC (GS_GEMM_WGMMA, 64, 64, 64, 8, 256, 240, 1, 1),
};

static const GsGemmCfg gemv_cfg = {
  GS_GEMM_GEMV, "gemv", 1, 16, 0, 128, 40, 40, 0, 0, 1, 1, 4, 1
};

GsGemmGen
gs_gemm_gen (const GsArch *arch)
{
  int cc = arch->compute_capability;
  if (cc < 75)
    return GS_GEMM_GEN_VOLTA;
  if (cc < 80)
    return GS_GEMM_GEN_TURING;
  if (cc < 89)
    return GS_GEMM_GEN_AMPERE;
  if (cc < 90)
    return GS_GEMM_GEN_ADA;
  return GS_GEMM_GEN_HOPPER;
}

GsGemmGen
gs_gemm_library (GsGemmGen gen)
{
  switch (gen)
    {
    case GS_GEMM_GEN_VOLTA:
    case GS_GEMM_GEN_TURING:
      return GS_GEMM_GEN_VOLTA;
    case GS_GEMM_GEN_AMPERE:
    case GS_GEMM_GEN_ADA:
      return GS_GEMM_GEN_AMPERE;
    default:
      return GS_GEMM_GEN_HOPPER;
    }
}

static gboolean
is_tensor_dtype (GsDtype d)
{
  return d == GS_DTYPE_TF32 || d == GS_DTYPE_FP16 || d == GS_DTYPE_BF16
         || d == GS_DTYPE_FP8 || d == GS_DTYPE_INT8;
}

/* Which tensor-core dtypes a generation's GEMM kernels take (Volta: fp16;
 * Turing adds int8; Ampere tf32 and bf16; Ada and Hopper fp8). */
static gboolean
gen_has_tensor (GsGemmGen gen, GsDtype d)
{
  switch (d)
    {
    case GS_DTYPE_FP16:
      return TRUE;
    case GS_DTYPE_INT8:
      return gen >= GS_GEMM_GEN_TURING;
    case GS_DTYPE_TF32:
    case GS_DTYPE_BF16:
      return gen >= GS_GEMM_GEN_AMPERE;
    case GS_DTYPE_FP8:
      return gen >= GS_GEMM_GEN_ADA;
    default:
      return FALSE;
    }
}

const GsGemmCfg *
gs_gemm_catalogue (GsGemmGen gen, GsDtype dtype, guint *n)
{
#define RET(a) do { *n = G_N_ELEMENTS (a); return a; } while (0)
  *n = 0;
  if (dtype == GS_DTYPE_FP32)
    {
      if (gen == GS_GEMM_GEN_HOPPER)
        RET (xmma_cfgs);
      RET (simt_cfgs);
    }
  if (!is_tensor_dtype (dtype) || !gen_has_tensor (gen, dtype))
    return NULL;
  switch (gen)
    {
    case GS_GEMM_GEN_VOLTA:
    case GS_GEMM_GEN_TURING:
      RET (tc_volta_cfgs);
    case GS_GEMM_GEN_AMPERE:
    case GS_GEMM_GEN_ADA:
      RET (tc_ampere_cfgs);
    default:
      RET (tc_hopper_cfgs);
    }
#undef RET
}

int
gs_gemm_align_bytes (const GsGemmShape *s)
{
  double in = gs_dtype_bytes (s->dtype);
  gboolean wide = s->dtype == GS_DTYPE_FP32 || s->dtype == GS_DTYPE_TF32;
  /* The stored rows: A's of depth elements, or of `rows` where PyTorch's
   * A is a transposed view (a weight gradient's grad^T: BERT's decoder
   * gradient [30522, 4096] read from rows of 30522); B's of depth or
   * cols; C's of cols. */
  gboolean a_t = s->layout == GS_LAYOUT_NT || s->layout == GS_LAYOUT_TT;
  int64_t rows[4] = { (int64_t) (s->depth * in), (int64_t) (s->cols * in),
                      s->cols * (wide ? 4 : 2),
                      a_t ? (int64_t) (s->rows * in) : 16 };
  int align = 16;
  for (int i = 0; i < 4; i++)
    while (align > 1 && rows[i] % align != 0)
      align /= 2;
  return align;
}

const GsGemmCfg *
gs_gemm_catalogue_for (GsGemmGen gen, const GsGemmShape *s, guint *n)
{
  const GsGemmCfg *cat = gs_gemm_catalogue (gen, s->dtype, n);
  if (cat == tc_hopper_cfgs && gs_gemm_align_bytes (s) < 16)
    {
      *n = G_N_ELEMENTS (tc_ampere_cfgs);
      return tc_ampere_cfgs;
    }
  return cat;
}

static const char *const kind_prefix[GS_GEMM_KIND_COUNT] = {
  "simt", "xmma", "cutlass", "tensor", "wgmma", "gemv", "flash_fwd",
  "flash_bwd", "memeff_fwd", "memeff_bwd", "attn_aux"
};

const char *
gs_gemm_kind_prefix (GsGemmKind kind)
{
  g_return_val_if_fail (kind < GS_GEMM_KIND_COUNT, "?");
  return kind_prefix[kind];
}

char *
gs_gemm_family_key (const GsGemmCfg *cfg)
{
  return g_strdup_printf ("%s_%s", kind_prefix[cfg->kind], cfg->tag);
}

/* Every configuration a generation may run for DTYPE, including the
 * CUTLASS SIMT kernels cuBLAS picks on sm80+ for some FP32 shapes. */
static const GsGemmCfg *
find_in (const GsGemmCfg *cfgs, guint n, GsGemmKind kind, const char *tag)
{
  for (guint i = 0; i < n; i++)
    if (cfgs[i].kind == kind && strcmp (cfgs[i].tag, tag) == 0)
      return &cfgs[i];
  return NULL;
}

const GsGemmCfg *
gs_gemm_cfg_find (GsGemmGen gen, GsDtype dtype, const char *key)
{
  for (int k = 0; k < GS_GEMM_KIND_COUNT; k++)
    {
      gsize len = strlen (kind_prefix[k]);
      if (strncmp (key, kind_prefix[k], len) != 0 || key[len] != '_')
        continue;
      const char *tag = key + len + 1;
      if (k == GS_GEMM_CUTLASS_SIMT)
        return dtype == GS_DTYPE_FP32 && gen >= GS_GEMM_GEN_AMPERE
               ? find_in (cutlass_cfgs, G_N_ELEMENTS (cutlass_cfgs), k, tag)
               : NULL;
      if (k == GS_GEMM_GEMV)
        return strcmp (tag, "gemv") == 0 ? &gemv_cfg : NULL;
      guint n;
      const GsGemmCfg *cat = gs_gemm_catalogue (gen, dtype, &n);
      const GsGemmCfg *c = find_in (cat, n, (GsGemmKind) k, tag);
      if (c != NULL)
        return c;
      /* Measured names may come from a neighbouring generation's set
       * (ampere_sgemm on Hopper): accept the SIMT kernels anywhere. */
      if (k == GS_GEMM_SIMT && dtype == GS_DTYPE_FP32)
        return find_in (simt_cfgs, G_N_ELEMENTS (simt_cfgs), k, tag);
      if (k == GS_GEMM_XMMA_FFMA && dtype == GS_DTYPE_FP32)
        return find_in (xmma_cfgs, G_N_ELEMENTS (xmma_cfgs), k, tag);
      return NULL;
    }
  return NULL;
}

/* "...<a>x<b>..." after PREFIX in NAME: the two numbers, or FALSE. */
static gboolean
scan_tile (const char *name, const char *prefix, int *a, int *b,
           const char **rest)
{
  const char *p = strstr (name, prefix);
  if (p == NULL)
    return FALSE;
  p += strlen (prefix);
  char *end;
  long x = strtol (p, &end, 10);
  if (end == p || *end != 'x')
    return FALSE;
  p = end + 1;
  long y = strtol (p, &end, 10);
  if (end == p || x <= 0 || y <= 0 || x > 4096 || y > 4096)
    return FALSE;
  *a = (int) x;
  *b = (int) y;
  *rest = end;
  return TRUE;
}

const GsGemmCfg *
gs_gemm_cfg_from_name (GsGemmGen gen, GsDtype dtype, const char *name)
{
  int a, b;
  const char *rest;
  char tag[64];
  if (name == NULL)
    return NULL;
  if (strstr (name, "cutlass") && strstr (name, "simt_sgemm")
      && scan_tile (name, "sgemm_", &a, &b, &rest))
    {
      g_snprintf (tag, sizeof tag, "cutlass_%dx%d", a, b);
      return gs_gemm_cfg_find (gen, dtype, tag);
    }
  if (strstr (name, "xmma") && strstr (name, "ffma")
      && scan_tile (name, "tilesize", &a, &b, &rest))
    {
      g_snprintf (tag, sizeof tag, "xmma_%dx%d", a, b);
      return gs_gemm_cfg_find (gen, dtype, tag);
    }
  if (strstr (name, "sgemm_") && scan_tile (name, "sgemm_", &a, &b, &rest))
    {
      gboolean sliced = g_str_has_prefix (rest, "_sliced1x4");
      g_snprintf (tag, sizeof tag, "simt_%dx%d%s", a, b,
                  sliced ? "_sliced1x4" : "");
      return gs_gemm_cfg_find (gen, dtype, tag);
    }
  if (strstr (name, "gemv"))
    return &gemv_cfg;
  return NULL;
}

/* Grid axes of each family: SIMT and CUTLASS walk cols along x, the xmma
 * kernels rows. */
static void
grid_of (const GsGemmCfg *cfg, int64_t tiles_r, int64_t tiles_c, int64_t z,
         uint32_t grid[3])
{
  gboolean rows_x = cfg->kind == GS_GEMM_XMMA_FFMA;
  grid[0] = (uint32_t) (rows_x ? tiles_r : tiles_c);
  grid[1] = (uint32_t) (rows_x ? tiles_c : tiles_r);
  grid[2] = (uint32_t) z;
}

int
gs_gemm_split_from_grid (const GsGemmShape *s, const uint32_t grid[3])
{
  if (grid[2] == 0)
    return 1;
  /* cuBLAS caps grid z at 65535 and loops over the remaining batches. */
  if (grid[2] == 65535 && s->batch >= 65535)
    return 1;
  int64_t split = grid[2] / MAX (1, s->batch);
  return (int) CLAMP (split, 1, 256);
}

int
gs_gemm_blocks_per_sm (const GsArch *arch, const GsGemmCfg *cfg,
                       GsLayout layout)
{
  GsOccupancy occ;
  gboolean nn = layout == GS_LAYOUT_NN || layout == GS_LAYOUT_NT;
  if (!gs_occupancy_compute (arch, cfg->threads,
                             nn ? cfg->regs_nn : cfg->regs_tn,
                             nn ? cfg->smem_nn : cfg->smem_tn, &occ, NULL))
    return 0;
  return occ.blocks_per_sm;
}

/* ------------------------------------------------------------- the work */

/* Sizes the per-block work is computed from. */
typedef struct {
  int64_t tiles_r, tiles_c;
  int64_t blocks;          /* tiles x batch x split */
  int split;               /* depth slices across blocks */
  int tile_k;              /* depth per stage for this dtype */
  int64_t iters;           /* stages of tile_k each block runs */
  double rows_eff, cols_eff; /* valid rows and cols of an average tile */
  double depth_eff;        /* valid depth of an average slice */
  double in_bytes;         /* bytes per input element */
  double out_bytes;        /* bytes per output element (partials: fp32) */
  /* Operands stored depth-fastest (A always; B when transposed, as a
   * linear layer's weight) are loaded as row segments of tile_k elements.
   * Rows whose length is not a multiple of 16 bytes cannot be read with
   * 128-bit loads, and their segments straddle 32-byte sectors. */
  int kmajor;              /* operands loaded depth-fastest: 1 or 2 */
  gboolean aligned;        /* depth x bytes is a multiple of 16 */
  int align_bytes;         /* gs_gemm_align_bytes(): widest load of a row */
} Geometry;

static void
geometry (const GsGemmCfg *cfg, const GsGemmShape *s, int split, Geometry *g)
{
  g->in_bytes = gs_dtype_bytes (s->dtype);
  g->tile_k = cfg->tile_k;
  if (cfg->kind == GS_GEMM_TENSOR || cfg->kind == GS_GEMM_WGMMA)
    g->tile_k = MAX (8, (int) (cfg->tile_k * 2 / g->in_bytes));
  g->tiles_r = (s->rows + cfg->tile_rows - 1) / cfg->tile_rows;
  g->tiles_c = (s->cols + cfg->tile_cols - 1) / cfg->tile_cols;
  g->blocks = g->tiles_r * g->tiles_c * s->batch * split;
  g->split = split;
  int64_t kslice = (s->depth + split - 1) / split;
  g->iters = MAX (1, (kslice + g->tile_k - 1) / g->tile_k);
  g->rows_eff = (double) s->rows / g->tiles_r;
  g->cols_eff = (double) s->cols / g->tiles_c;
  g->depth_eff = (double) s->depth / split;
  gboolean wide = s->dtype == GS_DTYPE_FP32 || s->dtype == GS_DTYPE_TF32;
  g->out_bytes = split > 1 || wide ? 4 : 2;
  g->kmajor = s->layout == GS_LAYOUT_TN || s->layout == GS_LAYOUT_TT ? 2 : 1;
  g->aligned = fmod (s->depth * g->in_bytes, 16) == 0;
  g->align_bytes = gs_gemm_align_bytes (s);
}

/* Bytes the whole kernel moves to and from DRAM.  A is read once: the
 * blocks that share a row panel run back to back (x walks cols fastest).
 * B is read once if a depth slice of it stays in L2 between the rows of
 * tiles that reuse it; otherwise once per group of rows the resident
 * blocks cover together. */
static double
dram_bytes (const GsArch *arch, const GsGemmCfg *cfg, const GsGemmShape *s,
            const Geometry *g, int split, int resident)
{
  double per_batch_a = (double) s->rows * s->depth * g->in_bytes;
  double per_batch_b = (double) s->depth * s->cols * g->in_bytes;
  double b_slice = per_batch_b / split;
  double l2 = arch->l2_mib * 1048576.0 * 0.5;   /* half: A, C and others */
  double rows_together = MAX (1.0, (double) resident / g->tiles_c);
  double reread = b_slice <= l2 ? 1.0
                  : ceil ((double) g->tiles_r / rows_together);
  double operands = per_batch_a + per_batch_b * reread;
  /* Hopper's wgmma kernels run a persistent tile scheduler that walks the
   * tiles along M or along N, whichever keeps the operand swept over in
   * L2: a vocabulary head (8192 x 768 -> 50272 in bf16, B 77 MB) reads
   * its 12.6 MB of activations from L2 for every column of tiles and its
   * weight once, where walking along N reread the weight 32 times and
   * ran DRAM-bound at 1.14 ms against 0.81 measured. */
  if (cfg->kind == GS_GEMM_WGMMA)
    {
      double cols_together = MAX (1.0, (double) resident / g->tiles_r);
      double a_reread = per_batch_a / split <= l2 ? 1.0
                        : ceil ((double) g->tiles_c / cols_together);
      operands = MIN (operands, per_batch_a * a_reread + per_batch_b);
    }
  double c = (double) s->rows * s->cols * g->out_bytes * s->batch * split;
  /* A C read by the epilogue (beta != 0) is read once, by the blocks, or
   * with split-K by the reduction. */
  double c_in = s->c_in ? (double) s->rows * s->cols * g->out_bytes
                          * s->batch : 0;
  return operands * s->batch + c
         + (s->bias ? (double) s->cols * g->in_bytes : 0)
         + (split == 1 ? c_in : 0);
}

/* Work of one block of a SIMT / FFMA kernel (FP32 FMAs). */
static void
simt_work (const GsGemmCfg *cfg, const Geometry *g, GsWork *w)
{
  double tr = cfg->tile_rows, tc = cfg->tile_cols, tk = g->tile_k;
  double T = cfg->threads, S = cfg->slices;
  double steps = (double) g->iters * tk;            /* depth per block */
  double micro = tr * tc * S / T;                   /* accumulators/thread */
  double frag = 2 * sqrt (micro);                   /* values read per step */
  double ldg = (tr + tc) * tk / T;                  /* per thread per stage */
  double vec = g->aligned ? 4 : 1;                  /* floats per load */
  w->fp32_ops = tr * tc * steps;
  /* Per thread and stage: 128-bit shared loads of the fragments, the
   * global loads and shared stores of the next stage, two barriers and
   * the loop; the epilogue scales and stores the micro-tile. */
  w->other_ops = T * ((double) g->iters * (tk * frag / 4 + 2 * ldg / vec + 6)
                      + 2 * micro);
  double warps = T / 32 / S;
  double area = tr * tc / warps;                    /* warp tile */
  double wr = sqrt (area * tr / tc), wc = area / wr;
  w->smem_bytes = (double) g->iters
                  * ((tr + tc) * tk * 4 + tk * warps * S * (wr + wc) * 4);
  if (S > 1)
    w->smem_bytes += tr * tc * 4 * (S - 1) * 2;     /* slice reduction */
  /* A warp keeps a stage of loads in flight while it computes the last. */
  w->mlp = MAX (1.0, 2 * ldg * 32 * 4 / 512);
}

/* Work of one block of a tensor-core kernel. */
static void
tensor_work (const GsGemmCfg *cfg, const Geometry *g, GsDtype dtype,
             GsWork *w)
{
  double tr = cfg->tile_rows, tc = cfg->tile_cols, tk = g->tile_k;
  double steps = (double) g->iters * tk;
  double warps = cfg->threads / 32.0;
  double consumer_warps = cfg->warp_rows * cfg->warp_cols
                          * (cfg->kind == GS_GEMM_WGMMA ? 4 : 1);
  double wr = tr / (cfg->warp_rows * (cfg->kind == GS_GEMM_WGMMA ? 4 : 1));
  double wc = tc / cfg->warp_cols;
  w->tensor_flops[dtype] = 2 * tr * tc * steps;
  /* Per consumer warp and stage: fragment loads (ldmatrix; none for
   * wgmma, which reads shared memory itself) and copies of the next
   * stage (cp.async per 16 bytes, one TMA per operand). */
  double frag = cfg->kind == GS_GEMM_WGMMA ? 2 : (wr / 16 + wc / 16) * tk / 16;
  double copies = cfg->kind == GS_GEMM_WGMMA
                  ? 2 : (tr + tc) * tk * g->in_bytes / 16 / warps;
  w->other_ops = 32 * (double) g->iters
                 * (consumer_warps * frag + warps * (copies + 4));
  /* Shared memory: mma.sync kernels fill each stage (cp.async, tr + tc
   * rows of tk) and every consumer warp reads its own A and B fragments
   * (ldmatrix).  A wgmma is issued by a warpgroup and reads its A slice
   * and B slice once for the four warps (B reaches the four tensor cores
   * of the SM at once; per warp, m64n256k16 would need 256 B/clk of shared
   * memory at the dense rate, twice the bandwidth, and cuBLAS's sm90
   * kernels run at 75-77% of that rate, see docs/kernel-library.md); the
   * TMA fills arrive at the L2's rate, which memory_work() charges. */
  if (cfg->kind == GS_GEMM_WGMMA)
    w->smem_bytes = (double) g->iters * tk * g->in_bytes
                    * (cfg->warp_rows * cfg->warp_cols
                       * (tr / cfg->warp_rows + tc / cfg->warp_cols));
  else
    w->smem_bytes = (double) g->iters * tk * g->in_bytes
                    * ((tr + tc) + consumer_warps * (wr + wc));
  w->mlp = MAX (1.0, (double) cfg->stages * (tr + tc) * tk * g->in_bytes
                     / warps / 512);
  /* One wgmma (m64 x the warpgroup's columns x 32 bytes of depth) gives
   * each of its four warps 16 rows: one instruction where mma.sync takes
   * dozens, and a chain as long as the tensor work it carries. */
  if (cfg->kind == GS_GEMM_WGMMA)
    w->mma_flops = 2.0 * 16 * (tc / cfg->warp_cols) * (32 / g->in_bytes);
  w->wgmma = cfg->kind == GS_GEMM_WGMMA;
}

/* Loads and stores of a block.  L2 serves what L1 does not: blocks are
 * dealt to SMs round-robin and x walks cols fastest, so when a row of
 * tiles is wider than the GPU the blocks resident together on an SM
 * (block i, i + SMs, ...) share their A row panel and run in step; L1
 * serves all but the first of them.
 *
 * The arch's calibration.l2_eff is fitted on streaming kernels, whose L2
 * traffic is misses and write-backs; a GEMM's panel loads are L2 hits at
 * the spec-sheet read bandwidth, at the share its family reaches
 * (eff_memory, fitted per family).  So its L2 bytes are given in units
 * that cancel the streaming efficiency. */
static void
memory_work (const GsArch *arch, const GsGemmCfg *cfg, const GsGemmShape *s,
             const Geometry *g, int bps, double dram_total, GsWork *w)
{
  /* Hopper's wgmma kernels run as clusters of two blocks on neighbouring
   * row tiles, and the TMA multicasts the B panel they share to both:
   * L2 serves it once per cluster. */
  double multicast = cfg->kind == GS_GEMM_WGMMA && g->tiles_r >= 2 ? 2 : 1;
  double a = g->rows_eff * g->depth_eff * g->in_bytes;
  double b = g->cols_eff * g->depth_eff * g->in_bytes;
  w->ld_bytes = a + b;
  w->st_bytes = g->rows_eff * g->cols_eff * g->out_bytes;
  if (s->bias)
    w->ld_bytes += g->cols_eff * g->in_bytes;
  if (s->c_in && g->split == 1)
    w->ld_bytes += w->st_bytes;
  double sharing = CLAMP ((double) g->tiles_c / arch->sm_count, 1.0, bps);
  /* Misaligned depth-fastest segments each touch one more sector. */
  double kmajor = g->kmajor == 2 ? a / sharing + b : a / sharing;
  double seg = g->tile_k * g->in_bytes;
  double split_sectors = g->aligned ? 0 : kmajor * 32 / MAX (seg, 32);
  double l2 = a / sharing + b / multicast + (w->ld_bytes - a - b)
              + w->st_bytes + split_sectors;
  w->l2_bytes = l2 * gs_arch_l2_eff (arch);
  w->dram_bytes = MIN (l2, dram_total / g->blocks);
}

static const char *
layout_letters (GsLayout l)
{
  static const char *const s[] = { "nn", "nt", "tn", "tt" };
  return s[l];
}

/* Tensor-core kernel names in cuBLAS's styles: volta_h884gemm,
 * turing_h1688gemm / turing_i8816gemm, ampere_<dt>_s16816gemm (also on
 * sm86/sm89), sm89_xmma_gemm for fp8 on Ada. */
static char *
tensor_name (GsGemmGen gen, const GsGemmCfg *cfg, const GsGemmShape *s)
{
  const char *lay = layout_letters (s->layout);
  const char *dt = gs_dtype_name (s->dtype);
  int r = cfg->tile_rows, c = cfg->tile_cols;
  if (gen == GS_GEMM_GEN_VOLTA)
    return g_strdup_printf ("volta_h884gemm_%dx%d_ldg8_%s", r, c, lay);
  if (gen == GS_GEMM_GEN_TURING)
    return g_strdup_printf ("turing_%s_%dx%d_ldg8_%s", s->dtype
                            == GS_DTYPE_INT8 ? "i8816gemm_int8"
                            : "h1688gemm", r, c, lay);
  if (gen == GS_GEMM_GEN_HOPPER)   /* rows not 16-byte aligned */
    {
      int align = MAX (1, gs_gemm_align_bytes (s) / (int) gs_dtype_bytes (s->dtype));
      if (s->dtype == GS_DTYPE_TF32)
        return g_strdup_printf ("cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_"
                                "%dx%d_%dx%d_%s_align%d>", r, c, cfg->tile_k,
                                cfg->stages, lay, align);
      /* cuBLAS's CUTLASS kernels spell fp16 "f16" */
      const char *cd = s->dtype == GS_DTYPE_FP16 ? "f16" : dt;
      return g_strdup_printf ("cutlass::Kernel2<cutlass_80_tensorop_%s_s16816gemm_"
                              "%s_%dx%d_%dx%d_%s_align%d>", cd, cd, r, c,
                              cfg->tile_k * 2, cfg->stages, lay, align);
    }
  if (s->dtype == GS_DTYPE_FP8)
    return g_strdup_printf ("sm89_xmma_gemm_e4m3e4m3_e4m3f32_f32_%s_n_"
                            "tilesize%dx%dx%d_stage%d_cublas", lay, r, c,
                            cfg->tile_k * 2, cfg->stages);
  return g_strdup_printf ("ampere_%s_s%sgemm_%s_%dx%d_ldg8_f2f_stages_%dx%d"
                          "_%s", dt, s->dtype == GS_DTYPE_TF32 ? "1688"
                          : "16816", dt, r, c, cfg->tile_k, cfg->stages, lay);
}

/* The name a profiler shows for the kernel. */
static char *
kernel_name (GsGemmGen gen, const GsGemmCfg *cfg, const GsGemmShape *s)
{
  const char *lay = layout_letters (s->layout);
  const char *dt = gs_dtype_name (s->dtype);
  switch (cfg->kind)
    {
    case GS_GEMM_SIMT:
      return g_strdup_printf ("%s_sgemm_%s_%s", gen <= GS_GEMM_GEN_TURING
                              ? "volta" : "ampere", cfg->tag, lay);
    case GS_GEMM_XMMA_FFMA:
      return g_strdup_printf ("sm80_xmma_gemm_f32f32_f32f32_f32_%s_n_"
                              "tilesize%sx8_stage3_warpsize%dx%dx1_ffma_"
                              "aligna4_alignc4_execute_kernel__5x_cublas",
                              lay, cfg->tag, cfg->warp_rows, cfg->warp_cols);
    case GS_GEMM_CUTLASS_SIMT:
      return g_strdup_printf ("cutlass::Kernel<cutlass_80_simt_sgemm_%s_8x%d"
                              "_%s_align1>", cfg->tag, cfg->stages, lay);
    case GS_GEMM_TENSOR:
      return tensor_name (gen, cfg, s);
    case GS_GEMM_WGMMA:
      return g_strdup_printf ("sm90_xmma_gemm_%s_%s_n_tilesize%s_"
                              "warpgroupsize%dx1x1_execute_segment_k_off_"
                              "kernel__5x_cublas", dt, lay, cfg->tag,
                              cfg->warp_rows);
    default:
      return g_strdup_printf ("gemv2%s_kernel_val<128, 16>",
                              s->layout == GS_LAYOUT_NN ? "N" : "T");
    }
}

static void
kernel_common (GsKernel *k, const GsGemmCfg *cfg, const GsGemmShape *s,
               const GsGemmFamily *fam)
{
  gboolean nn = s->layout == GS_LAYOUT_NN || s->layout == GS_LAYOUT_NT;
  k->op_class = g_strdup ("gemm");
  k->block[0] = (uint32_t) cfg->threads;
  k->regs = (uint32_t) (nn ? cfg->regs_nn : cfg->regs_tn);
  int smem = nn ? cfg->smem_nn : cfg->smem_tn;
  /* Shared memory beyond the 48 KiB default is opted in dynamically. */
  if (smem > 48 * 1024 || cfg->kind == GS_GEMM_XMMA_FFMA
      || cfg->kind == GS_GEMM_TENSOR || cfg->kind == GS_GEMM_WGMMA)
    k->smem_dynamic = (uint32_t) smem;
  else
    k->smem_static = (uint32_t) smem;
  k->eff_compute = fam->eff_compute;
  k->eff_memory = fam->eff_memory;
  k->work.fixed_ns = fam->block_fixed_ns;
  k->work.ilp = fam->ilp;
}

/* The reduction kernel after a split-K GEMM: sums SPLIT fp32 partial
 * tiles per output element (one thread per element).  The GEMM wrote the
 * partials just before, so what the reduction touches comes from L2 when
 * it fits there, as for the memory-bound ops (gs_l2_hit). */
static void
splitk_reduce (const GsArch *arch, const GsGemmParams *p,
               const GsGemmShape *s, int split, GArray *kernels)
{
  GsKernel k;
  gs_kernel_init (&k);
  const double threads = 512;
  double elems = (double) s->rows * s->cols * s->batch;
  double out = s->dtype == GS_DTYPE_FP32 || s->dtype == GS_DTYPE_TF32
               ? 4 : 2;
  k.name = g_strdup ("splitKreduce_kernel<32, 16, int, float, float, float, "
                     "float, true, false, false>");
  k.op_class = g_strdup ("gemm");
  k.grid[0] = (uint32_t) MAX (1, ceil (elems / threads));
  k.block[0] = 32;
  k.block[1] = 16;
  k.regs = 32;
  k.work.fp32_ops = threads * split;
  k.work.other_ops = threads * (split + 8);
  /* The bias is one value a column: of a block's 16 rows of 32 columns
   * one row's reads reach L2, the rest hit L1, and the vector stays in
   * L2. */
  double bias = s->bias ? threads * out : 0;
  double c = s->c_in ? threads * out : 0;
  k.work.ld_bytes = threads * split * 4 + bias + c;
  k.work.st_bytes = threads * out;
  double touched = threads * split * 4 + c + k.work.st_bytes;
  double hit = gs_l2_hit (arch, p->l2_keep, touched * elems / threads);
  k.work.l2_bytes = touched + bias / k.block[1];
  k.work.dram_bytes = touched * (1 - hit);
  k.work.mlp = MAX (1.0, split);
  g_array_append_val (kernels, k);
}

/* Seconds of an SM's shared-memory and L1 pipe per FLOP of a block of CFG
 * on S, at the arch's clock and full efficiency: the same bytes the GPU
 * model's smem/L1 bound charges (sim/gpu.c), so the heuristic's estimate
 * sees that a small tensor-core tile (64x64 bf16 on an A100: 768 bytes of
 * shared memory per 8192 FLOPs, 1.5 times what 128 bytes per clock feed at
 * the dense rate) cannot reach its share of the peak. */
double
gs_gemm_lsu_s_per_flop (const GsArch *arch, const GsGemmCfg *cfg,
                        const GsGemmShape *s)
{
  Geometry g;
  geometry (cfg, s, 1, &g);
  GsWork w;
  gs_work_init (&w);
  if (cfg->kind == GS_GEMM_TENSOR || cfg->kind == GS_GEMM_WGMMA)
    tensor_work (cfg, &g, s->dtype, &w);
  else
    simt_work (cfg, &g, &w);
  int bps = MAX (1, gs_gemm_blocks_per_sm (arch, cfg, s->layout));
  memory_work (arch, cfg, s, &g, bps, 0, &w);
  double flops = 2 * w.fp32_ops;
  for (int d = 0; d < GS_DTYPE_COUNT; d++)
    flops += w.tensor_flops[d];
  if (flops <= 0 || arch->smem_bytes_per_clk <= 0
      || arch->l1_bytes_per_clk <= 0)
    return 0;
  double clocks = w.smem_bytes / arch->smem_bytes_per_clk
                  + (w.ld_bytes + w.st_bytes) / arch->l1_bytes_per_clk;
  return clocks / (gs_arch_clock_mhz (arch) * 1e6) / flops;
}

/* Bytes a kernel of CFG with SPLIT, BPS blocks per SM, moves to and from
 * DRAM on S, as the kernel gs_gemm_build() makes gets them: the
 * heuristic's DRAM term, which so sees a small tile reread B where it does
 * not stay in L2. */
double
gs_gemm_dram_bytes (const GsArch *arch, const GsGemmCfg *cfg,
                    const GsGemmShape *s, int split, int bps)
{
  Geometry g;
  split = MAX (1, split);
  geometry (cfg, s, split, &g);
  return dram_bytes (arch, cfg, s, &g, split, MAX (1, bps) * arch->sm_count);
}

/* How much lower than the family's efficiency an mma.sync kernel's is on
 * Hopper when rows are not 16-byte aligned (gs_gemm_catalogue_for).
 * cuBLAS 13.1 on an H100 SXM5 ran the vocabulary heads of
 * data/measured/h100-sxm5-80gb/gemm-linear-rerun.csv (512-8192 rows)
 * with cutlass_80 align2 kernels where rows are 4-byte aligned (BERT's
 * 30522 in fp16 and bf16), cutlass_75 align1 kernels where they are
 * 2-byte aligned (GPT-2's 50257) and cutlass_80 tf32 align1 kernels for
 * both in tf32; the factors are fitted on those 17 rows (within 9% of
 * each).  The 8-byte case (align4) was not measured: between the two.
 * Elsewhere 1 (docs/kernel-library.md, "Rows that are not 16-byte
 * aligned"). */
static double
misaligned_slowdown (const GsArch *arch, const GsGemmCfg *cfg,
                     const GsGemmShape *s)
{
  if (cfg->kind != GS_GEMM_TENSOR || gs_gemm_gen (arch) != GS_GEMM_GEN_HOPPER)
    return 1;
  int a = gs_gemm_align_bytes (s);
  if (a >= 16)
    return 1;
  if (s->dtype == GS_DTYPE_TF32)     /* align1 kernels whatever the bytes */
    return 1.55;
  return a >= 8 ? 1.2 : a >= 4 ? 1.55 : 3.8;
}

void
gs_gemm_build (const GsArch *arch, const GsGemmParams *p,
               const GsGemmShape *s, const GsGemmChoice *choice,
               GArray *kernels)
{
  const GsGemmCfg *cfg = choice->cfg;
  int split = MAX (1, choice->split);
  Geometry g;
  geometry (cfg, s, split, &g);
  GsGemmFamily fam = gs_gemm_params_family_of (p, cfg, s);
  int bps = MAX (1, gs_gemm_blocks_per_sm (arch, cfg, s->layout));

  GsKernel k;
  gs_kernel_init (&k);
  k.name = kernel_name (gs_gemm_gen (arch), cfg, s);
  kernel_common (&k, cfg, s, &fam);
  k.eff_compute /= misaligned_slowdown (arch, cfg, s);
  grid_of (cfg, g.tiles_r, g.tiles_c, s->batch * split, k.grid);
  if (cfg->kind == GS_GEMM_TENSOR || cfg->kind == GS_GEMM_WGMMA)
    tensor_work (cfg, &g, s->dtype, &k.work);
  else
    simt_work (cfg, &g, &k.work);
  double total = dram_bytes (arch, cfg, s, &g, split, bps * arch->sm_count);
  memory_work (arch, cfg, s, &g, bps, total, &k.work);
  g_array_append_val (kernels, k);
  if (split > 1)
    splitk_reduce (arch, p, s, split, kernels);
}

void
gs_gemm_build_gemv (const GsArch *arch, const GsGemmParams *p,
                    const GsGemmShape *s, GArray *kernels)
{
  const GsGemmCfg *cfg = &gemv_cfg;
  GsGemmFamily fam = gs_gemm_params_family (p, cfg, s->layout);
  double e = gs_dtype_bytes (s->dtype);
  double cols = cfg->tile_cols;
  int64_t tiles = (s->cols + cfg->tile_cols - 1) / cfg->tile_cols;
  GsKernel k;
  gs_kernel_init (&k);
  k.name = kernel_name (gs_gemm_gen (arch), cfg, s);
  kernel_common (&k, cfg, s, &fam);
  k.eff_compute /= misaligned_slowdown (arch, cfg, s);
  k.grid[0] = (uint32_t) tiles;
  k.grid[1] = (uint32_t) s->batch;
  /* Each block streams its cols x depth slice of the weights once and
   * reads the (shared, L2-resident) input row. */
  double weights = (double) s->cols / tiles * s->depth * e;
  double x = (double) s->rows * s->depth * e;
  k.work.fp32_ops = cols * s->rows * s->depth;
  k.work.other_ops = cfg->threads * (s->depth / 32.0 + 16);
  k.work.st_bytes = (double) s->cols / tiles * s->rows * e;
  double c = s->c_in ? k.work.st_bytes : 0;  /* C read (beta != 0) */
  k.work.ld_bytes = weights + x + c;
  k.work.l2_bytes = k.work.ld_bytes + k.work.st_bytes;
  k.work.dram_bytes = weights + k.work.st_bytes + x / tiles + c;
  k.work.smem_bytes = cfg->threads * 4 * 2;
  k.work.mlp = 8;
  k.work.ilp = 4;
  g_array_append_val (kernels, k);
}
