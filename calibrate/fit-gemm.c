/* gpusim: fitting the GEMM kernel library model (see fit-gemm.h). */
#include "config.h"
#include "calibrate/fit-gemm.h"
#include "calibrate/fit-tree.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "workloads/gemm.h"

#include <math.h>
#include <string.h>

/* Golden-section steps per parameter (interval shrinks 0.618^n). */
#define ITERATIONS 14
/* Percentage points of error a memory efficiency below 1 must win. */
#define MEMORY_GAIN 0.1
/* A family needs this many training rows to be fitted at all, and
 * MIN_ROWS_DETAIL to fit its memory efficiency and latency hiding too
 * (fewer: efficiency and fixed cost only). */
#define MIN_ROWS_FIT 8
#define MIN_ROWS_DETAIL 20
/* A block's prologue (first stage's loads: a DRAM round trip) and
 * epilogue (its tile's stores) take a few microseconds at most. */
#define MAX_BLOCK_FIXED_NS 5000.0

/* One measured GEMM. */
typedef struct {
  const GsMeasureRow *row;
  GsGemmShape shape;
  GsGemmClass cls;
  GsGemmChoice measured;   /* cfg NULL: a kernel this model does not know */
  gboolean selected;       /* measured is the model's own choice, not the
                            * row's kernel (select_unknown) */
  char *family;            /* parameter key of the measured kernel */
  char *label;             /* its configuration, for the selection trees */
  double gpu_ms;           /* simulated GPU time with the current params */
  gboolean gpu;            /* the row measured GPU time, not op latency */
} Sample;

typedef struct {
  GsArch *arch;            /* working copy (the clock is fitted) */
  GsGemmParams *params;
  GPtrArray *train;        /* Sample *, measured kernel known */
  GPtrArray *all_train;    /* Sample *, every training row */
  GPtrArray *holdout;
  guint latency_train;     /* training samples that timed an op's latency */
  GArray *kernels;         /* scratch */
  GError *error;           /* first simulation failure */
  const char *family;      /* family being fitted */
} Ctx;

void
gs_fit_gemm_options_init (GsFitGemmOptions *opt)
{
  memset (opt, 0, sizeof *opt);
  opt->rounds = 3;
  opt->tree_depth = 10;
  opt->tree_min_leaf = 1;
  opt->fit_clock = TRUE;
}

static void
sample_free (gpointer p)
{
  Sample *s = p;
  g_free (s->family);
  g_free (s->label);
  g_free (s);
}

static void
sample_set_choice (Sample *s, const GsGemmChoice *choice)
{
  g_free (s->family);
  g_free (s->label);
  s->measured = *choice;
  s->family = gs_gemm_params_key (choice->cfg,
                                  gs_gemm_params_layout (&s->shape));
  s->label = gs_gemm_family_key (choice->cfg);
}

/* A tensor-core row whose kernel this model does not know (a newer
 * cuBLAS's nvjet_sm90 kernels, whose tiles are not the catalogue's) still
 * says how fast that dtype runs on the GPU: it is fitted on the kernel the
 * model selects for its shape (with P's current parameters), so the
 * families the model runs take the measured speed.  FP32 rows of an
 * unknown kernel stay out, as before: the SIMT families have rows of
 * their own kernels. */
static gboolean
select_unknown (const GsArch *arch, const GsGemmParams *p, Sample *s)
{
  if (s->shape.dtype == GS_DTYPE_FP32)
    return FALSE;
  GsGemmChoice choice;
  if (!gs_gemm_select (arch, p, &s->shape, &choice) || choice.cfg == NULL)
    return FALSE;
  sample_set_choice (s, &choice);
  s->selected = TRUE;
  return TRUE;
}

