/* gpusim: fitting the memory side of a GPU's calibration (see
 * fit-memory.h). */
#include "config.h"
#include "calibrate/fit-memory.h"
#include "calibrate/fit.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <math.h>
#include <string.h>

gboolean
gs_fit_memory_op (const GsMeasureRow *row, GsOp *op)
{
  const char *bad = NULL;
  return gs_mem_op_from_shape (row->op, row->B, row->H, row->dtype, op, &bad);
}

/* ------------------------------------------------------------- transfer */

GPtrArray *
gs_fit_memory_donors (const char *exclude)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (
    (GDestroyNotify) gs_arch_free);
  char **files = NULL;
  g_auto (GStrv) names = gs_arch_list (&files);
  for (guint i = 0; names[i]; i++)
    {
      if (exclude && strcmp (names[i], exclude) == 0)
        continue;
      GsArch *a = gs_arch_load_file (files[i], NULL);
      GsMemParams p;
      if (a != NULL && gs_mem_params_load (&p, a, NULL) && p.rows > 0)
        g_ptr_array_add (out, a);
      else
        gs_arch_free (a);
    }
  g_strfreev (files);
  return out;
}

static gboolean
is_hbm (const GsArch *a)
{
  return a->dram_type && g_str_has_prefix (a->dram_type, "HBM");
}

/* L2 split in two partitions with a crossbar between them (GA100, GH100:
 * "A100 whitepaper: 40 MB L2 in two partitions"; compute capability 8.0
 * and 9.0), against one unified L2 (Volta, Turing, Ada). */
static gboolean
partitioned_l2 (const GsArch *a)
{
  return a->compute_capability == 80 || a->compute_capability >= 90;
}

/* Donors that share a property with the target, or all when none does. */
static GPtrArray *
donors_like (GPtrArray *donors, const GsArch *target,
             gboolean (*same) (const GsArch *))
{
  GPtrArray *out = g_ptr_array_new ();
  for (guint i = 0; same != NULL && i < donors->len; i++)
    if (same (donors->pdata[i]) == same (target))
      g_ptr_array_add (out, donors->pdata[i]);
  if (out->len == 0)
    for (guint i = 0; i < donors->len; i++)
      g_ptr_array_add (out, donors->pdata[i]);
  return out;
}

/* The median over GROUP of the double at byte OFFSET of GsArch (CAL true)
 * or GsMemParams (CAL false). */
static double
median_of (GPtrArray *group, GsMemParams *params, size_t offset,
           gboolean cal)
{
  g_autofree double *v = g_new (double, group->len);
  for (guint i = 0; i < group->len; i++)
    v[i] = cal ? *(double *) ((char *) group->pdata[i] + offset)
               : *(double *) ((char *) &params[i] + offset);
  return gs_fit_median (v, group->len);
}

/* Donors of the compute capability nearest the target's (the row
 * kernels' code, occupancy and latencies follow the SM generation),
 * among DONORS (those with the target's memory technology: the
 * datacenter line, HBM, descends from GA100 and GV100, the GDDR parts
 * from the consumer SMs). */
static GPtrArray *
donors_nearest_cc (GPtrArray *donors, const GsArch *target)
{
  int best = G_MAXINT;
  for (guint i = 0; i < donors->len; i++)
    best = MIN (best, ABS (((GsArch *) donors->pdata[i])->compute_capability
                           - target->compute_capability));
  GPtrArray *out = g_ptr_array_new ();
  for (guint i = 0; i < donors->len; i++)
    if (ABS (((GsArch *) donors->pdata[i])->compute_capability
             - target->compute_capability) == best)
      g_ptr_array_add (out, donors->pdata[i]);
  return out;
}

static GsMemParams *
load_params (GPtrArray *group)
{
  GsMemParams *p = g_new (GsMemParams, group->len);
  for (guint i = 0; i < group->len; i++)
    gs_mem_params_load (&p[i], group->pdata[i], NULL);
  return p;
}

static void
append_names (GString *s, const char *what, GPtrArray *group)
{
  g_string_append_printf (s, "%s from", what);
  for (guint i = 0; i < group->len; i++)
    g_string_append_printf (s, " %s", ((GsArch *) group->pdata[i])->name);
}

