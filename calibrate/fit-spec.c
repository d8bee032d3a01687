/* gpusim: what a GPU without measurements inherits (see fit-spec.h). */
#include "config.h"
#include "calibrate/fit-spec.h"
#include "calibrate/fit.h"
#include "sim/error.h"
#include "workloads/library.h"
#include "workloads/mem-model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The median of V (sorted in place). */
static double
median (GArray *v)
{
  return gs_fit_median ((double *) v->data, v->len);
}

static void
add (GHashTable *h, const char *key, double x)
{
  GArray *v = g_hash_table_lookup (h, key);
  if (v == NULL)
    {
      v = g_array_new (FALSE, FALSE, sizeof (double));
      g_hash_table_insert (h, g_strdup (key), v);
    }
  g_array_append_val (v, x);
}

static GHashTable *
values_new (void)
{
  return g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                (GDestroyNotify) g_array_unref);
}

static const char *const layouts[] = { "_nn", "_nt", "_tn", "_tt" };

/* Each family key of P ("simt_128x64_tn", or without a layout when a
 * fitted layout's values were copied to the others) by its configuration's
 * key ("simt_128x64"): the median over the layouts fitted, else over the
 * keys without one.  Adds one value per configuration to ALL. */
static void
donor_effs (const GsArch *arch, const GsGemmParams *p, GHashTable *all)
{
  g_autoptr (GHashTable) fitted = values_new ();
  g_autoptr (GHashTable) copied = values_new ();
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, p->families);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      g_autofree char *key = g_strdup (k);
      gboolean layout = FALSE;
      for (guint i = 0; i < G_N_ELEMENTS (layouts); i++)
        if (g_str_has_suffix (key, layouts[i]))
          {
            key[strlen (key) - strlen (layouts[i])] = '\0';
            layout = TRUE;
          }
      if (gs_gemm_cfg_find (gs_gemm_gen (arch), GS_DTYPE_FP32, key) == NULL)
        continue;
      add (layout ? fitted : copied, key,
           ((const GsGemmFamily *) v)->eff_compute);
    }
  g_hash_table_iter_init (&it, copied);
  while (g_hash_table_iter_next (&it, &k, &v))
    if (!g_hash_table_contains (fitted, k))
      add (all, k, median (v));
  g_hash_table_iter_init (&it, fitted);
  while (g_hash_table_iter_next (&it, &k, &v))
    add (all, k, median (v));
}

/* Shapes one kernel library's donors were measured on, for a selector. */
typedef struct {
  GsGemmGen library;
  char *selector;
  GHashTable *counts;      /* "family split" -> count (GUINT in a pointer) */
  guint rows;
  double lo[GS_GEMM_N_FEATURES], hi[GS_GEMM_N_FEATURES];
} Shapes;

static void
shapes_free (gpointer p)
{
  Shapes *s = p;
  g_free (s->selector);
  g_hash_table_unref (s->counts);
  g_free (s);
}

/* Counts the measured choices of DONOR's rows of SET into SHAPES (by
 * "library selector"). */
static void
count_choices (const GsArch *donor, const GsMeasureSet *set,
               GHashTable *shapes)
{
  GsGemmGen lib = gs_gemm_library (gs_gemm_gen (donor));
  for (guint r = 0; r < set->rows->len; r++)
    {
      const GsMeasureRow *row = &g_array_index (set->rows, GsMeasureRow, r);
      GsOp op;
      if (g_strcmp0 (row->device, donor->name) != 0
          || !gs_fit_gemm_op (row, &op))
        continue;
      GsGemmShape s;
      gs_gemm_shape_from_op (&op, &s);
      gs_op_clear (&op);
      GsKernelHint hint;
      GsGemmChoice c;
      gs_fit_hint (row, &hint);
      /* One-row GEMMs run gemv, not a selected kernel. */
      if (s.rows == 1 || !gs_gemm_select_hint (donor, &s, &hint, &c))
        continue;
      g_autofree char *sel = gs_gemm_selector_key (&s);
      g_autofree char *key = g_strdup_printf ("%d %s", lib, sel);
      Shapes *sh = g_hash_table_lookup (shapes, key);
      if (sh == NULL)
        {
          sh = g_new0 (Shapes, 1);
          sh->library = lib;
          sh->selector = g_strdup (sel);
          sh->counts = g_hash_table_new_full (g_str_hash, g_str_equal,
                                              g_free, NULL);
          for (int i = 0; i < GS_GEMM_N_FEATURES; i++)
            {
              sh->lo[i] = INFINITY;
              sh->hi[i] = -INFINITY;
            }
          g_hash_table_insert (shapes, g_strdup (key), sh);
        }
      g_autofree char *fam = gs_gemm_family_key (c.cfg);
      char *choice = g_strdup_printf ("%s %d", fam, c.split);
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (sh->counts, choice));
      g_hash_table_insert (sh->counts, choice, GUINT_TO_POINTER (n + 1));
      sh->rows++;
      double f[GS_GEMM_N_FEATURES];
      gs_gemm_features (donor, &s, f);
      for (int i = 0; i < GS_GEMM_N_FEATURES; i++)
        {
          sh->lo[i] = MIN (sh->lo[i], f[i]);
          sh->hi[i] = MAX (sh->hi[i], f[i]);
        }
    }
}