static Sample *
sample_new (const GsArch *arch, const GsGemmParams *p,
            const GsMeasureRow *row)
{
  GsOp op;
  if (!gs_fit_gemm_op (row, &op))
    return NULL;
  Sample *s = g_new0 (Sample, 1);
  s->row = row;
  gs_gemm_shape_from_op (&op, &s->shape);
  s->cls = gs_gemm_class_of (&op);
  gs_op_clear (&op);
  GsKernelHint hint;
  gs_fit_hint (row, &hint);
  GsGemmChoice choice;
  if (gs_gemm_select_hint (arch, &s->shape, &hint, &choice))
    sample_set_choice (s, &choice);
  else
    select_unknown (arch, p, s);
  return s;
}

/* Simulated GPU time of a sample, ms: its measured kernel (HINTED) or the
 * one the model selects from the shape. */
static double
simulate (Ctx *c, const Sample *s, gboolean hinted)
{
  g_array_set_size (c->kernels, 0);
  GError *error = NULL;
  gboolean ok;
  if (hinted)
    {
      gs_gemm_build (c->arch, c->params, &s->shape, &s->measured,
                     c->kernels);
      ok = TRUE;
    }
  else
    ok = gs_gemm_lower (c->arch, c->params, &s->shape, NULL, c->kernels,
                        &error);
  GsTime t = 0, busy = 0;
  if (ok)
    ok = gs_fit_run (c->arch, c->kernels, &t, &busy, &error);
  if (!ok)
    {
      if (c->error == NULL)
        g_propagate_prefixed_error (&c->error, error, "line %u: ",
                                    s->row->line);
      else
        g_clear_error (&error);
      return NAN;
    }
  /* A GPU-time row timed the kernels alone, without the launch gaps. */
  return (s->gpu ? busy : t) / 1e9;
}

static double
latency_ms (const Ctx *c, const Sample *s, double gpu_ms)
{
  return gs_gemm_latency_us (c->params, s->cls, gpu_ms * 1e3) / 1e3;
}

/* What a sample's measurement is compared with, ms: the latency of the op
 * alone that GPU time GPU_MS maps to, or for a row that measured GPU time,
 * GPU_MS itself. */
static double
predicted_ms (const Ctx *c, const Sample *s, double gpu_ms)
{
  return s->gpu ? gpu_ms : latency_ms (c, s, gpu_ms);
}

/* ------------------------------------------------------------ overheads */

typedef struct {
  double r;                /* measured minus GPU time, us */
  double w;                /* 1 / measured */
} Resid;

static gint
cmp_resid (gconstpointer a, gconstpointer b)
{
  double x = ((const Resid *) a)->r, y = ((const Resid *) b)->r;
  return x < y ? -1 : x > y;
}

/* The overhead minimising the mean absolute percentage error of a class:
 * the median of (measured - mapped GPU time) weighted by 1 / measured. */
static void
fit_overheads (Ctx *c)
{
  for (int cls = 0; cls < GS_GEMM_CLASS_COUNT; cls++)
    {
      g_autoptr (GArray) res = g_array_new (FALSE, FALSE, sizeof (Resid));
      double total = 0;
      for (guint i = 0; i < c->train->len; i++)
        {
          const Sample *s = c->train->pdata[i];
          if ((int) s->cls != cls || !isfinite (s->gpu_ms) || s->gpu)
            continue;              /* GPU time holds no host cost */
          double mapped = gs_gemm_latency_us (c->params, s->cls,
                                              s->gpu_ms * 1e3)
                          - c->params->overhead_us[cls];
          Resid r = { s->row->latency_ms * 1e3 - mapped,
                      1 / s->row->latency_ms };
          g_array_append_val (res, r);
          total += r.w;
        }
      if (res->len == 0)
        continue;
      g_array_sort (res, cmp_resid);
      double acc = 0;
      for (guint i = 0; i < res->len; i++)
        {
          const Resid *r = &g_array_index (res, Resid, i);
          acc += r->w;
          if (acc >= total / 2)
            {
              c->params->overhead_us[cls] = CLAMP (r->r, 0, 1e4);
              break;
            }
        }
    }
}

/* ------------------------------------------------------------- families */

/* Mean APE of the family's samples with its current parameters; updates
 * their cached GPU times. */
