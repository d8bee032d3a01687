/* gpusim bench: accuracy of the GEMM kernel library model.
 *
 *   validate-gemm [--hints] [--all] [--rows] [--floor] [--kernel-time]
 *                 [--holdout] MEASUREMENTS ARCH...
 *
 * For every linear and bmm row of MEASUREMENTS measured on each ARCH,
 * lowers the op from its shape alone (with --hints: with the measured
 * kernel name and grid), simulates it on an idle GPU, maps the GPU time
 * to an op latency and prints the mean absolute percentage error per
 * (arch, op) on the holdout half (--all: on every row), the share of rows
 * whose predicted kernel (tile and split-K) is the measured one, and the
 * time one lowering takes.  --rows prints every row.
 *
 * --kernel-time is for rows that time the library call itself (cuBLAS
 * called directly, data/public/h100-cublas): it compares the simulated GPU
 * time of the op's kernels, with no framework overhead or clock mapping,
 * on every row, per (arch, op, dtype); with --holdout on the holdout
 * half only (rows a calibration fitted on, as the H100's tensor-core rows
 * of data/measured, are then left out).
 *
 * --floor measures the scatter of the measurements themselves.  Rows of one
 * (arch, op) that ran the same measured kernel on the same shape apart
 * from the batch-like dimension (bmm: the batch B, linear: the rows M) form
 * a group; each group of at least four rows with three distinct sizes gets
 * its own line t = a x + c in that size x, fitted by least squares on the
 * relative error to all its rows, and the MAPE of those lines on the
 * group's holdout rows is printed beside the model's on the same rows (the
 * model corrects shapes by the residuals of training rows, so only holdout
 * rows compare fairly; the line has seen them all).  It is a reference,
 * not a strict bound (a line ignores wave quantization): where it is small
 * the rows of one shape agree with one another and the model's error is
 * its own; where it is large, rows that differ only in their count
 * disagree by that much, and no prediction from the shape can follow them.
 */
#include "config.h"
#include "calibrate/fit.h"
#include "calibrate/measure.h"
#include "sim/arch.h"
#include "workloads/library.h"
#include "workloads/gemm.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  double ape_sum;
  int n, same_kernel, known_kernel;
  double lower_us;         /* summed lowering time */
} Cell;

/* Does the lowered kernel match the measured one (tile and split-K)? */
static gboolean
same_choice (const GsArch *arch, const GsOp *op, const GsMeasureRow *row,
             const GArray *kernels, gboolean *known)
{
  GsGemmShape s;
  GsKernelHint hint;
  GsGemmChoice measured;
  gs_gemm_shape_from_op (op, &s);
  gs_fit_hint (row, &hint);
  *known = gs_gemm_select_hint (arch, &s, &hint, &measured);
  if (!*known || kernels->len == 0)
    return FALSE;
  const GsKernel *k = &g_array_index (kernels, GsKernel, 0);
  GsKernelHint got = { k->name, { k->grid[0], k->grid[1], k->grid[2] } };
  GsGemmChoice pred;
  if (!gs_gemm_select_hint (arch, &s, &got, &pred))
    return FALSE;
  int psplit = kernels->len > 1 ? pred.split : 1;
  return pred.cfg == measured.cfg && psplit == measured.split;
}

static gboolean
run_row (const GsArch *arch, const GsLibrary *lib, const GsMeasureRow *row,
         gboolean hints, gboolean print, gboolean kernel_time, Cell *cell,
         double *ape_out)
{
  GsOp op;
  *ape_out = NAN;
  if (!gs_fit_gemm_op (row, &op))
    return TRUE;
  GsKernelHint hint;
  gs_fit_hint (row, &hint);
  g_autoptr (GArray) kernels = g_array_new (FALSE, TRUE, sizeof (GsKernel));
  g_array_set_clear_func (kernels, (GDestroyNotify) gs_kernel_clear);
  g_autoptr (GError) error = NULL;
  gint64 t0 = g_get_monotonic_time ();
  gboolean ok = gs_library_lower (lib, &op, GS_RUNTIME_EAGER,
                                  hints ? &hint : NULL, kernels, &error);
  cell->lower_us += (double) (g_get_monotonic_time () - t0);
  GsTime gpu = 0, busy = 0;
  if (!ok || !gs_fit_run (arch, kernels, &gpu, &busy, &error))
    {
      fprintf (stderr, "validate-gemm: line %u: %s\n", row->line,
               error->message);
      gs_op_clear (&op);
      return FALSE;
    }
  double ms = kernel_time ? busy / 1e9
                          : gs_library_op_latency (lib, &op, gpu) / 1e9;
  double ape = gs_fit_ape (ms, row->latency_ms);
  gboolean known;
  gboolean same = same_choice (arch, &op, row, kernels, &known);
  cell->ape_sum += ape;
  *ape_out = ape;
  cell->n++;
  cell->known_kernel += known;
  cell->same_kernel += same;
  if (print)
    printf ("%s,%s%s%s,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT
            ",%" G_GINT64_FORMAT ",%.5f,%.5f,%.1f,%u,%u,%u,%u,%u,%u,%.6f,%s,%s\n",
            row->device, row->op, kernel_time ? "," : "",
            kernel_time ? gs_dtype_name (row->dtype) : "", row->B, row->M,
            row->N, row->K,
            row->latency_ms, ms, ape,
            g_array_index (kernels, GsKernel, 0).grid[0],
            g_array_index (kernels, GsKernel, 0).grid[1],
            g_array_index (kernels, GsKernel, 0).grid[2], row->grid[0],
            row->grid[1], row->grid[2], gpu / 1e9,
            g_array_index (kernels, GsKernel, 0).name, row->kernel);
  gs_op_clear (&op);
  return TRUE;
}

