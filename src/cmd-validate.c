/* gpusim validate: compare predictions with measurements.
 *
 *   gpusim validate --arch ARCH [--arch ARCH2 ...] MEASUREMENTS.csv
 *                   [--holdout | --train | --all] [--hints]
 *                   [--spec-only] [--format text|csv] [--sample N]
 *
 * Predicts every measured row of each GPU (as `gpusim predict` would, from
 * the shape alone unless --hints) and prints, per op class and per op, the
 * row count, mean / median / 90th-percentile / largest absolute percentage
 * error and the bias (mean signed error).  A row that timed an op alone
 * is compared with the predicted latency; a row whose latency_ms is GPU
 * time (timed by CUPTI, or a profiler trace's kernels, those of one op
 * call summed) with the simulated GPU time of the op's kernels.
 * --spec-only predicts the
 * memory-bound rows with the GPU's own memory calibration removed: the
 * calibration other GPUs' arch files transfer to it (the honest test of a
 * GPU known only from its spec sheet); those cells are reported apart.
 * MEASUREMENTS.csv "-" is standard input.  See gpusim-validate(1).
 */
#include "config.h"
#include "src/commands.h"
#include "src/output.h"
#include "src/predict.h"
#include "calibrate/fit-memory.h"
#include "calibrate/import.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { SPLIT_HOLDOUT, SPLIT_TRAIN, SPLIT_ALL } Split;

static const char *const split_names[] = { "holdout", "train", "all" };

/* The errors of one (arch, class, op) cell; op NULL: the whole class. */
typedef struct {
  char *arch, *op_class, *op;
  gboolean spec_only;
  GArray *ape;             /* double, % */
  double signed_sum;       /* sum of signed errors, % */
  guint failed;
} Cell;

typedef struct {
  GPtrArray *cells;        /* Cell * in first-seen order */
  guint failed;
  guint no_op;             /* rows naming no op (trace rows of copies ...) */
  char *first_error;
  gboolean kernels;        /* rows are a profiler trace's kernels */
  guint gpu_rows;          /* compared: GPU time with simulated GPU time */
  guint latency_rows;      /* compared: op latency with predicted latency */
} Table;

typedef struct {
  char **archs;
  gboolean holdout, train, all, hints, spec_only;
  char *format, *output;
  int sample;
  char **files;
} ValidateArgs;

static void
cell_free (gpointer p)
{
  Cell *c = p;
  g_free (c->arch);
  g_free (c->op_class);
  g_free (c->op);
  g_array_unref (c->ape);
  g_free (c);
}

static Cell *
cell_get (Table *t, const char *arch, const char *cls, const char *op,
          gboolean spec_only)
{
  for (guint i = 0; i < t->cells->len; i++)
    {
      Cell *c = t->cells->pdata[i];
      if (c->spec_only == spec_only && strcmp (c->arch, arch) == 0
          && strcmp (c->op_class, cls) == 0 && g_strcmp0 (c->op, op) == 0)
        return c;
    }
  Cell *c = g_new0 (Cell, 1);
  c->arch = g_strdup (arch);
  c->op_class = g_strdup (cls);
  c->op = g_strdup (op);
  c->spec_only = spec_only;
  c->ape = g_array_new (FALSE, FALSE, sizeof (double));
  g_ptr_array_add (t->cells, c);
  return c;
}

static void
record (Table *t, const char *arch, const char *cls, const char *op,
        gboolean spec_only, double pred, double meas)
{
  double err = (pred - meas) / meas * 100.0;
  double ape = fabs (err);
  Cell *cells[] = { cell_get (t, arch, cls, NULL, spec_only),
                    cell_get (t, arch, cls, op, spec_only) };
  for (guint i = 0; i < G_N_ELEMENTS (cells); i++)
    {
      g_array_append_val (cells[i]->ape, ape);
      cells[i]->signed_sum += err;
    }
}

