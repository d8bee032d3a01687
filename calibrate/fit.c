/* gpusim: the calibration fitter framework (see fit.h). */
#include "config.h"
#include "calibrate/fit.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MARK_BEGIN "# >>> gpusim calibrate: generated, replaced on every run >>>"
#define MARK_END "# <<< gpusim calibrate <<<"
#define RUNS_BEGIN "# >>> gpusim calibrate --model-runs: generated, replaced " \
  "on every run >>>"
#define RUNS_END "# <<< gpusim calibrate --model-runs <<<"

static void
error_clear (gpointer p)
{
  g_free (((GsFitError *) p)->op_class);
}

GsFit *
gs_fit_new (const GsArch *arch, const char *device)
{
  GsFit *fit = g_new0 (GsFit, 1);
  fit->arch = gs_arch_copy (arch);
  fit->device = g_strdup (device ? device : arch->name);
  fit->rows = g_ptr_array_new ();
  fit->gpu_time = g_hash_table_new (NULL, NULL);
  fit->calls = g_ptr_array_new_with_free_func (g_free);
  fit->sources = g_ptr_array_new_with_free_func (g_free);
  fit->library = g_string_new ("");
  fit->errors = g_array_new (FALSE, TRUE, sizeof (GsFitError));
  g_array_set_clear_func (fit->errors, error_clear);
  fit->methods = g_ptr_array_new_with_free_func (g_free);
  fit->host_kept = g_ptr_array_new_with_free_func (g_free);
  return fit;
}

void
gs_fit_free (GsFit *fit)
{
  if (fit == NULL)
    return;
  gs_arch_free (fit->arch);
  g_free (fit->device);
  g_ptr_array_unref (fit->rows);
  g_hash_table_unref (fit->gpu_time);
  g_ptr_array_unref (fit->calls);
  g_ptr_array_unref (fit->sources);
  g_string_free (fit->library, TRUE);
  g_array_unref (fit->errors);
  g_ptr_array_unref (fit->methods);
  g_ptr_array_unref (fit->host_kept);
  g_free (fit);
}

guint
gs_fit_add_set (GsFit *fit, const GsMeasureSet *set)
{
  guint added = 0;
  /* A profiler trace's kernels: one row per op call, timed as the sum of
   * its kernels (a GEMM and its split-K reduction are one op). */
  g_autoptr (GHashTable) sums = gs_measure_is_kernel_set (set)
                                ? gs_measure_call_sums (set, fit->device)
                                : NULL;
  for (guint i = 0; i < set->rows->len; i++)
    {
      const GsMeasureRow *r = &g_array_index (set->rows, GsMeasureRow, i);
      if (r->device == NULL || strcmp (r->device, fit->device) != 0)
        continue;
      const char *call = sums && r->op && *r->op
                         ? gs_measure_call_of (set, r) : NULL;
      double *sum = call ? g_hash_table_lookup (sums, call) : NULL;
      if (sum != NULL)
        {
          if (*sum < 0)
            continue;          /* a further kernel of a call already taken */
          GsMeasureRow *merged = g_memdup2 (r, sizeof *r);
          merged->latency_ms = *sum > 0 ? *sum : r->latency_ms;
          *sum = -1;
          g_ptr_array_add (fit->calls, merged);
          r = merged;
        }
      g_ptr_array_add (fit->rows, (gpointer) r);
      if (gs_measure_is_gpu_time (set, r))
        g_hash_table_add (fit->gpu_time, (gpointer) r);
      added++;
    }
  if (added > 0)
    g_ptr_array_add (fit->sources, g_path_get_basename (set->file));
  return added;
}

gboolean
gs_fit_is_gpu_time (const GsFit *fit, const GsMeasureRow *row)
{
  return g_hash_table_contains (fit->gpu_time, row);
}

