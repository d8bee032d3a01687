/* gpusim: the importer of per-op model traces (NeuSight's *-ops.csv) and
 * the format detection behind gs_import_load() (see import.h).
 *
 * A per-op trace has one row per torch.fx node of a traced model, in
 * program order: the node's name, its fx kind (placeholder, get_attr,
 * call_module, call_function, call_method, output), its target (a module
 * path, a function's repr such as "<built-in method matmul of type object
 * at 0x...>", or a method name), the shapes of its tensor inputs
 * ("[[8, 512, 1024], [8, 1, 1, 512]]"), its output's shape ("(8, 512,
 * 1024)"), dtype ("torch.float32") and its latency in ms, timed alone.
 * The module *types* are not in the file: a leaf module is told by its
 * name (norm, dropout, embedding) and its shapes (a Linear maps the last
 * dimension and keeps the others).
 */
#include "config.h"
#include "calibrate/import.h"
#include "calibrate/csv.h"
#include "sim/error.h"

#include <string.h>

#define MAX_RANK 8
#define MAX_INPUTS 8

typedef struct {
  int rank;                  /* -1: not a list of whole numbers */
  gint64 d[MAX_RANK];
} Shape;

typedef struct {
  int n;                     /* -1: unparsable */
  Shape in[MAX_INPUTS];
} Shapes;

/* ------------------------------------------------------------- shapes */

