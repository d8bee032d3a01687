/* gpusim: calibration.library.memory, the learned parameters of the
 * memory-bound kernel model (see mem-model.h), declared once here.
 *
 * The defaults are what a GPU without measurements gets when its arch file
 * has no such group: kernel efficiencies of 1 (calibration.dram_eff alone
 * sets the bandwidth), the L2 behaviour of a plain cache, and host costs
 * equal to the median of the GPUs fitted on NeuSight's measurements
 * (docs/kernel-library.md).  `gpusim calibrate` writes fitted values, or
 * values transferred from related GPUs, into the arch file.
 */
#include "config.h"
#include "workloads/mem-model.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <math.h>
#include <string.h>

#define GROUP "calibration.library.memory"
#define OFF(f) offsetof (GsMemParams, f)
#define ADV GS_PARAM_ADVANCED

static const char *const family_names[GS_MEM_FAM_COUNT] = {
  "elementwise", "strided", "layer_norm", "softmax_warp", "softmax_block",
  "reduce", "gather", "triton", "optimizer"
};

const char *
gs_mem_family_name (GsMemFamily f)
{
  g_return_val_if_fail (f < GS_MEM_FAM_COUNT, "?");
  return family_names[f];
}

static const char *const host_names[GS_MEM_HOST_COUNT] = {
  "add", "mul", "div", "pow", "addu", "mulu", "divu", "powu", "relu", "gelu",
  "tanh", "ln", "softmax", "elementwise", "norm", "reduce", "embedding",
  "copy", "fused", "optimizer"
};

const char *
gs_mem_host_name (GsMemHostOp h)
{
  g_return_val_if_fail (h < GS_MEM_HOST_COUNT, "?");
  return host_names[h];
}

#define EFF(fam, what) \
  { "eff." #fam, GS_PARAM_DOUBLE, OFF (eff[GS_MEM_FAM_##what]), "", 1, NULL, \
    0.05, 1, 0, "fraction of calibration.dram_eff's bandwidth " #fam \
    " kernels reach" }

/* Host costs (us).  Defaults: the medians of the A100 40 GB, V100 and T4
 * fits on NeuSight's measurements (PyTorch 2.1); the A100 80 GB and L4
 * sets never reach the host floor. */