GPtrArray *
gs_fit_rows (const GsFit *fit, const char *op_class, gboolean holdout)
{
  GPtrArray *out = g_ptr_array_new ();
  for (guint i = 0; i < fit->rows->len; i++)
    {
      const GsMeasureRow *r = fit->rows->pdata[i];
      if (r->latency_ms <= 0 || r->op == NULL)
        continue;
      if (op_class != NULL && strcmp (r->op, op_class) != 0)
        continue;
      if (gs_measure_is_holdout (r) == holdout)
        g_ptr_array_add (out, (gpointer) r);
    }
  return out;
}

void
gs_fit_add_error (GsFit *fit, const GsFitError *e)
{
  GsFitError c = *e;
  c.op_class = g_strdup (e->op_class);
  g_array_append_val (fit->errors, c);
}

void
gs_fit_add_method (GsFit *fit, const char *line)
{
  g_ptr_array_add (fit->methods, g_strdup (line));
}

const GsFitError *
gs_fit_error (const GsFit *fit, const char *op_class)
{
  for (guint i = 0; i < fit->errors->len; i++)
    {
      const GsFitError *e = &g_array_index (fit->errors, GsFitError, i);
      if (strcmp (e->op_class, op_class) == 0)
        return e;
    }
  return NULL;
}

/* -------------------------------------------------------------- render */

/* A libconfig string literal. */
static void
append_quoted (GString *out, const char *s)
{
  g_string_append_c (out, '"');
  for (const char *p = s ? s : ""; *p; p++)
    {
      if (*p == '"' || *p == '\\')
        g_string_append_c (out, '\\');
      g_string_append_c (out, *p == '\n' ? ' ' : *p);
    }
  g_string_append_c (out, '"');
}

/* A double as a libconfig float literal (always with a '.' or exponent). */
static void
append_float (GString *out, double v)
{
  char buf[64];
  g_ascii_formatd (buf, sizeof buf, "%.6g", v);
  g_string_append (out, buf);
  if (strpbrk (buf, ".eEn") == NULL)
    g_string_append (out, ".0");
}

static void
render_params (const GsFit *fit, GString *out)
{
  guint n;
  const GsParam *params = gs_calibration_params (&n);
  const char *const provenance[] = { "source", "date", "method", "rows" };
  for (guint i = 0; i < n; i++)
    {
      const GsParam *p = &params[i];
      const char *key = p->key + strlen ("calibration.");
      gboolean skip = FALSE;
      for (guint j = 0; j < G_N_ELEMENTS (provenance); j++)
        skip |= strcmp (key, provenance[j]) == 0;
      if (skip)
        continue;
      gsize start = out->len;
      g_string_append_printf (out, "  %s = ", key);
      if (p->type == GS_PARAM_DOUBLE)
        append_float (out, gs_param_get_number (p, fit->arch));
      else
        {
          g_autofree char *v = gs_param_format (p, fit->arch);
          g_string_append (out, v);
        }
      g_string_append_c (out, ';');
      int used = (int) (out->len - start);
      g_string_append_printf (out, "%*s# %s%s%s\n", MAX (1, 34 - used), "",
                              p->desc, p->unit && *p->unit ? ", " : "",
                              p->unit ? p->unit : "");
    }
}

static void
render_errors (const GsFit *fit, GString *out)
{
  g_string_append (out, "  # mean absolute percentage error per op class: "
                        "on the holdout rows (the\n  # training rows' "
                        "error and the row counts in the comment)\n"
                        "  fit_error = {\n");
  for (guint i = 0; i < fit->errors->len; i++)
    {
      const GsFitError *e = &g_array_index (fit->errors, GsFitError, i);
      g_string_append_printf (out, "    %s = ", e->op_class);
      append_float (out, round (e->holdout_mape * 100) / 100);
      if (e->train_rows < 0)
        g_string_append (out, ";    # kept from the base file\n");
      else
        g_string_append_printf (out, ";    # train %.2f%%, %d train / %d "
                                "holdout rows\n", e->train_mape,
                                e->train_rows, e->holdout_rows);
    }
  g_string_append (out, "  };\n");
}

