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

#include <glib/gstdio.h>
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

/* Which fitter takes ROW, if any: 'g' (GEMM), 'm' (memory-bound) or 0. */
static char
fitter_of (const GsMeasureRow *row)
{
  GsOp o;
  const char *bad = NULL;
  if (row->latency_ms <= 0 || row->op == NULL)
    return 0;
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
          if (which == 0)
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
                   "nothing to fit: %s a GEMM row (linear, bmm, bmm_nt) of "
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