/* The rule of SH, when one choice took GS_FIT_SPEC_RULE_SHARE of it. */
static void
learn_rule (GsFitSpec *spec, const Shapes *sh)
{
  g_autoptr (GPtrArray) keys = gs_sorted_keys (sh->counts);
  const char *best = NULL;
  guint most = 0;
  for (guint i = 0; i < keys->len; i++)
    {
      guint n = GPOINTER_TO_UINT (g_hash_table_lookup (sh->counts,
                                                       keys->pdata[i]));
      if (n > most)
        {
          most = n;
          best = keys->pdata[i];
        }
    }
  if (best == NULL || most < GS_FIT_SPEC_RULE_SHARE * sh->rows)
    return;
  GsGemmSpecRule r = { sh->library, g_strdup (sh->selector), NULL, 1,
                       { 0 }, { 0 } };
  const char *sp = strchr (best, ' ');
  r.cls = g_strndup (best, (gsize) (sp - best));
  r.split = atoi (sp + 1);
  memcpy (r.lo, sh->lo, sizeof r.lo);
  memcpy (r.hi, sh->hi, sizeof r.hi);
  g_array_append_val (spec->rules, r);
  g_array_append_val (spec->rule_rows, most);
  g_array_append_val (spec->rule_of, sh->rows);
}

static void
learn_clock (GsFitSpec *spec, GPtrArray *donors)
{
  spec->clock = *gs_arch_clock_rule ();
  g_autoptr (GArray) ratio = g_array_new (FALSE, FALSE, sizeof (double));
  double log_x0 = 0;
  guint slot = 0;
  for (guint i = 0; i < donors->len; i++)
    {
      const GsArch *a = donors->pdata[i];
      double r = gs_arch_clock_mhz (a) / a->clock_boost_mhz;
      if (!(a->tdp_w > 0))
        continue;
      if (a->tdp_w > spec->clock.slot_w)
        {
          g_array_append_val (ratio, r);
          continue;
        }
      double x = a->tdp_w / (a->sm_count * a->clock_boost_mhz / 1e3);
      log_x0 += log (x / pow (r, 1 / spec->clock.exponent));
      slot++;
    }
  spec->clock.ratio = ratio->len ? median (ratio) : 1.0;
  spec->clock.x0 = slot ? exp (log_x0 / slot) : 0;
}

/* The DRAM efficiency of the donors fitted from measured memory-bound
 * ops, the median per memory technology (a technology no such donor has
 * keeps the shipped rule's value). */
static void
learn_mem (GsFitSpec *spec, GPtrArray *donors)
{
  spec->mem = *gs_arch_mem_rule ();
  g_autoptr (GArray) hbm = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) other = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; i < donors->len; i++)
    {
      const GsArch *a = donors->pdata[i];
      GsMemParams p;
      if (!(a->cal.dram_eff > 0) || !gs_mem_params_load (&p, a, NULL)
          || p.rows == 0)
        continue;
      gboolean is_hbm = a->dram_type && g_str_has_prefix (a->dram_type,
                                                          "HBM");
      g_array_append_val (is_hbm ? hbm : other, a->cal.dram_eff);
    }
  if (hbm->len)
    spec->mem.hbm = median (hbm);
  if (other->len)
    spec->mem.other = median (other);
}

