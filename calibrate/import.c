/* gpusim: importers (see import.h).
 *
 * Kineto's Chrome trace (libkineto output_json.cpp) holds, among others:
 *   cpu_op       {"ph":"X","cat":"cpu_op","name":"aten::addmm","ts","dur",
 *                 "args":{"External id":N,"Input Dims":[[..]..],"Input type":[..]
 *                 [,"Input Strides":[[..]..]]}}
 *   cuda_runtime {"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel",
 *                 "args":{"External id":N,"correlation":C}}
 *   kernel       {"ph":"X","cat":"kernel","name","ts","dur" (us),
 *                 "args":{"External id":N,"correlation":C,"stream":S,
 *                 "registers per thread":R,"shared memory":BYTES,
 *                 "grid":[x,y,z],"block":[x,y,z],...}}
 *   flows        {"ph":"s"|"f","cat":"ac2g","id":C,"pid","tid","ts"}
 * A kernel's "External id" is the one of the cpu_op it was launched in.
 */
#include "config.h"
#include "calibrate/import.h"
#include "calibrate/csv.h"
#include "sim/error.h"
#include "workloads/json-depth.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

/* --------------------------------------------------------- JSON helpers */

static gboolean
member_number (JsonObject *o, const char *name, double *out)
{
  JsonNode *n = o ? json_object_get_member (o, name) : NULL;
  if (n == NULL || !JSON_NODE_HOLDS_VALUE (n))
    return FALSE;
  GType type = json_node_get_value_type (n);
  if (type != G_TYPE_INT64 && type != G_TYPE_DOUBLE)
    return FALSE;
  *out = json_node_get_double (n);
  return isfinite (*out);
}

static gboolean
member_int (JsonObject *o, const char *name, gint64 *out)
{
  double v;
  /* Whole and within gint64 (a larger double does not convert). */
  if (!member_number (o, name, &v) || v != floor (v)
      || fabs (v) >= 9.2e18)
    return FALSE;
  *out = (gint64) v;
  return TRUE;
}

static const char *
member_string (JsonObject *o, const char *name)
{
  JsonNode *n = o ? json_object_get_member (o, name) : NULL;
  if (n == NULL || json_node_get_value_type (n) != G_TYPE_STRING)
    return NULL;
  return json_node_get_string (n);
}

static JsonObject *
member_object (JsonObject *o, const char *name)
{
  JsonNode *n = o ? json_object_get_member (o, name) : NULL;
  return n && JSON_NODE_HOLDS_OBJECT (n) ? json_node_get_object (n) : NULL;
}

static JsonArray *
member_array (JsonObject *o, const char *name)
{
  JsonNode *n = o ? json_object_get_member (o, name) : NULL;
  return n && JSON_NODE_HOLDS_ARRAY (n) ? json_node_get_array (n) : NULL;
}

/* "External id" is spelled "external id" by some Kineto versions. */
static gboolean
external_id (JsonObject *args, gint64 *out)
{
  return member_int (args, "External id", out)
         || member_int (args, "external id", out);
}

/* pid and tid are numbers or strings; "pid/tid" names a thread. */
static char *
thread_key (JsonObject *ev)
{
  const char *names[] = { "pid", "tid" };
  GString *s = g_string_new (NULL);
  for (guint i = 0; i < 2; i++)
    {
      JsonNode *n = json_object_get_member (ev, names[i]);
      if (i > 0)
        g_string_append_c (s, '/');
      if (n && json_node_get_value_type (n) == G_TYPE_STRING)
        g_string_append (s, json_node_get_string (n));
      else if (n && json_node_get_value_type (n) == G_TYPE_INT64)
        g_string_append_printf (s, "%" G_GINT64_FORMAT, json_node_get_int (n));
      else if (n && JSON_NODE_HOLDS_VALUE (n))
        {
          /* Any other number as it reads (1e300 has no gint64). */
          char buf[G_ASCII_DTOSTR_BUF_SIZE];
          g_string_append (s, g_ascii_dtostr (buf, sizeof buf,
                                              json_node_get_double (n)));
        }
    }
  return g_string_free (s, FALSE);
}

/* ----------------------------------------------------------- the trace */