char *
gs_fit_render (const GsFit *fit, const char *date)
{
  GString *out = g_string_new (MARK_BEGIN "\n");
  g_string_append (out, "# Fitted from measurements by `gpusim calibrate` "
                        "(see gpusim-calibrate(1)).\ncalibration = {\n");
  GString *src = g_string_new ("");
  for (guint i = 0; i < fit->sources->len; i++)
    g_string_append_printf (src, "%s%s", i ? ", " : "",
                            (const char *) fit->sources->pdata[i]);
  g_autofree char *method = NULL;
  GString *m = g_string_new ("gpusim calibrate: fit on the training half "
                             "(gs_measure_is_holdout false), error on the "
                             "holdout half");
  for (guint i = 0; i < fit->methods->len; i++)
    g_string_append_printf (m, "; %s", (char *) fit->methods->pdata[i]);
  method = g_string_free (m, FALSE);
  g_string_append_printf (src, " (device %s)", fit->device);
  g_autofree char *source = g_string_free (src, FALSE);
  g_string_append (out, "  source = ");
  append_quoted (out, source);
  g_string_append (out, ";\n  date = ");
  append_quoted (out, date);
  g_string_append (out, ";\n  method = ");
  append_quoted (out, method);
  g_string_append_printf (out, ";\n  rows = %d;\n", fit->rows_used);
  render_params (fit, out);
  render_errors (fit, out);
  g_string_append (out, "  library = {\n");
  g_string_append (out, fit->library->str);
  g_string_append (out, "  };\n};\n" MARK_END "\n");
  return g_string_free (out, FALSE);
}

/* -------------------------------------------------------------- splice */

/* Lexical scan of libconfig text: is position I inside a comment or a
 * string?  STATE carries across calls in order. */
typedef struct {
  gboolean in_string, in_block, in_line;
} Lex;

static void
lex_step (Lex *lx, const char *t, gsize i)
{
  char c = t[i], n = t[i] ? t[i + 1] : 0;
  if (lx->in_line)
    lx->in_line = c != '\n';
  else if (lx->in_block)
    lx->in_block = !(i > 0 && t[i - 1] == '*' && c == '/');
  else if (lx->in_string)
    lx->in_string = !(c == '"' && (i == 0 || t[i - 1] != '\\'));
  else if (c == '"')
    lx->in_string = TRUE;
  else if (c == '#' || (c == '/' && n == '/'))
    lx->in_line = TRUE;
  else if (c == '/' && n == '*')
    lx->in_block = TRUE;
}

static gboolean
lex_code (const Lex *lx)
{
  return !lx->in_string && !lx->in_block && !lx->in_line;
}

/* A group member of libconfig text: `name = { body };`. */
typedef struct {
  gsize start, end;        /* its lines: [start of line, past ";\n") */
  gsize body, body_end;    /* between its braces */
  gsize name, name_len;
} Member;

static gboolean
is_ident (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-' || c == '*';
}

/* Completes M for the member whose name starts at I and whose value
 * (a group) opens at or after J; FALSE if the value is not a group. */
static gboolean
member_at (const char *text, gsize hi, gsize i, gsize j, const Lex *lx,
           Member *m)
{
  while (j < hi && g_ascii_isspace (text[j]))
    j++;
  if (j >= hi || text[j] != '{')
    return FALSE;
  Lex l2 = *lx;
  int d = 0;
  for (gsize k = i; k < hi; k++)
    {
      gboolean code = lex_code (&l2);
      if (code && text[k] == '{' && d++ == 0)
        m->body = k + 1;
      else if (code && text[k] == '}' && --d == 0)
        {
          m->body_end = k;
          gsize e = k + 1;
          while (e < hi && (text[e] == ' ' || text[e] == '\t'))
            e++;
          if (e < hi && (text[e] == ';' || text[e] == ','))
            e++;
          if (e < hi && text[e] == '\n')
            e++;
          gsize st = i;
          while (st > 0 && text[st - 1] != '\n')
            st--;
          m->start = st;
          m->end = e;
          return TRUE;
        }
      lex_step (&l2, text, k);
    }
  return FALSE;
}