static double
family_error (Ctx *c)
{
  double sum = 0;
  int n = 0;
  for (guint i = 0; i < c->train->len; i++)
    {
      Sample *s = c->train->pdata[i];
      if (strcmp (s->family, c->family) != 0)
        continue;
      s->gpu_ms = simulate (c, s, TRUE);
      if (!isfinite (s->gpu_ms))
        return INFINITY;
      sum += gs_fit_ape (predicted_ms (c, s, s->gpu_ms),
                         s->row->latency_ms);
      n++;
    }
  return n ? sum / n : 0;
}

static GsGemmFamily *
family_params (Ctx *c)
{
  GsGemmFamily *f = g_hash_table_lookup (c->params->families, c->family);
  if (f == NULL)
    {
      const Sample *s = NULL;
      for (guint i = 0; i < c->train->len && s == NULL; i++)
        if (strcmp (((Sample *) c->train->pdata[i])->family, c->family) == 0)
          s = c->train->pdata[i];
      GsGemmFamily d = gs_gemm_params_family_of (c->params, s->measured.cfg,
                                                 &s->shape);
      gs_gemm_params_set_family (c->params, c->family, &d);
      f = g_hash_table_lookup (c->params->families, c->family);
    }
  return f;
}

static double
try_eff (double x, void *data)
{
  Ctx *c = data;
  family_params (c)->eff_compute = x;
  return family_error (c);
}

static double
try_mem (double x, void *data)
{
  Ctx *c = data;
  family_params (c)->eff_memory = x;
  return family_error (c);
}

static double
try_ilp (double x, void *data)
{
  Ctx *c = data;
  family_params (c)->ilp = pow (2, x);
  return family_error (c);
}

static double
try_fixed (double x, void *data)
{
  Ctx *c = data;
  family_params (c)->block_fixed_ns = x;
  return family_error (c);
}

static void
fit_family (Ctx *c, const char *family, int rows)
{
  c->family = family;
  GsGemmFamily *f = family_params (c);
  f->eff_compute = gs_fit_golden (try_eff, c, 0.05, 1.0, ITERATIONS, NULL);
  f->block_fixed_ns = gs_fit_golden (try_fixed, c, 0, MAX_BLOCK_FIXED_NS,
                                     ITERATIONS, NULL);
  if (rows < MIN_ROWS_DETAIL)
    {
      family_error (c);
      return;
    }
  /* Memory efficiency only where it pays: a family whose rows never wait
   * on memory keeps 1 rather than an arbitrary value. */
  double at_one = try_mem (1.0, c), best;
  double m = gs_fit_golden (try_mem, c, 0.05, 1.0, ITERATIONS, &best);
  f->eff_memory = best < at_one - MEMORY_GAIN ? m : 1.0;
  /* Latency hiding likewise: keep the default unless it pays. */
  double ilp0 = f->ilp, at_default = try_ilp (log2 (ilp0), c);
  double l = gs_fit_golden (try_ilp, c, 0, 4, ITERATIONS, &best);
  f->ilp = best < at_default - MEMORY_GAIN ? pow (2, l) : ilp0;
  f->eff_compute = gs_fit_golden (try_eff, c, 0.05, 1.0, ITERATIONS, NULL);
  family_error (c);        /* leave the cached times at the chosen values */
}

