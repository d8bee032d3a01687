/* gpusim: fused attention kernels.
 *
 * FlashAttention-2 (Dao, "FlashAttention-2: Faster Attention with Better
 * Parallelism and Work Partitioning", 2023; kernel traits of the
 * flash-attention v2 sources PyTorch 2.x ships): the forward kernel gives
 * each block Br query rows of one (batch, head) and streams the head's
 * keys and values through shared memory Bc at a time (grid: query blocks
 * x batch x heads, 4 warps); S = Q K^T and O += P V run on tensor cores
 * and the online softmax (max, exp, sum, rescale) on the FP32 pipe and
 * SFU.  The backward runs a pre-pass (D = rowsum(dO * O)), a main kernel
 * whose blocks own Bc keys and loop over every query block (S, dP, dV,
 * dK and dQ: five MMAs per tile pair, dQ accumulated with fp32 atomics in
 * L2) and a pass converting dQ.  Causal masking skips the tiles above the
 * diagonal: the blocks' work falls linearly with their position, which
 * becomes up to eight block variants, heaviest first (FlashAttention-2
 * schedules the longest query blocks first).  A sliding window (flash_
 * attn's window_size) skips the key tiles wholly before it the same way;
 * soft-capped scores (its softcap) cost a tanh each.
 *
 * Memory-efficient attention (xFormers / PyTorch's cutlass fmha kernels)
 * tiles 64 queries x 64 keys per step with 4 warps; it also runs in fp32
 * and on Volta/Turing, where PyTorch falls back to it.  Its MMAs
 * (DefaultGemmType in the kernels' gemm_kernel_utils.h) run on tensor
 * cores for fp16/bf16 from sm75 and, for fp32 from sm80, as
 * OpMultiplyAddFastF32: each product split into TF32 big and small parts,
 * three TF32 MMAs (big x big, big x small, small x big) keeping fp32
 * accuracy; fp32 before sm80 is SIMT FMAs.
 * FlashAttention-2 needs fp16/bf16, sm80+ and a head dimension of at most
 * 256; other requests run the memory-efficient kernels, as PyTorch's
 * scaled_dot_product_attention does.
 */
#include "config.h"
#include "workloads/gemm.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <math.h>
#include <string.h>

/* Tile of one attention kernel: rows = query rows, cols = key rows per
 * step, tile_k = head dim it is built for. */
typedef struct {
  GsGemmCfg cfg;
  int max_head_dim;
} AttnCfg;

#define ATT(kind, tag, br, bc, d, thr, regs)                                 \
  { { kind, tag, br, bc, d, thr, regs, regs, 0, 0, 1, 2, thr / 32, 1 }, d }

/* FlashAttention-2 kernel traits per head dim on sm80 (flash_fwd_launch_
 * template.h, flash_bwd_launch_template.h): forward 128x128 (d <= 64),
 * 128x64 (d <= 128), 64x64 (d <= 256); backward 128x128 / 64x128 / 64x64
 * with 8 warps. */
static const AttnCfg flash_fwd[] = {
  ATT (GS_GEMM_FLASH_FWD, "128x128_d64", 128, 128, 64, 128, 255),
  ATT (GS_GEMM_FLASH_FWD, "128x64_d128", 128, 64, 128, 128, 255),
  ATT (GS_GEMM_FLASH_FWD, "64x64_d256", 64, 64, 256, 128, 255),
};
/* The split-KV forward (run_mha_fwd_splitkv_dispatch): 64 query rows,
 * 256 / 128 / 64 keys per step for d <= 64 / 128 / 256, 4 warps. */
static const AttnCfg flash_splitkv[] = {
  ATT (GS_GEMM_FLASH_FWD, "64x256_d64", 64, 256, 64, 128, 255),
  ATT (GS_GEMM_FLASH_FWD, "64x128_d128", 64, 128, 128, 128, 255),
  ATT (GS_GEMM_FLASH_FWD, "64x64_d256", 64, 64, 256, 128, 255),
};
static const AttnCfg flash_bwd[] = {
  ATT (GS_GEMM_FLASH_BWD, "128x128_d64", 128, 128, 64, 256, 255),
  ATT (GS_GEMM_FLASH_BWD, "64x128_d128", 64, 128, 128, 256, 255),
  ATT (GS_GEMM_FLASH_BWD, "64x64_d256", 64, 64, 256, 256, 255),
};
/* cutlass fmha (xFormers): 64x64 register-file kernels up to d = 128,
 * 32x128 kernels streaming the output through global memory beyond. */