/* A point or span on a thread (cpu_op, runtime call, flow end). */
typedef struct {
  JsonObject *ev;
  char *thread;
  double ts_us, dur_us;
  gint64 id;                 /* External id, correlation or flow id */
  guint index;               /* place in Trace.ops once sorted (cpu_ops) */
} Span;

static void
span_free (gpointer p)
{
  Span *s = p;
  g_free (s->thread);
  g_free (s);
}

typedef struct {
  const char *file;
  JsonParser *parser;
  GHashTable *lines;         /* JsonObject * -> start line (GUINT) */
  GArray *open_lines;        /* start lines of the objects being parsed */
  GPtrArray *ops;            /* Span: cpu_ops, sorted by thread then ts */
  GHashTable *op_by_external;/* gint64 * -> Span * */
  GHashTable *launch_by_corr;/* gint64 * -> Span * (runtime calls) */
  GHashTable *flow_start;    /* gint64 * -> Span * ('s' points) */
  GHashTable *flow_end;      /* "thread@ts" -> Span * ('f' points) */
  GPtrArray *spans;          /* owns every Span */
  GPtrArray *kernels;        /* JsonObject * */
} Trace;

static guint
event_line (const Trace *t, JsonObject *ev)
{
  return GPOINTER_TO_UINT (g_hash_table_lookup (t->lines, ev));
}

/* Parser signals: remember the line each JSON object starts on, so errors
 * about an event can name file:line. */
static void
on_object_start (JsonParser *parser, gpointer data)
{
  Trace *t = data;
  guint line = json_parser_get_current_line (parser);
  g_array_append_val (t->open_lines, line);
}

static void
on_object_end (JsonParser *parser, JsonObject *object, gpointer data)
{
  Trace *t = data;
  g_assert (t->open_lines->len > 0);
  guint line = g_array_index (t->open_lines, guint, t->open_lines->len - 1);
  g_array_set_size (t->open_lines, t->open_lines->len - 1);
  if (json_object_has_member (object, "ph"))
    g_hash_table_insert (t->lines, object, GUINT_TO_POINTER (line));
}

static void
trace_init (Trace *t, const char *file)
{
  memset (t, 0, sizeof *t);
  t->file = file;
  t->parser = json_parser_new ();
  t->lines = g_hash_table_new (NULL, NULL);
  t->open_lines = g_array_new (FALSE, FALSE, sizeof (guint));
  t->ops = g_ptr_array_new ();
  t->spans = g_ptr_array_new_with_free_func (span_free);
  t->op_by_external = g_hash_table_new (g_int64_hash, g_int64_equal);
  t->launch_by_corr = g_hash_table_new (g_int64_hash, g_int64_equal);
  t->flow_start = g_hash_table_new (g_int64_hash, g_int64_equal);
  t->flow_end = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  t->kernels = g_ptr_array_new ();
  g_signal_connect (t->parser, "object-start", G_CALLBACK (on_object_start), t);
  g_signal_connect (t->parser, "object-end", G_CALLBACK (on_object_end), t);
}

static void
trace_clear (Trace *t)
{
  g_hash_table_unref (t->lines);
  g_array_unref (t->open_lines);
  g_ptr_array_unref (t->ops);
  g_hash_table_unref (t->op_by_external);
  g_hash_table_unref (t->launch_by_corr);
  g_hash_table_unref (t->flow_start);
  g_hash_table_unref (t->flow_end);
  g_ptr_array_unref (t->kernels);
  g_ptr_array_unref (t->spans);
  g_object_unref (t->parser);
}