static const char *
skip_blanks (const char *p)
{
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

/* One bracketed list of whole numbers, "[8, 512]" or "(8, 512)" or
 * "(1,)"; *END after its closing bracket.  FALSE if it is anything else. */
static gboolean
parse_dims (const char *p, Shape *s, const char **end)
{
  p = skip_blanks (p);
  char close = *p == '[' ? ']' : *p == '(' ? ')' : '\0';
  if (close == '\0')
    return FALSE;
  p = skip_blanks (p + 1);
  s->rank = 0;
  while (*p != close)
    {
      if (s->rank == MAX_RANK || !g_ascii_isdigit (*p))
        return FALSE;
      char *e;
      guint64 v = g_ascii_strtoull (p, &e, 10);
      if (v > G_MAXINT32)
        return FALSE;
      s->d[s->rank++] = (gint64) v;
      p = skip_blanks (e);
      if (*p == ',')
        p = skip_blanks (p + 1);
      else if (*p != close)
        return FALSE;
    }
  *end = p + 1;
  return TRUE;
}

/* "[[8, 512], [1]]": the list of input shapes. */
static Shapes
parse_inputs (const char *text)
{
  Shapes s = { .n = -1 };
  const char *p = skip_blanks (text ? text : "");
  if (*p != '[')
    return s;
  p = skip_blanks (p + 1);
  int n = 0;
  while (*p != ']')
    {
      if (n == MAX_INPUTS || !parse_dims (p, &s.in[n], &p))
        return s;
      n++;
      p = skip_blanks (p);
      if (*p == ',')
        p = skip_blanks (p + 1);
      else if (*p != ']')
        return s;
    }
  if (*skip_blanks (p + 1) != '\0')
    return s;
  s.n = n;
  return s;
}

static Shape
parse_output (const char *text)
{
  Shape s = { .rank = -1 };
  const char *end;
  if (text == NULL || !parse_dims (text, &s, &end) || *skip_blanks (end))
    s.rank = -1;
  return s;
}

static gboolean
same_shape (const Shape *a, const Shape *b)
{
  if (a->rank != b->rank || a->rank < 0)
    return FALSE;
  for (int i = 0; i < a->rank; i++)
    if (a->d[i] != b->d[i])
      return FALSE;
  return TRUE;
}

static gint64
leading (const Shape *s, int keep)
{
  gint64 n = 1;
  for (int i = 0; i < s->rank - keep; i++)
    n *= s->d[i];
  return n;
}

/* B rows of H: the last dimension and the product of the others. */
static gboolean
set_rows (GsMeasureRow *row, const char *op, const Shape *x)
{
  if (x->rank < 1)
    return FALSE;
  row->op = g_strdup (op);
  row->B = leading (x, 1);
  row->H = x->d[x->rank - 1];
  return TRUE;
}

/* X [..., M, N] times W: a linear layer, NeuSight's columns (B·M rows, N
 * the reduction, K the outputs).  STORED: W is stored [N, K] and used as
 * it is (GPT-2's Conv1D, x @ W), which cuBLAS runs "nn" ("linear_nn");
 * otherwise W is nn.Linear's [K, N], transposed ("linear", "tn"). */
static gboolean
set_linear (GsMeasureRow *row, const Shape *x, gint64 k, gboolean stored)
{
  if (x->rank < 1 || k <= 0)
    return FALSE;
  row->op = g_strdup (stored ? "linear_nn" : "linear");
  row->B = x->rank >= 2 ? leading (x, 2) : 1;
  row->M = x->rank >= 2 ? x->d[x->rank - 2] : 1;
  row->N = x->d[x->rank - 1];
  row->K = k;
  return TRUE;
}

/* ------------------------------------------------------------ mapping */

/* The last few shapes some kind of view produced (oldest dropped). */
typedef struct {
  Shape s[8];
  int n, cap;
} Recent;

static void
recent_add (Recent *r, const Shape *s)
{
  if (r->n == r->cap)
    {
      memmove (r->s, r->s + 1, sizeof r->s[0] * (gsize) (r->cap - 1));
      r->n--;
    }
  r->s[r->n++] = *s;
}

static gboolean
recent_has (const Recent *r, const Shape *s)
{
  for (int i = 0; i < r->n; i++)
    if (same_shape (&r->s[i], s))
      return TRUE;
  return FALSE;
}

typedef struct {
  /* Output shapes of the transposes (last two dimensions swapped) seen
   * since the last GEMM: a matmul whose second input is one of them reads
   * a transposed view (attention's q @ k^T). */
  Recent swapped;
  /* Output shapes of head-split views: a permute that moves a leading
   * dimension ([B,S,H,D] -> [B,H,S,D]), and the transposes of those.
   * Kept across GEMMs: v is split before q @ k^T and used after it. */
  Recent split;
  /* The operands the last matmul copied contiguous ("a", "b", "ab" or
   * ""), for the row's clones cell. */
  const char *clones;
  /* The node's inputs known contiguous (input_contiguous "[True, False]"):
   * an operand already contiguous is never copied. */
  gboolean contiguous[MAX_INPUTS];
} Context;

/* The function's name in an fx target: "<built-in method matmul of type
 * object at 0x..>", "<built-in function add>", "<function softmax at
 * 0x..>" or a plain name ("torch.matmul", "matmul"). */
static char *
function_name (const char *target)
{
  static const char *const prefixes[] = {
    "<built-in method ", "<built-in function ", "<function ", "<method ",
  };
  const char *p = target;
  for (guint i = 0; i < G_N_ELEMENTS (prefixes); i++)
    if (g_str_has_prefix (target, prefixes[i]))
      {
        p = target + strlen (prefixes[i]);
        break;
      }
  const char *dot = NULL;
  gsize len = strcspn (p, " >");
  for (const char *q = p; q < p + len; q++)
    if (*q == '.')
      dot = q;
  if (dot)
    {
      len -= (gsize) (dot + 1 - p);
      p = dot + 1;
    }
  return g_strndup (p, len);
}

static void
note_transpose (Context *c, const Shape *in, const Shape *out)
{
  int r = in->rank;
  if (r < 2 || out->rank != r)
    return;
  for (int i = 0; i < r - 2; i++)
    if (in->d[i] != out->d[i])
      return;
  if (in->d[r - 2] != out->d[r - 1] || in->d[r - 1] != out->d[r - 2])
    return;
  recent_add (&c->swapped, out);
}

/* A permute or transpose from IN to OUT: a head split when it moves one
 * of the leading dimensions (the shapes differ there), or transposes a
 * head-split view. */
static void
note_split (Context *c, const Shape *in, const Shape *out)
{
  int r = in->rank;
  if (r < 3 || out->rank != r || recent_has (&c->split, out))
    return;
  gboolean moved = recent_has (&c->split, in);
  for (int i = 0; i < r - 2 && !moved; i++)
    moved = in->d[i] != out->d[i];
  if (moved)
    recent_add (&c->split, out);
}

/* Does torch.matmul copy operand S before its bmm?  It reshapes
 * [B,H,M,N] to [B*H,M,N]; a head-split view's leading dimensions merge
 * only when at most one of them is larger than 1 (so never a copy with
 * one sequence), and bmm takes any matrix with one unit stride. */
static gboolean
matmul_copies (const Context *c, const Shape *s)
{
  if (s->rank < 4 || !recent_has (&c->split, s))
    return FALSE;
  int big = 0;
  for (int i = 0; i < s->rank - 2; i++)
    big += s->d[i] > 1;
  return big > 1;
}

/* torch.matmul / bmm / mm of A and B. */
static gboolean
map_matmul (Context *c, GsMeasureRow *row, const Shape *a, const Shape *b)
{
  gboolean nt = recent_has (&c->swapped, b);
  c->swapped.n = 0;
  if (a->rank < 2 || b->rank < 2 || a->d[a->rank - 1] != b->d[b->rank - 2])
    return FALSE;
  if (b->rank == 2)
    return set_linear (row, a, b->d[1], !nt);
  if (a->rank != b->rank)
    return FALSE;                       /* broadcast batches */
  for (int i = 0; i < a->rank - 2; i++)
    if (a->d[i] != b->d[i])
      return FALSE;
  /* A copied operand is contiguous: a copied k^T is no longer a
   * transposed view, and the bmm runs "nn". */
  gboolean copy_a = !c->contiguous[0] && matmul_copies (c, a);
  gboolean copy_b = !c->contiguous[1] && matmul_copies (c, b);
  nt = nt && !copy_b;
  c->clones = copy_a && copy_b ? "ab" : copy_a ? "a" : copy_b ? "b" : "";
  row->op = g_strdup (nt ? "bmm_nt" : "bmm");
  row->B = leading (a, 2);
  row->M = a->d[a->rank - 2];
  row->N = a->d[a->rank - 1];
  row->K = b->d[b->rank - 1];
  return TRUE;
}

/* add, mul, div, pow: same-shape operands, or a Python scalar as the
 * second (the "u" forms).  Broadcasting ones are not ops gpusim predicts
 * alone. */
static gboolean
map_binary (GsMeasureRow *row, const char *op, const Shapes *s)
{
  if (s->n == 1)
    {
      g_autofree char *u = g_strconcat (op, "u", NULL);
      return set_rows (row, u, &s->in[0]);
    }
  if (s->n == 2 && same_shape (&s->in[0], &s->in[1]))
    return set_rows (row, op, &s->in[0]);
  return FALSE;
}

static gboolean
map_function (Context *c, GsMeasureRow *row, const char *fn, const Shapes *s,
              const Shape *out)
{
  static const struct { const char *fn, *op; } binary[] = {
    { "add", "add" }, { "iadd", "add" }, { "mul", "mul" }, { "imul", "mul" },
    { "truediv", "div" }, { "itruediv", "div" }, { "div", "div" },
    { "pow", "pow" },
  };
  static const char *const unary[] = { "relu", "gelu", "tanh" };
  if (strcmp (fn, "transpose") == 0 || strcmp (fn, "permute") == 0
      || strcmp (fn, "t") == 0)
    {
      if (s->n >= 1)
        {
          note_transpose (c, &s->in[0], out);
          note_split (c, &s->in[0], out);
        }
      return FALSE;
    }
  if (strcmp (fn, "matmul") == 0 || strcmp (fn, "bmm") == 0
      || strcmp (fn, "mm") == 0)
    return s->n == 2 && map_matmul (c, row, &s->in[0], &s->in[1]);
  if (strcmp (fn, "addmm") == 0)
    {
      gboolean t = s->n == 3 && recent_has (&c->swapped, &s->in[2]);
      c->swapped.n = 0;
      return s->n == 3 && s->in[1].rank == 2 && s->in[2].rank == 2
             && s->in[1].d[1] == s->in[2].d[0]
             && set_linear (row, &s->in[1], s->in[2].d[1], !t);
    }
  if (strcmp (fn, "linear") == 0)
    return s->n >= 2 && s->in[1].rank == 2
           && set_linear (row, &s->in[0], s->in[1].d[0], FALSE);
  if (strcmp (fn, "softmax") == 0 || strcmp (fn, "_softmax") == 0)
    return s->n >= 1 && set_rows (row, "softmax", &s->in[0]);
  if (strcmp (fn, "layer_norm") == 0)
    return s->n >= 1 && set_rows (row, "ln", &s->in[0]);
  for (guint i = 0; i < G_N_ELEMENTS (binary); i++)
    if (strcmp (fn, binary[i].fn) == 0)
      return map_binary (row, binary[i].op, s);
  for (guint i = 0; i < G_N_ELEMENTS (unary); i++)
    if (strcmp (fn, unary[i]) == 0)
      return s->n == 1 && set_rows (row, unary[i], &s->in[0]);
  return FALSE;
}

/* A leaf module, by the last part of its path and its shapes. */
static gboolean
map_module (GsMeasureRow *row, const char *target, const Shapes *s,
            const Shape *out)
{
  const char *dot = strrchr (target, '.');
  g_autofree char *leaf = g_ascii_strdown (dot ? dot + 1 : target, -1);
  if (s->n != 1 || out->rank < 1)
    return FALSE;
  const Shape *x = &s->in[0];
  if (strstr (leaf, "drop") || strstr (leaf, "emb") || strstr (leaf, "act")
      || strcmp (leaf, "wte") == 0 || strcmp (leaf, "wpe") == 0)
    return FALSE;       /* dropout, embedding gather, activation (unknown) */
  if (strstr (leaf, "norm") || strcmp (leaf, "ln") == 0
      || g_str_has_prefix (leaf, "ln_"))
    return same_shape (x, out) && set_rows (row, "ln", x);
  /* A Linear: the last dimension mapped, the others kept. */
  if (x->rank != out->rank)
    return FALSE;
  for (int i = 0; i < x->rank - 1; i++)
    if (x->d[i] != out->d[i])
      return FALSE;
  return set_linear (row, x, out->d[out->rank - 1], FALSE);
}

/* ------------------------------------------------------------- reading */

typedef struct {
  int name, fx_op, target, inputs, output, dtype, latency;
  int contiguous;            /* input_contiguous, in NeuSight's labels */
} Columns;

static int
find_column (char **header, const char *name)
{
  for (int i = 0; header[i]; i++)
    if (g_ascii_strcasecmp (g_strstrip (header[i]), name) == 0)
      return i;
  return -1;
}

static const char *
cell (char **cells, guint n, int col)
{
  return col >= 0 && (guint) col < n ? cells[col] : NULL;
}

static int
torch_dtype (const char *text)
{
  static const struct { const char *name; GsDtype d; } names[] = {
    { "torch.float32", GS_DTYPE_FP32 }, { "torch.float", GS_DTYPE_FP32 },
    { "torch.float16", GS_DTYPE_FP16 }, { "torch.half", GS_DTYPE_FP16 },
    { "torch.bfloat16", GS_DTYPE_BF16 }, { "torch.float64", GS_DTYPE_FP64 },
    { "torch.float8_e4m3fn", GS_DTYPE_FP8 },
    { "torch.float8_e5m2", GS_DTYPE_FP8 },
  };
  for (guint i = 0; text && i < G_N_ELEMENTS (names); i++)
    if (strcmp (text, names[i].name) == 0)
      return names[i].d;
  return -1;
}

/* "[True, False]": which inputs are contiguous; anything else leaves
 * them all unknown (FALSE). */
static void
parse_contiguous (const char *text, gboolean out[MAX_INPUTS])
{
  memset (out, 0, sizeof (gboolean) * MAX_INPUTS);
  const char *p = skip_blanks (text ? text : "");
  if (*p != '[')
    return;
  for (int i = 0; i < MAX_INPUTS; i++)
    {
      p = skip_blanks (p + 1);
      if (g_str_has_prefix (p, "True"))
        out[i] = TRUE;
      else if (!g_str_has_prefix (p, "False"))
        break;
      p = strchr (p, ',');
      if (p == NULL)
        break;
    }
}

static gboolean
take_node (GsMeasureSet *set, Context *ctx, const Columns *col, char **cells,
           guint line, const GsImportOptions *opts, const char *file,
           GError **error)
{
  guint n = g_strv_length (cells);
  const char *kind = cell (cells, n, col->fx_op);
  if (kind == NULL || !g_str_has_prefix (kind, "call_"))
    return TRUE;            /* placeholder, get_attr, output: no work */
  const char *lat_text = cell (cells, n, col->latency);
  char *end = NULL;
  double lat = lat_text ? g_ascii_strtod (lat_text, &end) : -1;
  if (lat_text == NULL || end == lat_text || *skip_blanks (end) || !(lat >= 0)
      || lat > 1e9)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:%u: latency: '%s' is not a time in ms >= 0", file,
                   line, lat_text ? lat_text : "");
      return FALSE;
    }
  const char *target = cell (cells, n, col->target);
  const char *inputs = cell (cells, n, col->inputs);
  const char *output = cell (cells, n, col->output);
  GsMeasureRow *row = gs_measure_append (set);
  row->line = line;
  row->device = g_strdup (opts ? opts->device : NULL);
  row->latency_ms = lat;
  Shapes s = parse_inputs (inputs);
  Shape out = parse_output (output);
  /* A node without a floating-point tensor result is host arithmetic on
   * sizes (its dtype cell is empty) or integer and mask work: no op. */
  int d = torch_dtype (cell (cells, n, col->dtype));
  gboolean known = FALSE;
  ctx->clones = "";
  parse_contiguous (cell (cells, n, col->contiguous), ctx->contiguous);
  if (s.n >= 0 && target && (col->dtype < 0 || d >= 0))
    {
      if (strcmp (kind, "call_module") == 0)
        known = map_module (row, target, &s, &out);
      else
        {
          g_autofree char *fn = function_name (target);
          known = map_function (ctx, row, fn, &s, &out);
        }
    }
  if (!known)
    {
      g_clear_pointer (&row->op, g_free);
      row->B = row->M = row->N = row->K = row->H = -1;
    }
  if (d >= 0)
    row->dtype = (GsDtype) d;
  const char *name = cell (cells, n, col->name);
  gs_measure_set_cell (set, row, "node", name ? name : "");
  gs_measure_set_cell (set, row, "fx_op", kind);
  gs_measure_set_cell (set, row, "fx_target", target ? target : "");
  gs_measure_set_cell (set, row, "input_shapes", inputs ? inputs : "");
  gs_measure_set_cell (set, row, "output_shape", output ? output : "");
  gs_measure_set_cell (set, row, "clones", known ? ctx->clones : "");
  return TRUE;
}

