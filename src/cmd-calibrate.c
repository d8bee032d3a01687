/* gpusim calibrate: fit an arch file's calibration group from measurements.
 *
 *   gpusim calibrate --arch BASE [--device NAME] [-o FITTED.cfg] MEAS...
 *
 * Loads BASE (a name or a .cfg file) and every measurement set, keeps the
 * rows measured on the device (BASE's name unless --device says
 * otherwise), runs the GEMM fitter and then the memory-bound fitter on the
 * training half, and writes BASE's file text with its calibration group
 * replaced by the fitted one (between marker comments; every other line
 * and comment kept) to FITTED.cfg, atomically.  Prints the error per op
 * class on the holdout half.  One of MEAS may be "-", standard input.
 */
#include "config.h"
#include "src/commands.h"
#include "src/output.h"
#include "src/predict.h"
#include "calibrate/fit.h"
#include "calibrate/fit-gemm.h"
#include "calibrate/fit-memory.h"
#include "calibrate/import.h"
#include "calibrate/measure.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "workloads/mem-model.h"
#include "workloads/model.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
  char *arch;
  char *device;
  char *output;
  char *date;
  int rounds;
  gboolean no_clock;
  gboolean gemm_only;
  gboolean model_runs;
  char **files;
} CalibrateArgs;

static void
args_clear (CalibrateArgs *a)
{
  g_free (a->arch);
  g_free (a->device);
  g_free (a->output);
  g_free (a->date);
  g_strfreev (a->files);
}

static gboolean
parse_args (int *argc, char ***argv, CalibrateArgs *a, GError **error)
{
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &a->arch,
      "the arch to calibrate: a name or a .cfg file (its text is the base "
      "of the output)", "BASE" },
    { "device", 'd', 0, G_OPTION_ARG_STRING, &a->device,
      "use the rows of this device column value (default: the arch name)",
      "NAME" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
      "write the fitted arch file to FILE (default: standard output)",
      "FILE" },
    { "date", 0, 0, G_OPTION_ARG_STRING, &a->date,
      "date recorded in the group (default: SOURCE_DATE_EPOCH or today)",
      "YYYY-MM-DD" },
    { "rounds", 0, 0, G_OPTION_ARG_INT, &a->rounds,
      "coordinate-descent rounds of the GEMM fitter (default 3)", "N" },
    { "no-clock", 0, 0, G_OPTION_ARG_NONE, &a->no_clock,
      "keep the clock: fit kernel efficiencies at the boost clock", NULL },
    { "gemm-only", 0, 0, G_OPTION_ARG_NONE, &a->gemm_only,
      "run only the GEMM fitter", NULL },
    { "model-runs", 0, 0, G_OPTION_ARG_NONE, &a->model_runs,
      "the MEASUREMENTS are ops timed inside whole-model runs: fit only "
      "the model_runs group (the clock of model runs over BASE's, and "
      "their host's speed)", NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->files,
      NULL, NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "MEASUREMENTS... - fit an arch's calibration group");
  g_option_context_set_summary (ctx,
    "MEASUREMENTS are measurement CSV files (gpusim-measurements(5)).\n"
    "Fits on the training half of the device's rows, reports the error on\n"
    "the holdout half, and writes BASE with its calibration group replaced.");
  g_option_context_set_description (ctx,
    "Exit status: 0 ok, 1 nothing to fit, 2 usage, 3 bad input.\n"
    "See gpusim-calibrate(1).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!gs_cli_parse (ctx, argc, argv, error))
    return FALSE;
  if (a->arch == NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--arch is required (gpusim arch list shows the GPUs)");
      return FALSE;
    }
  if (a->files == NULL || a->files[0] == NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "expected at least one measurement file");
      return FALSE;
    }
  guint stdin_given = 0;
  for (char **f = a->files; *f; f++)
    stdin_given += strcmp (*f, "-") == 0;
  if (stdin_given > 1)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "'-' (standard input) given %u times: it can be read "
                   "once", stdin_given);
      return FALSE;
    }
  if (a->model_runs && (a->gemm_only || a->no_clock || a->rounds))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--model-runs fits the model_runs group alone, on "
                   "BASE's calibration: --%s does not apply",
                   a->gemm_only ? "gemm-only" : a->no_clock ? "no-clock"
                   : "rounds");
      return FALSE;
    }
  if (a->rounds < 0 || a->rounds > 100)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--rounds must be 0..100, not %d", a->rounds);
      return FALSE;
    }
  return TRUE;
}