/* Parses the trace IN (decompressed) holds. */
static gboolean
trace_parse (Trace *t, GInputStream *in, GError **error)
{
  /* Read whole (as json-glib would), so that its depth can be checked
   * before its recursive parser sees it. */
  g_autoptr (GOutputStream) mem = g_memory_output_stream_new_resizable ();
  GError *e = NULL;
  if (g_output_stream_splice (mem, in, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET,
                              NULL, &e) < 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot read: %s",
                   t->file, e->message);
      g_error_free (e);
      return FALSE;
    }
  GMemoryOutputStream *m = G_MEMORY_OUTPUT_STREAM (mem);
  const char *data = g_memory_output_stream_get_data (m);
  gsize len = g_memory_output_stream_get_data_size (m);
  if (!gs_json_check_depth (data, len, t->file, error))
    return FALSE;
  if (json_parser_load_from_data (t->parser, data ? data : "", (gssize) len,
                                  &e))
    return TRUE;
  /* json-glib says "<data>:LINE:COL: Parse error: ..." */
  const char *msg = e->message;
  if (g_str_has_prefix (msg, "<data>"))
    msg += strlen ("<data>");
  else if (e->domain != JSON_PARSER_ERROR)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot read: %s",
                   t->file, e->message);
      g_error_free (e);
      return FALSE;
    }
  g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
               "%s%s%s (expected a Chrome trace in JSON, as written by "
               "torch.profiler's export_chrome_trace)", t->file,
               *msg == ':' ? "" : ": ", msg);
  g_error_free (e);
  return FALSE;
}

static Span *
span_new (Trace *t, JsonObject *ev, gint64 id)
{
  Span *s = g_new0 (Span, 1);
  s->ev = ev;
  s->thread = thread_key (ev);
  s->id = id;
  member_number (ev, "ts", &s->ts_us);
  member_number (ev, "dur", &s->dur_us);
  g_ptr_array_add (t->spans, s);
  return s;
}

static char *
point_key (const char *thread, double ts_us)
{
  return g_strdup_printf ("%s@%.3f", thread, ts_us);
}

static gboolean
is_cat (const char *cat, const char *a, const char *b)
{
  return cat && (g_ascii_strcasecmp (cat, a) == 0
                 || (b && g_ascii_strcasecmp (cat, b) == 0));
}

/* Files one event under what it is. */
static void
take_event (Trace *t, JsonObject *ev)
{
  const char *ph = member_string (ev, "ph");
  const char *cat = member_string (ev, "cat");
  JsonObject *args = member_object (ev, "args");
  gint64 id = 0;
  if (ph == NULL)
    return;
  if (strcmp (ph, "X") == 0 && is_cat (cat, "kernel", NULL))
    g_ptr_array_add (t->kernels, ev);
  else if (strcmp (ph, "X") == 0 && is_cat (cat, "cpu_op", "operator"))
    {
      Span *s = span_new (t, ev, external_id (args, &id) ? id : -1);
      g_ptr_array_add (t->ops, s);
      if (s->id >= 0)
        g_hash_table_insert (t->op_by_external, &s->id, s);
    }
  else if (strcmp (ph, "X") == 0 && is_cat (cat, "cuda_runtime", "runtime")
           && member_int (args, "correlation", &id))
    {
      Span *s = span_new (t, ev, id);
      g_hash_table_insert (t->launch_by_corr, &s->id, s);
    }
  else if ((strcmp (ph, "s") == 0 || strcmp (ph, "f") == 0)
           && is_cat (cat, "ac2g", NULL) && member_int (ev, "id", &id))
    {
      Span *s = span_new (t, ev, id);
      if (*ph == 's')
        g_hash_table_insert (t->flow_start, &s->id, s);
      else
        g_hash_table_insert (t->flow_end, point_key (s->thread, s->ts_us), s);
    }
}

/* Orders cpu_ops by thread, then start; a parent starting with its child
 * (longer span) comes first. */
static int
compare_spans (gconstpointer a, gconstpointer b)
{
  const Span *x = *(Span *const *) a, *y = *(Span *const *) b;
  int c = strcmp (x->thread, y->thread);
  if (c != 0)
    return c;
  if (x->ts_us != y->ts_us)
    return x->ts_us < y->ts_us ? -1 : 1;
  if (x->dur_us != y->dur_us)
    return x->dur_us > y->dur_us ? -1 : 1;
  return 0;
}