static gint
cmp_pstr (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

/* The families of the training samples, sorted, with their row counts. */
static GPtrArray *
families_of (GPtrArray *samples, GHashTable *counts)
{
  GPtrArray *keys = g_ptr_array_new ();
  for (guint i = 0; i < samples->len; i++)
    {
      const Sample *s = samples->pdata[i];
      gpointer n = g_hash_table_lookup (counts, s->family);
      if (n == NULL)
        g_ptr_array_add (keys, s->family);
      g_hash_table_insert (counts, s->family,
                           GINT_TO_POINTER (GPOINTER_TO_INT (n) + 1));
    }
  g_ptr_array_sort (keys, cmp_pstr);
  return keys;
}

static void
refresh_all (Ctx *c)
{
  for (guint i = 0; i < c->train->len; i++)
    {
      Sample *s = c->train->pdata[i];
      s->gpu_ms = simulate (c, s, TRUE);
    }
}

/* Mean APE of every training sample from the cached GPU times, with the
 * overheads refitted for the current burst parameters. */
static double
mapping_error (Ctx *c)
{
  fit_overheads (c);
  double sum = 0;
  for (guint i = 0; i < c->train->len; i++)
    {
      const Sample *s = c->train->pdata[i];
      sum += gs_fit_ape (predicted_ms (c, s, s->gpu_ms), s->row->latency_ms);
    }
  return c->train->len ? sum / c->train->len : 0;
}

static double
try_speedup (double x, void *data)
{
  Ctx *c = data;
  c->params->burst_speedup = x;
  return mapping_error (c);
}

static double
try_tau (double x, void *data)
{
  Ctx *c = data;
  c->params->burst_tau_us = pow (10, x);
  return mapping_error (c);
}

/* The op-latency mapping: overheads and the burst speed-up of short ops
 * (no simulation: GPU times are cached).  Rows of GPU time hold neither:
 * without a row that timed an op's latency the mapping stays as it is
 * (the base's, gs_fit_gemm). */
static void
fit_mapping (Ctx *c)
{
  if (c->latency_train == 0)
    return;
  for (int r = 0; r < 2; r++)
    {
      c->params->burst_speedup = gs_fit_golden (try_speedup, c, 0, 1,
                                                ITERATIONS, NULL);
      c->params->burst_tau_us = pow (10, gs_fit_golden (try_tau, c, 1, 5,
                                                        ITERATIONS, NULL));
    }
  mapping_error (c);
}

/* A kernel measured on too few rows to fit (its parameters would fit
 * noise and mislead every shape the selection rules send to it) borrows
 * the fitted parameters of the same configuration in another layout,
 * stored under its layout-free key ("simt_128x32"), else keeps the
 * defaults of its kind. */
static void
lend_rare (Ctx *c, GHashTable *counts)
{
  for (guint i = 0; i < c->train->len; i++)
    {
      const Sample *s = c->train->pdata[i];
      int n = GPOINTER_TO_INT (g_hash_table_lookup (counts, s->family));
      if (n >= MIN_ROWS_FIT)
        continue;
      for (int l = 0; l < 4; l++)
        {
          g_autofree char *k = gs_gemm_params_key (s->measured.cfg,
                                                   (GsLayout) l);
          const GsGemmFamily *f = g_hash_table_lookup (c->params->families,
                                                       k);
          if (f != NULL && GPOINTER_TO_INT (g_hash_table_lookup (counts, k))
                           >= MIN_ROWS_FIT)
            {
              gs_gemm_params_set_family (c->params, s->label, f);
              break;
            }
        }
    }
}

static void
descend (Ctx *c, GPtrArray *families, GHashTable *counts, int rounds)
{
  refresh_all (c);
  fit_mapping (c);
  for (int r = 0; r < rounds && c->error == NULL; r++)
    {
      for (guint i = 0; i < families->len && c->error == NULL; i++)
        {
          int n = GPOINTER_TO_INT (g_hash_table_lookup (counts,
                                                        families->pdata[i]));
          if (n >= MIN_ROWS_FIT)
            fit_family (c, families->pdata[i], n);
        }
      lend_rare (c, counts);
      refresh_all (c);
      fit_mapping (c);
    }
}

/* The training samples fitted on the model's own choice (SELECTED) or on
 * their measured kernel (not). */
static GPtrArray *
train_where (Ctx *c, gboolean selected)
{
  GPtrArray *out = g_ptr_array_new ();
  for (guint i = 0; i < c->train->len; i++)
    if (((Sample *) c->train->pdata[i])->selected == selected)
      g_ptr_array_add (out, c->train->pdata[i]);
  return out;
}

/* Moves the best family's shortfall beyond GS_FIT_GEMM_BEST_EFF into the
 * sustained clock.  Only families with at least a tenth of the rows vote,
 * so a rarely used kernel cannot set the clock. */
static gboolean
fit_clock (Ctx *c, GPtrArray *families)
{
  /* Only rows of a kernel the model knows vote: a family fitted on the
   * model's own choices (select_unknown) says how fast a newer library's
   * kernels run, not how far the clock falls below the boost. */
  g_autoptr (GPtrArray) measured = train_where (c, FALSE);
  g_autoptr (GHashTable) known = g_hash_table_new (g_str_hash, g_str_equal);
  g_ptr_array_unref (families_of (measured, known));
  int total = (int) measured->len;
  double best = 0;
  for (guint i = 0; i < families->len; i++)
    {
      int n = GPOINTER_TO_INT (g_hash_table_lookup (known,
                                                    families->pdata[i]));
      const GsGemmFamily *f = g_hash_table_lookup (c->params->families,
                                                   families->pdata[i]);
      if (f != NULL && n > 0 && n * 10 >= total)
        best = MAX (best, f->eff_compute);
    }
  if (best <= 0 || best >= GS_FIT_GEMM_BEST_EFF)
    return FALSE;
  double scale = best / GS_FIT_GEMM_BEST_EFF;
  c->arch->cal.clock_mhz = gs_arch_clock_mhz (c->arch) * scale;
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, c->params->families);
  while (g_hash_table_iter_next (&it, NULL, &v))
    {
      GsGemmFamily *f = v;
      f->eff_compute = MIN (1.0, f->eff_compute / scale);
    }
  return TRUE;
}

