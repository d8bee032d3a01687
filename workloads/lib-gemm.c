/* gpusim: GEMM, batched GEMM and attention in the kernel library model.
 *
 * Lowering a GEMM op: the measured kernel when a hint names one, else the
 * learned selection rules of calibration.library.gemm.select, else the
 * heuristic (gemm-select.c); one-row GEMMs (decode) go to cuBLAS's gemv,
 * batched ones to its batched gemv.  The
 * kernel's blocks are described by gemm-kernels.c, fused attention by
 * gemm-attn.c.
 *
 * calibration.library.gemm holds what the fitter learned for one GPU:
 *
 *   gemm = {
 *     overhead_us = { linear = 31.5; bmm = 14.2; attention = 14.2; };
 *     burst = { speedup = 0.12; tau_us = 900.0; };
 *     families = {
 *       simt_128x64_tn = { eff_compute = 0.93; eff_memory = 1.0;
 *                          block_fixed_ns = 850.0; };
 *       ...
 *     };
 *     select = { fp32_tn = { classes = [...]; nodes = ( ... ); }; ... };
 *     residuals = { fp32_tn = ( [f0, f1, f2, f3, r], ... ); ... };
 *   };
 *
 * overhead_us is what a measured op costs beyond the GPU time of its
 * kernels: the framework's dispatch, cuBLAS's host-side setup (cuBLASLt's
 * heuristic query for linear layers) and the launch, as seen by a timer
 * around one call.  Families not listed use the defaults below.
 */
#include "config.h"
#include "workloads/library-private.h"
#include "workloads/gemm.h"
#include "workloads/mem-model.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/gpu.h"
#include "sim/kernel.h"

#include <math.h>
#include <string.h>

/* The numbers of a GEMM residual entry (residuals.h). */
#define GEMM_RESIDUAL_LEGEND \
  "log2 batch, rows, depth, cols, log(implied / simulated GPU time)"

struct GsLibGemm {
  GsArch *arch;
  GsGemmParams *params;
};

/* Before calibration: overheads of an eager PyTorch op measured alone,
 * typical of the fitted values (linear 31-95 us, bmm 19-36 us on the six
 * measured GPUs; docs/kernel-library.md). */
static const double default_overhead_us[GS_GEMM_CLASS_COUNT] = {
  40.0, 25.0, 25.0
};

static const char *const class_names[GS_GEMM_CLASS_COUNT] = {
  "linear", "bmm", "attention"
};

const char *
gs_gemm_class_name (GsGemmClass c)
{
  g_return_val_if_fail (c < GS_GEMM_CLASS_COUNT, "?");
  return class_names[c];
}

GsGemmClass
gs_gemm_class_of (const GsOp *op)
{
  if (op->kind == GS_OP_ATTENTION)
    return GS_GEMM_CLASS_ATTENTION;
  if (op->name != NULL && strstr (op->name, "bmm") != NULL)
    return GS_GEMM_CLASS_BMM;
  return op->batch > 1 ? GS_GEMM_CLASS_BMM : GS_GEMM_CLASS_LINEAR;
}

/* -------------------------------------------------------------- params */

/* Independent FP32 instructions a warp of a GEMM inner loop keeps in
 * flight before calibration (its micro-tile's FMAs are independent, but
 * fragment loads from shared memory gate them). */
#define DEFAULT_ILP 4.0

/* Defaults of a family before calibration: the share of the pipe peak a
 * well-tuned kernel of its kind reaches on a large problem, and the
 * prologue (first stage's loads) and epilogue latency of a block. */