gboolean
gs_fit_memory_transfer (GsArch *target, GPtrArray *donors,
                        GsMemParams *params, GString *method, GError **error)
{
  if (donors == NULL || donors->len == 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: no measured memory-bound ops, and no other GPU's arch "
                   "file has a fitted calibration.library.memory to transfer "
                   "(calibrate those GPUs first)", target->name);
      return FALSE;
    }
  g_autoptr (GPtrArray) mem = donors_like (donors, target, is_hbm);
  g_autoptr (GPtrArray) l2 = donors_like (donors, target, partitioned_l2);
  g_autoptr (GPtrArray) sm = donors_nearest_cc (mem, target);
  g_autoptr (GPtrArray) all = donors_like (donors, target, NULL);
  g_autofree GsMemParams *pl = load_params (l2);
  g_autofree GsMemParams *ps = load_params (sm);
  g_autofree GsMemParams *pa = load_params (all);

#define CAL(group, field) \
  median_of (group, NULL, offsetof (GsArch, cal) \
             + offsetof (GsCalibration, field), TRUE)
#define LIB(group, arr, field) \
  median_of (group, arr, offsetof (GsMemParams, field), FALSE)

  /* DRAM efficiency follows the memory technology. */
  target->cal.dram_eff = CAL (mem, dram_eff);
  /* L2 behaviour follows the L2's organisation. */
  target->cal.l2_eff = CAL (l2, l2_eff);
  /* Latencies: the SM generation. */
  target->cal.mlp_bytes_per_warp = CAL (sm, mlp_bytes_per_warp);
  target->cal.block_fixed_ns = CAL (sm, block_fixed_ns);
  /* Per-kernel launch costs: every donor. */
  target->cal.kernel_fixed_us = CAL (all, kernel_fixed_us);
  target->cal.launch_us = CAL (all, launch_us);
  target->cal.mem_overlap = CAL (all, mem_overlap);

  /* The row kernels' fitted code parameters (efficiency, registers,
   * per-row instructions and latency) stay at the table's defaults: fitted
   * mostly on mid-size rows, they differ from GPU to GPU (each fit explains
   * the slow mid-size rows of the measurements in its own way) and predict
   * another GPU's large rows worse than the defaults do
   * (docs/kernel-library.md). */
  gs_mem_params_init (params);
  params->l2_keep = LIB (l2, pl, l2_keep);
  params->l1_keep = LIB (sm, ps, l1_keep);
  /* Host costs belong to the host and the framework, not the GPU. */
  for (int h = 0; h < GS_MEM_HOST_COUNT; h++)
    {
      params->host[h].pre_us = LIB (all, pa, host[h].pre_us);
      params->host[h].post_us = LIB (all, pa, host[h].post_us);
    }
  params->rows = 0;
#undef CAL
#undef LIB

  g_string_append (method, "memory calibration transferred (no measured "
                           "memory-bound ops): ");
  append_names (method, "DRAM efficiency", mem);
  append_names (method, ", L2", l2);
  append_names (method, ", latencies and L1", sm);
  append_names (method, ", host costs (median)", all);
  g_string_append (method, ", row kernels at the defaults");
  return TRUE;
}

/* ------------------------------------------------------------------ fit */

/* Row groups: the parameters of each kernel family touch only its rows. */
enum { G_EW = 1, G_LN = 2, G_SM = 4, G_ALL = 7 };

/* Parameters are fitted on at most this many training rows per op (row
 * kernels have more parameters), evenly spread over their sizes; the
 * final host costs and the errors use every row. */
#define SAMPLE_POINTWISE 60
#define SAMPLE_ROWS 500
#define SWEEPS 3
#define GOLDEN_STEPS 12

typedef struct {
  const GsMeasureRow *row;
  GsOp op;
  int group;
  GsMemHostOp host;
  double meas_us;
  double gpu_us;
  gboolean holdout;
  gboolean sample;
  gboolean gpu;            /* measured GPU time: no host cost in it */
  double scale;            /* residual correction of its latency (1: none) */
} FitRow;

typedef struct {
  GsArch *arch;            /* FIT's arch: its calibration is updated */
  GsMemParams p;
  GArray *rows;            /* FitRow */
  gboolean strict;         /* failures are errors (else: a bad candidate) */
  GError *error;           /* first failure when strict */
  gboolean own_only;       /* hold the arch-level scalars, fit the rest */
  gboolean host_kept;      /* no training row timed an op's latency: the
                            * host costs are the base's */
  GsMemParams base;        /* the base's parameters, when HOST_KEPT */
} MemFit;