static gboolean
read_header (GsCsvReader *r, char ***header, GError **error)
{
  for (;;)
    {
      guint line;
      switch (gs_csv_reader_next (r, header, &line, error))
        {
        case GS_CSV_RECORD:
          return TRUE;
        case GS_CSV_EOF:
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s: empty file",
                       gs_csv_reader_name (r));
          return FALSE;
        case GS_CSV_ERROR:
          return FALSE;
        case GS_CSV_COMMENT:
          g_strfreev (*header);
          *header = NULL;
          break;
        }
    }
}

static gboolean
find_columns (char **header, Columns *col, const char *file, GError **error)
{
  col->name = find_column (header, "name");
  col->fx_op = find_column (header, "op");
  col->target = find_column (header, "target");
  col->inputs = find_column (header, "input_shapes");
  col->output = find_column (header, "output_shape");
  col->dtype = find_column (header, "dtype");
  col->contiguous = find_column (header, "input_contiguous");
  /* gpusim's export names it latency_ms; NeuSight's label files have
   * latency (forward plus backward in training) and fw_latency. */
  col->latency = find_column (header, "latency_ms");
  if (col->latency < 0)
    col->latency = find_column (header, "fw_latency");
  if (col->latency < 0)
    col->latency = find_column (header, "latency");
  const char *missing = col->fx_op < 0 ? "op" : col->target < 0 ? "target"
                        : col->inputs < 0 ? "input_shapes"
                        : col->output < 0 ? "output_shape"
                        : col->latency < 0 ? "latency_ms" : NULL;
  if (missing)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:1: not a per-op trace: no column '%s' (expected op, "
                   "target, input_shapes, output_shape and latency_ms)", file,
                   missing);
      return FALSE;
    }
  return TRUE;
}