static void
record_failure (Table *t, const char *arch, const char *cls, const char *op,
                gboolean spec_only, GError *error)
{
  cell_get (t, arch, cls, NULL, spec_only)->failed++;
  cell_get (t, arch, cls, op, spec_only)->failed++;
  t->failed++;
  if (t->first_error == NULL)
    t->first_error = g_strdup (error->message);
}

/* ------------------------------------------------------------ statistics */

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The Q-quantile (0..1) of sorted V by linear interpolation. */
static double
quantile (const double *v, guint n, double q)
{
  if (n == 0)
    return NAN;
  double pos = q * (n - 1);
  guint i = (guint) floor (pos);
  double f = pos - i;
  return i + 1 < n ? v[i] * (1 - f) + v[i + 1] * f : v[i];
}

typedef struct {
  guint n;
  double mape, median, p90, max, bias;
} Stats;

static void
cell_stats (const Cell *c, Stats *s)
{
  guint n = c->ape->len;
  g_autofree double *v = g_memdup2 (c->ape->data, n * sizeof (double));
  if (n > 0)                 /* qsort takes no NULL, even for 0 items */
    qsort (v, n, sizeof (double), cmp_double);
  double sum = 0;
  for (guint i = 0; i < n; i++)
    sum += v[i];
  s->n = n;
  s->mape = n ? sum / n : NAN;
  s->median = quantile (v, n, 0.5);
  s->p90 = quantile (v, n, 0.9);
  s->max = n ? v[n - 1] : NAN;
  s->bias = n ? c->signed_sum / n : NAN;
}

/* --------------------------------------------------------------- output */

/* What the table compared: op latencies with predicted latencies, GPU
 * times with simulated GPU times, or some of each. */
static const char *
compared (const Table *t)
{
  if (t->kernels)
    return "Simulated GPU time against the measured kernels of each op call";
  if (t->gpu_rows > 0 && t->latency_rows == 0)
    return "Simulated GPU time against measured GPU time";
  if (t->gpu_rows > 0)
    return "Predictions against measurements (GPU-time rows against the "
           "simulated GPU time)";
  return "Predictions against measurements";
}

static void
print_text_header (GString *o, const Table *t, Split split, gboolean spec)
{
  g_string_append_printf (o, "\n%s, %s %s%s\n",
                          spec ? "Spec-only cells: memory calibration "
                                 "transferred from other GPUs"
                               : compared (t),
                          split_names[split], t->kernels ? "op calls" : "rows",
                          spec ? " (the GPU's own memory fit removed)" : "");
  g_string_append_printf (o, "%-16s %-12s %-9s %6s %7s %7s %7s %8s %7s%s\n",
                          "arch", "class", "op", "rows", "MAPE%", "med%",
                          "p90%", "max%", "bias%", "  failed");
}

static void
print_text_cell (GString *o, const Cell *c)
{
  Stats s;
  cell_stats (c, &s);
  if (s.n == 0)              /* every row failed: no error to show */
    g_string_append_printf (o, "%-16s %-12s %-9s %6u %7s %7s %7s %8s %7s",
                            c->arch, c->op_class, c->op ? c->op : "(all)",
                            s.n, "-", "-", "-", "-", "-");
  else
    g_string_append_printf (o, "%-16s %-12s %-9s %6u %7.2f %7.2f %7.2f "
                            "%8.1f %+7.2f", c->arch, c->op_class,
                            c->op ? c->op : "(all)", s.n, s.mape, s.median,
                            s.p90, s.max, s.bias);
  if (c->failed)
    g_string_append_printf (o, "  %u", c->failed);
  g_string_append_c (o, '\n');
}

static void
write_text (GString *o, const Table *t, Split split)
{
  for (int spec = 0; spec <= 1; spec++)
    {
      gboolean any = FALSE;
      for (guint i = 0; i < t->cells->len; i++)
        {
          const Cell *c = t->cells->pdata[i];
          if (c->spec_only != spec)
            continue;
          if (!any)
            print_text_header (o, t, split, spec);
          any = TRUE;
          print_text_cell (o, c);
        }
    }
}