static int
group_of (const GsOp *op)
{
  return op->kind == GS_OP_NORM ? G_LN : op->kind == GS_OP_SOFTMAX ? G_SM
                                                                  : G_EW;
}

static void
fit_row_clear (gpointer p)
{
  gs_op_clear (&((FitRow *) p)->op);
}

static int
cmp_size (gconstpointer a, gconstpointer b)
{
  const FitRow *x = a, *y = b;
  if (x->host != y->host)
    return (int) x->host - (int) y->host;
  double sx = (double) gs_op_elems (&x->op), sy = (double) gs_op_elems (&y->op);
  if (sx != sy)
    return sx < sy ? -1 : 1;
  return x->row->line < y->row->line ? -1 : x->row->line > y->row->line;
}

/* Marks an even spread of training rows per op (ROWS is sorted by op). */
static void
mark_sample (GArray *rows)
{
  guint i = 0;
  while (i < rows->len)
    {
      GsMemHostOp h = g_array_index (rows, FitRow, i).host;
      guint j = i, train = 0;
      for (; j < rows->len && g_array_index (rows, FitRow, j).host == h; j++)
        train += !g_array_index (rows, FitRow, j).holdout;
      int group = g_array_index (rows, FitRow, i).group;
      double cap = group == G_EW ? SAMPLE_POINTWISE : SAMPLE_ROWS;
      double step = MAX (1.0, (double) train / cap), next = 0;
      guint k = 0;
      for (guint r = i; r < j; r++)
        {
          FitRow *fr = &g_array_index (rows, FitRow, r);
          if (fr->holdout)
            continue;
          fr->sample = k >= next;
          if (fr->sample)
            next += step;
          k++;
        }
      i = j;
    }
}

static GArray *
collect_rows (const GsFit *fit)
{
  GArray *rows = g_array_new (FALSE, TRUE, sizeof (FitRow));
  g_array_set_clear_func (rows, fit_row_clear);
  for (guint i = 0; i < fit->rows->len; i++)
    {
      const GsMeasureRow *r = fit->rows->pdata[i];
      FitRow fr = { 0 };
      if (r->latency_ms <= 0 || !gs_fit_memory_op (r, &fr.op))
        continue;
      fr.row = r;
      fr.group = group_of (&fr.op);
      fr.host = gs_mem_host_of (&fr.op);
      fr.meas_us = r->latency_ms * 1e3;
      fr.holdout = gs_measure_is_holdout (r);
      fr.gpu = gs_fit_is_gpu_time (fit, r);
      fr.scale = 1;
      g_array_append_val (rows, fr);
    }
  g_array_sort (rows, cmp_size);
  mark_sample (rows);
  return rows;
}

static void
kernel_clear (gpointer k)
{
  gs_kernel_clear (k);
}

static gboolean
sim_row (MemFit *m, FitRow *r)
{
  g_autoptr (GArray) k = g_array_new (FALSE, TRUE, sizeof (GsKernel));
  g_array_set_clear_func (k, kernel_clear);
  GsTime t = 0, busy = 0;
  GError *e = NULL;
  if (!gs_mem_lower (m->arch, &m->p, &r->op, GS_RUNTIME_EAGER, NULL, k, &e)
      || !gs_fit_run (m->arch, k, &t, &busy, &e))
    {
      /* During the search a kernel that cannot run (parameters at the end
       * of their range) is only a very bad candidate. */
      if (m->strict && m->error == NULL)
        m->error = e;
      else
        g_clear_error (&e);
      r->gpu_us = 1e12;
      return FALSE;
    }
  /* A GPU-time row timed the kernels alone, without the launch gaps. */
  r->gpu_us = (double) (r->gpu ? busy : t) / 1e6;
  return TRUE;
}

typedef enum { ROWS_SAMPLE, ROWS_TRAIN, ROWS_HOLDOUT } Which;

static gboolean
selected (const FitRow *r, int groups, Which which)
{
  if (!(r->group & groups))
    return FALSE;
  switch (which)
    {
    case ROWS_SAMPLE: return r->sample;
    case ROWS_TRAIN: return !r->holdout;
    default: return r->holdout;
    }
}

static void
simulate (MemFit *m, int groups, Which which)
{
  for (guint i = 0; i < m->rows->len; i++)
    {
      FitRow *r = &g_array_index (m->rows, FitRow, i);
      if (selected (r, groups, which))
        sim_row (m, r);
    }
}

/* ------------------------------------------------------------- host fit */

typedef struct {
  double v, w;             /* value, weight */
} Weighted;