/* The ISO date to record: --date, SOURCE_DATE_EPOCH (reproducible
 * builds) or today, in UTC. */
static char *
fit_date (const char *given, GError **error)
{
  if (given != NULL)
    {
      int y, m, d;
      char extra;
      if (sscanf (given, "%4d-%2d-%2d%c", &y, &m, &d, &extra) != 3
          || m < 1 || m > 12 || d < 1 || d > 31)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                       "--date: '%s' is not a date like 2025-01-31", given);
          return NULL;
        }
      return g_strdup (given);
    }
  const char *epoch = g_getenv ("SOURCE_DATE_EPOCH");
  g_autoptr (GDateTime) t = epoch && *epoch
    ? g_date_time_new_from_unix_utc (g_ascii_strtoll (epoch, NULL, 10))
    : g_date_time_new_now_utc ();
  if (t == NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "SOURCE_DATE_EPOCH: '%s' is not a time", epoch);
      return NULL;
    }
  return g_date_time_format (t, "%Y-%m-%d");
}

/* Which fitter takes ROW, if any: 'g' (GEMM), 'm' (memory-bound), 'k'
 * (the kernels' fixed duration) or 0. */
static char
fitter_of (const GsMeasureRow *row)
{
  GsOp o;
  const char *bad = NULL;
  if (row->latency_ms <= 0 || row->op == NULL)
    return 0;
  if (gs_fit_is_dispatch_row (row))
    return 'k';
  char f = 0;
  if (gs_fit_gemm_op (row, &o))
    f = 'g';
  else if (gs_mem_op_from_shape (row->op, row->B, row->H, row->dtype, &o,
                                 &bad))
    f = 'm';
  else
    return 0;
  gs_op_clear (&o);
  return f;
}

/* Loads FILES, keeps the device's rows and checks that there is something
 * to fit: every row a fitter takes has operands that fit in the GPU's
 * memory (as gpusim predict requires), and the training half has GEMM rows
 * (the GEMM fit sets the clock every other part depends on, and writes the
 * library's GEMM group; without rows it would drop BASE's). */
static gboolean
load_sets (GsFit *fit, gboolean gemm_only, char **files, GPtrArray *sets,
           GError **error)
{
  guint rows = 0, gemm_train = 0, mem_train = 0;
  for (char **f = files; *f; f++)
    {
      GsMeasureSet *set = gs_import_load (*f, GS_IMPORT_AUTO, NULL, TRUE,
                                          error);
      if (set == NULL)
        return FALSE;
      g_ptr_array_add (sets, set);
      guint first = fit->rows->len;
      rows += gs_fit_add_set (fit, set);
      for (guint i = first; i < fit->rows->len; i++)
        {
          const GsMeasureRow *r = fit->rows->pdata[i];
          char which = fitter_of (r);
          if (which == 0 || which == 'k')
            continue;
          if (!gs_predict_row_fits (fit->arch, set, r, error))
            {
              /* A row no GPU could run is a bad input file. */
              (*error)->code = GS_ERROR_INPUT;
              return FALSE;
            }
          if (!gs_measure_is_holdout (r))
            {
              gemm_train += which == 'g';
              mem_train += which == 'm';
            }
        }
    }
  if (rows == 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "no measured rows for device '%s' in the given files "
                   "(--device names another)", fit->device);
      return FALSE;
    }
  if (gemm_train == 0)
    {
      g_autofree char *which = rows == 1
        ? g_strdup_printf ("the one row for device '%s' is not", fit->device)
        : g_strdup_printf ("none of the %u rows for device '%s' is", rows,
                           fit->device);
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "nothing to fit: %s a GEMM row (linear, linear_nn, bmm, bmm_nt) of "
                   "the training half (%u memory-bound training %s%s); the "
                   "fit needs them for the sustained clock and the GEMM "
                   "library, and would otherwise drop those of %s", which,
                   mem_train, gs_plural (mem_train, "row", "rows"),
                   gemm_only ? ", not fitted under --gemm-only" : "",
                   fit->arch->name);
      return FALSE;
    }
  return TRUE;
}