static void
write_csv (GString *o, const Table *t, Split split)
{
  g_string_append (o, "arch,class,op,split,spec_only,rows,mape,median_ape,"
                      "p90_ape,max_ape,bias,failed\n");
  for (guint i = 0; i < t->cells->len; i++)
    {
      const Cell *c = t->cells->pdata[i];
      Stats s;
      cell_stats (c, &s);
      g_string_append_printf (o, "%s,%s,%s,%s,%s,%u,", c->arch, c->op_class,
                              c->op ? c->op : "", split_names[split],
                              c->spec_only ? "yes" : "no", s.n);
      if (s.n > 0)
        g_string_append_printf (o, "%.4f,%.4f,%.4f,%.4f,%.4f,%u\n", s.mape,
                                s.median, s.p90, s.max, s.bias, c->failed);
      else                     /* every row failed: empty error cells */
        g_string_append_printf (o, ",,,,,%u\n", c->failed);
    }
}

/* Cells sorted: arch (as given), spec-only after, class, "(all)" first. */
static int
cell_order (gconstpointer a, gconstpointer b)
{
  const Cell *x = *(Cell *const *) a, *y = *(Cell *const *) b;
  if (x->spec_only != y->spec_only)
    return x->spec_only - y->spec_only;
  int c = strcmp (x->op_class, y->op_class);
  if (c != 0)
    return c;
  if ((x->op == NULL) != (y->op == NULL))
    return x->op == NULL ? -1 : 1;
  return g_strcmp0 (x->op, y->op);
}

/* ------------------------------------------------------------ predicting */

static gboolean
in_split (const GsMeasureRow *row, Split split)
{
  if (split == SPLIT_ALL)
    return TRUE;
  return gs_measure_is_holdout (row) == (split == SPLIT_HOLDOUT);
}

static const char *
class_of (const GsMeasureSet *set, const GsMeasureRow *row)
{
  GsOp op;
  if (!gs_predict_row_op (set, row, &op, NULL))
    return "unknown";
  const char *c = gs_op_kind_name (op.kind);
  gs_op_clear (&op);
  return c;
}

static gboolean
is_memory_class (const char *cls)
{
  return strcmp (cls, "gemm") != 0 && strcmp (cls, "attention") != 0
         && strcmp (cls, "unknown") != 0;
}

/* Compares each measured row of P's GPU with its prediction.  A row that
 * timed an op alone, host costs included (NeuSight's kernels.csv, a
 * per-op trace, CUDA events), is compared with the predicted latency.  A
 * row whose latency_ms is GPU time (gs_measure_is_gpu_time: timed by
 * CUPTI, or a profiler trace's kernels, whose kernels of one op call, one
 * cpu_op_index, are summed) is compared with the simulated GPU time of
 * the op's kernels: GPU time with GPU time. */
static void
validate_rows (const GsPredictor *p, const char *label,
               const GsMeasureSet *set, Split split, int sample,
               gboolean spec_only, Table *t)
{
  const char *arch = p->arch->name;
  guint seen = 0;
  g_autoptr (GHashTable) sums = gs_measure_is_kernel_set (set)
                                ? gs_measure_call_sums (set, arch) : NULL;
  for (guint i = 0; i < set->rows->len; i++)
    {
      const GsMeasureRow *row = &g_array_index (set->rows, GsMeasureRow, i);
      if (row->device != NULL && strcmp (row->device, arch) != 0)
        continue;
      if (row->op == NULL || *row->op == '\0')
        {
          /* Imported traces hold every kernel or node; those that are no
           * op gpusim predicts alone are counted, not failed. */
          t->no_op += !spec_only && row->latency_ms > 0
                      && in_split (row, split);
          continue;
        }
      const char *call = sums ? gs_measure_call_of (set, row) : NULL;
      double *sum = call ? g_hash_table_lookup (sums, call) : NULL;
      double measured = sum ? *sum : row->latency_ms;
      if (sum != NULL && *sum < 0)
        continue;              /* a further kernel of a call already seen */
      if (sum != NULL)
        *sum = -1;
      if (measured <= 0 || !in_split (row, split))
        continue;
      const char *cls = class_of (set, row);
      if (spec_only && !is_memory_class (cls))
        continue;
      if (sample > 1 && seen++ % (guint) sample != 0)
        continue;
      GsPrediction pr;
      GError *error = NULL;
      gboolean gpu = gs_measure_is_gpu_time (set, row);
      if (gs_predict_row (p, set, row, &pr, &error))
        {
          record (t, label, cls, row->op, spec_only,
                  gpu ? pr.gpu_ms : pr.latency_ms, measured);
          if (gpu)
            t->gpu_rows++;
          else
            t->latency_rows++;
        }
      else
        {
          record_failure (t, label, cls, row->op ? row->op : "?", spec_only,
                          error);
          g_clear_error (&error);
        }
      gs_prediction_clear (&pr);
    }
}