static GsGemmFamily
family_default (const GsGemmCfg *cfg)
{
  GsGemmFamily f = { 0.9, 1.0, 1000.0, DEFAULT_ILP };
  switch (cfg->kind)
    {
    case GS_GEMM_SIMT:
      f.eff_compute = cfg->slices > 1 ? 0.85 : 0.92;
      break;
    case GS_GEMM_XMMA_FFMA:
    case GS_GEMM_CUTLASS_SIMT:
      f.eff_compute = 0.85;
      break;
    case GS_GEMM_TENSOR:
    case GS_GEMM_WGMMA:
      f.eff_compute = 0.8;
      break;
    case GS_GEMM_FLASH_FWD:
    case GS_GEMM_FLASH_BWD:
      f.eff_compute = 0.7;
      break;
    case GS_GEMM_MEMEFF_FWD:
    case GS_GEMM_MEMEFF_BWD:
      f.eff_compute = 0.55;
      break;
    default:
      f.eff_compute = 1.0;
      f.block_fixed_ns = 500.0;
      break;
    }
  return f;
}

GsGemmParams *
gs_gemm_params_new (void)
{
  GsGemmParams *p = g_new0 (GsGemmParams, 1);
  p->families = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                       g_free);
  p->trees = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                    (GDestroyNotify) gs_gemm_tree_free);
  p->residuals = gs_residuals_new (4, GEMM_RESIDUAL_LEGEND);
  memcpy (p->overhead_us, default_overhead_us, sizeof p->overhead_us);
  p->burst_speedup = 0;
  p->burst_tau_us = 1000;
  p->l2_keep = GS_L2_KEEP_DEFAULT;
  return p;
}

void
gs_gemm_params_free (GsGemmParams *p)
{
  if (p == NULL)
    return;
  g_hash_table_unref (p->families);
  g_hash_table_unref (p->trees);
  gs_residuals_free (p->residuals);
  g_free (p);
}

GsGemmParams *
gs_gemm_params_copy (const GsGemmParams *p)
{
  GsGemmParams *c = gs_gemm_params_new ();
  gs_residuals_free (c->residuals);
  c->residuals = gs_residuals_copy (p->residuals);
  memcpy (c->overhead_us, p->overhead_us, sizeof c->overhead_us);
  c->burst_speedup = p->burst_speedup;
  c->burst_tau_us = p->burst_tau_us;
  c->l2_keep = p->l2_keep;
  c->alone = p->alone;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, p->families);
  while (g_hash_table_iter_next (&it, &k, &v))
    g_hash_table_insert (c->families, g_strdup (k),
                         g_memdup2 (v, sizeof (GsGemmFamily)));
  g_hash_table_iter_init (&it, p->trees);
  while (g_hash_table_iter_next (&it, &k, &v))
    g_hash_table_insert (c->trees, g_strdup (k), gs_gemm_tree_copy (v));
  return c;
}

static const char *const layout_names[] = { "nn", "nt", "tn", "tt" };

char *
gs_gemm_params_key (const GsGemmCfg *cfg, GsLayout layout)
{
  return g_strdup_printf ("%s_%s_%s", gs_gemm_kind_prefix (cfg->kind),
                          cfg->tag, layout_names[layout]);
}

/* The fitted parameters of CFG's tile for LAYOUT, else for any layout,
 * else for another layout: tn, then nn, then the rest.  A tile fitted on
 * one layout is a better guess for another than the defaults of its kind:
 * the weight gradients (nt) have no measured rows, and on the defaults'
 * efficiency (0.85) the H100's 32x32 tile, fitted at 0.57 on batched nn
 * rows, came out ahead of the tiles fitted higher (GPT-2's 5120 x 1280,
 * 4096-deep c_fc weight gradient: 32x32, 1.34 ms; NeuSight's per-node
 * backward times put it near 1.1). */
static const GsGemmFamily *
find_family (const GsGemmParams *p, const GsGemmCfg *cfg, GsLayout layout)
{
  static const GsLayout order[] = { GS_LAYOUT_TN, GS_LAYOUT_NN, GS_LAYOUT_NT,
                                    GS_LAYOUT_TT };
  char key[96];
  if (p == NULL)
    return NULL;
  const char *kind = gs_gemm_kind_prefix (cfg->kind);
  g_snprintf (key, sizeof key, "%s_%s_%s", kind, cfg->tag,
              layout_names[layout]);
  const GsGemmFamily *f = g_hash_table_lookup (p->families, key);
  if (f == NULL)
    {
      g_snprintf (key, sizeof key, "%s_%s", kind, cfg->tag);
      f = g_hash_table_lookup (p->families, key);
    }
  for (guint i = 0; f == NULL && i < G_N_ELEMENTS (order); i++)
    {
      if (order[i] == layout)
        continue;
      g_snprintf (key, sizeof key, "%s_%s_%s", kind, cfg->tag,
                  layout_names[order[i]]);
      f = g_hash_table_lookup (p->families, key);
    }
  return f;
}