/* "K of the N DEVICE rows are", "1 of the N DEVICE rows is", "the one
 * DEVICE row is". */
static char *
rows_of (guint k, guint n, const char *device)
{
  if (n == 1)
    return g_strdup_printf ("the one %s row is", device);
  return g_strdup_printf ("%u of the %u %s rows %s", k, n, device,
                          gs_plural (k, "is", "are"));
}

/* Says on standard error which of the device's rows no fitter takes
 * (microbenchmark rows, fused attention, unknown ops, rows without a
 * latency), counted per op, so that nothing is dropped unseen. */
static void
report_unfitted (const GsFit *fit)
{
  g_autoptr (GHashTable) count = g_hash_table_new (g_str_hash, g_str_equal);
  guint total = 0;
  for (guint i = 0; i < fit->rows->len; i++)
    {
      const GsMeasureRow *r = fit->rows->pdata[i];
      const char *op = r->op ? r->op : "(no op)";
      if (fitter_of (r) != 0)
        continue;
      if (r->op != NULL && r->latency_ms <= 0)
        op = "(no latency_ms)";
      g_hash_table_insert (count, (gpointer) op, GUINT_TO_POINTER (
        GPOINTER_TO_UINT (g_hash_table_lookup (count, op)) + 1));
      total++;
    }
  if (total == 0)
    return;
  g_autoptr (GList) ops = g_hash_table_get_keys (count);
  ops = g_list_sort (ops, (GCompareFunc) strcmp);
  g_autoptr (GString) s = g_string_new (NULL);
  for (GList *l = ops; l; l = l->next)
    g_string_append_printf (s, "%s%s %u", s->len ? ", " : "",
                            (const char *) l->data, GPOINTER_TO_UINT (
                              g_hash_table_lookup (count, l->data)));
  g_autofree char *which = rows_of (total, fit->rows->len, fit->device);
  fprintf (stderr, "gpusim calibrate: %s not fitted (no fitter takes "
           "them): %s\n", which, s->str);
}

static gboolean
write_output (const char *path, const char *text, GError **error)
{
  GsOutput *out = gs_output_open (path ? path : "-", error);
  if (out == NULL)
    return FALSE;
  gsize len = strlen (text);
  if (fwrite (text, 1, len, gs_output_file (out)) != len)
    {
      gs_output_abort (out);
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: write failed",
                   path ? path : "standard output");
      return FALSE;
    }
  if (!gs_output_commit (out, error))
    return FALSE;
  /* An arch file is data to share: readable as the umask allows, not
   * private like the temporary file it was written to. */
  if (path != NULL && strcmp (path, "-") != 0)
    {
      mode_t mask = umask (0);
      umask (mask);
      g_chmod (path, 0666 & ~mask);
    }
  return TRUE;
}

/* The error table, and what the rows measured: rows of GPU time (timed
 * by CUPTI, a profiler trace's kernels) are compared with the simulated
 * GPU time and fit no host cost. */
static void
print_errors (FILE *to, const GsFit *fit)
{
  fprintf (to, "%-10s %10s %10s %8s %8s\n", "op", "train_rows",
           "hold_rows", "train%", "MAPE%");
  for (guint i = 0; i < fit->errors->len; i++)
    {
      const GsFitError *e = &g_array_index (fit->errors, GsFitError, i);
      if (e->train_rows < 0)
        fprintf (to, "%-10s %10s %10s %8s %8.2f  (kept from the base)\n",
                 e->op_class, "-", "-", "-", e->holdout_mape);
      else
        fprintf (to, "%-10s %10d %10d %8.2f %8.2f\n", e->op_class,
                 e->train_rows, e->holdout_rows, e->train_mape,
                 e->holdout_mape);
    }
  guint gpu = g_hash_table_size (fit->gpu_time);
  if (gpu > 0)
    {
      g_autofree char *which = rows_of (gpu, fit->rows->len, fit->device);
      fprintf (to, "%s GPU time (timed by CUPTI, or a profiler trace's "
               "kernels of one op call): compared with the simulated GPU "
               "time, no host cost fitted from %s\n", which,
               gs_plural (gpu, "it", "them"));
    }
  if (fit->host_kept->len > 0)
    {
      g_autoptr (GString) what = g_string_new (NULL);
      for (guint i = 0; i < fit->host_kept->len; i++)
        g_string_append_printf (what, "%s%s", i ? "; " : "",
                                (const char *) fit->host_kept->pdata[i]);
      fprintf (to, "host costs kept from %s (no training row of theirs "
               "timed an op's latency): %s\n", fit->arch->name, what->str);
    }
}