static int
cmp_weighted (const void *a, const void *b)
{
  double x = ((const Weighted *) a)->v, y = ((const Weighted *) b)->v;
  return x < y ? -1 : x > y;
}

typedef struct {
  MemFit *m;
  GsMemHostOp h;
  Which which;
  Weighted *buf;
  double pre;              /* out: the best pre for the last post tried */
} HostFit;

/* For a given post, the pre minimising sum |pre + max(g, post) - m| / m is
 * the weighted median of m - max(g, post) (weights 1/m).  Returns the
 * cost. */
static double
host_cost (double post, void *data)
{
  HostFit *hf = data;
  guint n = 0;
  double wsum = 0;
  for (guint i = 0; i < hf->m->rows->len; i++)
    {
      const FitRow *r = &g_array_index (hf->m->rows, FitRow, i);
      if (r->host != hf->h || r->gpu || !selected (r, G_ALL, hf->which))
        continue;
      hf->buf[n].v = r->meas_us - MAX (r->gpu_us, post);
      hf->buf[n].w = 1.0 / r->meas_us;
      wsum += hf->buf[n].w;
      n++;
    }
  if (n == 0)
    return 0;
  qsort (hf->buf, n, sizeof *hf->buf, cmp_weighted);
  double acc = 0, pre = hf->buf[n - 1].v;
  for (guint i = 0; i < n; i++)
    {
      acc += hf->buf[i].w;
      if (acc >= wsum / 2)
        {
          pre = hf->buf[i].v;
          break;
        }
    }
  hf->pre = pre = MAX (pre, 0.0);
  double cost = 0;
  for (guint i = 0; i < n; i++)
    cost += fabs (pre - hf->buf[i].v) * hf->buf[i].w;
  return cost;
}

/* Fits the host costs of H on the selected rows that timed an op's
 * latency; without one, they stay as they are. */
static void
host_fit (MemFit *m, GsMemHostOp h, Which which)
{
  g_autofree Weighted *buf = g_new (Weighted, m->rows->len + 1);
  HostFit hf = { m, h, which, buf, 0 };
  guint n = 0;
  for (guint i = 0; i < m->rows->len; i++)
    {
      const FitRow *r = &g_array_index (m->rows, FitRow, i);
      n += r->host == h && !r->gpu && selected (r, G_ALL, which);
    }
  if (n == 0)
    return;
  /* Rows that never come near the host floor cannot tell the time after
   * the launch (post) from the time before it: keep the default post
   * (the median of GPUs whose measurements reach the floor) then. */
  GsMemParams def;
  gs_mem_params_init (&def);
  double floor_us = def.host[h].pre_us + def.host[h].post_us;
  double least = G_MAXDOUBLE;
  for (guint i = 0; i < m->rows->len; i++)
    {
      const FitRow *r = &g_array_index (m->rows, FitRow, i);
      if (r->host == h && !r->gpu && selected (r, G_ALL, which))
        least = MIN (least, r->meas_us);
    }
  double post = least > 2 * floor_us ? def.host[h].post_us
                : gs_fit_golden (host_cost, &hf, 0, 100, 30, NULL);
  host_cost (post, &hf);
  m->p.host[h].pre_us = hf.pre;
  m->p.host[h].post_us = post;
}

static void
host_fit_groups (MemFit *m, int groups, Which which)
{
  gboolean seen[GS_MEM_HOST_COUNT] = { FALSE };
  for (guint i = 0; i < m->rows->len; i++)
    {
      const FitRow *r = &g_array_index (m->rows, FitRow, i);
      if ((r->group & groups) && !seen[r->host])
        {
          seen[r->host] = TRUE;
          host_fit (m, r->host, which);
        }
    }
}

/* What a row's measurement is compared with, us: the latency of the op
 * alone, or for a row that measured GPU time, the simulated GPU time. */
static double
predicted_us (const MemFit *m, const FitRow *r)
{
  const GsMemHost *h = &m->p.host[r->host];
  return r->gpu ? r->gpu_us
                : (h->pre_us + MAX (r->gpu_us, h->post_us)) * r->scale;
}

/* Mean absolute percentage error of the selected rows. */
static double
mape (MemFit *m, int groups, Which which, GsMemHostOp only)
{
  double sum = 0;
  guint n = 0;
  for (guint i = 0; i < m->rows->len; i++)
    {
      const FitRow *r = &g_array_index (m->rows, FitRow, i);
      if (!selected (r, groups, which)
          || (only != GS_MEM_HOST_COUNT && r->host != only))
        continue;
      sum += gs_fit_ape (predicted_us (m, r), r->meas_us);
      n++;
    }
  return n ? sum / n : 0;
}

