/* gpusim predict: predict single ops listed in a CSV file.
 *
 *   gpusim predict --arch ARCH [--runtime eager|compiled] OPS.csv
 *                  [--format csv|json] [-o FILE] [--no-hints] [--spec-only]
 *
 * OPS.csv "-" is standard input.
 * Every input row is printed, in order, with its columns as read and
 * predicted_ms, kernel_pred, waves, bound appended (see gpusim-predict(1)
 * and src/predict.h).
 */
#include "config.h"
#include "src/commands.h"
#include "src/output.h"
#include "src/predict.h"
#include "calibrate/csv.h"
#include "calibrate/fit.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/gpu.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ prediction */

void
gs_prediction_clear (GsPrediction *p)
{
  g_clear_pointer (&p->kernel, g_free);
}

static gboolean
row_error (GError **error, const GsMeasureSet *set, const GsMeasureRow *row,
           const char *column, const char *what)
{
  g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s:%u: column %s: %s",
               set->file ? set->file : "<input>", row->line, column, what);
  return FALSE;
}

/* The GEMM ops of a row and what their shape columns mean. */
static const struct {
  const char *op, *meaning;
} gemm_rows[] = {
  { "bmm", "B batches of [M,N] x [N,K]" },
  { "bmm_nt", "B batches of [M,N] x [K,N]^T" },
  { "linear", "B*M rows of N features through an nn.Linear(N, K)" },
  { "linear_nn", "B*M rows of N features times a weight stored [N, K], "
                 "as GPT-2's Conv1D" },
};

/* What a GEMM row's shape columns mean, for OP (NULL: not a GEMM op). */
static const char *
gemm_row_meaning (const char *op)
{
  for (guint i = 0; i < G_N_ELEMENTS (gemm_rows); i++)
    if (g_strcmp0 (op, gemm_rows[i].op) == 0)
      return gemm_rows[i].meaning;
  return NULL;
}

gboolean
gs_predict_is_linear (const char *op)
{
  return g_strcmp0 (op, "linear") == 0 || g_strcmp0 (op, "linear_nn") == 0;
}

gboolean
gs_predict_is_op (const char *op)
{
  return gemm_row_meaning (op) != NULL || gs_mem_is_shape_op (op);
}

char *
gs_predict_op_names (void)
{
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < G_N_ELEMENTS (gemm_rows); i++)
    g_string_append_printf (s, "%s%s", s->len ? ", " : "", gemm_rows[i].op);
  const char *m;
  for (guint i = 0; (m = gs_mem_shape_op_name (i)) != NULL; i++)
    g_string_append_printf (s, ", %s", m);
  return g_string_free (s, FALSE);
}

static gboolean
gemm_row_op (const GsMeasureSet *set, const GsMeasureRow *row, GsOp *op,
             GError **error)
{
  gboolean bmm = !gs_predict_is_linear (row->op);
  const char *need = bmm && row->B <= 0 ? "B" : row->M <= 0 ? "M"
                     : row->N <= 0 ? "N" : row->K <= 0 ? "K" : NULL;
  if (need != NULL)
    {
      g_autofree char *what = g_strdup_printf (
        "%s needs a positive %s (%s)", row->op, need,
        gemm_row_meaning (row->op));
      return row_error (error, set, row, need, what);
    }
  if (!gs_fit_gemm_op (row, op))
    return row_error (error, set, row, "op", "not a GEMM shape");
  return TRUE;
}

gboolean
gs_predict_row_op (const GsMeasureSet *set, const GsMeasureRow *row,
                   GsOp *op, GError **error)
{
  if (row->op == NULL || *row->op == '\0')
    return row_error (error, set, row, "op", "empty (expected one of bmm, "
                      "linear, ln, softmax or a pointwise op)");
  if (gemm_row_meaning (row->op) != NULL)
    return gemm_row_op (set, row, op, error);
  const char *bad = NULL;
  if (gs_mem_op_from_shape (row->op, row->B, row->H, row->dtype, op, &bad))
    return TRUE;
  g_autofree char *known = gs_predict_op_names ();
  g_autofree char *what = strcmp (bad, "op") == 0
    ? g_strdup_printf ("unknown op '%s' (known: %s)", row->op, known)
    : g_strdup_printf ("%s needs a positive %s (%s)", row->op, bad,
                       strcmp (bad, "B") == 0 ? "the number of rows"
                                              : "the row length");
  return row_error (error, set, row, bad, what);
}

static void
clone_op (GsOp *op, int64_t rows, int64_t cols, GsDtype dtype)
{
  gs_op_init (op);
  op->kind = GS_OP_COPY;
  op->name = g_strdup ("clone");
  op->dtype = dtype;
  op->rows = rows;
  op->cols = cols;
}