/* The memory fitter needs the sustained clock and the GEMM fitter the
 * memory calibration (per-kernel and per-block fixed costs, DRAM
 * efficiency), so a quick GEMM pass sets the clock first, and the memory
 * library's own parameters are refitted at the final clock:
 * GEMM (probe) -> memory (all) -> GEMM -> memory (its own parameters). */
static gboolean
probe_clock (const GsArch *arch, const CalibrateArgs *a, GPtrArray *sets,
             const GsFitGemmOptions *gopt, GsFit *fit, GError **error)
{
  g_autoptr (GsFit) probe = gs_fit_new (arch, a->device);
  for (guint i = 0; i < sets->len; i++)
    gs_fit_add_set (probe, sets->pdata[i]);
  GsFitGemmOptions o = *gopt;
  o.rounds = 1;
  if (!gs_fit_gemm (probe, &o, error))
    return FALSE;
  fit->arch->cal.clock_mhz = probe->arch->cal.clock_mhz;
  return TRUE;
}

/* ------------------------------------------------------- --model-runs */

/* GEMM rows of model-run measurements this long or longer set the clock
 * ratio: below it an op's host cost and the library's launch overheads,
 * which a model run hides, weigh in its time. */
#define MODEL_RUN_MIN_MS 0.5
/* No-kernel nodes the host ratio needs at the least (a profile of one
 * layer has a dozen or more). */
#define MODEL_RUN_MIN_FLOOR_NODES 5
/* The single nn GEMMs of the model runs move to the heuristic when it
 * fits them this much better (its mean absolute log error over the nn.Linear
 * rules'): the rules learned on thousands of measured kernels stay
 * unless the runs' own nn ops clearly disagree. */
#define NN_HEURISTIC_GAIN 0.75

typedef struct {
  const GsArch *arch;      /* BASE, at its own sustained clock */
  double clock_mhz;        /* that clock */
  GPtrArray *rows;         /* GsMeasureRow *, GEMM rows >= MODEL_RUN_MIN_MS */
  GPtrArray *row_sets;     /* the GsMeasureSet * of each row */
  GPtrArray *row_files;    /* its file's base name (for leave-one-out) */
  const char *left_out;    /* NULL, or a file whose rows are left out */
  gboolean nn_heuristic;   /* model_runs.nn_heuristic to predict with */
  gboolean nn_only;        /* only the single nn GEMMs (linear_nn) count */
  GError *error;           /* the first prediction that failed */
} ClockFit;

/* Mean absolute log error of the rows' op latencies predicted alone with
 * BASE at RATIO times its clock (a log error weighs a GEMM twice too fast
 * as one twice too slow). */
static double
clock_loss (double ratio, void *data)
{
  ClockFit *c = data;
  g_autoptr (GsArch) a = gs_arch_copy (c->arch);
  a->cal.clock_mhz = c->clock_mhz * ratio;
  a->spec_clock = FALSE;
  a->model_nn_heuristic = c->nn_heuristic;
  g_autoptr (GsLibrary) lib = gs_library_new (a, c->error ? NULL
                                                 : &c->error);
  if (lib == NULL)
    return INFINITY;
  gs_library_set_alone (lib, TRUE);
  GsPredictor p = { a, lib, GS_RUNTIME_EAGER, FALSE, NULL };
  double sum = 0;
  guint n = 0;
  for (guint i = 0; i < c->rows->len; i++)
    {
      if (c->left_out && strcmp (c->left_out, c->row_files->pdata[i]) == 0)
        continue;
      const GsMeasureRow *r = c->rows->pdata[i];
      if (c->nn_only && strcmp (r->op, "linear_nn") != 0)
        continue;
      GsPrediction out = { 0 };
      if (!gs_predict_row (&p, c->row_sets->pdata[i], r, &out,
                           c->error ? NULL : &c->error))
        return INFINITY;
      sum += fabs (log (r->latency_ms / out.latency_ms));
      n++;
      gs_prediction_clear (&out);
    }
  return n ? sum / n : INFINITY;
}