/* One row of a --floor group: the batch-like size, the measured time and
 * the model's absolute percentage error. */
typedef struct {
  double x, t, model_ape;
  gboolean holdout;        /* scored: the model's residuals never saw it */
} FloorRow;

/* The in-sample line of one group: t = a x + c minimizing the squared
 * relative error over all its rows; adds each holdout row's absolute
 * percentage error to *FLOOR and the model's to *MODEL.  FALSE when the
 * group is too small. */
static gboolean
floor_group (const GArray *g, double *floor, double *model, int *n)
{
  GHashTable *sizes = g_hash_table_new (g_double_hash, g_double_equal);
  for (guint i = 0; i < g->len; i++)
    g_hash_table_add (sizes, &g_array_index (g, FloorRow, i).x);
  guint distinct = g_hash_table_size (sizes);
  g_hash_table_unref (sizes);
  if (g->len < 4 || distinct < 3)
    return FALSE;
  double s = 0, sx = 0, sxx = 0, st = 0, sxt = 0;
  for (guint i = 0; i < g->len; i++)
    {
      const FloorRow *r = &g_array_index (g, FloorRow, i);
      double w = 1 / (r->t * r->t);
      s += w;
      sx += w * r->x;
      sxx += w * r->x * r->x;
      st += w * r->t;
      sxt += w * r->x * r->t;
    }
  double det = s * sxx - sx * sx;
  if (!(fabs (det) > 0))
    return FALSE;
  double a = (s * sxt - sx * st) / det, c = (st - a * sx) / s;
  for (guint i = 0; i < g->len; i++)
    {
      const FloorRow *r = &g_array_index (g, FloorRow, i);
      if (!r->holdout)
        continue;
      *floor += 100 * fabs (a * r->x + c - r->t) / r->t;
      *model += r->model_ape;
      (*n)++;
    }
  return TRUE;
}

/* --floor for one (arch, op): groups of ROWS (every row with a measured
 * kernel, holdout or not) and their in-sample floor, scored on the
 * holdout rows. */
static int
floor_cell (const GsArch *arch, const GsLibrary *lib, const GsMeasureSet *set,
            const char *opname)
{
  g_autoptr (GHashTable) groups = g_hash_table_new_full (
    g_str_hash, g_str_equal, g_free, (GDestroyNotify) g_array_unref);
  gboolean bmm = g_str_has_prefix (opname, "bmm");
  int status = 0, total = 0;
  for (guint r = 0; r < set->rows->len; r++)
    {
      const GsMeasureRow *row = &g_array_index (set->rows, GsMeasureRow, r);
      if (g_strcmp0 (row->device, arch->name) != 0
          || g_strcmp0 (row->op, opname) != 0 || row->kernel == NULL)
        continue;
      Cell cell = { 0 };
      FloorRow fr = { bmm ? (double) row->B : (double) row->M,
                      row->latency_ms, NAN, gs_measure_is_holdout (row) };
      if (!run_row (arch, lib, row, FALSE, FALSE, FALSE, &cell, &fr.model_ape))
        status = 1;
      if (isnan (fr.model_ape))
        continue;
      total++;
      char *key = g_strdup_printf (
        "%s|%" G_GINT64_FORMAT "|%" G_GINT64_FORMAT "|%" G_GINT64_FORMAT,
        row->kernel, bmm ? row->M : row->B, row->N, row->K);
      GArray *g = g_hash_table_lookup (groups, key);
      if (g == NULL)
        {
          g = g_array_new (FALSE, FALSE, sizeof (FloorRow));
          g_hash_table_insert (groups, key, g);
        }
      else
        g_free (key);
      g_array_append_val (g, fr);
    }
  double floor = 0, model = 0;
  int n = 0, ngroups = 0;
  GHashTableIter it;
  gpointer v;
  g_hash_table_iter_init (&it, groups);
  while (g_hash_table_iter_next (&it, NULL, &v))
    ngroups += floor_group (v, &floor, &model, &n);
  if (n > 0)
    printf ("%-16s %-7s %6d %6d %7d %9.2f %9.2f\n", arch->name, opname,
            total, n, ngroups, floor / n, model / n);
  return status;
}