GsFitSpec *
gs_fit_spec_new (GPtrArray *donors, const GsMeasureSet *set, GError **error)
{
  if (donors->len == 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "no calibrated GPU to learn from");
      return NULL;
    }
  GsFitSpec *spec = g_new0 (GsFitSpec, 1);
  spec->eff = g_array_new (FALSE, FALSE, sizeof (GsGemmSpecEff));
  spec->rules = g_array_new (FALSE, FALSE, sizeof (GsGemmSpecRule));
  spec->rule_rows = g_array_new (FALSE, FALSE, sizeof (guint));
  spec->rule_of = g_array_new (FALSE, FALSE, sizeof (guint));
  learn_clock (spec, donors);
  learn_mem (spec, donors);

  g_autoptr (GHashTable) effs = values_new ();
  GArray *over[GS_GEMM_CLASS_COUNT];
  g_autoptr (GHashTable) shapes = g_hash_table_new_full (
    g_str_hash, g_str_equal, g_free, shapes_free);
  for (int c = 0; c < GS_GEMM_CLASS_COUNT; c++)
    over[c] = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; i < donors->len; i++)
    {
      const GsArch *a = donors->pdata[i];
      g_autoptr (GsGemmParams) p = gs_gemm_params_new ();
      if (!gs_gemm_params_load (p, a, error))
        {
          for (int c = 0; c < GS_GEMM_CLASS_COUNT; c++)
            g_array_unref (over[c]);
          gs_fit_spec_free (spec);
          return NULL;
        }
      donor_effs (a, p, effs);
      for (int c = 0; c < GS_GEMM_CLASS_COUNT; c++)
        g_array_append_val (over[c], p->overhead_us[c]);
      count_choices (a, set, shapes);
    }
  for (int c = 0; c < GS_GEMM_CLASS_COUNT; c++)
    {
      spec->gemm.overhead_us[c] = median (over[c]);
      g_array_unref (over[c]);
    }

  /* Every configuration's key leads with its kind's prefix. */
  g_autoptr (GPtrArray) keys = gs_sorted_keys (effs);
  for (guint i = 0; i < keys->len; i++)
    {
      const char *key = keys->pdata[i];
      const GsGemmCfg *cfg = NULL;
      for (int g = 0; cfg == NULL && g < GS_GEMM_GEN_COUNT; g++)
        cfg = gs_gemm_cfg_find ((GsGemmGen) g, GS_DTYPE_FP32, key);
      g_assert (cfg != NULL);   /* donor_effs kept only known ones */
      GsGemmSpecEff e = { cfg->kind, g_strdup (cfg->tag),
                          median (g_hash_table_lookup (effs, key)) };
      g_array_append_val (spec->eff, e);
    }
  g_autoptr (GPtrArray) sk = gs_sorted_keys (shapes);
  for (guint i = 0; i < sk->len; i++)
    learn_rule (spec, g_hash_table_lookup (shapes, sk->pdata[i]));

  spec->gemm.eff = (const GsGemmSpecEff *) spec->eff->data;
  spec->gemm.n_eff = spec->eff->len;
  spec->gemm.rules = (const GsGemmSpecRule *) spec->rules->data;
  spec->gemm.n_rules = spec->rules->len;
  return spec;
}

void
gs_fit_spec_free (GsFitSpec *s)
{
  if (s == NULL)
    return;
  for (guint i = 0; i < s->eff->len; i++)
    g_free ((char *) g_array_index (s->eff, GsGemmSpecEff, i).tag);
  for (guint i = 0; i < s->rules->len; i++)
    {
      GsGemmSpecRule *r = &g_array_index (s->rules, GsGemmSpecRule, i);
      g_free ((char *) r->selector);
      g_free ((char *) r->cls);
    }
  g_array_unref (s->eff);
  g_array_unref (s->rules);
  g_array_unref (s->rule_rows);
  g_array_unref (s->rule_of);
  g_free (s);
}

static const char *
kind_name (GsGemmKind k)
{
  switch (k)
    {
    case GS_GEMM_SIMT:
      return "GS_GEMM_SIMT";
    case GS_GEMM_XMMA_FFMA:
      return "GS_GEMM_XMMA_FFMA";
    case GS_GEMM_CUTLASS_SIMT:
      return "GS_GEMM_CUTLASS_SIMT";
    default:
      return "?";
    }
}