static double
fit_ratio (ClockFit *c, double *loss)
{
  return gs_fit_golden (clock_loss, c, 0.4, 2.5, 40, loss);
}

/* gpusim calibrate --model-runs: BASE as it is, but for the ratio of the
 * SM clock in whole-model runs to its sustained clock, fitted on the GEMMs
 * of ops timed inside model runs (NeuSight's per-op model traces, imported
 * by gpusim import), and written as BASE's `model_runs` group.  The ops
 * are predicted as `gpusim predict` does (alone, BASE's library), so the
 * ratio carries only what the model runs' clock did differently. */
static gboolean
calibrate_model_runs (const CalibrateArgs *a, GsArch *arch, const char *date,
                      const char *text, GError **error)
{
  const char *device = a->device ? a->device : arch->name;
  g_autoptr (GPtrArray) sets =
    g_ptr_array_new_with_free_func ((GDestroyNotify) gs_measure_free);
  g_autoptr (GPtrArray) files = g_ptr_array_new_with_free_func (g_free);
  ClockFit c = { arch, gs_arch_clock_mhz (arch), g_ptr_array_new (),
                 g_ptr_array_new (), g_ptr_array_new (), NULL, FALSE, FALSE,
                 NULL };
  guint device_rows = 0, nn_rows = 0;
  gboolean ok = FALSE;
  g_autoptr (GArray) floor_us = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GString) src = g_string_new ("");
  g_autofree char *quoted = NULL, *group = NULL, *fitted = NULL;
  g_autofree char *host = NULL, *host_line = NULL, *nn = NULL;
  for (char **f = a->files; *f; f++)
    {
      GsMeasureSet *set = gs_import_load (*f, GS_IMPORT_AUTO, NULL, TRUE,
                                          error);
      if (set == NULL)
        goto out;
      g_ptr_array_add (sets, set);
      char *base = g_path_get_basename (*f);
      g_ptr_array_add (files, base);
      for (guint i = 0; i < set->rows->len; i++)
        {
          const GsMeasureRow *r = &g_array_index (set->rows, GsMeasureRow, i);
          GsOp o;
          if (r->device == NULL || strcmp (r->device, device) != 0)
            continue;
          device_rows++;
          if ((r->op == NULL || *r->op == '\0') && r->latency_ms > 0
              && gs_model_host_floor_node (
                   gs_measure_get_cell (set, r, "fx_op"),
                   gs_measure_get_cell (set, r, "fx_target")))
            {
              double us = r->latency_ms * 1e3;
              g_array_append_val (floor_us, us);
            }
          if (r->latency_ms < MODEL_RUN_MIN_MS || !gs_fit_gemm_op (r, &o))
            continue;
          gs_op_clear (&o);
          if (!gs_predict_row_fits (arch, set, r, error))
            {
              (*error)->code = GS_ERROR_INPUT;
              goto out;
            }
          if (strcmp (r->op, "linear_nn") == 0)
            nn_rows++;
          g_ptr_array_add (c.rows, (gpointer) r);
          g_ptr_array_add (c.row_sets, set);
          g_ptr_array_add (c.row_files, base);
        }
    }
  if (c.rows->len == 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "nothing to fit: none of the %u rows for device '%s' is a "
                   "GEMM (linear, linear_nn, bmm, bmm_nt) of %g ms or more", device_rows,
                   device, MODEL_RUN_MIN_MS);
      goto out;
    }
  double before = clock_loss (1.0, &c), after;
  double ratio = fit_ratio (&c, &after);
  /* Which rules pick a single nn GEMM's kernel: the nn.Linear rules
   * (what the ops measured alone, all x @ W^T, taught) or the heuristic,
   * whichever fits the runs' GEMMs better at its own fitted ratio. */
  double tn_nn = INFINITY, h_nn = INFINITY;
  if (nn_rows > 0 && c.error == NULL)
    {
      double h_after;
      c.nn_only = TRUE;
      tn_nn = clock_loss (ratio, &c);
      c.nn_only = FALSE;
      c.nn_heuristic = TRUE;
      double h_ratio = fit_ratio (&c, &h_after);
      c.nn_only = TRUE;
      h_nn = clock_loss (h_ratio, &c);
      c.nn_only = FALSE;
      c.nn_heuristic = h_nn < NN_HEURISTIC_GAIN * tn_nn;
      if (c.nn_heuristic)
        {
          before = clock_loss (1.0, &c);
          ratio = h_ratio;
          after = h_after;
        }
    }
  if (c.error != NULL)
    {
      g_propagate_error (error, c.error);
      c.error = NULL;
      goto out;
    }
  /* How much the ratio rests on any one file: refitted without each. */
  double lo = ratio, hi = ratio;
  for (guint i = 0; files->len > 1 && i < files->len; i++)
    {
      c.left_out = files->pdata[i];
      double r = fit_ratio (&c, NULL);
      lo = MIN (lo, r);
      hi = MAX (hi, r);
    }
  c.left_out = NULL;
  for (guint i = 0; i < files->len; i++)
    g_string_append_printf (src, "%s%s", i ? ", " : "",
                            (const char *) files->pdata[i]);
  g_string_append_printf (src, " (device %s)", device);
  quoted = g_strescape (src->str, NULL);
  /* The host: the median no-kernel node over the reference host's. */
  double median = 0, host_ratio = 0;
  if (floor_us->len >= MODEL_RUN_MIN_FLOOR_NODES)
    {
      median = gs_fit_median ((double *) floor_us->data, floor_us->len);
      host_ratio = median / GS_MODEL_HOST_FLOOR_US;
      host = g_strdup_printf (
        "# The host: its no-kernel nodes (size, view, permute, transpose,\n"
        "# dim) take %.2f us at the median of %u, %.2f on the host the\n"
        "# runtimes' costs describe.\n", median, floor_us->len,
        GS_MODEL_HOST_FLOOR_US);
      host_line = g_strdup_printf ("  host_ratio = %.4f;\n", host_ratio);
    }
  if (nn_rows > 0)
    nn = g_strdup_printf (
      "# Single nn GEMMs (x @ W, %u of the rows) take the kernels of the\n"
      "# %s: mean absolute log error %.3f with the heuristic, %.3f\n"
      "# with the nn.Linear rules, each at its own fitted ratio.\n",
      nn_rows, c.nn_heuristic ? "heuristic" : "nn.Linear rules",
      h_nn, tn_nn);
  group = g_strdup_printf (
    "# The SM clock of whole-model runs (gpusim run, sweep) over the\n"
    "# calibration's: fitted by `gpusim calibrate --model-runs` (%s) on\n"
    "# %u GEMMs of %g ms or more timed inside model runs, %.1f MHz where\n"
    "# ops alone run at %.1f.  Mean absolute log error %.3f at ratio 1,\n"
    "# %.3f fitted; without any one file the fit gives %.3f to %.3f.\n"
    "%s%s"
    "model_runs = {\n"
    "  clock_ratio = %.4f;\n"
    "%s%s"
    "  source = \"%s\";\n"
    "  rows = %u;\n"
    "};\n", date, c.rows->len, MODEL_RUN_MIN_MS, c.clock_mhz * ratio,
    c.clock_mhz, before, after, lo, hi, host ? host : "", nn ? nn : "",
    ratio, host_line ? host_line : "",
    c.nn_heuristic ? "  nn_heuristic = true;\n" : "", quoted, c.rows->len);
  const char *out = a->output ? a->output : arch->file;
  fitted = gs_fit_splice_model_runs (text, arch->file, out, group);
  if (!write_output (a->output, fitted, error))
    goto out;
  fprintf (a->output ? stdout : stderr,
           "model-run clock: %.4f x %.1f MHz = %.1f MHz on %u GEMM rows of "
           "%u (mean |log error| %.3f -> %.3f; without any one file "
           "%.4f..%.4f)\n", ratio, c.clock_mhz, c.clock_mhz * ratio,
           c.rows->len, device_rows, before, after, lo, hi);
  if (nn_rows > 0)
    fprintf (a->output ? stdout : stderr,
             "model-run nn GEMMs: %s (mean |log error| %.3f with the "
             "heuristic, %.3f with the nn.Linear rules; %u rows)\n",
             c.nn_heuristic ? "heuristic" : "nn.Linear rules", h_nn,
             tn_nn, nn_rows);
  if (host_ratio > 0)
    fprintf (a->output ? stdout : stderr,
             "model-run host: %.4f x the reference host (median no-kernel "
             "node %.2f us of %u, reference %.2f us)\n", host_ratio, median,
             floor_us->len, GS_MODEL_HOST_FLOOR_US);
  ok = TRUE;