GsGemmFamily
gs_gemm_params_family (const GsGemmParams *p, const GsGemmCfg *cfg,
                       GsLayout layout)
{
  const GsGemmFamily *f = find_family (p, cfg, layout);
  return f ? *f : family_default (cfg);
}

gboolean
gs_gemm_params_fitted (const GsGemmParams *p, const GsGemmCfg *cfg)
{
  return find_family (p, cfg, GS_LAYOUT_TN) != NULL;
}

/* A single (unbatched) nn GEMM takes the tn family's fitted parameters
 * where there are any.  The measurements' nn rows are batched products
 * (bmm); their families' efficiencies and per-block costs are fitted on
 * many small matrices, not one large one, which runs as nn.Linear's tn
 * kernels do: against NeuSight's whole-model per-op profiles of GPT-2's
 * Conv1D addmm (x @ W, an nn GEMM) the nn kernel predicts a median 0.992
 * of the measured time on the H100 with the tn families' parameters and
 * 0.963 with the nn families'; the tn parameters come nearer on five GPUs
 * of six and tie on the sixth (docs/kernel-library.md).  The mirror case,
 * a batched tn GEMM (attention's q @ k^T on a transposed view, bmm_nt),
 * takes the nn families' parameters: a batch of small products with the
 * per-block costs of the measured bmm rows, where the tn families, fitted
 * on Linear layers reducing over 512 and more, put the H100's at 2 ns
 * and predicted OPT-1.3B's 4.02 ms score GEMM at 2.73.  A batched nt
 * GEMM (the backward of a bmm: a^T @ grad, the scores' and the
 * probabilities' weight-gradient-like products) is the same batch of
 * small products and no measurement has one: it takes the nn families'
 * parameters too.  On its own (the heuristic over the defaults and other
 * layouts' fits) it ran the attention's backward GEMMs as one or two
 * 256x64 tiles a product at the tiles' full efficiency, where NeuSight's
 * per-node backward times of the two attention matmuls
 * (bench/neusight-nodes.py) were 12-55% longer for BERT-Large, GPT2-Large
 * and OPT-1.3B on the A100 80GB and H100 (BERT-Large b8 on the A100
 * 80GB: 1.31 ms against 1.87 measured; 1.79 with the nn families'
 * parameters).  The tile choice follows the same rules
 * (gs_gemm_select_votes); registers, shared memory and the operands' load
 * pattern stay the layout's own. */
GsLayout
gs_gemm_params_layout (const GsGemmShape *s)
{
  if (s->batch == 1 && s->layout == GS_LAYOUT_NN)
    return GS_LAYOUT_TN;
  if (s->batch > 1 && (s->layout == GS_LAYOUT_TN
                       || s->layout == GS_LAYOUT_NT))
    return GS_LAYOUT_NN;
  return s->layout;
}

GsGemmFamily
gs_gemm_params_family_of (const GsGemmParams *p, const GsGemmCfg *cfg,
                          const GsGemmShape *s)
{
  GsLayout l = gs_gemm_params_layout (s);
  if (p != NULL && l != s->layout)
    {
      g_autofree char *key = gs_gemm_params_key (cfg, l);
      const GsGemmFamily *f = g_hash_table_lookup (p->families, key);
      if (f != NULL)
        return *f;
    }
  return gs_gemm_params_family (p, cfg, s->layout);
}

double
gs_gemm_latency_us (const GsGemmParams *p, GsGemmClass c, double gpu_us)
{
  double tau = p->burst_tau_us > 0 ? p->burst_tau_us : 1;
  double speed = 1 + p->burst_speedup * tau / (tau + gpu_us);
  return p->overhead_us[c] + gpu_us / speed;
}