static const AttnCfg memeff_fwd[] = {
  ATT (GS_GEMM_MEMEFF_FWD, "64x64_rf", 64, 64, 128, 128, 128),
  ATT (GS_GEMM_MEMEFF_FWD, "32x128_gmem", 32, 128, 65536, 128, 128),
};
static const AttnCfg memeff_bwd[] = {
  ATT (GS_GEMM_MEMEFF_BWD, "64x64_k64", 64, 64, 128, 128, 168),
  ATT (GS_GEMM_MEMEFF_BWD, "128x64_k128", 128, 64, 65536, 256, 168),
};
static const GsGemmCfg aux_cfg = {
  GS_GEMM_ATTN_AUX, "aux", 128, 1, 1, 128, 32, 32, 0, 0, 1, 1, 4, 1
};

static const GsGemmCfg *
pick (const AttnCfg *cfgs, guint n, int64_t head_dim)
{
  for (guint i = 0; i < n; i++)
    if (head_dim <= cfgs[i].max_head_dim)
      return &cfgs[i].cfg;
  return &cfgs[n - 1].cfg;
}

/* Sizes shared by the kernels of one attention op. */
typedef struct {
  int64_t bh;              /* batch x heads */
  int64_t heads;
  int64_t sq, sk, d;
  double e;                /* bytes per element */
  double kv_share;         /* query heads per K/V head */
  GsDtype dtype;
  gboolean causal;
  int64_t window;          /* sliding window (0: none): keys more than
                            * this before a query are skipped */
  gboolean softcap;        /* cap * tanh(s / cap) on every score */
  gboolean tensor;         /* MMAs on tensor cores (else FP32 FMAs) */
  int64_t mask_rows;       /* additive mask rows per batch (0: none) */
  GsDtype mma_dtype;       /* the tensor-core rate they run at */
  double mma_passes;       /* MMAs per product: 3 for fp32 as 3xTF32 */
} Attn;

/* Fraction of the keys query block I (of N, BR rows each) attends to:
 * those up to its last query's position and, with a sliding window, from
 * its first query's position less the window. */
static double
causal_fraction (const Attn *a, int64_t i, int br)
{
  double last = (double) (i + 1) * br + (double) (a->sk - a->sq);
  double first = a->window > 0
                 ? (double) i * br + (double) (a->sk - a->sq) - a->window
                 : 0;
  double keys = MIN (last, (double) a->sk) - MAX (first, 0.0);
  return CLAMP (keys / a->sk, 1.0 / a->sk, 1.0);
}

/* Splits N positions per (batch, head) with work FRAC(i) into at most
 * eight variants of equal block counts, heaviest first. */
static void
causal_variants (GsKernel *k, const Attn *a, int64_t n, int br,
                 gboolean by_key)
{
  guint groups = (guint) MIN (n, GS_KERNEL_MAX_VARIANTS);
  k->n_variants = groups;
  for (guint g = 0; g < groups; g++)
    {
      int64_t lo = n * g / groups, hi = n * (g + 1) / groups;
      double sum = 0;
      for (int64_t j = lo; j < hi; j++)
        {
          /* Heaviest first: forward query block n-1-j sees the most keys;
           * backward key block j is seen by the queries below it. */
          double f = by_key ? 1.0 - (double) j / n
                            : causal_fraction (a, n - 1 - j, br);
          /* A sliding window: a key block is seen by the queries from
           * its own position to the window past its last key. */
          if (by_key && a->window > 0)
            f = MIN (f, (double) (a->window + br) / a->sq);
          sum += f;
        }
      k->variants[g].count = (uint64_t) (hi - lo) * a->bh;
      k->variants[g].scale = MAX (1e-3, sum / (hi - lo));
    }
}

/* Shared memory of a kernel built for this arch: the kernels keep their
 * stages within what a block may opt in to. */
static uint32_t
fit_smem (const GsArch *arch, double bytes)
{
  double cap = arch->smem_per_block_kib * 1024.0;
  return (uint32_t) MIN (bytes, cap);
}