out:
  g_clear_error (&c.error);
  g_ptr_array_unref (c.rows);
  g_ptr_array_unref (c.row_sets);
  g_ptr_array_unref (c.row_files);
  return ok;
}

static gboolean
calibrate (const CalibrateArgs *a, GError **error)
{
  g_autoptr (GsArch) arch = gs_arch_load (a->arch, error);
  if (arch == NULL)
    return FALSE;
  g_autofree char *date = fit_date (a->date, error);
  if (date == NULL)
    return FALSE;
  g_autofree char *text = NULL;
  if (!g_file_get_contents (arch->file, &text, NULL, NULL))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot read",
                   arch->file);
      return FALSE;
    }
  if (a->model_runs)
    return calibrate_model_runs (a, arch, date, text, error);
  /* The fit starts from the boost clock (the GEMM fit moves it to the
   * sustained clock), not from the spec estimate of an uncalibrated GPU. */
  arch->spec_clock = FALSE;
  /* Fit from the spec sheet, whatever calibration BASE already has
   * (--gemm-only keeps BASE's memory calibration). */
  if (!a->gemm_only)
    {
      guint n_cal;
      const GsParam *cal = gs_calibration_params (&n_cal);
      gs_params_clear (cal, n_cal, arch);
      gs_params_init (cal, n_cal, arch);
    }
  g_autoptr (GsFit) fit = gs_fit_new (arch, a->device);
  g_autoptr (GPtrArray) sets =
    g_ptr_array_new_with_free_func ((GDestroyNotify) gs_measure_free);
  if (!load_sets (fit, a->gemm_only, a->files, sets, error))
    return FALSE;
  report_unfitted (fit);
  GsFitGemmOptions gopt;
  gs_fit_gemm_options_init (&gopt);
  if (a->rounds > 0)
    gopt.rounds = a->rounds;
  gopt.fit_clock = !a->no_clock;
  if (!a->gemm_only && !probe_clock (arch, a, sets, &gopt, fit, error))
    return FALSE;
  if (!a->gemm_only && !gs_fit_memory_shared (fit, error))
    return FALSE;
  /* Before the GEMMs: their GPU-time rows hold it. */
  if (!a->gemm_only)
    gs_fit_kernel_fixed (fit);
  if (!gs_fit_gemm (fit, &gopt, error))
    return FALSE;
  if (!a->gemm_only && !gs_fit_memory_own (fit, error))
    return FALSE;
  if (a->gemm_only)
    gs_fit_keep_library (fit, text, "gemm");
  g_autofree char *group = gs_fit_render (fit, date);
  const char *out = a->output ? a->output : arch->file;
  g_autofree char *fitted = gs_fit_splice (text, arch->file, out, group,
                                           error);
  if (fitted == NULL || !write_output (a->output, fitted, error))
    return FALSE;
  print_errors (a->output ? stdout : stderr, fit);
  return TRUE;
}

int
gs_cmd_calibrate (int argc, char **argv)
{
  CalibrateArgs a = { 0 };
  GError *error = NULL;
  if (!parse_args (&argc, &argv, &a, &error) || !calibrate (&a, &error))
    {
      args_clear (&a);
      return gs_cli_fail ("calibrate", error);
    }
  args_clear (&a);
  return 0;
}