/* The objective of a parameter: re-simulate the sampled rows it touches,
 * refit their host costs, their MAPE. */
static double
objective (MemFit *m, int groups)
{
  simulate (m, groups, ROWS_SAMPLE);
  host_fit_groups (m, groups, ROWS_SAMPLE);
  return mape (m, groups, ROWS_SAMPLE, GS_MEM_HOST_COUNT);
}

/* ------------------------------------------------------- the parameters */

/* One fitted parameter: a double searched by golden section over [lo, hi]
 * (on a log scale when LOG), or an int chosen from CHOICES. */
typedef struct {
  const char *name;
  double *d;
  int *i;
  double lo, hi;
  gboolean log;
  const int *choices;
  int groups;              /* rows it changes */
} Coord;

typedef struct {
  MemFit *m;
  const Coord *c;
} Probe;

static void
coord_set (const Coord *c, double x)
{
  if (c->d)
    *c->d = c->log ? exp (x) : x;
  else
    *c->i = (int) x;
}

static double
probe (double x, void *data)
{
  Probe *pr = data;
  coord_set (pr->c, x);
  return objective (pr->m, pr->c->groups);
}

/* Optimises one coordinate; keeps the old value unless a new one is
 * better. */
static void
fit_coord (MemFit *m, const Coord *c)
{
  double old = c->d ? *c->d : *c->i;
  double best_x = c->d && c->log ? log (old) : old;
  double best = objective (m, c->groups);
  Probe pr = { m, c };
  if (c->choices)
    for (const int *v = c->choices; *v; v++)
      {
        double f = probe (*v, &pr);
        if (f < best - 1e-9)
          {
            best = f;
            best_x = *v;
          }
      }
  else
    {
      double lo = c->log ? log (c->lo) : c->lo;
      double hi = c->log ? log (c->hi) : c->hi;
      double fx;
      double x = gs_fit_golden (probe, &pr, lo, hi, GOLDEN_STEPS, &fx);
      if (fx < best - 1e-9)
        {
          best = fx;
          best_x = x;
        }
    }
  coord_set (c, best_x);
  objective (m, c->groups);
}

static const int regs_choices[] = {
  24, 32, 40, 48, 56, 64, 72, 80, 96, 128, 0
};

/* The coordinates, in the order of a sweep: bandwidth, residency,
 * latency, then each row-kernel family. */