/* The arch with its memory calibration replaced by the transfer from the
 * other GPUs' arch files. */
static gboolean
transferred (GsArch *arch, GsMemParams *mem, GError **error)
{
  g_autoptr (GPtrArray) donors = gs_fit_memory_donors (arch->name);
  g_autoptr (GString) method = g_string_new (NULL);
  return gs_fit_memory_transfer (arch, donors, mem, method, error);
}

/* Validates the GPU NAME (as given), its cells labelled LABEL. */
static gboolean
validate_arch (const ValidateArgs *a, const char *name, const char *label,
               const GsMeasureSet *set, Split split, Table *t, GError **error)
{
  g_autoptr (GsArch) arch = gs_predict_load_arch (name, FALSE, NULL, error);
  if (arch == NULL)
    return FALSE;
  g_autoptr (GsLibrary) lib = gs_library_new (arch, error);
  if (lib == NULL)
    return FALSE;
  gs_library_set_alone (lib, TRUE);
  GsPredictor p = { arch, lib, GS_RUNTIME_EAGER, a->hints, NULL };
  validate_rows (&p, label, set, split, a->sample, FALSE, t);
  if (!a->spec_only)
    return TRUE;
  GsMemParams mem;
  g_autoptr (GsArch) spec = gs_arch_copy (arch);
  if (!transferred (spec, &mem, error))
    return FALSE;
  GsPredictor q = { spec, lib, GS_RUNTIME_EAGER, a->hints, &mem };
  validate_rows (&q, label, set, split, a->sample, TRUE, t);
  return TRUE;
}

/* The GPUs to validate: one per arch file, in the order given. */
typedef struct {
  const char *given;       /* the --arch argument */
  char *name;              /* the arch's name: its rows' device column */
  char *file;              /* the file that defines it, canonical */
  const char *label;       /* its cells' arch column */
} Gpu;

static void
gpu_clear (gpointer p)
{
  Gpu *g = p;
  g_free (g->name);
  g_free (g->file);
}

/* The file that defines ARCH's GPU, whatever reached it: a short name's
 * GPU file, else the file loaded, with links resolved. */
static char *
gpu_file_of (const GsArch *arch)
{
  const char *f = gs_arch_short_name_of (arch);
  if (f == NULL)
    f = arch->file;
  if (f == NULL)
    return g_strdup (arch->name);
  char *real = realpath (f, NULL);
  return real ? real : g_canonicalize_filename (f, NULL);
}

/* Loads the GPUs of A.  One file given twice, by a short name and its own
 * or by two paths, is one GPU, whose rows count once.  Cells are labelled
 * with the arch's name, or, where two files define GPUs of one name (a
 * what-if file without a name of its own takes its base's), with the
 * name each was given by. */