void
gs_gemm_params_set_family (GsGemmParams *p, const char *key,
                           const GsGemmFamily *f)
{
  g_hash_table_insert (p->families, g_strdup (key),
                       g_memdup2 (f, sizeof *f));
}

/* A number setting, in [lo, hi]. */
static gboolean
get_number (const config_setting_t *s, double lo, double hi, double *out,
            GError **error)
{
  int ty = config_setting_type (s);
  if (ty != CONFIG_TYPE_FLOAT && ty != CONFIG_TYPE_INT
      && ty != CONFIG_TYPE_INT64)
    return gs_cfg_fail (s, error, "%s: expected a number",
                        config_setting_name (s));
  double v = ty == CONFIG_TYPE_FLOAT ? config_setting_get_float (s)
             : (double) config_setting_get_int64 (s);
  if (!(v >= lo && v <= hi))
    return gs_cfg_fail (s, error, "%s = %g is out of range [%g, %g]",
                        config_setting_name (s), v, lo, hi);
  *out = v;
  return TRUE;
}

static gboolean
load_overheads (GsGemmParams *p, const config_setting_t *g, GError **error)
{
  for (int i = 0; i < config_setting_length (g); i++)
    {
      config_setting_t *e = config_setting_get_elem (g, i);
      int c;
      for (c = 0; c < GS_GEMM_CLASS_COUNT; c++)
        if (strcmp (config_setting_name (e), class_names[c]) == 0)
          break;
      if (c == GS_GEMM_CLASS_COUNT)
        return gs_cfg_fail (e, error, "overhead_us: unknown op class '%s' "
                            "(expected linear, bmm or attention)",
                            config_setting_name (e));
      if (!get_number (e, 0, 1e6, &p->overhead_us[c], error))
        return FALSE;
    }
  return TRUE;
}