static guint
coords (MemFit *m, Coord *c)
{
  GsCalibration *cal = &m->arch->cal;
  GsMemParams *p = &m->p;
  guint n = 0;
  c[n++] = (Coord) { "dram_eff", &cal->dram_eff, NULL, 0.4, 1.0, FALSE,
                     NULL, G_ALL };
  c[n++] = (Coord) { "l2_keep", &p->l2_keep, NULL, 0.1, 1.6, FALSE, NULL,
                     G_ALL };
  c[n++] = (Coord) { "l2_eff", &cal->l2_eff, NULL, 0.2, 1.0, FALSE, NULL,
                     G_ALL };
  /* A warp keeps 12 to 32 bytes per thread in flight: the range keeps the
   * memory latency physical (GEMM kernels use it too). */
  c[n++] = (Coord) { "mlp_bytes_per_warp", &cal->mlp_bytes_per_warp, NULL,
                     384, 1024, TRUE, NULL, G_ALL };
  c[n++] = (Coord) { "block_fixed_ns", &cal->block_fixed_ns, NULL, 0, 2000,
                     FALSE, NULL, G_ALL };
  c[n++] = (Coord) { "l1_keep", &p->l1_keep, NULL, 0.1, 1.0, FALSE, NULL,
                     G_LN | G_SM };
  c[n++] = (Coord) { "row_sector_bytes", &p->row_sector_bytes, NULL, 0,
                     2048, FALSE, NULL, G_LN | G_SM };
  c[n++] = (Coord) { "regs.layer_norm", NULL, &p->regs_layer_norm, 0, 0,
                     FALSE, regs_choices, G_LN };
  c[n++] = (Coord) { "row_ops.layer_norm", &p->row_ops_layer_norm, NULL, 0,
                     4000, FALSE, NULL, G_LN };
  c[n++] = (Coord) { "block_ns.layer_norm", &p->block_ns_layer_norm, NULL,
                     0, 20000, FALSE, NULL, G_LN };
  c[n++] = (Coord) { "eff.layer_norm", &p->eff[GS_MEM_FAM_LAYER_NORM], NULL,
                     0.7, 1.0, FALSE, NULL, G_LN };
  c[n++] = (Coord) { "regs.softmax_block", NULL, &p->regs_softmax_block, 0,
                     0, FALSE, regs_choices, G_SM };
  c[n++] = (Coord) { "row_ops.softmax_block", &p->row_ops_softmax_block,
                     NULL, 0, 4000, FALSE, NULL, G_SM };
  c[n++] = (Coord) { "block_ns.softmax_block", &p->block_ns_softmax_block,
                     NULL, 0, 20000, FALSE, NULL, G_SM };
  c[n++] = (Coord) { "eff.softmax_block", &p->eff[GS_MEM_FAM_SOFTMAX_BLOCK], NULL,
                     0.7, 1.0, FALSE, NULL, G_SM };
  c[n++] = (Coord) { "regs.softmax_warp", NULL, &p->regs_softmax_warp, 0, 0,
                     FALSE, regs_choices, G_SM };
  c[n++] = (Coord) { "row_ops.softmax_warp", &p->row_ops_softmax_warp, NULL,
                     0, 2000, FALSE, NULL, G_SM };
  c[n++] = (Coord) { "block_ns.softmax_warp", &p->block_ns_softmax_warp,
                     NULL, 0, 20000, FALSE, NULL, G_SM };
  c[n++] = (Coord) { "eff.softmax_warp", &p->eff[GS_MEM_FAM_SOFTMAX_WARP], NULL,
                     0.7, 1.0, FALSE, NULL, G_SM };
  return n;
}

/* Coordinates whose rows the device has. */
static int
groups_present (const MemFit *m)
{
  int g = 0;
  for (guint i = 0; i < m->rows->len; i++)
    g |= g_array_index (m->rows, FitRow, i).group;
  return g;
}

/* Starting point: the memory scalars at their physical defaults (a fit
 * never builds on a previous one), DRAM efficiency from the largest
 * streaming rows. */
static void
fit_start (MemFit *m)
{
  GsCalibration *cal = &m->arch->cal;
  if (!m->own_only)
    {
      cal->dram_eff = 0.85;
      cal->l2_eff = 1.0;
      cal->mlp_bytes_per_warp = 512;
      cal->block_fixed_ns = 0;
    }
  gs_mem_params_init (&m->p);
  if (m->host_kept)
    memcpy (m->p.host, m->base.host, sizeof m->base.host);
  simulate (m, G_ALL, ROWS_SAMPLE);
  host_fit_groups (m, G_ALL, ROWS_SAMPLE);
}

/* Is C one of the arch-level scalars the GEMM model uses too? */
static gboolean
shared (const MemFit *m, const Coord *c)
{
  const GsCalibration *cal = &m->arch->cal;
  return c->d == &cal->dram_eff || c->d == &cal->l2_eff
         || c->d == &cal->mlp_bytes_per_warp || c->d == &cal->block_fixed_ns;
}

static void
fit_sweeps (MemFit *m)
{
  Coord c[32];
  guint n = coords (m, c);
  int have = groups_present (m);
  for (int sweep = 0; sweep < SWEEPS; sweep++)
    for (guint i = 0; i < n; i++)
      if ((c[i].groups & have) && !(m->own_only && shared (m, &c[i])))
        {
          c[i].groups &= have;
          fit_coord (m, &c[i]);
        }
}

/* ---------------------------------------------------------------- driver */

/* Host costs of the op kinds the measurements do not name: the median of
 * the measured pointwise ops, the layer norm's for norms. */