static GArray *
gpus_of (const ValidateArgs *a, GError **error)
{
  g_autoptr (GArray) gpus = g_array_new (FALSE, TRUE, sizeof (Gpu));
  g_array_set_clear_func (gpus, gpu_clear);
  for (char **name = a->archs; *name; name++)
    {
      g_autoptr (GsArch) probe = gs_arch_load (*name, error);
      if (probe == NULL)
        return NULL;
      g_autofree char *file = gpu_file_of (probe);
      gboolean seen = FALSE;
      for (guint i = 0; i < gpus->len && !seen; i++)
        seen = strcmp (g_array_index (gpus, Gpu, i).file, file) == 0;
      if (seen)
        continue;
      Gpu g = { *name, g_strdup (probe->name), g_steal_pointer (&file),
                NULL };
      g_array_append_val (gpus, g);
    }
  for (guint i = 0; i < gpus->len; i++)
    {
      Gpu *g = &g_array_index (gpus, Gpu, i);
      g->label = g->name;
      for (guint j = 0; j < gpus->len; j++)
        if (j != i && strcmp (g_array_index (gpus, Gpu, j).name,
                              g->name) == 0)
          g->label = g->given;
    }
  return g_steal_pointer (&gpus);
}

/* --------------------------------------------------------------- command */

static void
args_clear (ValidateArgs *a)
{
  g_strfreev (a->archs);
  g_free (a->format);
  g_free (a->output);
  g_strfreev (a->files);
}

static gboolean
parse_args (int *argc, char ***argv, ValidateArgs *a, GError **error)
{
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING_ARRAY, &a->archs,
      "GPU to validate (repeat for several; rows of other devices are "
      "skipped)", "ARCH" },
    { "holdout", 0, 0, G_OPTION_ARG_NONE, &a->holdout,
      "the validation half only (default)", NULL },
    { "train", 0, 0, G_OPTION_ARG_NONE, &a->train,
      "the training half only", NULL },
    { "all", 0, 0, G_OPTION_ARG_NONE, &a->all, "every row", NULL },
    { "hints", 0, 0, G_OPTION_ARG_NONE, &a->hints,
      "use the measured kernel, grid and block as hints", NULL },
    { "spec-only", 0, 0, G_OPTION_ARG_NONE, &a->spec_only,
      "also predict memory-bound rows with the GPU's own memory "
      "calibration replaced by the one transferred from other GPUs", NULL },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &a->format,
      "text (default) or csv", "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
      "write to FILE (atomically) instead of standard output", "FILE" },
    { "sample", 0, 0, G_OPTION_ARG_INT, &a->sample,
      "use every Nth row of each GPU (quick checks)", "N" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->files,
      NULL, "MEASUREMENTS.csv" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "MEASUREMENTS.csv - compare predictions with measured latencies");
  g_option_context_set_summary (ctx,
    "Prints per GPU, op class and op: rows, MAPE, median, 90th percentile\n"
    "and largest absolute percentage error, and the bias.");
  g_option_context_set_description (ctx,
    "Exit status: 0 ok, 1 some rows could not be predicted, 2 usage,\n"
    "3 bad input.  See gpusim-validate(1).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!gs_cli_parse (ctx, argc, argv, error))
    return FALSE;
  if (a->archs == NULL || a->files == NULL || a->files[0] == NULL
      || a->files[1] != NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "expected --arch ARCH and one MEASUREMENTS.csv");
      return FALSE;
    }
  if (a->holdout + a->train + a->all > 1)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--holdout, --train and --all exclude each other");
      return FALSE;
    }
  const char *f = a->format ? a->format : "text";
  if (strcmp (f, "text") != 0 && strcmp (f, "csv") != 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--format: expected text or csv, got '%s'", f);
      return FALSE;
    }
  if (a->sample != G_MININT && a->sample < 1)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--sample: expected a positive row step (every Nth row), "
                   "got %d", a->sample);
      return FALSE;
    }
  if (a->sample == G_MININT)
    a->sample = 1;
  return TRUE;
}