/* The per-op trace R reads, named FILE. */
static GsMeasureSet *
ops_read (GsCsvReader *r, const char *file, const GsImportOptions *options,
          GError **error)
{
  gs_csv_reader_set_comments (r, TRUE);
  g_auto (GStrv) header = NULL;
  Columns col;
  if (!read_header (r, &header, error)
      || !find_columns (header, &col, file, error))
    return NULL;
  g_autoptr (GsMeasureSet) set = gs_measure_new ();
  set->file = g_strdup (file);
  g_autofree char *base = g_path_get_basename (file);
  g_autofree char *source = g_strdup_printf ("per-op model trace %s", base);
  gs_measure_set_provenance (set, "source", source);
  Context ctx = { .swapped.cap = 4, .split.cap = 8 };
  guint nodes = 0;
  for (;;)
    {
      g_auto (GStrv) cells = NULL;
      guint line = 0;
      GsCsvKind k = gs_csv_reader_next (r, &cells, &line, error);
      if (k == GS_CSV_ERROR)
        return NULL;
      if (k == GS_CSV_EOF)
        break;
      if (k == GS_CSV_COMMENT)
        continue;
      if (g_strv_length (cells) != g_strv_length (header))
        {
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s:%u: %u %s where the header has %u", file, line,
                       g_strv_length (cells),
                       gs_plural (g_strv_length (cells), "field", "fields"),
                       g_strv_length (header));
          return NULL;
        }
      nodes++;
      if (!take_node (set, &ctx, &col, cells, line, options, file, error))
        return NULL;
    }
  if (set->rows->len == 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: %u %s and none that ran (op call_module, "
                   "call_function or call_method)", file, nodes,
                   gs_plural (nodes, "node", "nodes"));
      return NULL;
    }
  return g_steal_pointer (&set);
}