static void
attn_kernel_init (GsKernel *k, const GsGemmCfg *cfg, const GsGemmParams *p,
                  const char *name)
{
  GsGemmFamily fam = gs_gemm_params_family (p, cfg, GS_LAYOUT_NN);
  gs_kernel_init (k);
  k->name = g_strdup (name);
  k->op_class = g_strdup ("attention");
  k->block[0] = (uint32_t) cfg->threads;
  k->regs = (uint32_t) cfg->regs_tn;
  k->eff_compute = fam.eff_compute;
  k->eff_memory = fam.eff_memory;
  k->work.fixed_ns = fam.block_fixed_ns;
  k->work.ilp = fam.ilp;
}

/* Bytes of the additive mask a block reads for QUERY_ROWS queries x KEYS
 * keys: their rows, or the one row broadcast over the queries. */
static double
mask_bytes (const Attn *a, double query_rows, double keys)
{
  if (a->mask_rows == 0)
    return 0;
  return (a->mask_rows > 1 ? query_rows : 1) * keys * a->e;
}

/* MMA work: on tensor cores, or as FP32 FMAs (fp32 memory-efficient
 * attention before sm80). */
static void
add_mma (GsWork *w, const Attn *a, double flops)
{
  if (a->tensor)
    w->tensor_flops[a->mma_dtype] += flops * a->mma_passes;
  else
    w->fp32_ops += flops / 2;
}

/* Forward: a block owns BR query rows and streams all keys, or with
 * SPLITS > 1 its share of them (the split-KV kernel: grid query blocks x
 * splits x batch-heads, partial outputs and log-sum-exps in fp32). */
static void
forward (const GsArch *arch, const GsGemmParams *p, const Attn *a,
         const GsGemmCfg *cfg, const char *name, int splits, GArray *kernels)
{
  int br = cfg->tile_rows, bc = cfg->tile_cols;
  int64_t nm = (a->sq + br - 1) / br;
  double keys = (double) a->sk / splits, d = (double) a->d;
  GsKernel k;
  attn_kernel_init (&k, cfg, p, name);
  k.grid[0] = (uint32_t) nm;
  k.grid[1] = (uint32_t) (splits > 1 ? splits : a->bh);
  if (splits > 1)
    k.grid[2] = (uint32_t) a->bh;
  k.smem_dynamic = fit_smem (arch, (br + 2 * bc) * MIN (a->d, 256) * a->e);
  GsWork *w = &k.work;
  add_mma (w, a, 4.0 * br * keys * d);             /* Q K^T and P V */
  w->sfu_ops = (double) br * keys;                  /* exp */
  w->fp32_ops += 5.0 * br * keys;                   /* scale, max, sum, rescale */
  if (a->softcap)                                   /* s / cap, tanh, * cap */
    {
      w->sfu_ops += (double) br * keys;
      w->fp32_ops += 2.0 * br * keys;
    }
  w->other_ops = cfg->threads * ceil (keys / bc) * 24; /* loads, syncs, loop */
  /* Q, O, the log-sum-exp and the mask move for the query rows a block
   * holds, not its whole tile: the kernels predicate their loads and
   * stores on the sequence length (FlashAttention-2 copies
   * actual_seqlen_q - m_block x kBlockM rows; a decode step's 4 grouped
   * query rows fill 4 of a 64-row tile), while the MMAs run on the
   * whole tile.  Over the query blocks: seq_q rows in all. */
  double rows = (double) a->sq / nm;
  double q = rows * d * a->e, kv = 2 * keys * d * a->e;
  /* An additive mask: this block's query rows (or the one broadcast row)
   * of every key, shared in L2 by the heads of a batch. */
  double mask = mask_bytes (a, rows, keys);
  double mask_dram = a->mask_rows > 1 ? mask / a->heads
                                      : mask / ((double) nm * a->heads);
  w->ld_bytes = q + kv + mask;
  /* O and the log-sum-exp; split: in fp32, for the combine pass. */
  w->st_bytes = rows * d * (splits > 1 ? 4.0 : a->e) + rows * 4.0;
  w->smem_bytes = kv + (cfg->threads / 32.0) * kv;  /* stage + warp reads */
  w->l2_bytes = w->ld_bytes + w->st_bytes;
  /* The query blocks of one head run together and share its K and V in L2;
   * grouped-query heads share them further. */
  w->dram_bytes = q + w->st_bytes + kv / nm / a->kv_share + mask_dram;
  w->mlp = 8;
  if (a->causal)
    {
      Attn all = *a;
      all.bh = a->bh * splits;
      causal_variants (&k, &all, nm, br, FALSE);
    }
  g_array_append_val (kernels, k);
}