/* ----------------------------------------------------------------- trees */

/* The array of GROUPS (selector key -> GArray of SIZE-byte elements) that
 * shape S belongs to, made on first use. */
static GArray *
selector_group (GHashTable *groups, const GsGemmShape *s, guint size)
{
  char *key = gs_gemm_selector_key (s);
  GArray *a = g_hash_table_lookup (groups, key);
  if (a == NULL)
    {
      a = g_array_new (FALSE, TRUE, size);
      g_hash_table_insert (groups, key, a);
    }
  else
    g_free (key);
  return a;
}

/* xorshift64: the bootstrap resamples, seeded from the selector key so
 * that every run (and every hash-table order) learns the same trees. */
static guint64
next_random (guint64 *x)
{
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* Learns the trees of one selector KEY from EX: the full-data tree under
 * KEY (with the training domain), then GS_GEMM_BAGS - 1 on bootstrap
 * resamples under KEY_bagN.  A single tree with leaves of one example
 * follows every quirk of its training rows; the median of the bagged
 * trees' choices (lowering, select_median) is steadier. */
static void
learn_selector (Ctx *c, const char *key, const GArray *ex,
                const GsTreeOptions *to)
{
  double lo[GS_GEMM_N_FEATURES], hi[GS_GEMM_N_FEATURES];
  for (int f = 0; f < GS_GEMM_N_FEATURES; f++)
    {
      lo[f] = INFINITY;
      hi[f] = -INFINITY;
    }
  for (guint i = 0; i < ex->len; i++)
    for (int f = 0; f < GS_GEMM_N_FEATURES; f++)
      {
        double x = g_array_index (ex, GsTreeExample, i).f[f];
        lo[f] = MIN (lo[f], x);
        hi[f] = MAX (hi[f], x);
      }
  g_autoptr (GArray) work = g_array_sized_new (FALSE, TRUE,
                                               sizeof (GsTreeExample),
                                               ex->len);
  guint64 x = 0x9e3779b97f4a7c15ULL ^ g_str_hash (key);
  for (int b = 0; b < GS_GEMM_BAGS; b++)
    {
      g_array_set_size (work, 0);
      for (guint i = 0; i < ex->len; i++)
        g_array_append_val (work, g_array_index (
          ex, GsTreeExample, b == 0 ? i : next_random (&x) % ex->len));
      GsGemmTree *t = gs_fit_tree_learn ((GsTreeExample *) work->data,
                                         work->len, to);
      if (b == 0)
        {
          if (ex->len > 0)
            gs_gemm_tree_set_domain (t, lo, hi);
          g_hash_table_insert (c->params->trees, g_strdup (key), t);
        }
      else
        g_hash_table_insert (c->params->trees,
                             g_strdup_printf ("%s_bag%d", key, b), t);
    }
}

static void
learn_trees (Ctx *c, const GsFitGemmOptions *opt)
{
  g_autoptr (GHashTable) groups = g_hash_table_new_full (
    g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_array_unref);
  for (guint i = 0; i < c->train->len; i++)
    {
      const Sample *s = c->train->pdata[i];
      if (s->selected)
        continue;                 /* the model's own choice: nothing to learn */
      GArray *ex = selector_group (groups, &s->shape, sizeof (GsTreeExample));
      GsTreeExample e;
      gs_gemm_features (c->arch, &s->shape, e.f);
      e.label = s->label;
      e.split = s->measured.split;
      g_array_append_val (ex, e);
    }
  GsTreeOptions to = { opt->tree_depth, opt->tree_min_leaf };
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, groups);
  while (g_hash_table_iter_next (&it, &k, &v))
    learn_selector (c, k, v, &to);
}