gboolean
gs_predict_row_clones (const GsMeasureSet *set, const GsMeasureRow *row,
                       GsOp clones[2], guint *n, GError **error)
{
  *n = 0;
  const char *c = gs_measure_get_cell (set, row, "clones");
  if (c == NULL || *c == '\0')
    return TRUE;
  gboolean nt = g_strcmp0 (row->op, "bmm_nt") == 0;
  if (!nt && g_strcmp0 (row->op, "bmm") != 0)
    return row_error (error, set, row, "clones",
                      "only a bmm or bmm_nt row has operands torch.matmul "
                      "copies");
  gboolean a = strcmp (c, "a") == 0 || strcmp (c, "ab") == 0;
  gboolean b = strcmp (c, "b") == 0 || strcmp (c, "ab") == 0;
  if (!a && !b)
    return row_error (error, set, row, "clones",
                      "expected a, b or ab (the operands torch.matmul "
                      "copies contiguous before its bmm)");
  if (b && nt)
    return row_error (error, set, row, "clones",
                      "a copied second operand is contiguous, so the bmm "
                      "runs nn: write the row as bmm");
  if (a)
    clone_op (&clones[(*n)++], row->B * row->M, row->N, row->dtype);
  if (b)
    clone_op (&clones[(*n)++], row->B * row->N, row->K, row->dtype);
  return TRUE;
}

static gboolean
lower (const GsPredictor *p, const GsOp *op, const GsKernelHint *hint,
       GArray *kernels, GError **error)
{
  if (p->mem != NULL && op->kind != GS_OP_GEMM && op->kind != GS_OP_ATTENTION)
    return gs_mem_lower (p->arch, p->mem, op, p->runtime, hint, kernels,
                         error);
  return gs_library_lower (p->lib, op, p->runtime, hint, kernels, error);
}

static GsTime
op_latency (const GsPredictor *p, const GsOp *op, GsTime gpu_time)
{
  if (p->mem != NULL && op->kind != GS_OP_GEMM && op->kind != GS_OP_ATTENTION)
    return gs_mem_op_latency (p->mem, op, gpu_time);
  return gs_library_op_latency (p->lib, op, gpu_time);
}

/* Runs KERNELS alone on an idle GPU, one stream, issued at time 0:
 * *GPU_TIME from the first launch to the last end (the launch gaps
 * included), *KERNEL_TIME the sum of the kernels' own durations. */
static gboolean
simulate (const GsPredictor *p, GArray *kernels, GsPrediction *out,
          GsTime *gpu_time, GsTime *kernel_time, GError **error)
{
  GsGpuOptions opt = { 0 };
  g_autoptr (GsGpu) gpu = gs_gpu_new (p->arch, &opt, error);
  if (gpu == NULL)
    return FALSE;
  for (guint i = 0; i < kernels->len; i++)
    {
      GsKernel *k = &g_array_index (kernels, GsKernel, i);
      k->stream = 0;
      k->issue_ps = 0;
      if (!gs_gpu_submit (gpu, k, NULL, error))
        return FALSE;
    }
  if (!gs_gpu_run (gpu, error))
    return FALSE;
  *gpu_time = gs_gpu_end_time (gpu);
  *kernel_time = gs_gpu_kernel_time (gpu);
  guint best = 0;
  GsTime longest = -1;
  for (guint i = 0; i < gs_gpu_kernel_count (gpu); i++)
    {
      const GsKernelResult *r = gs_gpu_result (gpu, i);
      if (r->end - r->start > longest)
        {
          longest = r->end - r->start;
          best = i;
        }
    }
  const GsKernelResult *r = gs_gpu_result (gpu, best);
  out->kernel = g_strdup (gs_gpu_kernel (gpu, best)->name);
  out->waves = r->waves;
  out->bound = gs_bound_class (r->bound);
  out->kernels = gs_gpu_kernel_count (gpu);
  return TRUE;
}

static void
kernel_array_clear (gpointer k)
{
  gs_kernel_clear (k);
}

/* A shape column as a count (empty: 1, so the op's own checks name it). */
static double
dim (int64_t v)
{
  return v < 0 ? 1.0 : (double) v;
}