static gboolean
trace_index (Trace *t, GError **error)
{
  JsonNode *root = json_parser_get_root (t->parser);
  JsonArray *events = NULL;
  if (root && JSON_NODE_HOLDS_OBJECT (root))
    events = member_array (json_node_get_object (root), "traceEvents");
  else if (root && JSON_NODE_HOLDS_ARRAY (root))
    events = json_node_get_array (root);
  if (events == NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:1: no 'traceEvents' array: expected a Chrome trace "
                   "as written by torch.profiler's export_chrome_trace",
                   t->file);
      return FALSE;
    }
  for (guint i = 0; i < json_array_get_length (events); i++)
    {
      JsonNode *n = json_array_get_element (events, i);
      if (JSON_NODE_HOLDS_OBJECT (n))
        take_event (t, json_node_get_object (n));
    }
  g_ptr_array_sort (t->ops, compare_spans);
  for (guint i = 0; i < t->ops->len; i++)
    ((Span *) g_ptr_array_index (t->ops, i))->index = i;
  return TRUE;
}

/* The innermost cpu_op on THREAD whose span contains TS_US, or NULL. */
static Span *
op_containing (const Trace *t, const char *thread, double ts_us)
{
  /* Binary search: first op after (thread, ts_us). */
  guint lo = 0, hi = t->ops->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      const Span *s = g_ptr_array_index (t->ops, mid);
      int c = strcmp (s->thread, thread);
      if (c < 0 || (c == 0 && s->ts_us <= ts_us))
        lo = mid + 1;
      else
        hi = mid;
    }
  /* Walking back, the first op that still contains the point is the
   * innermost: ops on one thread nest. */
  for (guint i = lo; i-- > 0;)
    {
      Span *s = g_ptr_array_index (t->ops, i);
      if (strcmp (s->thread, thread) != 0)
        break;
      if (ts_us <= s->ts_us + s->dur_us)
        return s;
    }
  return NULL;
}

/* The cpu_op that launched kernel event EV, or NULL. */
static Span *
launching_op (const Trace *t, JsonObject *ev, JsonObject *args)
{
  gint64 id;
  Span *launch = NULL;
  if (external_id (args, &id))
    {
      Span *op = g_hash_table_lookup (t->op_by_external, &id);
      if (op)
        return op;
    }
  if (member_int (args, "correlation", &id))
    {
      launch = g_hash_table_lookup (t->launch_by_corr, &id);
      if (launch == NULL)
        launch = g_hash_table_lookup (t->flow_start, &id);
    }
  if (launch == NULL)
    {
      /* Only a flow arrow: its end sits on the kernel, its start on the
       * launch. */
      g_autofree char *thread = thread_key (ev);
      double ts = 0;
      member_number (ev, "ts", &ts);
      g_autofree char *key = point_key (thread, ts);
      Span *end = g_hash_table_lookup (t->flow_end, key);
      if (end)
        launch = g_hash_table_lookup (t->flow_start, &end->id);
    }
  return launch ? op_containing (t, launch->thread, launch->ts_us) : NULL;
}

/* ------------------------------------------------------- op and shape */

typedef enum {
  /* GEMM rows: N the reduction, K the output columns (the format's). */
  SHAPE_BMM,        /* [B,M,N] x [B,N,K] */
  SHAPE_BADDBMM,    /* self, [B,M,N], [B,N,K] */
  SHAPE_MM,         /* [M,N] x [N,K] */
  SHAPE_ADDMM,      /* bias, [M,N], [N,K] */
  SHAPE_LINEAR,     /* [...,M,N], weight [K,N] */
  SHAPE_ROWS,       /* B rows of H: the first input [..., H] */
  SHAPE_BINARY,     /* like ROWS; a scalar second input makes it "...u" */
} ShapeRule;

static const struct {
  const char *aten;          /* without a trailing '_' (in-place) */
  const char *op;            /* gpusim predict's op name */
  ShapeRule rule;
} op_table[] = {
  { "aten::bmm", "bmm", SHAPE_BMM },
  { "aten::baddbmm", "bmm", SHAPE_BADDBMM },
  { "aten::mm", "linear", SHAPE_MM },
  { "aten::addmm", "linear", SHAPE_ADDMM },
  { "aten::linear", "linear", SHAPE_LINEAR },
  { "aten::native_layer_norm", "ln", SHAPE_ROWS },
  { "aten::layer_norm", "ln", SHAPE_ROWS },
  { "aten::_softmax", "softmax", SHAPE_ROWS },
  { "aten::softmax", "softmax", SHAPE_ROWS },
  { "aten::add", "add", SHAPE_BINARY },
  { "aten::mul", "mul", SHAPE_BINARY },
  { "aten::div", "div", SHAPE_BINARY },
  { "aten::pow", "pow", SHAPE_BINARY },
  { "aten::relu", "relu", SHAPE_ROWS },
  { "aten::gelu", "gelu", SHAPE_ROWS },
  { "aten::tanh", "tanh", SHAPE_ROWS },
};