static gboolean
emit (const ValidateArgs *a, const Table *t, Split split, GError **error)
{
  g_autoptr (GString) o = g_string_new (NULL);
  if (a->format && strcmp (a->format, "csv") == 0)
    write_csv (o, t, split);
  else
    write_text (o, t, split);
  GsOutput *out = gs_output_open (a->output ? a->output : "-", error);
  if (out == NULL)
    return FALSE;
  fputs (o->str, gs_output_file (out));
  return gs_output_commit (out, error);
}

int
gs_cmd_validate (int argc, char **argv)
{
  ValidateArgs a = { 0 };
  a.sample = G_MININT;       /* not given (0 is refused) */
  GError *error = NULL;
  g_autoptr (GsMeasureSet) set = NULL;
  g_autoptr (GArray) gpus = NULL;
  Table t = { g_ptr_array_new_with_free_func (cell_free), 0, 0, NULL,
              FALSE, 0, 0 };
  GsImportFormat format;
  int status = 0;
  if (!parse_args (&argc, &argv, &a, &error))
    goto fail;
  format = GS_IMPORT_AUTO;
  set = gs_import_read (a.files[0], &format, NULL, TRUE, &error);
  if (set == NULL)
    goto fail;
  t.kernels = gs_measure_is_kernel_set (set);
  /* The split is the calibration data's; a trace imported from a profile
   * or a model run is compared whole unless a split is asked for. */
  Split split = a.all ? SPLIT_ALL : a.train ? SPLIT_TRAIN
                : a.holdout || format == GS_IMPORT_MEASUREMENTS
                ? SPLIT_HOLDOUT : SPLIT_ALL;
  gpus = gpus_of (&a, &error);
  if (gpus == NULL)
    goto fail;
  for (guint g = 0; g < gpus->len; g++)
    {
      const Gpu *gpu = &g_array_index (gpus, Gpu, g);
      guint first = t.cells->len;
      if (!validate_arch (&a, gpu->given, gpu->label, set, split, &t,
                          &error))
        goto fail;
      /* Sort this arch's cells; archs stay in the order given. */
      g_autoptr (GPtrArray) mine = g_ptr_array_new ();
      for (guint i = first; i < t.cells->len; i++)
        g_ptr_array_add (mine, t.cells->pdata[i]);
      g_ptr_array_sort (mine, cell_order);
      for (guint i = 0; i < mine->len; i++)
        t.cells->pdata[first + i] = mine->pdata[i];
    }
  if (t.cells->len == 0)
    {
      /* An empty table would read as a perfect score. */
      g_autofree char *rows = set->rows->len == 1
        ? g_strdup ("its one row was not")
        : g_strdup_printf ("none of its %u rows was", set->rows->len);
      if (set->rows->len == 0)
        g_set_error (&error, GS_ERROR, GS_ERROR_INPUT,
                     "%s: no measurements, only a header", set->file);
      else if (t.no_op > 0)
        g_set_error (&error, GS_ERROR, GS_ERROR_PREDICT,
                     "%s: none of the rows for the GPUs given names an op "
                     "gpusim predicts alone", set->file);
      else
        g_set_error (&error, GS_ERROR, GS_ERROR_PREDICT,
                     "%s: %s measured on the GPUs given%s%s%s (see its "
                     "device column)", set->file, rows,
                     split == SPLIT_ALL ? "" : " in the ",
                     split == SPLIT_ALL ? "" : split_names[split],
                     split == SPLIT_ALL ? "" : " split; --all takes every "
                     "shape");
      goto fail;
    }
  if (!emit (&a, &t, split, &error))
    goto fail;
  if (t.no_op > 0)
    fprintf (stderr, "gpusim validate: %u rows name no op gpusim predicts "
             "alone (copies, gathers, masking ...) and were left out\n",
             t.no_op);
  if (t.failed > 0)
    {
      fprintf (stderr, "gpusim validate: %u rows could not be predicted; "
               "the first: %s\n", t.failed, t.first_error);
      status = 1;
    }
  goto out;

fail:
  status = gs_cli_fail ("validate", error);
out:
  g_ptr_array_unref (t.cells);
  g_free (t.first_error);
  args_clear (&a);
  return status;
}