static const char *
gen_name (GsGemmGen g)
{
  static const char *const names[] = {
    "GS_GEMM_GEN_VOLTA", "GS_GEMM_GEN_TURING", "GS_GEMM_GEN_AMPERE",
    "GS_GEMM_GEN_ADA", "GS_GEMM_GEN_HOPPER"
  };
  return g < GS_GEMM_GEN_COUNT ? names[g] : "?";
}

static void
append_box (GString *out, const double *v)
{
  g_string_append (out, "{ ");
  for (int i = 0; i < GS_GEMM_N_FEATURES; i++)
    g_string_append_printf (out, "%s%.4f", i ? ", " : "", v[i]);
  g_string_append (out, " }");
}

char *
gs_fit_spec_format (const GsFitSpec *s)
{
  GString *out = g_string_new (NULL);
  g_string_append_printf (out, "/* sim/arch.c */\nstatic const GsClockRule "
                          "clock_rule = { %.3f, %.1f, %.2f, 1.0 / 3 };\n\n",
                          s->clock.ratio, s->clock.slot_w, s->clock.x0);
  g_string_append_printf (out, "static const GsMemRule mem_rule = { %.3f, "
                          "%.3f };\n\n", s->mem.hbm, s->mem.other);
  g_string_append (out, "/* workloads/gemm-spec.c */\n"
                        "static const GsGemmSpecEff spec_eff[] = {\n");
  for (guint i = 0; i < s->eff->len; i++)
    {
      const GsGemmSpecEff *e = &g_array_index (s->eff, GsGemmSpecEff, i);
      g_string_append_printf (out, "  { %s, \"%s\", %.4f },\n",
                              kind_name (e->kind), e->tag, e->eff_compute);
    }
  g_string_append (out, "};\n\nstatic const GsGemmSpecRule spec_rules[] = "
                        "{\n");
  for (guint i = 0; i < s->rules->len; i++)
    {
      const GsGemmSpecRule *r = &g_array_index (s->rules, GsGemmSpecRule, i);
      g_string_append_printf (out, "  /* %u of %u shapes */\n  { %s, \"%s\", "
                              "\"%s\", %d,\n    ",
                              g_array_index (s->rule_rows, guint, i),
                              g_array_index (s->rule_of, guint, i),
                              gen_name (r->library), r->selector, r->cls,
                              r->split);
      append_box (out, r->lo);
      g_string_append (out, ",\n    ");
      append_box (out, r->hi);
      g_string_append (out, " },\n");
    }
  g_string_append (out, "};\n\n/* overhead_us */\n  {");
  for (int c = 0; c < GS_GEMM_CLASS_COUNT; c++)
    g_string_append_printf (out, "%s %.2f", c ? "," : "",
                            s->gemm.overhead_us[c]);
  g_string_append (out, " }\n");
  return g_string_free (out, FALSE);
}

GsArch *
gs_fit_spec_arch (const GsArch *calibrated, const GsClockRule *rule)
{
  GsArch *a = gs_arch_copy (calibrated);
  guint n;
  const GsParam *cal = gs_calibration_params (&n);
  gs_params_clear (cal, n, a);
  gs_params_init (cal, n, a);
  a->spec_clock = FALSE;
  if (rule != NULL)
    a->cal.clock_mhz = gs_arch_spec_clock_mhz (a, rule);
  return a;
}

/* Does the first of KERNELS run the kernel and split-K ROW measured? */
static gboolean
same_choice (const GsArch *arch, const GsGemmShape *s,
             const GsMeasureRow *row, const GArray *kernels)
{
  GsKernelHint hint;
  GsGemmChoice measured, pred;
  gs_fit_hint (row, &hint);
  if (kernels->len == 0 || !gs_gemm_select_hint (arch, s, &hint, &measured))
    return FALSE;
  const GsKernel *k = &g_array_index (kernels, GsKernel, 0);
  GsKernelHint got = { k->name, { k->grid[0], k->grid[1], k->grid[2] } };
  if (!gs_gemm_select_hint (arch, s, &got, &pred))
    return FALSE;
  int split = kernels->len > 1 ? pred.split : 1;
  return pred.cfg == measured.cfg && split == measured.split;
}