/* A JSON array of whole numbers (at most 8) into OUT; its length, or -1. */
static int
ints_of (JsonArray *a, gint64 out[8])
{
  guint len = a ? json_array_get_length (a) : 0;
  if (a == NULL || len > 8)
    return -1;
  for (guint k = 0; k < len; k++)
    {
      JsonNode *d = json_array_get_element (a, k);
      if (!JSON_NODE_HOLDS_VALUE (d) || json_node_get_value_type (d) != G_TYPE_INT64)
        return -1;
      out[k] = json_node_get_int (d);
    }
  return (int) len;
}

/* Input Dims entry I as a list of sizes; returns its rank, -1 if absent. */
static int
dims_of (JsonArray *dims, guint i, gint64 out[8])
{
  if (dims == NULL || i >= json_array_get_length (dims))
    return -1;
  JsonNode *n = json_array_get_element (dims, i);
  return JSON_NODE_HOLDS_ARRAY (n) ? ints_of (json_node_get_array (n), out) : -1;
}

/* [B x] M x N times [B x] N x K, from inputs A and W.  Rows follow the
 * measurement format's convention (NeuSight's): N is the reduction, K the
 * output columns. */
static void
gemm_shape (GsMeasureRow *row, JsonArray *dims, guint a, guint w,
            gboolean batched)
{
  gint64 x[8], y[8];
  int rx = dims_of (dims, a, x), ry = dims_of (dims, w, y);
  int want = batched ? 3 : 2;
  if (rx != want || ry != want)
    return;
  row->B = batched ? x[0] : 1;
  row->M = x[rx - 2];
  row->N = x[rx - 1];
  row->K = y[ry - 1];
}

static void
rows_shape (GsMeasureRow *row, JsonArray *dims)
{
  gint64 x[8];
  int r = dims_of (dims, 0, x);
  if (r < 1)
    return;
  row->B = 1;
  for (int k = 0; k < r - 1; k++)
    row->B *= x[k];
  row->H = x[r - 1];
}

static void
linear_shape (GsMeasureRow *row, JsonArray *dims)
{
  gint64 x[8], w[8];
  int r = dims_of (dims, 0, x);
  if (r < 2 || dims_of (dims, 1, w) != 2)
    return;
  row->B = 1;
  for (int k = 0; k < r - 2; k++)
    row->B *= x[k];
  row->M = x[r - 2];
  row->N = x[r - 1];        /* in_features: the reduction */
  row->K = w[0];            /* out_features */
}

/* Whether input I's "Input Strides" entry (newer profilers write one beside
 * "Input Dims") is a transposed view: its last two dimensions swapped, the
 * next-to-last one contiguous (q @ k.transpose(-1, -2)).  FALSE when the
 * trace has no strides. */
static gboolean
second_transposed (JsonArray *strides, guint i)
{
  gint64 st[8];
  int r = dims_of (strides, i, st);
  return r >= 2 && st[r - 2] == 1 && st[r - 1] != 1;
}

static void
apply_shape (GsMeasureRow *row, ShapeRule rule, JsonArray *dims)
{
  switch (rule)
    {
    case SHAPE_BMM: gemm_shape (row, dims, 0, 1, TRUE); break;
    case SHAPE_BADDBMM: gemm_shape (row, dims, 1, 2, TRUE); break;
    case SHAPE_MM: gemm_shape (row, dims, 0, 1, FALSE); break;
    case SHAPE_ADDMM: gemm_shape (row, dims, 1, 2, FALSE); break;
    case SHAPE_LINEAR: linear_shape (row, dims); break;
    case SHAPE_ROWS:
    case SHAPE_BINARY: rows_shape (row, dims); break;
    }
}