/* The group members of TEXT[LO, HI) at its own top level (NAME NULL:
 * every one, appended to OUT; else the first so named, in *FOUND). */
static gboolean
scan_members (const char *text, gsize lo, gsize hi, const char *name,
              Member *found, GArray *out)
{
  Lex lx = { 0 };
  int depth = 0;
  for (gsize i = lo; i < hi; i++)
    {
      gboolean code = lex_code (&lx);
      if (code && depth == 0 && is_ident (text[i])
          && (i == lo || !is_ident (text[i - 1])))
        {
          gsize j = i;
          while (j < hi && is_ident (text[j]))
            j++;
          gsize n = j - i;
          while (j < hi && (text[j] == ' ' || text[j] == '\t'))
            j++;
          Member m = { 0 };
          m.name = i;
          m.name_len = n;
          if (j < hi && (text[j] == '=' || text[j] == ':')
              && member_at (text, hi, i, j + 1, &lx, &m))
            {
              gboolean match = name == NULL
                || (strlen (name) == n && strncmp (text + i, name, n) == 0);
              if (match && name != NULL)
                {
                  *found = m;
                  return TRUE;
                }
              if (match)
                g_array_append_val (out, m);
              for (gsize k = i; k < m.end - 1; k++)
                lex_step (&lx, text, k);
              i = m.end - 1;
              continue;
            }
        }
      if (code && text[i] == '{')
        depth++;
      else if (code && text[i] == '}')
        depth--;
      lex_step (&lx, text, i);
    }
  return FALSE;
}

/* Finds the top-level `calibration = { ... };` in TEXT: [*START, *END). */
static gboolean
find_group (const char *text, gsize *start, gsize *end)
{
  Member m;
  if (!scan_members (text, 0, strlen (text), "calibration", &m, NULL))
    return FALSE;
  *start = m.start;
  *end = m.end;
  return TRUE;
}

/* Removes a previous generated block (marker to marker, inclusive). */
static gboolean
find_marked (const char *text, const char *begin, const char *end_mark,
             gsize *start, gsize *end)
{
  const char *b = strstr (text, begin);
  if (b == NULL)
    return FALSE;
  const char *e = strstr (b, end_mark);
  if (e == NULL)
    return FALSE;
  e += strlen (end_mark);
  if (*e == '\n')
    e++;
  *start = (gsize) (b - text);
  *end = (gsize) (e - text);
  return TRUE;
}

static gboolean
find_markers (const char *text, gsize *start, gsize *end)
{
  return find_marked (text, MARK_BEGIN, MARK_END, start, end);
}

/* PATH relative to directory DIR when they share a prefix, else PATH. */
static char *
relative_to (const char *dir, const char *path)
{
  g_auto (GStrv) a = g_strsplit (dir, G_DIR_SEPARATOR_S, -1);
  g_auto (GStrv) b = g_strsplit (path, G_DIR_SEPARATOR_S, -1);
  guint i = 0;
  while (a[i] && b[i] && strcmp (a[i], b[i]) == 0)
    i++;
  if (i <= 1)
    return g_strdup (path);
  GString *out = g_string_new ("");
  for (guint j = i; a[j]; j++)
    if (*a[j])
      g_string_append (out, "../");
  for (guint j = i; b[j]; j++)
    g_string_append_printf (out, "%s%s", b[j], b[j + 1] ? "/" : "");
  return g_string_free (out, FALSE);
}

static char *
canonical_dir (const char *file)
{
  g_autofree char *dir = g_path_get_dirname (file);
  return g_canonicalize_filename (dir, NULL);
}