/* The latency of OP on ARCH with P's parameters, ms (NAN: failed). */
static double
spec_latency (const GsArch *arch, const GsGemmParams *p, const GsOp *op,
              GArray *kernels, GError **error)
{
  GsGemmShape s;
  gs_gemm_shape_from_op (op, &s);
  g_array_set_size (kernels, 0);
  GsTime gpu;
  if (!gs_gemm_lower (arch, p, &s, NULL, kernels, error)
      || !gs_fit_run (arch, kernels, &gpu, NULL, error))
    return NAN;
  return gs_gemm_latency_us (p, gs_gemm_class_of (op), gpu / 1e6) / 1e3;
}

/* The latency of OP with the arch file's own library, ms (NAN: failed). */
static double
own_latency (const GsArch *arch, const GsLibrary *lib, const GsOp *op,
             GArray *kernels, GError **error)
{
  g_array_set_size (kernels, 0);
  GsTime gpu;
  if (!gs_library_lower (lib, op, GS_RUNTIME_EAGER, NULL, kernels, error)
      || !gs_fit_run (arch, kernels, &gpu, NULL, error))
    return NAN;
  return gs_library_op_latency (lib, op, gpu) / 1e9;
}

gboolean
gs_fit_spec_leave_out (GPtrArray *gpus, guint g, const GsMeasureSet *set,
                       const char *opname, GsFitSpecError *out,
                       GError **error)
{
  memset (out, 0, sizeof *out);
  const GsArch *cal = gpus->pdata[g];
  g_autoptr (GPtrArray) donors = g_ptr_array_new ();
  for (guint i = 0; i < gpus->len; i++)
    if (i != g)
      g_ptr_array_add (donors, gpus->pdata[i]);
  g_autoptr (GsFitSpec) spec = gs_fit_spec_new (donors, set, error);
  if (spec == NULL)
    return FALSE;
  g_autoptr (GsArch) before = gs_fit_spec_arch (cal, NULL);
  g_autoptr (GsArch) after = gs_fit_spec_arch (cal, &spec->clock);
  after->cal.dram_eff = gs_arch_spec_dram_eff (after, &spec->mem);
  g_autoptr (GsGemmParams) pb = gs_gemm_params_new ();
  g_autoptr (GsGemmParams) pa = gs_gemm_params_new ();
  gs_gemm_params_spec (pa, after, &spec->gemm);
  g_autoptr (GsLibrary) lib = gs_library_new (cal, error);
  if (lib == NULL)
    return FALSE;
  gs_library_set_alone (lib, TRUE);   /* as the rows were measured */
  out->clock_mhz[0] = gs_arch_clock_mhz (before);
  out->clock_mhz[1] = gs_arch_clock_mhz (after);
  out->clock_mhz[2] = gs_arch_clock_mhz (cal);
  g_autoptr (GArray) kernels = g_array_new (FALSE, TRUE, sizeof (GsKernel));
  g_array_set_clear_func (kernels, (GDestroyNotify) gs_kernel_clear);
  for (guint r = 0; r < set->rows->len; r++)
    {
      const GsMeasureRow *row = &g_array_index (set->rows, GsMeasureRow, r);
      GsOp op;
      if (g_strcmp0 (row->device, cal->name) != 0
          || g_strcmp0 (row->op, opname) != 0
          || !gs_measure_is_holdout (row) || !gs_fit_gemm_op (row, &op))
        continue;
      GsGemmShape s;
      gs_gemm_shape_from_op (&op, &s);
      double ms[3];
      ms[0] = spec_latency (before, pb, &op, kernels, error);
      ms[1] = isnan (ms[0]) ? NAN
                            : spec_latency (after, pa, &op, kernels, error);
      out->same += !isnan (ms[1]) && same_choice (after, &s, row, kernels);
      ms[2] = isnan (ms[1]) ? NAN : own_latency (cal, lib, &op, kernels,
                                                 error);
      gs_op_clear (&op);
      if (isnan (ms[2]))
        {
          g_prefix_error (error, "%s line %u: ", cal->name, row->line);
          return FALSE;
        }
      for (int i = 0; i < 3; i++)
        out->mape[i] += gs_fit_ape (ms[i], row->latency_ms);
      out->rows++;
    }
  for (int i = 0; out->rows > 0 && i < 3; i++)
    out->mape[i] /= out->rows;
  return TRUE;
}