/* PyTorch's scalar type names as the profiler writes them. */
static int
dtype_of (JsonArray *types)
{
  static const struct { const char *torch; GsDtype d; } names[] = {
    { "float", GS_DTYPE_FP32 }, { "c10::Half", GS_DTYPE_FP16 },
    { "c10::BFloat16", GS_DTYPE_BF16 }, { "double", GS_DTYPE_FP64 },
    { "c10::Float8_e4m3fn", GS_DTYPE_FP8 }, { "c10::Float8_e5m2", GS_DTYPE_FP8 },
    { "signed char", GS_DTYPE_INT8 },
  };
  const char *t = NULL;
  for (guint i = 0; types && i < json_array_get_length (types) && !t; i++)
    {
      t = json_array_get_string_element (types, i);
      if (t && *t == '\0')
        t = NULL;
    }
  for (guint i = 0; t && i < G_N_ELEMENTS (names); i++)
    if (strcmp (t, names[i].torch) == 0)
      return names[i].d;
  return -1;
}

/* Fills op, shape and dtype from cpu_op OP_EV when gpusim knows it;
 * FALSE when it does not. */
static gboolean
describe_op (GsMeasureRow *row, JsonObject *op_ev)
{
  JsonObject *args = member_object (op_ev, "args");
  g_autofree char *aten = g_strdup (member_string (op_ev, "name"));
  if (aten == NULL)
    return FALSE;
  gsize n = strlen (aten);
  if (n > 1 && aten[n - 1] == '_')
    aten[n - 1] = '\0';
  JsonArray *dims = member_array (args, "Input Dims");
  for (guint i = 0; i < G_N_ELEMENTS (op_table); i++)
    {
      if (strcmp (aten, op_table[i].aten) != 0)
        continue;
      gint64 second[8];
      gboolean scalar = op_table[i].rule == SHAPE_BINARY
                        && dims_of (dims, 1, second) == 0;
      row->op = scalar ? g_strconcat (op_table[i].op, "u", NULL)
                       : g_strdup (op_table[i].op);
      apply_shape (row, op_table[i].rule, dims);
      if (op_table[i].rule == SHAPE_BMM
          && second_transposed (member_array (args, "Input Strides"), 1))
        {
          g_free (row->op);
          row->op = g_strdup ("bmm_nt");
        }
      int d = dtype_of (member_array (args, "Input type"));
      if (d >= 0)
        row->dtype = (GsDtype) d;
      return TRUE;
    }
  return FALSE;
}

/* The text of an op's first "Input Dims" entry ("" when absent). */
static char *
first_dims (JsonObject *op_ev)
{
  JsonArray *dims = member_array (member_object (op_ev, "args"), "Input Dims");
  if (dims == NULL || json_array_get_length (dims) == 0)
    return g_strdup ("");
  return json_to_string (json_array_get_element (dims, 0), FALSE);
}

/* The cpu_op that directly encloses OP on its thread, or NULL. */
static Span *
parent_op (const Trace *t, const Span *op)
{
  for (guint i = op->index; i-- > 0;)
    {
      Span *s = g_ptr_array_index (t->ops, i);
      if (strcmp (s->thread, op->thread) != 0)
        return NULL;
      if (s->ts_us + s->dur_us >= op->ts_us + op->dur_us)
        return s;
    }
  return NULL;
}

/* Describes the row from OP, or else from the op that encloses it when
 * OP only implements it on the same tensor (aten::relu_ runs
 * aten::clamp_min_): one level up, same first input. */
static void
describe_launch (const Trace *t, GsMeasureRow *row, const Span *op)
{
  if (describe_op (row, op->ev))
    return;
  Span *parent = parent_op (t, op);
  if (parent == NULL)
    return;
  g_autofree char *mine = first_dims (op->ev);
  g_autofree char *theirs = first_dims (parent->ev);
  if (*mine != '\0' && strcmp (mine, theirs) == 0)
    describe_op (row, parent->ev);
}

/* ------------------------------------------------------------ kernels */

static gboolean
bad_kernel (const Trace *t, JsonObject *ev, const char *what, GError **error)
{
  const char *name = member_string (ev, "name");
  g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s:%u: kernel event '%s': %s",
               t->file, event_line (t, ev), name ? name : "?", what);
  return FALSE;
}