/* Rewrites a top-level `base = "x";` for a file written to OUT_DIR. */
static char *
rewrite_base (const char *text, const char *base_dir, const char *out_dir)
{
  if (strcmp (base_dir, out_dir) == 0)
    return g_strdup (text);
  GString *out = g_string_new ("");
  Lex lx = { 0 };
  int depth = 0;
  gsize len = strlen (text), i = 0;
  while (i < len)
    {
      gboolean code = lex_code (&lx);
      if (code && depth == 0 && strncmp (text + i, "base", 4) == 0
          && (i == 0 || text[i - 1] == '\n' || g_ascii_isspace (text[i - 1])))
        {
          gsize j = i + 4;
          while (j < len && g_ascii_isspace (text[j]))
            j++;
          if (j < len && (text[j] == '=' || text[j] == ':'))
            {
              j++;
              while (j < len && g_ascii_isspace (text[j]))
                j++;
              const char *q = text + j;
              const char *qe = *q == '"' ? strchr (q + 1, '"') : NULL;
              if (qe != NULL)
                {
                  g_autofree char *val = g_strndup (q + 1, qe - q - 1);
                  g_autofree char *abs = g_path_is_absolute (val)
                    ? g_strdup (val) : g_build_filename (base_dir, val, NULL);
                  g_autofree char *canon = g_canonicalize_filename (abs, NULL);
                  g_autofree char *rel = relative_to (out_dir, canon);
                  g_string_append_len (out, text + i, (gssize) (j - i));
                  g_string_append_printf (out, "\"%s\"", rel);
                  for (gsize k = i; k < (gsize) (qe - text) + 1; k++)
                    lex_step (&lx, text, k);
                  i = (gsize) (qe - text) + 1;
                  continue;
                }
            }
        }
      if (code && text[i] == '{')
        depth++;
      else if (code && text[i] == '}')
        depth--;
      lex_step (&lx, text, i);
      g_string_append_c (out, text[i]);
      i++;
    }
  return g_string_free (out, FALSE);
}

char *
gs_fit_splice (const char *base_text, const char *base_file,
               const char *out_file, const char *group, GError **error)
{
  gsize s, e;
  GString *out = g_string_new ("");
  if (find_markers (base_text, &s, &e) || find_group (base_text, &s, &e))
    {
      g_string_append_len (out, base_text, (gssize) s);
      g_string_append (out, group);
      g_string_append (out, base_text + e);
    }
  else
    {
      g_string_append (out, base_text);
      if (out->len > 0 && out->str[out->len - 1] != '\n')
        g_string_append_c (out, '\n');
      g_string_append_c (out, '\n');
      g_string_append (out, group);
    }
  g_autofree char *bd = canonical_dir (base_file);
  g_autofree char *od = canonical_dir (out_file);
  g_autofree char *text = g_string_free (out, FALSE);
  (void) error;
  return rewrite_base (text, bd, od);
}

char *
gs_fit_splice_model_runs (const char *base_text, const char *base_file,
                          const char *out_file, const char *group)
{
  gsize s = 0, e = 0, len = strlen (base_text);
  gboolean replace = find_marked (base_text, RUNS_BEGIN, RUNS_END, &s, &e);
  Member m;
  if (!replace && scan_members (base_text, 0, len, "model_runs", &m, NULL))
    {
      s = m.start;
      e = m.end;
      replace = TRUE;
    }
  if (!replace && find_markers (base_text, &s, &e))
    s = e;                /* right after the calibration group */
  else if (!replace)
    s = e = len;
  GString *out = g_string_new_len (base_text, (gssize) s);
  if (!replace && out->len > 0)
    {
      if (out->str[out->len - 1] != '\n')
        g_string_append_c (out, '\n');
      g_string_append_c (out, '\n');
    }
  g_string_append_printf (out, RUNS_BEGIN "\n%s" RUNS_END "\n", group);
  g_string_append (out, base_text + e);
  g_autofree char *bd = canonical_dir (base_file);
  g_autofree char *od = canonical_dir (out_file);
  g_autofree char *text = g_string_free (out, FALSE);
  return rewrite_base (text, bd, od);
}

/* ----------------------------------------------------- keeping the rest */