static gboolean
load_burst (GsGemmParams *p, const config_setting_t *g, GError **error)
{
  for (int i = 0; i < config_setting_length (g); i++)
    {
      config_setting_t *e = config_setting_get_elem (g, i);
      const char *n = config_setting_name (e);
      gboolean ok;
      if (strcmp (n, "speedup") == 0)
        ok = get_number (e, 0, 10, &p->burst_speedup, error);
      else if (strcmp (n, "tau_us") == 0)
        ok = get_number (e, 1e-3, 1e9, &p->burst_tau_us, error);
      else
        return gs_cfg_fail (e, error, "burst: unknown key '%s' (expected "
                            "speedup or tau_us)", n);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

static gboolean
load_families (GsGemmParams *p, const config_setting_t *g, GError **error)
{
  for (int i = 0; i < config_setting_length (g); i++)
    {
      config_setting_t *e = config_setting_get_elem (g, i);
      if (config_setting_type (e) != CONFIG_TYPE_GROUP)
        return gs_cfg_fail (e, error, "families.%s: expected a group { "
                            "eff_compute = ...; block_fixed_ns = ...; }",
                            config_setting_name (e));
      GsGemmFamily f = { 0.9, 1.0, 0, DEFAULT_ILP };
      for (int j = 0; j < config_setting_length (e); j++)
        {
          config_setting_t *v = config_setting_get_elem (e, j);
          const char *n = config_setting_name (v);
          gboolean ok;
          if (strcmp (n, "eff_compute") == 0)
            ok = get_number (v, 1e-3, 1, &f.eff_compute, error);
          else if (strcmp (n, "eff_memory") == 0)
            ok = get_number (v, 1e-3, 1, &f.eff_memory, error);
          else if (strcmp (n, "ilp") == 0)
            ok = get_number (v, 1, 64, &f.ilp, error);
          else if (strcmp (n, "block_fixed_ns") == 0)
            ok = get_number (v, 0, 1e9, &f.block_fixed_ns, error);
          else
            return gs_cfg_fail (v, error, "unknown key '%s' (expected "
                                "eff_compute, eff_memory, ilp or "
                                "block_fixed_ns)", n);
          if (!ok)
            return FALSE;
        }
      gs_gemm_params_set_family (p, config_setting_name (e), &f);
    }
  return TRUE;
}

static gboolean
load_trees (GsGemmParams *p, const config_setting_t *g, GError **error)
{
  for (int i = 0; i < config_setting_length (g); i++)
    {
      config_setting_t *e = config_setting_get_elem (g, i);
      if (config_setting_type (e) != CONFIG_TYPE_GROUP)
        return gs_cfg_fail (e, error, "select.%s: expected a group { classes "
                            "= ...; nodes = ...; }", config_setting_name (e));
      GsGemmTree *t = gs_gemm_tree_parse (e, error);
      if (t == NULL)
        return FALSE;
      g_hash_table_insert (p->trees, g_strdup (config_setting_name (e)), t);
    }
  return TRUE;
}

void
gs_gemm_residual_features (const GsGemmShape *s, double f[4])
{
  f[0] = log2 ((double) MAX (1, s->batch));
  f[1] = log2 ((double) MAX (1, s->rows));
  f[2] = log2 ((double) MAX (1, s->depth));
  f[3] = log2 ((double) MAX (1, s->cols));
}

double
gs_gemm_residual_scale (const GsGemmParams *p, const GsGemmShape *s)
{
  g_autofree char *key = gs_gemm_selector_key (s);
  double f[4];
  gs_gemm_residual_features (s, f);
  return gs_residuals_scale (p->residuals, key, f);
}

gboolean
gs_gemm_params_load (GsGemmParams *p, const GsArch *arch, GError **error)
{
  if (arch->chain == NULL)
    return TRUE;
  GsMemParams mem;
  if (!gs_mem_params_load (&mem, arch, error))
    return FALSE;
  p->l2_keep = mem.l2_keep;
  config_setting_t *g = gs_cfg_chain_lookup (arch->chain,
                                             "calibration.library.gemm");
  /* No GEMM measurements: what the measured GPUs agree on (gemm-spec.c). */
  if (g == NULL)
    {
      gs_gemm_params_spec (p, arch, gs_gemm_spec ());
      return TRUE;
    }
  if (config_setting_type (g) != CONFIG_TYPE_GROUP)
    return gs_cfg_fail (g, error, "calibration.library.gemm: expected a "
                        "group");
  for (int i = 0; i < config_setting_length (g); i++)
    {
      config_setting_t *e = config_setting_get_elem (g, i);
      const char *n = config_setting_name (e);
      gboolean group = config_setting_type (e) == CONFIG_TYPE_GROUP;
      gboolean ok;
      if (group && strcmp (n, "overhead_us") == 0)
        ok = load_overheads (p, e, error);
      else if (group && strcmp (n, "families") == 0)
        ok = load_families (p, e, error);
      else if (group && strcmp (n, "select") == 0)
        ok = load_trees (p, e, error);
      else if (group && strcmp (n, "burst") == 0)
        ok = load_burst (p, e, error);
      else if (group && strcmp (n, "residuals") == 0)
        ok = gs_residuals_load (p->residuals, e, error);
      else
        return gs_cfg_fail (e, error, "calibration.library.gemm: unknown key "
                            "'%s' (expected the groups overhead_us, burst, "
                            "families, select, residuals)", n);
      if (!ok)
        return FALSE;
    }
  return TRUE;
}

void
gs_gemm_params_format (const GsGemmParams *p, GString *out, int indent)
{
  int in = indent + 2;
  g_string_append_printf (out, "%*sgemm = {\n", indent, "");
  g_string_append_printf (out, "%*s# op measured alone minus the GPU time "
                          "of its kernels, us\n%*soverhead_us = {", in, "",
                          in, "");
  for (int c = 0; c < GS_GEMM_CLASS_COUNT; c++)
    g_string_append_printf (out, " %s = %.2f;", class_names[c],
                            p->overhead_us[c]);
  g_string_append (out, " };\n");
  g_string_append_printf (out, "%*s# ops alone run faster than sustained: "
                          "t / (1 + speedup x tau / (tau + t))\n%*sburst = { "
                          "speedup = %.4f; tau_us = %.1f; };\n", in, "", in,
                          "", p->burst_speedup, p->burst_tau_us);
  g_string_append_printf (out, "%*s# per kernel: share of the pipe and of "
                          "the memory peak, block prologue + epilogue\n"
                          "%*sfamilies = {\n", in, "", in, "");
  g_autoptr (GPtrArray) fk = gs_sorted_keys (p->families);
  for (guint i = 0; i < fk->len; i++)
    {
      const GsGemmFamily *f = g_hash_table_lookup (p->families, fk->pdata[i]);
      g_string_append_printf (out, "%*s%s = { eff_compute = %.4f; "
                              "eff_memory = %.4f; ilp = %.2f; "
                              "block_fixed_ns = %.1f; };\n",
                              in + 2, "", (const char *) fk->pdata[i],
                              f->eff_compute, f->eff_memory, f->ilp,
                              f->block_fixed_ns);
    }
  g_string_append_printf (out, "%*s};\n", in, "");
  g_string_append_printf (out, "%*s# learned kernel choice per dtype_layout; "
                          "features: ", in, "");
  for (int i = 0; i < GS_GEMM_N_FEATURES; i++)
    g_string_append_printf (out, "%s%d %s", i ? ", " : "", i,
                            gs_gemm_feature_name (i));
  g_string_append_printf (out, "\n%*sselect = {\n", in, "");
  g_autoptr (GPtrArray) tk = gs_sorted_keys (p->trees);
  for (guint i = 0; i < tk->len; i++)
    {
      g_string_append_printf (out, "%*s%s = {\n", in + 2, "",
                              (const char *) tk->pdata[i]);
      gs_gemm_tree_format (g_hash_table_lookup (p->trees, tk->pdata[i]), out,
                           in + 4);
      g_string_append_printf (out, "%*s};\n", in + 2, "");
    }
  g_string_append_printf (out, "%*s};\n", in, "");
  gs_residuals_format (p->residuals, out, in);
  g_string_append_printf (out, "%*s};\n", indent, "");
}

/* ------------------------------------------------------------ library */

GsLibGemm *
gs_lib_gemm_new (const GsArch *arch, GError **error)
{
  GsLibGemm *lib = g_new0 (GsLibGemm, 1);
  lib->arch = gs_arch_copy (arch);
  lib->params = gs_gemm_params_new ();
  if (!gs_gemm_params_load (lib->params, arch, error))
    {
      gs_lib_gemm_free (lib);
      return NULL;
    }
  return lib;
}

void
gs_lib_gemm_free (GsLibGemm *lib)
{
  if (lib == NULL)
    return;
  gs_gemm_params_free (lib->params);
  gs_arch_free (lib->arch);
  g_free (lib);
}

void
gs_gemm_shape_from_op (const GsOp *op, GsGemmShape *s)
{
  s->rows = op->m;
  s->cols = op->n;
  s->depth = op->k;
  s->batch = MAX (1, op->batch);
  s->dtype = op->dtype;
  s->layout = op->layout;
  s->bias = op->bias;
  s->c_in = op->c_in;
}

typedef struct {
  GsGemmChoice choice;
  double t;                /* the choice's simulated time alone, ps */
  guint order;             /* the vote's tree, for ties */
} Vote;

static int
vote_cmp (const void *a, const void *b)
{
  const Vote *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* The time the kernels of choice C take on S alone on an idle GPU, ps;
 * FALSE when the simulation refuses them (a kernel past its horizon). */
static gboolean
choice_time_ps (const GsArch *arch, const GsGemmParams *p,
                const GsGemmShape *s, const GsGemmChoice *c, double *ps)
{
  g_autoptr (GArray) k = g_array_new (FALSE, TRUE, sizeof (GsKernel));
  g_array_set_clear_func (k, (GDestroyNotify) gs_kernel_clear);
  gs_gemm_build (arch, p, s, c, k);
  GsGpuOptions opt = { 0 };
  g_autoptr (GsGpu) gpu = gs_gpu_new (arch, &opt, NULL);
  if (gpu == NULL)
    return FALSE;
  for (guint i = 0; i < k->len; i++)
    if (!gs_gpu_submit (gpu, &g_array_index (k, GsKernel, i), NULL, NULL))
      return FALSE;
  if (!gs_gpu_run (gpu, NULL))
    return FALSE;
  *ps = (double) gs_gpu_end_time (gpu);
  return TRUE;
}

/* The learned choice for S.  Where the bagged trees disagree, the
 * library's choice is uncertain between theirs, and the median vote by
 * time is the one a wrong guess hurts least (NeuSight's holdout GEMMs:
 * the T4's linear layers 15.2 -> 13.5% from the shape, the A100 40GB's
 * 6.3 -> 5.9%; docs/kernel-library.md).  The time is each distinct
 * choice's simulation alone, not the heuristic's estimate: the estimate
 * misorders votes the simulation then times apart, and the median
 * jumped with them (the A100 40GB's 4 x 4096 x 4096 fp32 layer ran a
 * 128x32 split-K 7 of two votes at 123 us, 8 rows 90 us).  A choice of
 * most trees is the median whatever the times: it is not simulated.
 * Should the simulation refuse a choice, the estimates rank them all. */
static gboolean
select_median (const GsArch *arch, const GsGemmParams *p,
               const GsGemmShape *s, GsGemmChoice *out)
{
  GsGemmChoice votes[GS_GEMM_BAGS];
  guint n = gs_gemm_select_votes (arch, p, s, votes);
  if (n == 0)
    return FALSE;
  Vote v[GS_GEMM_BAGS];
  for (guint i = 0; i < n; i++)
    {
      v[i].choice = votes[i];
      v[i].order = i;
      v[i].t = -1;
    }
  gboolean simulated = TRUE;
  for (guint i = 0; i < n; i++)
    {
      if (v[i].t >= 0)
        continue;
      guint count = 0;
      for (guint j = i; j < n; j++)
        count += votes[j].cfg == votes[i].cfg
                 && votes[j].split == votes[i].split;
      if (2 * count > n)
        {
          *out = votes[i];
          return TRUE;
        }
      double t = 0;
      if (simulated && !choice_time_ps (arch, p, s, &votes[i], &t))
        simulated = FALSE;
      for (guint j = i; j < n; j++)
        if (votes[j].cfg == votes[i].cfg && votes[j].split == votes[i].split)
          v[j].t = t;
    }
  if (!simulated)
    for (guint i = 0; i < n; i++)
      v[i].t = gs_gemm_estimate_ns (arch, p, s, &votes[i]);
  qsort (v, n, sizeof *v, vote_cmp);
  *out = v[n / 2].choice;
  return TRUE;
}

/* Scales the work of KERNELS[FIRST..] by C: every count, byte and fixed
 * latency, so the time of a throughput-, memory- or latency-bound block
 * alike moves by that factor. */
static void
scale_work (GArray *kernels, guint first, double c)
{
  for (guint i = first; i < kernels->len; i++)
    {
      GsKernel *k = &g_array_index (kernels, GsKernel, i);
      GsWork *w = &k->work;
      w->fp32_ops *= c;
      w->fp64_ops *= c;
      w->int_ops *= c;
      w->sfu_ops *= c;
      w->other_ops *= c;
      for (int d = 0; d < GS_DTYPE_COUNT; d++)
        w->tensor_flops[d] *= c;
      w->ld_bytes *= c;
      w->st_bytes *= c;
      w->smem_bytes *= c;
      if (w->l2_bytes > 0)
        w->l2_bytes *= c;
      if (w->dram_bytes > 0)
        w->dram_bytes *= c;
      w->fixed_ns *= c;
      k->fixed_ns *= c;
    }
}

gboolean
gs_gemm_lower (const GsArch *arch, const GsGemmParams *p,
               const GsGemmShape *s, const GsKernelHint *hint,
               GArray *kernels, GError **error)
{
  if (s->rows <= 0 || s->cols <= 0 || s->depth <= 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "GEMM sizes must be positive (m = %" G_GINT64_FORMAT
                   ", n = %" G_GINT64_FORMAT ", k = %" G_GINT64_FORMAT ")",
                   s->rows, s->cols, s->depth);
      return FALSE;
    }
  guint n;
  if (gs_gemm_catalogue (gs_gemm_gen (arch), s->dtype, &n) == NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s has no %s GEMM kernels (tensor cores of compute "
                   "capability %d)", arch->name, gs_dtype_name (s->dtype),
                   arch->compute_capability);
      return FALSE;
    }
  GsGemmChoice c;
  if (gs_gemm_select_hint (arch, s, hint, &c))
    gs_gemm_build (arch, p, s, &c, kernels);
  else if (s->rows == 1 && (s->dtype == GS_DTYPE_FP32
                             || s->dtype == GS_DTYPE_FP16
                             || s->dtype == GS_DTYPE_BF16))
    gs_gemm_build_gemv (arch, p, s, kernels);
  else if (select_median (arch, p, s, &c))
    {
      /* Learned from the shape alone, so an op timed alone is corrected
       * by what the model missed on the training rows nearest to it (a
       * measured kernel is not: the residuals belong to the shape's
       * prediction).  Ops inside a program are not: the residuals carry
       * the conditions of the isolated-op measurements too (on the two
       * V100 whole-model measurements they moved the error from +0.4% and
       * +1.1% to -2.3% and +2.4%; docs/kernel-library.md). */
      guint first = kernels->len;
      gs_gemm_build (arch, p, s, &c, kernels);
      double scale = p->alone ? gs_gemm_residual_scale (p, s) : 1;
      if (scale != 1)
        scale_work (kernels, first, scale);
    }
  else if (s->dtype != GS_DTYPE_FP32
           && !(arch->tensor_flops_per_clk[s->dtype] > 0))
    {
      /* Every kernel of the dtype but fp32's runs on the tensor cores. */
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s has no %s tensor-core throughput (tensor.%s_flops_"
                   "per_clk = 0), which its %s GEMM kernels need: give it "
                   "a rate above 0 or use another dtype", arch->name,
                   gs_dtype_name (s->dtype), gs_dtype_name (s->dtype),
                   gs_dtype_name (s->dtype));
      return FALSE;
    }
  else
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "no %s GEMM kernel fits on %s", gs_dtype_name (s->dtype),
                   arch->name);
      return FALSE;
    }
  return TRUE;
}