/* How many splits of the keys FlashAttention-2's forward makes
 * (num_splits_heuristic() in flash_api.cpp): none while the batch-heads x
 * 64-row query blocks fill 80% of twice the SMs; otherwise the fewest
 * splits whose last wave is at least 85% as full as the best split's, of
 * at most 128, the SMs and the key blocks, and only splits that change
 * the key blocks per split. */
static int
flash_splits (const GsArch *arch, const Attn *a, int block_n)
{
  double slots = 2.0 * arch->sm_count;
  int64_t work = a->bh * ((a->sq + 63) / 64);
  if (work >= 0.8 * slots)
    return 1;
  int64_t nblocks = (a->sk + block_n - 1) / block_n;
  int max = (int) MIN (MIN ((int64_t) 128, (int64_t) slots), nblocks);
  double eff[129] = { 0 }, best = 0;
  for (int s = 1; s <= max; s++)
    {
      if (s > 1 && (nblocks + s - 1) / s == (nblocks + s - 2) / (s - 1))
        continue;
      double waves = (double) work * s / slots;
      eff[s] = waves / ceil (waves);
      best = MAX (best, eff[s]);
    }
  for (int s = 1; s <= max; s++)
    if (eff[s] > 0 && eff[s] >= 0.85 * best)
      return s;
  return 1;
}

/* The split-KV combine pass: KBLOCK rows of every batch-head's queries
 * per block of 128 threads, reading each split's fp32 partial output and
 * log-sum-exp and writing the output. */
static void
combine (const GsGemmParams *p, const Attn *a, const GsGemmCfg *split_cfg,
         int splits, const char *dt, GArray *kernels)
{
  int kblock = a->d % 128 == 0 ? 4 : a->d % 64 == 0 ? 8 : 16;
  int64_t rows = a->bh * a->sq;
  g_autofree char *name
    = g_strdup_printf ("pytorch_flash::flash_fwd_splitkv_combine_kernel<"
                       "Flash_fwd_kernel_traits<%d, %d, %d, %d, %s>, %d>",
                       split_cfg->tile_k, split_cfg->tile_rows,
                       split_cfg->tile_cols, split_cfg->threads / 32, dt,
                       kblock);
  GsKernel k;
  attn_kernel_init (&k, &aux_cfg, p, name);
  k.grid[0] = (uint32_t) ((rows + kblock - 1) / kblock);
  double elems = (double) kblock * a->d;
  k.work.fp32_ops = elems * splits * 2 + kblock * splits * 4.0;
  k.work.sfu_ops = (double) kblock * splits;
  k.work.other_ops = aux_cfg.threads * 16.0;
  k.work.ld_bytes = splits * (elems * 4 + kblock * 4.0);
  k.work.st_bytes = elems * a->e;
  k.work.mlp = 4;
  g_array_append_val (kernels, k);
}

/* A memory-bound pass over the rows of Q: reading IN and writing OUT
 * bytes per row element. */
static void
aux_pass (const GsGemmParams *p, const Attn *a, const char *name,
          double in_per_elem, double out_per_elem, GArray *kernels)
{
  const GsGemmCfg *cfg = &aux_cfg;
  int64_t rows = 128;
  GsKernel k;
  attn_kernel_init (&k, cfg, p, name);
  k.grid[0] = (uint32_t) ((a->sq + rows - 1) / rows);
  k.grid[1] = (uint32_t) a->bh;
  double elems = (double) rows * a->d;
  k.work.fp32_ops = elems * 2;
  k.work.other_ops = cfg->threads * 16.0;
  k.work.ld_bytes = elems * in_per_elem;
  k.work.st_bytes = elems * out_per_elem;
  k.work.mlp = 4;
  g_array_append_val (kernels, k);
}