/* ------------------------------------------------------------ residuals */

/* What the model misses on each training row predicted from its shape
 * alone (with the trees just learned): log (GPU time the measured latency
 * implies / simulated GPU time), by selector, and the rule that corrects
 * them best, each from the others (leave one out).  Lowering corrects a
 * shape by its nearest (gs_gemm_residual_scale).  One-row GEMMs are left
 * out: they run gemv, which the correction does not touch.  *LOO and
 * *NONE get the rule's leave-one-out error and the uncorrected one. */
static void
learn_residuals (Ctx *c, double *loo, double *none)
{
  /* Learned into a table of their own: the rows are simulated without
   * any correction, and only then is the table installed. */
  gs_residuals_clear (c->params->residuals);
  g_autoptr (GsResiduals) acc = gs_residuals_copy (c->params->residuals);
  for (guint i = 0; i < c->all_train->len && c->error == NULL; i++)
    {
      const Sample *s = c->all_train->pdata[i];
      /* Rows fitted on the model's own choice stay out: the rule is the
       * one the measured kernels' rows choose, as without them. */
      if (s->shape.rows <= 1 || s->selected)
        continue;
      double g = simulate (c, s, FALSE);
      if (!isfinite (g))
        continue;
      /* The GPU time the measured latency maps back to (the mapping
       * rises with it; a row of GPU time is one), against the simulated
       * one: a residual in the simulator's own currency.  Rows measured
       * below what the host costs alone, or off by more than 64x, are
       * left out. */
      double m = s->row->latency_ms;
      if (!(g > 0) || !(m > 0))
        continue;
      double lo = g / 64, hi = g * 64;
      if (predicted_ms (c, s, lo) > m || predicted_ms (c, s, hi) < m)
        continue;
      for (int it = 0; it < 60; it++)
        {
          double mid = sqrt (lo * hi);
          if (predicted_ms (c, s, mid) < m)
            lo = mid;
          else
            hi = mid;
        }
      double f[4];
      gs_gemm_residual_features (&s->shape, f);
      g_autofree char *key = gs_gemm_selector_key (&s->shape);
      gs_residuals_add (acc, key, f, log (sqrt (lo * hi) / g));
    }
  gs_residuals_choose_rule (acc, loo, none);
  gs_residuals_free (c->params->residuals);
  c->params->residuals = g_steal_pointer (&acc);
}

/* ------------------------------------------------------------ evaluation */

