/* gpusim: the GEMM library model of a GPU without GEMM measurements.
 *
 * An arch file with no calibration.library.gemm (a GPU known from its
 * spec sheet alone: a new part, a hypothetical one) runs its GEMMs on what
 * the measured GPUs agree on, learned from their arch files and measured
 * kernels by calibrate/fit-spec.c (bench/speconly-gemm --derive prints it;
 * tests/test-gemm checks that this table still agrees with the shipped
 * arch files):
 *
 * - eff_compute of every FP32 kernel configuration the fitted GPUs have:
 *   the median over the GPUs that fitted it of each GPU's value (the
 *   median over its layouts), at their fitted sustained clocks, which a
 *   GPU without a fitted clock estimates the same way (sim/arch.c);
 * - the op-latency overheads: the median of every fitted GPU's (they
 *   belong to the host and the framework, not the GPU);
 * - a kernel the GPUs of one kernel library chose for at least 90% of a
 *   selector's measured shapes, as a one-leaf selection tree over the
 *   box of those shapes.  Ampere and Ada (ampere_sgemm) launch the 128x128
 *   tile for every batched fp32 GEMM (3077 of 3082 rows on the A100 40GB,
 *   all 1752 on the 80GB and 1474 on the L4), whatever the waves, where
 *   the heuristic, an optimiser, picks the tile that quantises best; the
 *   other libraries and selectors have no such kernel (the most common
 *   takes 39% of Volta's and Turing's batched rows, 42% of Hopper's, 22
 *   to 59% of the linear rows).  The selectors without a rule keep the
 *   heuristic.
 *
 * Kernel kinds and dtypes the fitted GPUs have no value for keep their
 * kind's default (lib-gemm.c), as do the learned rules' other selectors
 * (the heuristic decides).  docs/kernel-library.md, "GEMMs on a GPU with
 * no GEMM measurements", gives the leave-one-GPU-out errors.
 */
#include "config.h"
#include "workloads/gemm.h"
#include "sim/arch.h"

#include <string.h>

/* Printed by bench/speconly-gemm --derive from the six calibrated arch
 * files (a100-pcie-40gb a100-pcie-80gb h100-sxm5-80gb l4 t4
 * v100-pcie-32gb) and data/neusight/kernels.csv.gz. */
static const GsGemmSpecEff spec_eff[] = {
  { GS_GEMM_CUTLASS_SIMT, "128x256", 0.8728 },
  { GS_GEMM_CUTLASS_SIMT, "256x128", 0.9564 },
  { GS_GEMM_SIMT, "128x128", 0.9639 },
  { GS_GEMM_SIMT, "128x32", 0.8681 },
  { GS_GEMM_SIMT, "128x32_sliced1x4", 0.8326 },
  { GS_GEMM_SIMT, "128x64", 0.9393 },
  { GS_GEMM_SIMT, "32x128", 0.8575 },
  { GS_GEMM_SIMT, "32x32_sliced1x4", 0.6854 },
  { GS_GEMM_SIMT, "64x32_sliced1x4", 0.7823 },
  { GS_GEMM_SIMT, "64x64", 0.8205 },
  { GS_GEMM_XMMA_FFMA, "128x128", 0.9411 },
  { GS_GEMM_XMMA_FFMA, "128x32", 0.7099 },
  { GS_GEMM_XMMA_FFMA, "128x64", 0.8088 },
  { GS_GEMM_XMMA_FFMA, "256x64", 0.8603 },
  { GS_GEMM_XMMA_FFMA, "32x32", 0.5746 },
  { GS_GEMM_XMMA_FFMA, "64x128", 0.8666 },
  { GS_GEMM_XMMA_FFMA, "64x256", 0.9214 },
  { GS_GEMM_XMMA_FFMA, "64x64", 0.7625 },
};

/* 6303 of the 6308 batched shapes of the A100s and the L4; the box is
 * log2 rows, cols, depth, batch, 128x128 tiles per SM, area, depth
 * aspect and work (gs_gemm_features), of which rows, cols, depth and
 * batch bound the rule (gs_gemm_tree_covers). */
static const GsGemmSpecRule spec_rules[] = {
  { GS_GEMM_GEN_AMPERE, "fp32_nn", "simt_128x128", 1,
    { 4.0875, 1.0000, 1.0000, 0.0000, -6.7549, 6.2479, -6.8811, 13.0112 },
    { 12.0000, 12.0000, 12.0000, 16.0000, 13.2451, 24.0000, 5.9367,
      42.0000 } },
};

static const GsGemmSpec spec = {
  spec_eff, G_N_ELEMENTS (spec_eff), spec_rules, G_N_ELEMENTS (spec_rules),
  { 42.39, 23.20, 25.00 }
};

const GsGemmSpec *
gs_gemm_spec (void)
{
  return &spec;
}

void
gs_gemm_params_spec (GsGemmParams *p, const GsArch *arch,
                     const GsGemmSpec *sp)
{
  GsGemmGen gen = gs_gemm_gen (arch);
  memcpy (p->overhead_us, sp->overhead_us, sizeof p->overhead_us);
  for (guint i = 0; i < sp->n_eff; i++)
    {
      const GsGemmSpecEff *e = &sp->eff[i];
      g_autofree char *key = g_strdup_printf (
        "%s_%s", gs_gemm_kind_prefix (e->kind), e->tag);
      const GsGemmCfg *cfg = gs_gemm_cfg_find (gen, GS_DTYPE_FP32, key);
      if (cfg == NULL)
        continue;
      GsGemmFamily f = gs_gemm_params_family (NULL, cfg, GS_LAYOUT_TN);
      f.eff_compute = e->eff_compute;
      gs_gemm_params_set_family (p, key, &f);
    }
  for (guint i = 0; i < sp->n_rules; i++)
    {
      const GsGemmSpecRule *r = &sp->rules[i];
      if (r->library != gs_gemm_library (gen)
          || gs_gemm_cfg_find (gen, GS_DTYPE_FP32, r->cls) == NULL)
        continue;
      GsGemmTree *t = gs_gemm_tree_new (&r->cls, 1);
      GsGemmTreeNode leaf = { -1, 0, 0, 0, 0, r->split };
      gs_gemm_tree_add (t, &leaf);
      gs_gemm_tree_set_domain (t, r->lo, r->hi);
      g_hash_table_insert (p->trees, g_strdup (r->selector), t);
    }
}