/* Reads "grid" or "block" ([x, y, z], each >= 0) into DIM. */
static gboolean
take_dim3 (const Trace *t, JsonObject *ev, JsonObject *args, const char *key,
           uint32_t dim[3], GError **error)
{
  if (args == NULL || !json_object_has_member (args, key))
    return TRUE;                    /* unknown */
  gint64 v[8];
  int rank = ints_of (member_array (args, key), v);
  if (rank != 3 || v[0] < 0 || v[1] < 0 || v[2] < 0
      || v[0] > G_MAXUINT32 || v[1] > G_MAXUINT32 || v[2] > G_MAXUINT32)
    {
      g_autofree char *what = g_strdup_printf (
          "'%s' is not [x, y, z] with whole numbers >= 0", key);
      return bad_kernel (t, ev, what, error);
    }
  for (int i = 0; i < 3; i++)
    dim[i] = (uint32_t) v[i];
  return TRUE;
}

static gboolean
take_count (const Trace *t, JsonObject *ev, JsonObject *args, const char *key,
            int *out, GError **error)
{
  gint64 v;
  if (args == NULL || !json_object_has_member (args, key))
    return TRUE;
  if (!member_int (args, key, &v) || v < 0 || v > G_MAXINT)
    {
      g_autofree char *what = g_strdup_printf (
          "'%s' is not a whole number >= 0", key);
      return bad_kernel (t, ev, what, error);
    }
  *out = (int) v;
  return TRUE;
}

/* The extra columns: launching cpu_op and its input dims, stream, start. */
static void
add_kernel_extras (GsMeasureSet *set, GsMeasureRow *row, double ts_us,
                   JsonObject *args, JsonObject *op_ev)
{
  gint64 stream = -1;
  member_int (args, "stream", &stream);
  g_autofree char *stream_text = stream >= 0
      ? g_strdup_printf ("%" G_GINT64_FORMAT, stream) : g_strdup ("");
  g_autofree char *ts_text = g_strdup_printf ("%.3f", ts_us);
  JsonObject *op_args = member_object (op_ev, "args");
  JsonNode *dims = op_args ? json_object_get_member (op_args, "Input Dims") : NULL;
  g_autofree char *dims_text = dims ? json_to_string (dims, FALSE) : g_strdup ("");
  const char *op_name = member_string (op_ev, "name");
  gs_measure_set_cell (set, row, "cpu_op", op_name ? op_name : "");
  gs_measure_set_cell (set, row, "input_dims", dims_text);
  gs_measure_set_cell (set, row, "stream", stream_text);
  gs_measure_set_cell (set, row, "start_us", ts_text);
}

/* The launching cpu_op's place in the trace: the kernels of one op call
 * (a GEMM and its split-K reduction) share it. */
static void
add_op_id (GsMeasureSet *set, GsMeasureRow *row, const Span *op)
{
  g_autofree char *id = op ? g_strdup_printf ("%u", op->index) : g_strdup ("");
  gs_measure_set_cell (set, row, "cpu_op_index", id);
}

static gboolean
take_kernel (const Trace *t, GsMeasureSet *set, JsonObject *ev,
             const GsImportOptions *opts, GError **error)
{
  JsonObject *args = member_object (ev, "args");
  double ts = 0, dur = 0;
  if (!member_number (ev, "dur", &dur) || dur < 0)
    return bad_kernel (t, ev, "no 'dur' (its duration in us, a number >= 0)",
                       error);
  if (!member_number (ev, "ts", &ts))
    return bad_kernel (t, ev, "no 'ts' (its start in us)", error);
  GsMeasureRow *row = gs_measure_append (set);
  row->line = event_line (t, ev);
  row->device = g_strdup (opts ? opts->device : NULL);
  const char *name = member_string (ev, "name");
  row->kernel = name ? gs_measure_short_kernel_name (name) : NULL;
  row->latency_ms = dur / 1000.0;
  if (!take_dim3 (t, ev, args, "grid", row->grid, error)
      || !take_dim3 (t, ev, args, "block", row->block, error)
      || !take_count (t, ev, args, "registers per thread", &row->regs, error)
      || !take_count (t, ev, args, "shared memory", &row->smem_static, error))
    return FALSE;
  if (row->smem_static >= 0)
    row->smem_dynamic = 0;        /* Kineto reports the sum: see import.h */
  Span *op = launching_op (t, ev, args);
  if (op)
    describe_launch (t, row, op);
  add_kernel_extras (set, row, ts, args, op ? op->ev : NULL);
  add_op_id (set, row, op);
  return TRUE;
}