/* Backward main kernel: a block owns BC keys and loops over all queries. */
static void
backward (const GsArch *arch, const GsGemmParams *p, const Attn *a,
          const GsGemmCfg *cfg, const char *name, GArray *kernels)
{
  int br = cfg->tile_rows, bc = cfg->tile_cols;
  int64_t nk = (a->sk + bc - 1) / bc;
  double q = (double) a->sq, d = (double) a->d;
  GsKernel k;
  attn_kernel_init (&k, cfg, p, name);
  k.grid[0] = (uint32_t) nk;
  k.grid[1] = (uint32_t) a->bh;
  k.smem_dynamic = fit_smem (arch, (2 * bc + 3 * br) * MIN (a->d, 256)
                                   * a->e + br * bc * a->e);
  GsWork *w = &k.work;
  add_mma (w, a, 10.0 * q * bc * d);                /* S, dP, dV, dK, dQ */
  w->sfu_ops = q * bc;
  w->fp32_ops += 8.0 * q * bc;                      /* P, dS */
  if (a->softcap)          /* the capped scores again, and 1 - tanh^2 */
    {
      w->sfu_ops += q * bc;
      w->fp32_ops += 5.0 * q * bc;
    }
  w->other_ops = cfg->threads * (q / br) * 40;
  double kv = 2 * bc * d * a->e;                    /* this block's K, V */
  double per_q = q * d * a->e * 2 + q * 8;          /* Q, dO, lse, D */
  double dq = q * d * 4 * 2;                        /* fp32 atomics: RMW */
  double mask = mask_bytes (a, q, bc);
  w->ld_bytes = kv + per_q + dq / 2 + mask;
  w->st_bytes = kv + dq / 2;                        /* dK, dV, dQ adds */
  w->smem_bytes = (q / br) * (3 * br * d * a->e + br * bc * a->e)
                  * (cfg->threads / 32.0);
  w->l2_bytes = w->ld_bytes + w->st_bytes;
  /* Q and dO of a head are read by all its key blocks from L2. */
  w->dram_bytes = 2 * kv + per_q / nk + dq / nk + mask / a->heads;
  w->mlp = 8;
  if (a->causal)
    causal_variants (&k, a, nk, bc, TRUE);
  g_array_append_val (kernels, k);
}

gboolean
gs_flash2_runs (const GsArch *arch, GsDtype dtype, int64_t head_dim)
{
  return (dtype == GS_DTYPE_FP16 || dtype == GS_DTYPE_BF16)
         && (arch == NULL || arch->compute_capability >= 80)
         && head_dim <= GS_FLASH2_MAX_HEAD_DIM;
}

gboolean
gs_flash2_trains (const GsArch *arch, int64_t head_dim, gboolean dropout)
{
  if (arch == NULL || arch->compute_capability < 86
      || arch->compute_capability > 89)
    return TRUE;
  return !(head_dim > 192 && (head_dim <= 224 || dropout));
}