static gboolean
lower_gemm (const GsLibGemm *lib, const GsOp *op, const GsKernelHint *hint,
            GArray *kernels, GError **error)
{
  GsGemmShape s;
  gs_gemm_shape_from_op (op, &s);
  if (!gs_gemm_lower (lib->arch, lib->params, &s, hint, kernels, error))
    {
      g_prefix_error (error, "%s: ", op->name ? op->name : "gemm");
      return FALSE;
    }
  return TRUE;
}

gboolean
gs_lib_gemm_lower (const GsLibGemm *lib, const GsOp *op, GsRuntime runtime,
                   const GsKernelHint *hint, GArray *kernels, GError **error)
{
  guint first = kernels->len;
  gboolean ok = op->kind == GS_OP_ATTENTION
    ? gs_gemm_build_attention (lib->arch, lib->params, op, kernels, error)
    : lower_gemm (lib, op, hint, kernels, error);
  for (guint i = first; ok && i < kernels->len; i++)
    {
      GsKernel *k = &g_array_index (kernels, GsKernel, i);
      if (op->tag != NULL && k->tag == NULL)
        k->tag = g_strdup (op->tag);
    }
  (void) runtime;
  return ok;
}

void
gs_lib_gemm_set_alone (GsLibGemm *lib, gboolean alone)
{
  lib->params->alone = alone;
}

GsTime
gs_lib_gemm_op_latency (const GsLibGemm *lib, const GsOp *op, GsTime gpu_time)
{
  GsGemmClass c = gs_gemm_class_of (op);
  double us = gs_gemm_latency_us (lib->params, c, gpu_time / 1e6);
  return (GsTime) llround (us * 1e6);
}