gboolean
gs_predict_row_fits (const GsArch *arch, const GsMeasureSet *set,
                     const GsMeasureRow *row, GError **error)
{
  double B = dim (row->B), M = dim (row->M), N = dim (row->N);
  double K = dim (row->K), H = dim (row->H), elems;
  if (gemm_row_meaning (row->op) != NULL)   /* a linear's weight is one */
    elems = B * M * K + (gs_predict_is_linear (row->op) ? 1 : B) * N * K
            + B * M * N;
  else
    elems = 2 * B * H;                   /* input and output */
  double bytes = elems * gs_dtype_bytes (row->dtype);
  double have = arch->dram_gib * 1024.0 * 1024.0 * 1024.0;
  if (bytes <= have)
    return TRUE;
  g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
               "%s:%u: %s: its operands need %.3g GiB but %s has %g GiB of "
               "device memory (dram.size_gib)",
               set->file ? set->file : "<input>", row->line, row->op,
               bytes / (1024.0 * 1024.0 * 1024.0), arch->name,
               arch->dram_gib);
  return FALSE;
}

gboolean
gs_predict_row (const GsPredictor *p, const GsMeasureSet *set,
                const GsMeasureRow *row, GsPrediction *out, GError **error)
{
  memset (out, 0, sizeof *out);
  GsOp op;
  if (!gs_predict_row_fits (p->arch, set, row, error)
      || !gs_predict_row_op (set, row, &op, error))
    return FALSE;
  GsKernelHint hint;
  gs_fit_hint (row, &hint);
  g_autoptr (GArray) kernels = g_array_new (FALSE, TRUE, sizeof (GsKernel));
  g_array_set_clear_func (kernels, kernel_array_clear);
  GsTime gpu_time = 0, kernel_time = 0;
  GsOp clones[2];
  guint n_clones = 0;
  if (!gs_predict_row_clones (set, row, clones, &n_clones, error))
    {
      gs_op_clear (&op);
      return FALSE;
    }
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < n_clones; i++)
    ok = lower (p, &clones[i], NULL, kernels, error);
  for (guint i = 0; i < n_clones; i++)
    gs_op_clear (&clones[i]);
  ok = ok && lower (p, &op, p->use_hints ? &hint : NULL, kernels, error)
       && simulate (p, kernels, out, &gpu_time, &kernel_time, error);
  if (ok)
    {
      GsTime lat = op_latency (p, &op, gpu_time);
      out->latency_ms = (double) lat / 1e9;
      out->gpu_ms = (double) kernel_time / 1e9;
      /* Host costs alone set the latency: launch-bound. */
      if (lat == op_latency (p, &op, 0))
        out->bound = "launch";
    }
  else
    g_prefix_error (error, "%s:%u: %s: ", set->file ? set->file : "<input>",
                    row->line, row->op);
  gs_op_clear (&op);
  return ok;
}

/* --------------------------------------------------------------- command */

typedef struct {
  char *arch, *runtime, *format, *output;
  char **set;
  gboolean no_hints, spec_only;
  int head;
  char **files;
} PredictArgs;

static void
args_clear (PredictArgs *a)
{
  g_free (a->arch);
  g_free (a->runtime);
  g_free (a->format);
  g_free (a->output);
  g_strfreev (a->set);
  g_strfreev (a->files);
}

static gboolean
parse_args (int *argc, char ***argv, PredictArgs *a, GError **error)
{
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &a->arch,
      "GPU architecture: a name (h100-sxm5-80gb, a100-pcie-40gb, l4 ...) "
      "or a .cfg file", "ARCH" },
    { "runtime", 'r', 0, G_OPTION_ARG_STRING, &a->runtime,
      "eager (default) or compiled (torch.compile)", "RUNTIME" },
    { "format", 'f', 0, G_OPTION_ARG_STRING, &a->format,
      "csv (default) or json", "FORMAT" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &a->output,
      "write to FILE (atomically) instead of standard output", "FILE" },
    { "no-hints", 0, 0, G_OPTION_ARG_NONE, &a->no_hints,
      "ignore the kernel, grid_* and block_* columns", NULL },
    { "head", 0, 0, G_OPTION_ARG_INT, &a->head,
      "only the first N rows (a quick look at a large file)", "N" },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->set,
      "override an arch parameter, e.g. --set dram.bandwidth_gbs=4000",
      "KEY=VALUE" },
    { "spec-only", 0, 0, G_OPTION_ARG_NONE, &a->spec_only,
      "leave out the arch's calibration: the GPU from its spec sheet alone",
      NULL },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->files,
      NULL, "OPS.csv" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new (
    "OPS.csv - predict the latency of single ops");
  g_option_context_set_summary (ctx,
    "OPS.csv has a header; columns op,B,M,N,K,H,dtype are recognised,\n"
    "kernel,grid_x..z,block_x..z are hints, every other column is echoed.\n"
    "Each row is printed in order with predicted_ms,kernel_pred,waves,bound.");
  g_option_context_set_description (ctx,
    "Exit status: 0 ok, 1 no prediction possible, 2 usage, 3 bad input.\n"
    "See gpusim-predict(1).");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!gs_cli_parse (ctx, argc, argv, error))
    return FALSE;
  return TRUE;
}