gboolean
gs_gemm_build_attention (const GsArch *arch, const GsGemmParams *p,
                         const GsOp *op, GArray *kernels, GError **error)
{
  Attn a;
  int64_t heads = MAX (1, op->heads);
  a.bh = MAX (1, op->batch) * heads;
  a.heads = heads;
  a.mask_rows = op->bias ? MAX (1, op->rows) : 0;
  a.sq = op->seq_q;
  a.sk = op->seq_k > 0 ? op->seq_k : op->seq_q;
  a.d = op->head_dim;
  if (a.sq <= 0 || a.sk <= 0 || a.d <= 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: attention needs seq_q, seq_k and head_dim > 0",
                   op->name ? op->name : "attention");
      return FALSE;
    }
  a.dtype = op->dtype;
  a.e = gs_dtype_bytes (op->dtype);
  a.kv_share = op->kv_heads > 0 ? (double) heads / op->kv_heads : 1.0;
  a.causal = op->causal;
  a.softcap = op->softcap;
  /* A sliding window shorter than the keys: causal blocks skip the key
   * blocks before it; a decode step's queries (all at the last
   * positions) read only its last window + seq_q keys. */
  a.window = op->window > 0 && op->window < a.sk ? op->window : 0;
  if (a.window > 0 && !a.causal)
    a.window = 0;
  if (a.window > 0 && a.sq <= 64 && a.sk > a.window + a.sq)
    {
      a.sk = a.window + a.sq;
      a.window = 0;
    }
  gboolean half = op->dtype == GS_DTYPE_FP16 || op->dtype == GS_DTYPE_BF16;
  gboolean flash = op->attn == GS_ATTN_FLASH2
                   && gs_flash2_runs (arch, op->dtype, a.d);
  a.tensor = half && arch->tensor_flops_per_clk[op->dtype] > 0;
  a.mma_dtype = op->dtype;
  a.mma_passes = 1;
  if (!flash && op->dtype == GS_DTYPE_FP32 && arch->compute_capability >= 80
      && arch->tensor_flops_per_clk[GS_DTYPE_TF32] > 0)
    {
      a.tensor = TRUE;
      a.mma_dtype = GS_DTYPE_TF32;
      a.mma_passes = 3;
    }
  if (!half && op->dtype != GS_DTYPE_FP32)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: fused attention runs in fp16, bf16 or fp32, not %s",
                   op->name ? op->name : "attention",
                   gs_dtype_name (op->dtype));
      return FALSE;
    }
  const char *dt = gs_dtype_name (op->dtype);
  gboolean bwd = op->phase == GS_PHASE_BACKWARD;
  const GsGemmCfg *cfg;
  g_autofree char *name = NULL;
  if (flash)
    {
      cfg = bwd ? pick (flash_bwd, G_N_ELEMENTS (flash_bwd), a.d)
                : pick (flash_fwd, G_N_ELEMENTS (flash_fwd), a.d);
      name = g_strdup_printf ("pytorch_flash::flash_%s_kernel<Flash_%s_kernel_"
                              "traits<%d, %d, %d, %d, %s>>",
                              bwd ? "bwd_dq_dk_dv_loop_seqk_parallel" : "fwd",
                              bwd ? "bwd" : "fwd", cfg->tile_k,
                              cfg->tile_rows, cfg->tile_cols,
                              cfg->threads / 32, dt);
    }
  else
    {
      cfg = bwd ? pick (memeff_bwd, G_N_ELEMENTS (memeff_bwd), a.d)
                : pick (memeff_fwd, G_N_ELEMENTS (memeff_fwd), a.d);
      name = g_strdup_printf ("fmha_cutlass%s_%s_aligned_%s_sm%d",
                              bwd ? "B" : "F", dt, cfg->tag,
                              MIN (arch->compute_capability, 80));
    }
  if (!bwd && flash)
    {
      /* mha_fwd: one query attends to all keys, so causal masking is
       * off; with grouped-query heads the query heads sharing a K/V head
       * become the query rows of one (seqlenq_ngroups_swapped).  Without
       * dropout the keys split across blocks where the batch-heads leave
       * SMs idle (flash-decoding), a combine pass merging the parts. */
      if (a.sq == 1)
        a.causal = FALSE;
      int64_t kvh = op->kv_heads > 0 ? op->kv_heads : heads;
      if (a.sq == 1 && kvh < heads && heads % kvh == 0 && !op->dropout
          && a.d % 8 == 0)
        {
          a.sq = heads / kvh;
          a.heads = kvh;
          a.bh = MAX (1, op->batch) * kvh;
          a.kv_share = 1;
        }
      const GsGemmCfg *scfg = pick (flash_splitkv,
                                    G_N_ELEMENTS (flash_splitkv), a.d);
      int splits = op->dropout ? 1 : flash_splits (arch, &a, scfg->tile_cols);
      if (splits > 1)
        {
          g_autofree char *sname
            = g_strdup_printf ("pytorch_flash::flash_fwd_splitkv_kernel<"
                               "Flash_fwd_kernel_traits<%d, %d, %d, %d, "
                               "%s>>", scfg->tile_k, scfg->tile_rows,
                               scfg->tile_cols, scfg->threads / 32, dt);
          forward (arch, p, &a, scfg, sname, splits, kernels);
          combine (p, &a, scfg, splits, dt, kernels);
          return TRUE;
        }
    }
  if (!bwd)
    {
      forward (arch, p, &a, cfg, name, 1, kernels);
      return TRUE;
    }
  aux_pass (p, &a, flash ? "pytorch_flash::flash_bwd_dot_do_o_kernel"
                         : "fmha_cutlassB_preprocess_delta",
            2 * a.e, 4.0 / a.d + (flash ? 4 : 0), kernels);
  backward (arch, p, &a, cfg, name, kernels);
  if (flash)
    aux_pass (p, &a, "pytorch_flash::flash_bwd_convert_dq_kernel", 4, a.e,
              kernels);
  return TRUE;
}