/* ---------------------------------------------------------- provenance */

static void
take_provenance (GsMeasureSet *set, JsonNode *root, const char *file)
{
  g_autofree char *base = g_path_get_basename (file);
  g_autofree char *source = g_strdup_printf ("pytorch profiler trace %s", base);
  gs_measure_set_provenance (set, "source", source);
  if (!JSON_NODE_HOLDS_OBJECT (root))
    return;
  JsonObject *top = json_node_get_object (root);
  JsonArray *devs = member_array (top, "deviceProperties");
  JsonNode *d0 = devs && json_array_get_length (devs) > 0
                 ? json_array_get_element (devs, 0) : NULL;
  JsonObject *dev = d0 && JSON_NODE_HOLDS_OBJECT (d0) ? json_node_get_object (d0) : NULL;
  gint64 major, minor, sms;
  if (member_string (dev, "name"))
    gs_measure_set_provenance (set, "gpu", member_string (dev, "name"));
  if (member_int (dev, "computeMajor", &major) && member_int (dev, "computeMinor", &minor))
    {
      g_autofree char *cc = g_strdup_printf ("%" G_GINT64_FORMAT ".%" G_GINT64_FORMAT,
                                             major, minor);
      gs_measure_set_provenance (set, "compute_capability", cc);
    }
  if (member_int (dev, "numSms", &sms))
    {
      g_autofree char *v = g_strdup_printf ("%" G_GINT64_FORMAT, sms);
      gs_measure_set_provenance (set, "sm_count", v);
    }
  /* Scalar metadata the profiler wrote at the top (schemaVersion, ...). */
  g_autoptr (GList) members = json_object_get_members (top);
  for (GList *l = members; l; l = l->next)
    {
      JsonNode *n = json_object_get_member (top, l->data);
      if (!JSON_NODE_HOLDS_VALUE (n) || strpbrk (l->data, ":\r\n") || !*(char *) l->data)
        continue;
      g_autofree char *v = json_node_get_value_type (n) == G_TYPE_STRING
                           ? g_strdup (json_node_get_string (n))
                           : json_to_string (n, FALSE);
      g_autofree char *key = g_strconcat ("trace_", (char *) l->data, NULL);
      gs_measure_set_provenance (set, key, v);
    }
}

/* The trace IN (decompressed) holds, named FILE. */
static GsMeasureSet *
kineto_read (GInputStream *in, const char *file,
             const GsImportOptions *options, GError **error)
{
  Trace t;
  trace_init (&t, file);
  g_autoptr (GsMeasureSet) set = gs_measure_new ();
  set->file = g_strdup (file);
  gboolean ok = trace_parse (&t, in, error) && trace_index (&t, error);
  if (ok && t.kernels->len == 0)
    {
      /* An empty set would calibrate nothing, silently. */
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: no kernel events (\"cat\": \"kernel\"): profile with "
                   "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]",
                   file);
      ok = FALSE;
    }
  if (ok)
    take_provenance (set, json_parser_get_root (t.parser), file);
  for (guint i = 0; ok && i < t.kernels->len; i++)
    ok = take_kernel (&t, set, g_ptr_array_index (t.kernels, i), options, error);
  trace_clear (&t);
  return ok ? g_steal_pointer (&set) : NULL;
}

GsMeasureSet *
gs_import_kineto (const char *file, const GsImportOptions *options,
                  GError **error)
{
  g_autoptr (GInputStream) in = gs_csv_open_input (file, error);
  if (in == NULL)
    return NULL;
  return kineto_read (in, file, options, error);
}

GsMeasureSet *
gs_import_kineto_stream (GInputStream *in, const char *name,
                         const GsImportOptions *options, GError **error)
{
  g_autoptr (GInputStream) text = gs_csv_open_stream (in, name, error);
  if (text == NULL)
    return NULL;
  return kineto_read (text, name, options, error);
}