static void
kind_defaults (MemFit *m)
{
  double pre[GS_MEM_HOST_COUNT], post[GS_MEM_HOST_COUNT];
  guint n = 0;
  for (int h = GS_MEM_HOST_ADD; h <= GS_MEM_HOST_TANH; h++)
    {
      gboolean have = FALSE;
      for (guint i = 0; i < m->rows->len && !have; i++)
        have = g_array_index (m->rows, FitRow, i).host == (GsMemHostOp) h
               && !g_array_index (m->rows, FitRow, i).gpu;
      if (!have)
        continue;
      pre[n] = m->p.host[h].pre_us;
      post[n] = m->p.host[h].post_us;
      n++;
    }
  if (n > 0)
    {
      /* Reductions, gathers and copies dispatch and launch like an
       * elementwise op (see mem-params.c). */
      const GsMemHostOp like[] = { GS_MEM_HOST_ELEMENTWISE,
                                   GS_MEM_HOST_REDUCE, GS_MEM_HOST_EMBEDDING,
                                   GS_MEM_HOST_COPY };
      GsMemHost h = { gs_fit_median (pre, n), gs_fit_median (post, n) };
      for (guint i = 0; i < G_N_ELEMENTS (like); i++)
        m->p.host[like[i]] = h;
    }
  gboolean ln = FALSE;
  for (guint i = 0; i < m->rows->len && !ln; i++)
    ln = g_array_index (m->rows, FitRow, i).host == GS_MEM_HOST_LN
         && !g_array_index (m->rows, FitRow, i).gpu;
  if (ln)
    m->p.host[GS_MEM_HOST_NORM] = m->p.host[GS_MEM_HOST_LN];
}

static void
record_errors (GsFit *fit, MemFit *m)
{
  for (int h = 0; h < GS_MEM_HOST_COUNT; h++)
    {
      GsFitError e = { (char *) gs_mem_host_name (h), 0, 0, 0, 0 };
      for (guint i = 0; i < m->rows->len; i++)
        {
          const FitRow *r = &g_array_index (m->rows, FitRow, i);
          if (r->host != (GsMemHostOp) h)
            continue;
          if (r->holdout)
            e.holdout_rows++;
          else
            e.train_rows++;
        }
      if (e.train_rows + e.holdout_rows == 0)
        continue;
      e.train_mape = mape (m, G_ALL, ROWS_TRAIN, h);
      e.holdout_mape = mape (m, G_ALL, ROWS_HOLDOUT, h);
      gs_fit_add_error (fit, &e);
    }
}

/* What the fitted model still misses on each training row, as the
 * latency of the op alone (residuals.h), the rule that corrects them
 * best, each from the others (*LOO, and *NONE uncorrected), and every
 * row's correction from it: the figures recorded are those of the file as
 * written. */
static GsResiduals *
learn_residuals (MemFit *m, double *loo, double *none)
{
  GsResiduals *t = gs_mem_residuals_new ();
  for (guint i = 0; i < m->rows->len; i++)
    {
      const FitRow *r = &g_array_index (m->rows, FitRow, i);
      if (r->holdout || r->gpu)
        continue;              /* latency residuals: op latencies only */
      g_autofree char *key = gs_mem_residual_key (&r->op);
      if (key == NULL)
        continue;
      GsTime lat = gs_mem_op_latency (&m->p, &r->op,
                                      (GsTime) llround (r->gpu_us * 1e6));
      double res = log (r->meas_us * 1e6 / (double) lat);
      if (!isfinite (res) || fabs (res) > 4)
        continue;                 /* off by more than 50x: not a trend */
      double f[2];
      gs_mem_residual_features (&r->op, f);
      gs_residuals_add (t, key, f, res);
    }
  gs_residuals_choose_rule (t, loo, none);
  for (guint i = 0; i < m->rows->len; i++)
    {
      FitRow *r = &g_array_index (m->rows, FitRow, i);
      r->scale = gs_mem_residual_scale (t, &r->op);
    }
  return t;
}

static void
append_group (GsFit *fit, const GsMemParams *p, const GsResiduals *res)
{
  g_autofree char *body = gs_mem_params_to_cfg (p, "      ");
  g_string_append_printf (fit->library, "    memory = {\n%s", body);
  if (res != NULL)
    gs_residuals_format (res, fit->library, 6);
  g_string_append (fit->library, "    };\n");
}

static gboolean
fit_transfer (GsFit *fit, GError **error)
{
  g_autoptr (GPtrArray) donors = gs_fit_memory_donors (fit->arch->name);
  g_autoptr (GString) method = g_string_new (NULL);
  GsMemParams p;
  if (!gs_fit_memory_transfer (fit->arch, donors, &p, method, error))
    return FALSE;
  append_group (fit, &p, NULL);
  gs_fit_add_method (fit, method->str);
  return TRUE;
}

/* The memory fit.  OWN_ONLY holds the arch-level scalars the GEMM model
 * shares (dram_eff, l2_eff, mlp_bytes_per_warp, block_fixed_ns) and fits
 * the memory library's own parameters; RECORD finishes the fit (host
 * costs on every row) and appends the group, the errors and the method
 * line (else the sweeps only set the scalars). */