GsMeasureSet *
gs_import_neusight_ops (const char *file, const GsImportOptions *options,
                        GError **error)
{
  g_autoptr (GsCsvReader) r = gs_csv_reader_open (file, error);
  if (r == NULL)
    return NULL;
  return ops_read (r, file, options, error);
}

GsMeasureSet *
gs_import_neusight_ops_stream (GInputStream *in, const char *name,
                               const GsImportOptions *options,
                               GError **error)
{
  g_autoptr (GInputStream) text = gs_csv_open_stream (in, name, error);
  if (text == NULL)
    return NULL;
  g_autoptr (GsCsvReader) r = gs_csv_reader_new (text, name);
  return ops_read (r, name, options, error);
}

/* ------------------------------------------------------------- formats */

static const char *const format_names[] = {
  [GS_IMPORT_AUTO] = "auto",
  [GS_IMPORT_MEASUREMENTS] = "measurements",
  [GS_IMPORT_KINETO] = "kineto",
  [GS_IMPORT_NEUSIGHT_OPS] = "ops",
};

const char *
gs_import_format_name (GsImportFormat format)
{
  return format_names[format];
}

gboolean
gs_import_format_parse (const char *name, GsImportFormat *format)
{
  for (guint i = 0; i < G_N_ELEMENTS (format_names); i++)
    if (g_ascii_strcasecmp (name, format_names[i]) == 0)
      {
        *format = (GsImportFormat) i;
        return TRUE;
      }
  return FALSE;
}