int
main (int argc, char **argv)
{
  gboolean hints = FALSE, all = FALSE, rows = FALSE, floor_mode = FALSE;
  gboolean kernel_time = FALSE, holdout = FALSE;
  int a = 1;
  for (; a < argc && argv[a][0] == '-'; a++)
    {
      if (strcmp (argv[a], "--hints") == 0)
        hints = TRUE;
      else if (strcmp (argv[a], "--all") == 0)
        all = TRUE;
      else if (strcmp (argv[a], "--rows") == 0)
        rows = TRUE;
      else if (strcmp (argv[a], "--floor") == 0)
        floor_mode = TRUE;
      else if (strcmp (argv[a], "--kernel-time") == 0)
        kernel_time = all = TRUE;
      else if (strcmp (argv[a], "--holdout") == 0)
        holdout = TRUE;
      else
        break;
    }
  if (holdout)
    all = FALSE;
  if (argc - a < 2)
    {
      fprintf (stderr, "usage: validate-gemm [--hints] [--all] [--rows] "
                       "[--floor] [--kernel-time] [--holdout] MEASUREMENTS "
                       "ARCH...\n");
      return 2;
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (GsMeasureSet) set = gs_measure_load (argv[a], TRUE, &error);
  if (set == NULL)
    {
      fprintf (stderr, "validate-gemm: %s\n", error->message);
      return 3;
    }
  if (floor_mode)
    {
      printf ("# Measurement scatter: per group (same kernel and shape but the "
              "batch-like size), an in-sample line t = a x + c, scored on "
              "the group's holdout rows\n");
      printf ("%-16s %-7s %6s %6s %7s %9s %9s\n", "arch", "op", "rows",
              "scored", "groups", "line%", "model%");
    }
  else
    {
      printf ("# GEMM accuracy, %s rows, kernel %s%s\n",
              all ? "all" : "holdout",
              hints ? "from the measurement (hints)" : "predicted from shape",
              kernel_time ? ", GPU time of the kernels" : "");
      printf ("%-16s %-7s %-5s %6s %8s %9s %10s\n", "arch", "op", "dtype",
              "rows", "MAPE%", "kernel%", "lower_us");
    }
  int status = 0;
  for (int i = a + 1; i < argc; i++)
    {
      g_autoptr (GsArch) arch = gs_arch_load (argv[i], &error);
      g_autoptr (GsLibrary) lib = arch ? gs_library_new (arch, &error) : NULL;
      if (lib == NULL)
        {
          fprintf (stderr, "validate-gemm: %s\n", error->message);
          return 3;
        }
      gs_library_set_alone (lib, TRUE);   /* as the rows were measured */
      const char *ops[] = { "linear", "bmm", "bmm_nt" };
      for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
        {
          if (floor_mode)
            {
              status |= floor_cell (arch, lib, set, ops[o]);
              continue;
            }
          for (int d = 0; d < GS_DTYPE_COUNT; d++)
            {
              Cell cell = { 0 };
              double ape;
              for (guint r = 0; r < set->rows->len; r++)
                {
                  const GsMeasureRow *row = &g_array_index (set->rows,
                                                            GsMeasureRow, r);
                  if (g_strcmp0 (row->device, arch->name) != 0
                      || g_strcmp0 (row->op, ops[o]) != 0
                      || (int) row->dtype != d
                      || (!all && !gs_measure_is_holdout (row)))
                    continue;
                  if (!run_row (arch, lib, row, hints, rows, kernel_time,
                                &cell, &ape))
                    status = 1;
                }
              if (cell.n == 0)
                continue;
              printf ("%-16s %-7s %-5s %6d %8.2f %9.1f %10.2f\n", arch->name,
                      ops[o], gs_dtype_name (d), cell.n, cell.ape_sum / cell.n,
                      cell.known_kernel ? 100.0 * cell.same_kernel
                                          / cell.known_kernel : NAN,
                      cell.lower_us / cell.n);
            }
        }
    }
  return status;
}