void
gs_fit_keep_library (GsFit *fit, const char *base_text, const char *except)
{
  Member cal, lib;
  gsize len = strlen (base_text);
  if (!scan_members (base_text, 0, len, "calibration", &cal, NULL)
      || !scan_members (base_text, cal.body, cal.body_end, "library", &lib,
                        NULL))
    return;
  g_autoptr (GArray) members = g_array_new (FALSE, FALSE, sizeof (Member));
  scan_members (base_text, lib.body, lib.body_end, NULL, NULL, members);
  for (guint i = 0; i < members->len; i++)
    {
      const Member *m = &g_array_index (members, Member, i);
      if (strlen (except) == m->name_len
          && strncmp (base_text + m->name, except, m->name_len) == 0)
        continue;
      g_string_append_len (fit->library, base_text + m->start,
                           (gssize) (m->end - m->start));
    }
  /* The errors recorded for the kept groups' op classes. */
  config_setting_t *fe = fit->arch->chain
    ? gs_cfg_chain_lookup (fit->arch->chain, "calibration.fit_error") : NULL;
  for (int i = 0; fe && i < config_setting_length (fe); i++)
    {
      config_setting_t *e = config_setting_get_elem (fe, i);
      const char *name = config_setting_name (e);
      int ty = config_setting_type (e);
      if (gs_fit_error (fit, name) != NULL
          || (ty != CONFIG_TYPE_FLOAT && ty != CONFIG_TYPE_INT))
        continue;
      GsFitError k = { (char *) name, -1, -1, -1,
                       ty == CONFIG_TYPE_FLOAT ? config_setting_get_float (e)
                       : config_setting_get_int (e) };
      gs_fit_add_error (fit, &k);
    }
}

/* ------------------------------------------------------------- helpers */

gboolean
gs_fit_gemm_op (const GsMeasureRow *row, GsOp *op)
{
  if (row->op == NULL || row->M <= 0 || row->N <= 0 || row->K <= 0)
    return FALSE;
  /* bmm_nt: the second operand stored transposed, [M,N] x [K,N]^T, as in
   * attention's q @ k.transpose(-1, -2); cuBLAS runs it "tn", like a
   * Linear, but batched. */
  gboolean bmm_nt = strcmp (row->op, "bmm_nt") == 0;
  gboolean bmm = bmm_nt || strcmp (row->op, "bmm") == 0;
  /* linear_nn: x @ W with W stored [in, out] (GPT-2's Conv1D addmm), a
   * single GEMM cuBLAS runs "nn". */
  gboolean linear_nn = strcmp (row->op, "linear_nn") == 0;
  gboolean linear = linear_nn || strcmp (row->op, "linear") == 0;
  if (!bmm && !linear)
    return FALSE;
  int64_t b = row->B > 0 ? row->B : 1;
  gs_op_init (op);
  op->kind = GS_OP_GEMM;
  op->name = g_strdup (row->op);
  op->dtype = row->dtype;
  op->batch = bmm ? b : 1;
  op->m = bmm ? row->M : b * row->M;
  op->n = row->K;
  op->k = row->N;
  op->layout = (bmm && !bmm_nt) || linear_nn ? GS_LAYOUT_NN : GS_LAYOUT_TN;
  op->bias = linear;
  return TRUE;
}

void
gs_fit_hint (const GsMeasureRow *row, GsKernelHint *hint)
{
  memset (hint, 0, sizeof *hint);
  hint->kernel = row->kernel;
  memcpy (hint->grid, row->grid, sizeof hint->grid);
  memcpy (hint->block, row->block, sizeof hint->block);
}

gboolean
gs_fit_run (const GsArch *arch, const GArray *kernels, GsTime *gpu_time,
            GsTime *kernel_time, GError **error)
{
  GsGpuOptions opt = { 0 };
  g_autoptr (GsGpu) gpu = gs_gpu_new (arch, &opt, error);
  if (gpu == NULL)
    return FALSE;
  for (guint i = 0; i < kernels->len; i++)
    if (!gs_gpu_submit (gpu, &g_array_index (kernels, GsKernel, i), NULL,
                        error))
      return FALSE;
  if (!gs_gpu_run (gpu, error))
    return FALSE;
  *gpu_time = gs_gpu_end_time (gpu);
  if (kernel_time != NULL)
    *kernel_time = gs_gpu_kernel_time (gpu);
  return TRUE;
}