#define HOST(op, what, pre, post) \
  { "host." #op ".pre_us", GS_PARAM_DOUBLE, \
    OFF (host[GS_MEM_HOST_##what].pre_us), "us", pre, NULL, 0, 1e4, ADV, \
    "host time of " #op " before its first kernel is issued" }, \
  { "host." #op ".post_us", GS_PARAM_DOUBLE, \
    OFF (host[GS_MEM_HOST_##what].post_us), "us", post, NULL, 0, 1e4, ADV, \
    "host time of " #op " after its last kernel is issued" }

static const GsParam mem_params[] = {
  { "rows", GS_PARAM_INT, OFF (rows), "rows", 0, NULL, 0, 1 << 30, 0,
    "measured rows the memory fit used (0: defaults or transferred)" },
  EFF (elementwise, ELEMENTWISE),
  EFF (strided, STRIDED),
  EFF (layer_norm, LAYER_NORM),
  EFF (softmax_warp, SOFTMAX_WARP),
  EFF (softmax_block, SOFTMAX_BLOCK),
  EFF (reduce, REDUCE),
  EFF (gather, GATHER),
  EFF (triton, TRITON),
  EFF (optimizer, OPTIMIZER),
  { "l2_keep", GS_PARAM_DOUBLE, OFF (l2_keep), "", GS_L2_KEEP_DEFAULT, NULL,
    0.05, 2, 0,
    "fraction of the L2 size that keeps data touched by the previous op" },
  { "l1_keep", GS_PARAM_DOUBLE, OFF (l1_keep), "", 0.75, NULL, 0.05, 1, 0,
    "fraction of an SM's free L1 that keeps rows a multi-pass kernel rereads" },
  { "row_sector_bytes", GS_PARAM_DOUBLE, OFF (row_sector_bytes), "bytes",
    0, NULL, 0, 4096, 0,
    "extra bytes a row kernel moves per row not aligned to 32 bytes" },
  { "row_ops.layer_norm", GS_PARAM_DOUBLE, OFF (row_ops_layer_norm),
    "instructions", 400, NULL, 0, 1e5, 0,
    "per thread per row of vectorized_layer_norm_kernel besides the "
    "per-element work (Welford merges, barriers, setup)" },
  { "row_ops.softmax_block", GS_PARAM_DOUBLE, OFF (row_ops_softmax_block),
    "instructions", 250, NULL, 0, 1e5, 0,
    "per thread per row of cunn_SoftMaxForward besides the per-element "
    "work (two block reductions)" },
  { "row_ops.softmax_warp", GS_PARAM_DOUBLE, OFF (row_ops_softmax_warp),
    "instructions", 60, NULL, 0, 1e5, 0,
    "per thread per row of softmax_warp_forward besides the per-element "
    "work (two warp reductions)" },
  { "block_ns.layer_norm", GS_PARAM_DOUBLE, OFF (block_ns_layer_norm), "ns",
    0, NULL, 0, 1e5, 0,
    "latency of a vectorized_layer_norm_kernel block beyond its memory "
    "round trips and work (barrier and reduction waits)" },
  { "block_ns.softmax_block", GS_PARAM_DOUBLE, OFF (block_ns_softmax_block),
    "ns", 0, NULL, 0, 1e5, 0,
    "the same for a cunn_SoftMaxForward block" },
  { "block_ns.softmax_warp", GS_PARAM_DOUBLE, OFF (block_ns_softmax_warp),
    "ns", 0, NULL, 0, 1e5, 0,
    "the same for a softmax_warp_forward block" },
  { "regs.layer_norm", GS_PARAM_INT, OFF (regs_layer_norm), "registers",
    32, NULL, 16, 255, 0,
    "registers per thread of vectorized_layer_norm_kernel (occupancy)" },
  { "regs.softmax_block", GS_PARAM_INT, OFF (regs_softmax_block),
    "registers", 32, NULL, 16, 255, 0,
    "registers per thread of cunn_SoftMaxForward (occupancy)" },
  { "regs.softmax_warp", GS_PARAM_INT, OFF (regs_softmax_warp), "registers",
    82, NULL, 16, 255, 0,
    "registers per thread of softmax_warp_forward at 1024 columns" },
  HOST (add, ADD, 14.5, 16.5),
  HOST (mul, MUL, 14.0, 18.0),
  HOST (div, DIV, 15.5, 17.0),
  HOST (pow, POW, 17.0, 16.0),
  HOST (addu, ADDU, 17.0, 17.0),
  HOST (mulu, MULU, 17.0, 16.5),
  HOST (divu, DIVU, 18.0, 16.5),
  HOST (powu, POWU, 20.0, 14.5),
  HOST (relu, RELU, 18.0, 17.0),
  HOST (gelu, GELU, 19.0, 17.0),
  HOST (tanh, TANH, 13.5, 16.0),
  HOST (ln, LN, 38.5, 8.0),
  HOST (softmax, SOFTMAX, 24.0, 16.0),
  /* Kinds without a measured op: an eager elementwise op's costs for
   * reductions, gathers and copies (one ATen dispatch and launch each);
   * an Inductor kernel is launched from generated code without the
   * dispatcher (estimate: 8 + 6 us); a foreach optimizer step loops over
   * the parameters in Python (estimate: 30 + 10 us). */
  HOST (elementwise, ELEMENTWISE, 17.0, 16.5),
  HOST (norm, NORM, 38.5, 8.0),
  HOST (reduce, REDUCE, 17.0, 16.5),
  HOST (embedding, EMBEDDING, 17.0, 16.5),
  HOST (copy, COPY, 17.0, 16.5),
  HOST (fused, FUSED, 8.0, 6.0),
  HOST (optimizer, OPTIMIZER, 30.0, 10.0),
};

#undef EFF
#undef HOST
#undef OFF

const GsParam *
gs_mem_params_table (guint *n)
{
  *n = G_N_ELEMENTS (mem_params);
  return mem_params;
}

void
gs_mem_params_init (GsMemParams *p)
{
  memset (p, 0, sizeof *p);
  gs_params_init (mem_params, G_N_ELEMENTS (mem_params), p);
}

gboolean
gs_mem_params_load (GsMemParams *p, const GsArch *arch, GError **error)
{
  gs_mem_params_init (p);
  if (arch->chain == NULL)
    return TRUE;
  for (guint i = 0; i < gs_cfg_chain_length (arch->chain); i++)
    {
      config_t *cfg = gs_cfg_chain_nth (arch->chain, i);
      config_setting_t *g = config_lookup (cfg, GROUP);
      if (g == NULL)
        continue;
      if (config_setting_type (g) != CONFIG_TYPE_GROUP)
        {
          g_autofree char *w = gs_cfg_where (g);
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s: " GROUP ": expected a group { ... }", w);
          return FALSE;
        }
      static const char *const opaque[] = { "residuals", NULL };
      if (!gs_params_check_unknown (mem_params, G_N_ELEMENTS (mem_params), g,
                                    GROUP ".", opaque, error))
        return FALSE;
    }
  return gs_params_load (mem_params, G_N_ELEMENTS (mem_params), p,
                         arch->chain, GROUP ".", error);
}

GsResiduals *
gs_mem_residuals_new (void)
{
  return gs_residuals_new (2, "log2 rows, row length, "
                              "log(measured / predicted latency)");
}

/* The residuals belong to the memory calibration they were learned with:
 * they come from the nearest file of the chain that has a memory group,
 * so a file that sets memory parameters of its own (a what-if on a
 * calibrated GPU, a fixed test calibration) does not inherit its base's. */
gboolean
gs_mem_residuals_load (GsResiduals *t, const GsArch *arch, GError **error)
{
  const config_setting_t *g = arch->chain == NULL ? NULL
    : gs_cfg_chain_lookup (arch->chain, GROUP);
  if (g == NULL || config_setting_type (g) != CONFIG_TYPE_GROUP)
    return TRUE;
  const config_setting_t *r = config_setting_get_member (g, "residuals");
  return r == NULL || gs_residuals_load (t, r, error);
}

/* Number of leading dotted components A and B share. */
static guint
common_depth (char **a, char **b)
{
  guint d = 0;
  while (a[d] && b[d] && a[d + 1] && b[d + 1] && strcmp (a[d], b[d]) == 0)
    d++;
  return d;
}

static void
pad (GString *s, const char *indent, guint depth)
{
  g_string_append (s, indent);
  for (guint i = 0; i < depth; i++)
    g_string_append (s, "  ");
}

/* Writes the table's keys as nested libconfig groups ("host.add.pre_us"
 * inside "host = { add = { ... }; };"); the table lists each group's keys
 * together, so groups open and close once. */
char *
gs_mem_params_to_cfg (const GsMemParams *p, const char *indent)
{
  GString *s = g_string_new (NULL);
  char **prev = g_new0 (char *, 1);
  guint prev_depth = 0;           /* groups open */
  for (guint i = 0; i < G_N_ELEMENTS (mem_params); i++)
    {
      const GsParam *q = &mem_params[i];
      char **parts = g_strsplit (q->key, ".", -1);
      guint depth = g_strv_length (parts) - 1;
      guint keep = common_depth (prev, parts);
      for (guint d = prev_depth; d > keep; d--)
        {
          pad (s, indent, d - 1);
          g_string_append (s, "};\n");
        }
      for (guint d = keep; d < depth; d++)
        {
          pad (s, indent, d);
          g_string_append_printf (s, "%s = {\n", parts[d]);
        }
      g_autofree char *v = gs_param_format (q, p);
      /* A float literal stays one when read back by hand. */
      const char *dot = q->type == GS_PARAM_DOUBLE && !strpbrk (v, ".eEn")
                        ? ".0" : "";
      pad (s, indent, depth);
      g_string_append_printf (s, "%s = %s%s;\n", parts[depth], v, dot);
      g_strfreev (prev);
      prev = parts;
      prev_depth = depth;
    }
  for (guint d = prev_depth; d > 0; d--)
    {
      pad (s, indent, d - 1);
      g_string_append (s, "};\n");
    }
  g_strfreev (prev);
  return g_string_free (s, FALSE);
}