static gboolean
memory_fit (GsFit *fit, gboolean own_only, gboolean record, GError **error)
{
  MemFit m = { fit->arch, { 0 }, collect_rows (fit), FALSE, NULL, own_only,
               FALSE, { 0 } };
  guint train = 0, gpu = 0;
  for (guint i = 0; i < m.rows->len; i++)
    {
      const FitRow *r = &g_array_index (m.rows, FitRow, i);
      train += !r->holdout;
      gpu += !r->holdout && r->gpu;
    }
  m.host_kept = train > 0 && gpu == train;
  if (m.host_kept && !gs_mem_params_load (&m.base, fit->arch, error))
    {
      g_array_unref (m.rows);
      return FALSE;
    }
  if (train == 0)
    {
      g_array_unref (m.rows);
      /* Transferred once, by the first pass. */
      return own_only || fit_transfer (fit, error);
    }
  fit_start (&m);
  fit_sweeps (&m);
  if (!record)
    {
      /* The arch-level scalars are set; the rest is the second pass's. */
      g_array_unref (m.rows);
      return TRUE;
    }
  m.strict = TRUE;
  simulate (&m, G_ALL, ROWS_TRAIN);
  simulate (&m, G_ALL, ROWS_HOLDOUT);
  if (m.error != NULL)
    {
      g_propagate_prefixed_error (error, m.error, "memory fit of %s: ",
                                  fit->arch->name);
      g_array_unref (m.rows);
      return FALSE;
    }
  host_fit_groups (&m, G_ALL, ROWS_TRAIN);
  kind_defaults (&m);
  m.p.rows = (int) train;
  double loo = NAN, none = NAN;
  g_autoptr (GsResiduals) res = learn_residuals (&m, &loo, &none);
  g_autofree char *rule = gs_residuals_rule_text (res);
  append_group (fit, &m.p, res);
  record_errors (fit, &m);
  fit->rows_used += (int) train;
  g_autofree char *host = m.host_kept
    ? g_strdup_printf ("; %s%u training %s GPU time (CUPTI or a "
                       "profiler trace's kernels), compared with the "
                       "simulated GPU time: none timed an op's latency, so "
                       "the host costs are the base's and no latency "
                       "residual is learned", train == 1 ? "its " : "all ",
                       train, gs_plural (train, "row is", "rows are"))
    : gpu > 0
    ? g_strdup_printf (", host costs by weighted median on the %u training "
                       "%s that timed an op's latency (the other %u %s GPU "
                       "time, compared with the simulated GPU time)",
                       train - gpu, gs_plural (train - gpu, "row", "rows"),
                       gpu, gs_plural (gpu, "is", "are"))
    : train == 1
    ? g_strdup (", host costs from its 1 training row")
    : g_strdup_printf (", host costs by weighted median on all %u", train);
  g_autofree char *residuals = m.host_kept ? g_strdup ("")
    : g_strdup_printf ("; latency residuals of the training rows (%s: "
                       "leave-one-out %.2f%%, uncorrected %.2f%%)", rule,
                       100 * loo, 100 * none);
  g_autofree char *method = g_strdup_printf (
    "memory: coordinate descent (%d sweeps, golden section) on up to %d "
    "training rows per pointwise op and %d per row op%s%s; "
    "mem_overlap, kernel_fixed_us and launch_us kept (isolated-op "
    "latencies only fix their sum with the host costs)%s",
    SWEEPS, SAMPLE_POINTWISE, SAMPLE_ROWS, host, residuals,
    own_only ? "; the library's own parameters refitted at the final "
               "clock, the scalars the GEMM model shares held" : "");
  gs_fit_add_method (fit, method);
  if (m.host_kept)
    g_ptr_array_add (fit->host_kept,
                     g_strdup ("memory-bound host pre_us and post_us"));
  g_array_unref (m.rows);
  return TRUE;
}

gboolean
gs_fit_memory (GsFit *fit, GError **error)
{
  return memory_fit (fit, FALSE, TRUE, error);
}

gboolean
gs_fit_memory_shared (GsFit *fit, GError **error)
{
  return memory_fit (fit, FALSE, FALSE, error);
}

gboolean
gs_fit_memory_own (GsFit *fit, GError **error)
{
  return memory_fit (fit, TRUE, TRUE, error);
}