gboolean
gs_fit_is_dispatch_row (const GsMeasureRow *row)
{
  return row->op != NULL && strcmp (row->op, "block_dispatch") == 0
         && row->latency_ms > 0;
}

static guint64
row_blocks (const GsMeasureRow *r)
{
  return (guint64) r->grid[0] * MAX (r->grid[1], 1u) * MAX (r->grid[2], 1u);
}

static guint
row_threads (const GsMeasureRow *r)
{
  return r->block[0] * MAX (r->block[1], 1u) * MAX (r->block[2], 1u);
}

guint
gs_fit_kernel_fixed (GsFit *fit)
{
  g_autoptr (GHashTable) sizes = g_hash_table_new (NULL, NULL);
  guint used = 0;
  for (guint i = 0; i < fit->rows->len; i++)
    {
      const GsMeasureRow *r = fit->rows->pdata[i];
      if (gs_fit_is_dispatch_row (r) && gs_fit_is_gpu_time (fit, r)
          && row_blocks (r) > 0 && row_threads (r) > 0)
        g_hash_table_add (sizes, GUINT_TO_POINTER (row_threads (r)));
    }
  g_autoptr (GArray) icept = g_array_new (FALSE, FALSE, sizeof (double));
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init (&it, sizes);
  while (g_hash_table_iter_next (&it, &key, NULL))
    {
      guint threads = GPOINTER_TO_UINT (key);
      double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
      for (guint i = 0; i < fit->rows->len; i++)
        {
          const GsMeasureRow *r = fit->rows->pdata[i];
          if (!gs_fit_is_dispatch_row (r) || !gs_fit_is_gpu_time (fit, r)
              || row_threads (r) != threads || row_blocks (r) == 0)
            continue;
          double x = (double) row_blocks (r), y = r->latency_ms * 1e3;
          n++;
          sx += x;
          sy += y;
          sxx += x * x;
          sxy += x * y;
        }
      double det = n * sxx - sx * sx;
      if (n < 2 || det <= 0)
        continue;                  /* one grid size: no line */
      double slope = (n * sxy - sx * sy) / det;
      double b = (sy - slope * sx) / n;
      g_array_append_val (icept, b);
      used += (guint) n;
    }
  if (icept->len == 0)
    return 0;
  guint sets = icept->len;
  double us = MAX (gs_fit_median ((double *) (void *) icept->data, sets), 0);
  fit->arch->cal.kernel_fixed_us = us;
  g_autofree char *line = g_strdup_printf (
    "kernel_fixed_us: the median over %u block size%s of the intercept of "
    "CUPTI duration against blocks (%u block_dispatch rows)", sets,
    sets == 1 ? "" : "s", used);
  gs_fit_add_method (fit, line);
  return used;
}

double
gs_fit_ape (double pred, double measured)
{
  return fabs (pred - measured) / measured * 100.0;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

double
gs_fit_median (double *v, guint n)
{
  g_assert (n > 0);
  qsort (v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double
gs_fit_golden (double (*f) (double x, void *data), void *data, double lo,
               double hi, int iterations, double *fx)
{
  const double r = (sqrt (5.0) - 1) / 2;
  double a = lo, b = hi;
  double c = b - r * (b - a), d = a + r * (b - a);
  double fc = f (c, data), fd = f (d, data);
  for (int i = 0; i < iterations; i++)
    {
      if (fc <= fd)
        {
          b = d;
          d = c;
          fd = fc;
          c = b - r * (b - a);
          fc = f (c, data);
        }
      else
        {
          a = c;
          c = d;
          fc = fd;
          d = a + r * (b - a);
          fd = f (d, data);
        }
    }
  double x = fc <= fd ? c : d;
  if (fx)
    *fx = MIN (fc, fd);
  return x;
}