static gboolean
check_args (PredictArgs *a, GsRuntime *runtime, gboolean *json,
            GError **error)
{
  if (a->arch == NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--arch is required (gpusim arch list shows the GPUs)");
      return FALSE;
    }
  if (a->files == NULL || a->files[0] == NULL || a->files[1] != NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "expected exactly one OPS.csv file");
      return FALSE;
    }
  int rt = gs_runtime_parse (a->runtime ? a->runtime : "eager");
  if (rt < 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--runtime: expected eager or compiled, got '%s'",
                   a->runtime);
      return FALSE;
    }
  *runtime = (GsRuntime) rt;
  const char *f = a->format ? a->format : "csv";
  if (strcmp (f, "csv") != 0 && strcmp (f, "json") != 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--format: expected csv or json, got '%s'", f);
      return FALSE;
    }
  *json = strcmp (f, "json") == 0;
  if (a->head != G_MININT && a->head < 1)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                   "--head: expected a positive row count, got %d", a->head);
      return FALSE;
    }
  return TRUE;
}

GsArch *
gs_predict_load_arch (const char *name, gboolean spec_only, char **set,
                      GError **error)
{
  GsArch *arch = gs_arch_load_full (name, spec_only, error);
  if (arch == NULL)
    return NULL;
  for (char **s = set; s && *s; s++)
    {
      const char *eq = strchr (*s, '=');
      if (eq == NULL)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                       "--set %s: expected KEY=VALUE", *s);
          gs_arch_free (arch);
          return NULL;
        }
      g_autofree char *key = g_strndup (*s, eq - *s);
      if (!gs_arch_set (arch, key, eq + 1, error)
          || !gs_arch_validate_as (arch, NULL, error))
        {
          g_prefix_error (error, "--set %s: ", *s);
          gs_arch_free (arch);
          return NULL;
        }
    }
  return arch;
}

/* The columns predict appends (CSV), then the members JSON adds. */
static const char *const added_columns[] = {
  "predicted_ms", "kernel_pred", "waves", "bound", "gpu_ms", "kernels"
};
#define N_CSV_ADDED 4

/* Whether input column NAME is one the output adds (in any case): then
 * the new prediction replaces it, so that predict's output read back in
 * gets one set of predictions, not two. */
static gboolean
is_added (const char *name, gboolean json)
{
  guint n = json ? G_N_ELEMENTS (added_columns) : N_CSV_ADDED;
  for (guint i = 0; i < n; i++)
    if (g_ascii_strcasecmp (name, added_columns[i]) == 0)
      return TRUE;
  return FALSE;
}

static void
write_csv_header (GString *out, const GsMeasureSet *set)
{
  gboolean first = TRUE;
  for (guint i = 0; set->columns[i]; i++)
    if (!is_added (set->columns[i], FALSE))
      {
        gs_csv_append_cell (out, set->columns[i], first);
        first = FALSE;
      }
  for (guint i = 0; i < N_CSV_ADDED; i++)
    {
      gs_csv_append_cell (out, added_columns[i], first);
      first = FALSE;
    }
  g_string_append_c (out, '\n');
}