/* Reads the first SIZE - 1 bytes of IN (decompressed, NULL: none) into
 * BUF, NUL-terminated; returns how many. */
static gsize
head_of (GInputStream *in, char *buf, gsize size)
{
  gsize got = 0;
  if (in == NULL || size == 0
      || !g_input_stream_read_all (in, buf, size - 1, &got, NULL, NULL))
    got = 0;
  if (size > 0)
    buf[got] = '\0';
  return got;
}

gsize
gs_import_head (const char *file, char *buf, gsize size)
{
  g_autoptr (GInputStream) in = gs_csv_open_input (file, NULL);
  return head_of (in, buf, size);
}

/* The format of a file whose first bytes (decompressed) are BUF. */
static GsImportFormat
detect_head (const char *buf)
{
  const char *p = buf;
  if (g_str_has_prefix (p, "\xef\xbb\xbf"))
    p += 3;
  while (g_ascii_isspace (*p))
    p++;
  if (*p == '{' || *p == '[')
    return GS_IMPORT_KINETO;
  /* The first line that is not a comment: a per-op trace's header names
   * its nodes' target and input shapes. */
  while (*p == '#')
    {
      p += strcspn (p, "\r\n");
      while (*p == '\r' || *p == '\n')
        p++;
    }
  g_autofree char *first = g_strndup (p, strcspn (p, "\r\n"));
  g_auto (GStrv) names = g_strsplit (first, ",", -1);
  return find_column (names, "input_shapes") >= 0
         && find_column (names, "target") >= 0
         ? GS_IMPORT_NEUSIGHT_OPS : GS_IMPORT_MEASUREMENTS;
}