static void
record_errors (Ctx *c, GsFit *fit)
{
  const char *names[] = { "linear", "bmm", "bmm_nt" };
  for (guint o = 0; o < G_N_ELEMENTS (names); o++)
    {
      GsFitError e = { (char *) names[o], 0, 0, 0, 0 };
      GPtrArray *sets[] = { c->all_train, c->holdout };
      for (int h = 0; h < 2; h++)
        {
          double sum = 0;
          int n = 0;
          for (guint i = 0; i < sets[h]->len; i++)
            {
              const Sample *s = sets[h]->pdata[i];
              if (strcmp (s->row->op, names[o]) != 0)
                continue;
              double g = simulate (c, s, FALSE);
              if (!isfinite (g))
                continue;
              sum += gs_fit_ape (predicted_ms (c, s, g), s->row->latency_ms);
              n++;
            }
          if (h == 0)
            {
              e.train_rows = n;
              e.train_mape = n ? sum / n : 0;
            }
          else
            {
              e.holdout_rows = n;
              e.holdout_mape = n ? sum / n : 0;
            }
        }
      if (e.train_rows + e.holdout_rows > 0)
        gs_fit_add_error (fit, &e);
    }
}

/* Without a training row that timed an op's latency there is nothing to
 * fit the op-latency mapping (overheads, burst) on: it keeps the base's,
 * from ARCH's files. */
static gboolean
keep_base_mapping (Ctx *c, const GsArch *arch, GError **error)
{
  g_autoptr (GsGemmParams) base = gs_gemm_params_new ();
  if (!gs_gemm_params_load (base, arch, error))
    return FALSE;
  memcpy (c->params->overhead_us, base->overhead_us,
          sizeof base->overhead_us);
  c->params->burst_speedup = base->burst_speedup;
  c->params->burst_tau_us = base->burst_tau_us;
  return TRUE;
}

/* Selects again, with the parameters fitted so far, the kernel of every
 * training row fitted on the model's own choice; returns how many
 * changed. */
static guint
reselect (Ctx *c)
{
  guint changed = 0;
  for (guint i = 0; i < c->train->len; i++)
    {
      Sample *s = c->train->pdata[i];
      GsGemmChoice choice;
      if (!s->selected || !gs_gemm_select (c->arch, c->params, &s->shape,
                                           &choice))
        continue;
      if (choice.cfg != s->measured.cfg || choice.split != s->measured.split)
        {
          sample_set_choice (s, &choice);
          changed++;
        }
    }
  return changed;
}

/* The families of the rows fitted on the model's own choice, sorted (the
 * others' fits do not depend on them and are left as they are). */
static GPtrArray *
selected_families (Ctx *c)
{
  g_autoptr (GPtrArray) sel = train_where (c, TRUE);
  g_autoptr (GHashTable) counts = g_hash_table_new (g_str_hash, g_str_equal);
  return families_of (sel, counts);
}

static void
collect (Ctx *c, const GsFit *fit)
{
  c->train = g_ptr_array_new ();
  c->all_train = g_ptr_array_new_with_free_func (sample_free);
  c->holdout = g_ptr_array_new_with_free_func (sample_free);
  for (guint i = 0; i < fit->rows->len; i++)
    {
      const GsMeasureRow *r = fit->rows->pdata[i];
      if (r->latency_ms <= 0)
        continue;
      Sample *s = sample_new (c->arch, c->params, r);
      if (s == NULL)
        continue;
      s->gpu = gs_fit_is_gpu_time (fit, r);
      if (gs_measure_is_holdout (r))
        g_ptr_array_add (c->holdout, s);
      else
        {
          g_ptr_array_add (c->all_train, s);
          if (s->measured.cfg != NULL)
            {
              g_ptr_array_add (c->train, s);
              c->latency_train += !s->gpu;
            }
        }
    }
}