static void
write_csv_row (GString *out, const GsMeasureSet *set, const GsMeasureRow *row,
               const GsPrediction *p)
{
  gboolean first = TRUE;
  guint have = row->cells ? g_strv_length (row->cells) : 0;
  for (guint i = 0; set->columns[i]; i++)
    if (!is_added (set->columns[i], FALSE))
      {
        gs_csv_append_cell (out, i < have ? row->cells[i] : "", first);
        first = FALSE;
      }
  char ms[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (ms, sizeof ms, "%.6g", p->latency_ms);
  g_autofree char *waves = g_strdup_printf ("%d", p->waves);
  const char *cells[N_CSV_ADDED] = { ms, p->kernel, waves, p->bound };
  for (guint i = 0; i < N_CSV_ADDED; i++)
    {
      gs_csv_append_cell (out, cells[i], first);
      first = FALSE;
    }
  g_string_append_c (out, '\n');
}

static void
add_json_row (JsonBuilder *b, const GsMeasureSet *set,
              const GsMeasureRow *row, const GsPrediction *p)
{
  json_builder_begin_object (b);
  guint have = row->cells ? g_strv_length (row->cells) : 0;
  for (guint i = 0; set->columns[i]; i++)
    {
      if (is_added (set->columns[i], TRUE))
        continue;
      json_builder_set_member_name (b, set->columns[i]);
      json_builder_add_string_value (b, i < have ? row->cells[i] : "");
    }
  json_builder_set_member_name (b, "predicted_ms");
  json_builder_add_double_value (b, p->latency_ms);
  json_builder_set_member_name (b, "kernel_pred");
  json_builder_add_string_value (b, p->kernel);
  json_builder_set_member_name (b, "waves");
  json_builder_add_int_value (b, p->waves);
  json_builder_set_member_name (b, "bound");
  json_builder_add_string_value (b, p->bound);
  json_builder_set_member_name (b, "gpu_ms");
  json_builder_add_double_value (b, p->gpu_ms);
  json_builder_set_member_name (b, "kernels");
  json_builder_add_int_value (b, p->kernels);
  json_builder_end_object (b);
}

/* Predicts the first ROWS rows of SET into TEXT (CSV or JSON). */
static gboolean
predict_all (const GsPredictor *p, const GsMeasureSet *set, guint rows,
             gboolean json, GString *text, GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  if (json)
    {
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "arch");
      json_builder_add_string_value (b, p->arch->name);
      json_builder_set_member_name (b, "runtime");
      json_builder_add_string_value (b, gs_runtime_name (p->runtime));
      json_builder_set_member_name (b, "rows");
      json_builder_begin_array (b);
    }
  else
    write_csv_header (text, set);
  for (guint i = 0; i < MIN (rows, set->rows->len); i++)
    {
      const GsMeasureRow *row = &g_array_index (set->rows, GsMeasureRow, i);
      GsPrediction pr;
      if (!gs_predict_row (p, set, row, &pr, error))
        return FALSE;
      if (json)
        add_json_row (b, set, row, &pr);
      else
        write_csv_row (text, set, row, &pr);
      gs_prediction_clear (&pr);
    }
  if (json)
    {
      json_builder_end_array (b);
      json_builder_end_object (b);
      g_autofree char *s = gs_json_text (b);
      g_string_append (text, s);
      g_string_append_c (text, '\n');
    }
  return TRUE;
}

/* The ops file: FILE, or standard input when FILE is "-" (named <stdin>
 * in messages). */
static GsMeasureSet *
load_ops (const char *file, GError **error)
{
  if (strcmp (file, "-") != 0)
    return gs_measure_load (file, FALSE, error);
  g_autoptr (GBytes) bytes = gs_csv_read_stdin (error);
  if (bytes == NULL)
    return NULL;
  g_autoptr (GInputStream) in = g_memory_input_stream_new_from_bytes (bytes);
  return gs_measure_load_stream (in, GS_CSV_STDIN, FALSE, error);
}

static gboolean
write_text (const char *path, const GString *text, GError **error)
{
  GsOutput *out = gs_output_open (path ? path : "-", error);
  if (out == NULL)
    return FALSE;
  if (fwrite (text->str, 1, text->len, gs_output_file (out)) != text->len)
    {
      gs_output_abort (out);
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: write failed",
                   path ? path : "standard output");
      return FALSE;
    }
  return gs_output_commit (out, error);
}

int
gs_cmd_predict (int argc, char **argv)
{
  PredictArgs a = { 0 };
  a.head = G_MININT;         /* not given (0 is refused) */
  GError *error = NULL;
  GsRuntime runtime = GS_RUNTIME_EAGER;
  gboolean json = FALSE;
  g_autoptr (GsArch) arch = NULL;
  g_autoptr (GsLibrary) lib = NULL;
  g_autoptr (GsMeasureSet) set = NULL;
  g_autoptr (GString) text = g_string_new (NULL);
  int status = 0;

  if (!parse_args (&argc, &argv, &a, &error)
      || !check_args (&a, &runtime, &json, &error)
      || (arch = gs_predict_load_arch (a.arch, a.spec_only, a.set,
                                         &error)) == NULL
      || (lib = gs_library_new (arch, &error)) == NULL
      || (set = load_ops (a.files[0], &error)) == NULL)
    goto fail;
  gs_library_set_alone (lib, TRUE);
  GsPredictor p = { arch, lib, runtime, !a.no_hints, NULL };
  guint rows = a.head == G_MININT ? G_MAXUINT : (guint) a.head;
  if (!predict_all (&p, set, rows, json, text, &error)
      || !write_text (a.output, text, &error))
    goto fail;
  args_clear (&a);
  return 0;

fail:
  status = gs_cli_fail ("predict", error);
  args_clear (&a);
  return status;
}