GsImportFormat
gs_import_detect (const char *file)
{
  char buf[4096];
  gs_import_head (file, buf, sizeof buf);
  return detect_head (buf);
}

/* The format of DATA (plain or gzip) from its first bytes. */
static GsImportFormat
detect_data (GBytes *data)
{
  g_autoptr (GInputStream) raw = g_memory_input_stream_new_from_bytes (data);
  g_autoptr (GInputStream) in = gs_csv_open_stream (raw, GS_CSV_STDIN, NULL);
  char buf[4096];
  head_of (in, buf, sizeof buf);
  return detect_head (buf);
}

/* Loads FILE as FORMAT, from IN (FILE's bytes) unless IN is NULL. */
static GsMeasureSet *
load_as (const char *file, GInputStream *in, GsImportFormat format,
         const GsImportOptions *options, gboolean require_latency,
         GError **error)
{
  switch (format)
    {
    case GS_IMPORT_KINETO:
      return in ? gs_import_kineto_stream (in, file, options, error)
                : gs_import_kineto (file, options, error);
    case GS_IMPORT_NEUSIGHT_OPS:
      return in ? gs_import_neusight_ops_stream (in, file, options, error)
                : gs_import_neusight_ops (file, options, error);
    case GS_IMPORT_AUTO:
    case GS_IMPORT_MEASUREMENTS:
      break;
    }
  GsMeasureSet *set = in ? gs_measure_load_stream (in, file, require_latency,
                                                   error)
                         : gs_measure_load (file, require_latency, error);
  if (set && options && options->device)
    for (guint i = 0; i < set->rows->len; i++)
      {
        GsMeasureRow *row = &g_array_index (set->rows, GsMeasureRow, i);
        if (row->device == NULL)
          row->device = g_strdup (options->device);
      }
  return set;
}

GsMeasureSet *
gs_import_read (const char *file, GsImportFormat *format,
                const GsImportOptions *options, gboolean require_latency,
                GError **error)
{
  if (strcmp (file, "-") != 0)
    {
      if (*format == GS_IMPORT_AUTO)
        *format = gs_import_detect (file);
      return load_as (file, NULL, *format, options, require_latency, error);
    }
  /* Standard input can be read once: whole, then its format found from
   * its first bytes and the bytes read again. */
  g_autoptr (GBytes) data = gs_csv_read_stdin (error);
  if (data == NULL)
    return NULL;
  if (*format == GS_IMPORT_AUTO)
    *format = detect_data (data);
  g_autoptr (GInputStream) in = g_memory_input_stream_new_from_bytes (data);
  return load_as (GS_CSV_STDIN, in, *format, options, require_latency,
                  error);
}

GsMeasureSet *
gs_import_load (const char *file, GsImportFormat format,
                const GsImportOptions *options, gboolean require_latency,
                GError **error)
{
  return gs_import_read (file, &format, options, require_latency, error);
}