gboolean
gs_fit_gemm (GsFit *fit, const GsFitGemmOptions *options, GError **error)
{
  GsFitGemmOptions opt;
  if (options)
    opt = *options;
  else
    gs_fit_gemm_options_init (&opt);
  Ctx c = { 0 };
  c.arch = gs_arch_copy (fit->arch);
  c.params = gs_gemm_params_new ();
  c.params->alone = TRUE;                 /* errors of ops timed alone */
  if (opt.trees_only && !gs_gemm_params_load (c.params, c.arch, error))
    {
      gs_gemm_params_free (c.params);
      gs_arch_free (c.arch);
      return FALSE;
    }
  g_hash_table_remove_all (c.params->trees);
  c.kernels = g_array_new (FALSE, TRUE, sizeof (GsKernel));
  g_array_set_clear_func (c.kernels, (GDestroyNotify) gs_kernel_clear);
  collect (&c, fit);
  gboolean ok = TRUE;
  gboolean kept = c.train->len > 0 && c.latency_train == 0
                  && !opt.trees_only;
  if (kept && !keep_base_mapping (&c, fit->arch, error))
    ok = FALSE;
  else if (c.train->len > 0)
    {
      g_autoptr (GHashTable) counts = g_hash_table_new (g_str_hash,
                                                        g_str_equal);
      g_autoptr (GPtrArray) families = families_of (c.train, counts);
      if (!opt.trees_only)
        {
          descend (&c, families, counts, opt.rounds > 0 ? opt.rounds : 3);
          if (opt.fit_clock && c.error == NULL
              && fit_clock (&c, families))
            descend (&c, families, counts, 1);
          /* The fitted families change what the model selects for the
           * rows of unknown kernels: refit on the new choices. */
          for (int pass = 0; pass < 2 && c.error == NULL
                             && reselect (&c) > 0; pass++)
            {
              g_hash_table_remove_all (counts);
              g_ptr_array_unref (families_of (c.train, counts));
              g_autoptr (GPtrArray) chosen = selected_families (&c);
              descend (&c, chosen, counts, 1);
            }
        }
      learn_trees (&c, &opt);
      double loo = NAN, none = NAN;
      learn_residuals (&c, &loo, &none);
      if (c.error == NULL)
        record_errors (&c, fit);
      if (c.error != NULL)
        {
          g_propagate_error (error, c.error);
          c.error = NULL;
          ok = FALSE;
        }
      else
        {
          fit->arch->cal.clock_mhz = c.arch->cal.clock_mhz;
          gs_gemm_params_format (c.params, fit->library, 4);
          fit->rows_used += (int) c.all_train->len;
          g_autofree char *rule = gs_residuals_rule_text (c.params->residuals);
          guint gpu = 0;
          for (guint i = 0; i < c.all_train->len; i++)
            gpu += ((const Sample *) c.all_train->pdata[i])->gpu;
          g_autofree char *gpu_rows = c.all_train->len == 1
            ? g_strdup ("it is") : g_strdup_printf ("%u of them", gpu);
          g_autofree char *timing = gpu == 0 ? g_strdup ("")
            : g_strdup_printf ("; %s GPU time (CUPTI or a profiler "
                               "trace's kernels), compared with the "
                               "simulated GPU time%s", gpu_rows,
                               kept ? ": no training row timed an op's "
                                      "latency, so overhead_us and burst "
                                      "are the base's" : "");
          guint selected = 0;
          for (guint i = 0; i < c.train->len; i++)
            selected += ((const Sample *) c.train->pdata[i])->selected;
          g_autofree char *sel = selected == 0 ? g_strdup ("")
            : g_strdup_printf (", %u tensor-core rows of kernels it does "
                               "not know fitted on the kernel it selects",
                               selected);
          g_autofree char *m = g_strdup_printf (
            "gemm: %u training %s (%u with a known kernel%s), %d rounds of "
            "coordinate descent, selection trees depth %d, leaves >= %d, "
            "%d bagged; shape residuals of the training rows (%s: "
            "leave-one-out %.2f%%, uncorrected %.2f%%)%s",
            c.all_train->len, gs_plural (c.all_train->len, "row", "rows"),
            c.train->len - selected, sel, opt.rounds, opt.tree_depth,
            opt.tree_min_leaf, GS_GEMM_BAGS, rule, 100 * loo, 100 * none,
            timing);
          gs_fit_add_method (fit, m);
          if (kept)
            g_ptr_array_add (fit->host_kept,
                             g_strdup ("GEMM overhead_us and burst"));
        }
    }
  g_ptr_array_unref (c.train);
  g_ptr_array_unref (c.all_train);
  g_ptr_array_unref (c.holdout);
  g_array_unref (c.kernels);
  gs_gemm_params_free (c.params);
  gs_arch_free (c.arch);
  return ok;
}
