/* gpusim: measurement sets: load, save, split (see measure.h and
 * gpusim-measurements(5)). */
#include "config.h"
#include "calibrate/measure.h"
#include "calibrate/csv.h"
#include "sim/error.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* ------------------------------------------------------------ columns */

/* How a recognised column's cell maps onto a GsMeasureRow field, and what
 * an empty cell means there. */
typedef enum {
  CELL_TEXT,     /* char *, NULL when empty */
  CELL_U32,      /* uint32_t, 0 when empty */
  CELL_I64,      /* int64_t >= 0, -1 when empty */
  CELL_INT,      /* int >= 0, -1 when empty */
  CELL_MS,       /* double >= 0 (ms), -1 when empty */
  CELL_DTYPE,    /* GsDtype, fp32 when empty */
} CellType;

typedef struct {
  const char *name;
  CellType type;
  size_t offset;           /* of the field in GsMeasureRow */
} Column;

#define COL(name, type, field) { name, type, offsetof (GsMeasureRow, field) }

/* The recognised columns, in the order gs_measure_new() writes them; the
 * first fifteen are NeuSight's kernels.csv header. */
static const Column columns[] = {
  COL ("device", CELL_TEXT, device),
  COL ("op", CELL_TEXT, op),
  COL ("kernel", CELL_TEXT, kernel),
  COL ("grid_x", CELL_U32, grid[0]),
  COL ("grid_y", CELL_U32, grid[1]),
  COL ("grid_z", CELL_U32, grid[2]),
  COL ("block_x", CELL_U32, block[0]),
  COL ("block_y", CELL_U32, block[1]),
  COL ("block_z", CELL_U32, block[2]),
  COL ("B", CELL_I64, B),
  COL ("M", CELL_I64, M),
  COL ("N", CELL_I64, N),
  COL ("K", CELL_I64, K),
  COL ("H", CELL_I64, H),
  COL ("latency_ms", CELL_MS, latency_ms),
  COL ("dtype", CELL_DTYPE, dtype),
  COL ("regs", CELL_INT, regs),
  COL ("smem_static", CELL_INT, smem_static),
  COL ("smem_dynamic", CELL_INT, smem_dynamic),
};
#define N_COLUMNS G_N_ELEMENTS (columns)
#define NO_COLUMN (-1)

static int
column_lookup (const char *name)
{
  for (guint i = 0; i < N_COLUMNS; i++)
    if (g_ascii_strcasecmp (name, columns[i].name) == 0)
      return (int) i;
  return NO_COLUMN;
}

static int
column_index (const GsMeasureSet *set, const char *name)
{
  for (guint i = 0; set->columns != NULL && set->columns[i] != NULL; i++)
    if (g_ascii_strcasecmp (set->columns[i], name) == 0)
      return (int) i;
  return NO_COLUMN;
}

#define FIELD(row, col, type) \
  ((type *) (void *) ((char *) (row) + columns[col].offset))

/* ------------------------------------------------------------- cells */

/* Parses CELL into ROW's field for recognised column COL.  On failure
 * returns FALSE with WHAT set to the expected form. */
static gboolean
cell_parse (GsMeasureRow *row, guint col, const char *cell, const char **what)
{
  g_autofree char *s = g_strstrip (g_strdup (cell ? cell : ""));
  gboolean empty = *s == '\0';
  guint64 u = 0;
  gint64 v = 0;
  switch (columns[col].type)
    {
    case CELL_TEXT:
      g_free (*FIELD (row, col, char *));
      *FIELD (row, col, char *) = empty ? NULL : g_strdup (cell);
      return TRUE;
    case CELL_U32:
      *what = "a whole number from 0 to 4294967295, or empty";
      if (!empty && !g_ascii_string_to_unsigned (s, 10, 0, G_MAXUINT32, &u, NULL))
        return FALSE;
      *FIELD (row, col, uint32_t) = (uint32_t) u;
      return TRUE;
    case CELL_I64:
      *what = "a whole number >= 0, or empty";
      if (!empty && !g_ascii_string_to_signed (s, 10, 0, G_MAXINT64, &v, NULL))
        return FALSE;
      *FIELD (row, col, int64_t) = empty ? -1 : v;
      return TRUE;
    case CELL_INT:
      *what = "a whole number >= 0, or empty";
      if (!empty && !g_ascii_string_to_signed (s, 10, 0, G_MAXINT, &v, NULL))
        return FALSE;
      *FIELD (row, col, int) = empty ? -1 : (int) v;
      return TRUE;
    case CELL_MS:
      {
        *what = "a time in milliseconds >= 0 (e.g. 0.0123), or empty";
        char *end = NULL;
        double ms = empty ? -1 : g_ascii_strtod (s, &end);
        if (!empty && (*end != '\0' || !isfinite (ms) || ms < 0))
          return FALSE;
        *FIELD (row, col, double) = ms;
        return TRUE;
      }
    case CELL_DTYPE:
      {
        *what = "fp32, tf32, fp16, bf16, fp8, int8 or fp64";
        const char *name = g_str_has_prefix (s, "torch.") ? s + 6 : s;
        int d = empty ? GS_DTYPE_FP32 : gs_dtype_parse (name);
        if (d < 0)
          return FALSE;
        *FIELD (row, col, GsDtype) = (GsDtype) d;
        return TRUE;
      }
    }
  g_assert_not_reached ();
}

/* Shortest decimal text that reads back as X. */
static char *
format_double (double x)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (buf, sizeof buf, "%.15g", x);
  if (g_ascii_strtod (buf, NULL) != x)
    g_ascii_formatd (buf, sizeof buf, "%.17g", x);
  return g_strdup (buf);
}

/* The text of ROW's field for recognised column COL ("" when unknown). */
static char *
cell_format (const GsMeasureRow *row, guint col)
{
  GsMeasureRow *r = (GsMeasureRow *) row;
  switch (columns[col].type)
    {
    case CELL_TEXT:
      return g_strdup (*FIELD (r, col, char *) ? *FIELD (r, col, char *) : "");
    case CELL_U32:
      return *FIELD (r, col, uint32_t) == 0 ? g_strdup ("")
             : g_strdup_printf ("%" G_GUINT32_FORMAT, *FIELD (r, col, uint32_t));
    case CELL_I64:
      return *FIELD (r, col, int64_t) < 0 ? g_strdup ("")
             : g_strdup_printf ("%" G_GINT64_FORMAT, *FIELD (r, col, int64_t));
    case CELL_INT:
      return *FIELD (r, col, int) < 0 ? g_strdup ("")
             : g_strdup_printf ("%d", *FIELD (r, col, int));
    case CELL_MS:
      return *FIELD (r, col, double) < 0 ? g_strdup ("")
             : format_double (*FIELD (r, col, double));
    case CELL_DTYPE:
      return g_strdup (gs_dtype_name (*FIELD (r, col, GsDtype)));
    }
  g_assert_not_reached ();
}

/* ------------------------------------------------------------- rows */

void
gs_measure_row_init (GsMeasureRow *row)
{
  memset (row, 0, sizeof *row);
  row->B = row->M = row->N = row->K = row->H = -1;
  row->dtype = GS_DTYPE_FP32;
  row->regs = row->smem_static = row->smem_dynamic = -1;
  row->latency_ms = -1;
}

void
gs_measure_row_clear (GsMeasureRow *row)
{
  g_clear_pointer (&row->device, g_free);
  g_clear_pointer (&row->op, g_free);
  g_clear_pointer (&row->kernel, g_free);
  g_clear_pointer (&row->cells, g_strfreev);
}

static void
row_clear_func (gpointer p)
{
  gs_measure_row_clear (p);
}

GsMeasureSet *
gs_measure_new (void)
{
  GsMeasureSet *set = g_new0 (GsMeasureSet, 1);
  set->rows = g_array_new (FALSE, FALSE, sizeof (GsMeasureRow));
  g_array_set_clear_func (set->rows, row_clear_func);
  set->provenance = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                           g_free);
  set->columns = g_new0 (char *, N_COLUMNS + 1);
  for (guint i = 0; i < N_COLUMNS; i++)
    set->columns[i] = g_strdup (columns[i].name);
  return set;
}

void
gs_measure_free (GsMeasureSet *set)
{
  if (set == NULL)
    return;
  g_free (set->file);
  g_strfreev (set->columns);
  g_array_unref (set->rows);
  g_hash_table_unref (set->provenance);
  g_free (set);
}

GsMeasureRow *
gs_measure_append (GsMeasureSet *set)
{
  GsMeasureRow row;
  gs_measure_row_init (&row);
  g_array_append_val (set->rows, row);
  return &g_array_index (set->rows, GsMeasureRow, set->rows->len - 1);
}

void
gs_measure_set_provenance (GsMeasureSet *set, const char *key,
                           const char *value)
{
  g_return_if_fail (key != NULL && *key != '\0' && strpbrk (key, ":\r\n") == NULL);
  /* One line per entry: line breaks in a value become spaces. */
  char *v = g_strdup (value ? value : "");
  g_strdelimit (v, "\r\n", ' ');
  g_hash_table_replace (set->provenance, g_strdup (key), g_strstrip (v));
}

const char *
gs_measure_get_cell (const GsMeasureSet *set, const GsMeasureRow *row,
                     const char *column)
{
  int i = column_index (set, column);
  if (i == NO_COLUMN)
    return NULL;
  if (row->cells == NULL || (guint) i >= g_strv_length (row->cells))
    return "";
  return row->cells[i];
}

void
gs_measure_set_cell (GsMeasureSet *set, GsMeasureRow *row,
                     const char *column, const char *value)
{
  g_return_if_fail (column_lookup (column) == NO_COLUMN);
  int i = column_index (set, column);
  if (i == NO_COLUMN)
    {
      guint n = g_strv_length (set->columns);
      set->columns = g_renew (char *, set->columns, n + 2);
      set->columns[n] = g_strdup (column);
      set->columns[n + 1] = NULL;
      i = (int) n;
    }
  guint have = row->cells ? g_strv_length (row->cells) : 0;
  if ((guint) i >= have)
    {
      row->cells = g_renew (char *, row->cells, i + 2);
      for (guint k = have; k <= (guint) i; k++)
        row->cells[k] = g_strdup ("");
      row->cells[i + 1] = NULL;
    }
  g_free (row->cells[i]);
  row->cells[i] = g_strdup (value ? value : "");
}

/* ------------------------------------------------------- kernel names */

/* Index of the '(' that opens the parameter list ending NAME at its last
 * character, or -1. */
static gssize
parameter_list_start (const char *name, gsize len)
{
  if (len == 0 || name[len - 1] != ')')
    return -1;
  int depth = 0;
  for (gssize i = (gssize) len - 1; i >= 0; i--)
    {
      if (name[i] == ')')
        depth++;
      else if (name[i] == '(' && --depth == 0)
        return i;
    }
  return -1;
}

char *
gs_measure_short_kernel_name (const char *name)
{
  if (g_str_has_prefix (name, "void "))
    name += 5;
  GString *s = g_string_new (NULL);
  const char *anon = "(anonymous namespace)", *hit;
  while ((hit = strstr (name, anon)) != NULL)
    {
      g_string_append_len (s, name, hit - name);
      g_string_append (s, "anon");
      name = hit + strlen (anon);
    }
  g_string_append (s, name);
  gssize open = parameter_list_start (s->str, s->len);
  if (open > 0)
    g_string_truncate (s, (gsize) open);
  return g_strchomp (g_string_free (s, FALSE));
}

/* -------------------------------------------------------------- split */

char *
gs_measure_shape_key (const GsMeasureRow *row)
{
  GString *s = g_string_new (row->op ? row->op : "");
  const int64_t dims[] = { row->B, row->M, row->N, row->K, row->H };
  for (guint i = 0; i < G_N_ELEMENTS (dims); i++)
    {
      g_string_append_c (s, '|');
      if (dims[i] >= 0)
        g_string_append_printf (s, "%" G_GINT64_FORMAT, dims[i]);
    }
  return g_string_free (s, FALSE);
}

guint32
gs_measure_fnv1a32 (const char *text)
{
  /* FNV-1a, 32 bits: offset basis 2166136261, prime 16777619
   * (Fowler, Noll, Vo; IETF draft-eastlake-fnv). */
  guint32 h = 2166136261u;
  for (const guchar *p = (const guchar *) text; *p; p++)
    {
      h ^= *p;
      h *= 16777619u;
    }
  return h;
}

gboolean
gs_measure_is_holdout (const GsMeasureRow *row)
{
  g_autofree char *key = gs_measure_shape_key (row);
  return gs_measure_fnv1a32 (key) % 2 == 1;
}

/* --------------------------------------------------------------- load */

/* Reading state: the header's mapping onto recognised columns. */
typedef struct {
  GsMeasureSet *set;
  const char *file;
  guint n_cols;
  guint header_line;
  int *kind;                 /* per file column: recognised index or -1 */
  int where[N_COLUMNS];      /* per recognised column: file column or -1 */
  gboolean require_latency;
} Loader;

/* "# key: value" before the header is provenance; other comments are
 * just comments.  There are none after the header (load_records). */
static void
take_comment (Loader *ld, const char *text)
{
  const char *colon = strchr (text, ':');
  if (colon == NULL)
    return;
  g_autofree char *key = g_strstrip (g_strndup (text, colon - text));
  if (*key != '\0')
    gs_measure_set_provenance (ld->set, key, colon + 1);
}

static gboolean
take_header (Loader *ld, char **cells, guint line, GError **error)
{
  ld->n_cols = g_strv_length (cells);
  ld->header_line = line;
  ld->kind = g_new (int, ld->n_cols);
  for (guint i = 0; i < N_COLUMNS; i++)
    ld->where[i] = NO_COLUMN;
  for (guint i = 0; i < ld->n_cols; i++)
    {
      g_strstrip (cells[i]);
      if (*cells[i] == '\0')
        {
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s:%u: column %u of the header has no name", ld->file,
                       line, i + 1);
          return FALSE;
        }
      for (guint j = 0; j < i; j++)
        if (g_ascii_strcasecmp (cells[i], cells[j]) == 0)
          {
            g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                         "%s:%u: column '%s' appears twice in the header "
                         "(columns %u and %u)", ld->file, line, cells[i],
                         j + 1, i + 1);
            return FALSE;
          }
      ld->kind[i] = column_lookup (cells[i]);
      if (ld->kind[i] != NO_COLUMN)
        ld->where[ld->kind[i]] = (int) i;
    }
  if (ld->where[column_lookup ("op")] == NO_COLUMN
      && ld->where[column_lookup ("kernel")] == NO_COLUMN)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:%u: the header has neither an 'op' nor a 'kernel' "
                   "column: expected a header such as "
                   "device,op,kernel,grid_x,grid_y,grid_z,block_x,block_y,"
                   "block_z,B,M,N,K,H,latency_ms", ld->file, line);
      return FALSE;
    }
  if (ld->require_latency && ld->where[column_lookup ("latency_ms")] == NO_COLUMN)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:%u: no 'latency_ms' column: a measurement set needs "
                   "each row's measured latency in milliseconds", ld->file,
                   line);
      return FALSE;
    }
  g_strfreev (ld->set->columns);
  ld->set->columns = g_strdupv (cells);
  return TRUE;
}

static gboolean
take_row (Loader *ld, char **cells, guint line, GError **error)
{
  guint n = g_strv_length (cells);
  if (n != ld->n_cols)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:%u: %u %s, but the header (line %u) has %u %s: %s",
                   ld->file, line, n, gs_plural (n, "field", "fields"),
                   ld->header_line, ld->n_cols,
                   gs_plural (ld->n_cols, "column", "columns"),
                   cells[0][0] == '#'
                   ? "a line starting with '#' is a comment only before the "
                     "header"
                   : "quote fields that hold commas (\"a,b\")");
      g_strfreev (cells);
      return FALSE;
    }
  GsMeasureRow *row = gs_measure_append (ld->set);
  row->line = line;
  row->cells = cells;
  for (guint i = 0; i < n; i++)
    {
      const char *what = NULL;
      if (ld->kind[i] == NO_COLUMN || cell_parse (row, ld->kind[i], cells[i], &what))
        continue;
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:%u: column '%s': '%s' is not valid: expected %s",
                   ld->file, line, ld->set->columns[i], cells[i], what);
      return FALSE;
    }
  if (ld->require_latency && row->latency_ms < 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:%u: column 'latency_ms' is empty: every row of a "
                   "measurement set needs its measured latency in ms",
                   ld->file, line);
      return FALSE;
    }
  /* Errors are relative to the measurement: a zero one cannot be used. */
  if (ld->require_latency && row->latency_ms == 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:%u: column 'latency_ms' is 0: a measured latency is "
                   "more than 0 ms", ld->file, line);
      return FALSE;
    }
  return TRUE;
}

static gboolean
load_records (Loader *ld, GsCsvReader *r, GError **error)
{
  for (;;)
    {
      char **cells = NULL;
      guint line = 0;
      switch (gs_csv_reader_next (r, &cells, &line, error))
        {
        case GS_CSV_EOF:
          return TRUE;
        case GS_CSV_ERROR:
          return FALSE;
        case GS_CSV_COMMENT:
          take_comment (ld, cells[0]);
          g_strfreev (cells);
          break;
        case GS_CSV_RECORD:
          if (ld->n_cols == 0)
            {
              gboolean ok = take_header (ld, cells, line, error);
              g_strfreev (cells);
              if (!ok)
                return FALSE;
              /* Comments come before the header: after it, a first field
               * that starts with '#' (a kernel or layer name) is data. */
              gs_csv_reader_set_comments (r, FALSE);
            }
          else if (!take_row (ld, cells, line, error))
            return FALSE;
          break;
        }
    }
}

static GsMeasureSet *
load_reader (GsCsvReader *r, const char *file, gboolean require_latency,
             GError **error)
{
  gs_csv_reader_set_comments (r, TRUE);
  g_autoptr (GsMeasureSet) set = gs_measure_new ();
  set->file = g_strdup (file);
  Loader ld = { .set = set, .file = file, .require_latency = require_latency };
  gboolean ok = load_records (&ld, r, error);
  g_free (ld.kind);
  if (!ok)
    return NULL;
  if (ld.n_cols == 0)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s:1: no header line: expected a CSV header such as "
                   "device,op,kernel,grid_x,grid_y,grid_z,block_x,block_y,"
                   "block_z,B,M,N,K,H,latency_ms", file);
      return NULL;
    }
  return g_steal_pointer (&set);
}

GsMeasureSet *
gs_measure_load (const char *file, gboolean require_latency, GError **error)
{
  g_autoptr (GsCsvReader) r = gs_csv_reader_open (file, error);
  if (r == NULL)
    return NULL;
  return load_reader (r, file, require_latency, error);
}

GsMeasureSet *
gs_measure_load_stream (GInputStream *in, const char *name,
                        gboolean require_latency, GError **error)
{
  g_autoptr (GInputStream) text = gs_csv_open_stream (in, name, error);
  if (text == NULL)
    return NULL;
  g_autoptr (GsCsvReader) r = gs_csv_reader_new (text, name);
  return load_reader (r, name, require_latency, error);
}

/* ------------------------------------------------- what a latency is */

gboolean
gs_measure_is_kernel_set (const GsMeasureSet *set)
{
  return column_index (set, "cpu_op_index") != NO_COLUMN;
}

gboolean
gs_measure_is_gpu_time (const GsMeasureSet *set, const GsMeasureRow *row)
{
  if (gs_measure_is_kernel_set (set))
    return TRUE;
  const char *timing = gs_measure_get_cell (set, row, "timing");
  return timing != NULL && g_ascii_strcasecmp (timing, "cupti") == 0;
}

const char *
gs_measure_call_of (const GsMeasureSet *set, const GsMeasureRow *row)
{
  const char *id = gs_measure_get_cell (set, row, "cpu_op_index");
  return id && *id ? id : NULL;
}

GHashTable *
gs_measure_call_sums (const GsMeasureSet *set, const char *device)
{
  GHashTable *sums = g_hash_table_new_full (g_str_hash, g_str_equal, NULL,
                                            g_free);
  for (guint i = 0; i < set->rows->len; i++)
    {
      const GsMeasureRow *row = &g_array_index (set->rows, GsMeasureRow, i);
      const char *call = gs_measure_call_of (set, row);
      if (call == NULL || (row->device != NULL && device != NULL
                           && strcmp (row->device, device) != 0))
        continue;
      double *sum = g_hash_table_lookup (sums, call);
      if (sum == NULL)
        {
          sum = g_new0 (double, 1);
          g_hash_table_insert (sums, (gpointer) call, sum);
        }
      *sum += MAX (row->latency_ms, 0);
    }
  return sums;
}

/* --------------------------------------------------------------- save */

/* TRUE when some row has a known value in recognised column COL, so a
 * set that lacks the column must gain it to keep that value. */
static gboolean
column_has_values (const GsMeasureSet *set, guint col)
{
  GsMeasureRow blank;
  gs_measure_row_init (&blank);
  g_autofree char *none = cell_format (&blank, col);
  for (guint i = 0; i < set->rows->len; i++)
    {
      g_autofree char *v = cell_format (&g_array_index (set->rows, GsMeasureRow, i), col);
      if (strcmp (v, none) != 0)
        return TRUE;
    }
  return FALSE;
}

/* The columns to write: the set's own, then any recognised column it lacks
 * that some row has a value for.  Entries are recognised indices or, for
 * other columns, -2 - (index in set->columns). */
static GArray *
save_plan (const GsMeasureSet *set, GPtrArray *names)
{
  GArray *plan = g_array_new (FALSE, FALSE, sizeof (int));
  for (guint i = 0; set->columns && set->columns[i]; i++)
    {
      int k = column_lookup (set->columns[i]);
      int code = k != NO_COLUMN ? k : -2 - (int) i;
      g_array_append_val (plan, code);
      g_ptr_array_add (names, set->columns[i]);
    }
  for (guint k = 0; k < N_COLUMNS; k++)
    if (column_index (set, columns[k].name) == NO_COLUMN
        && column_has_values (set, k))
      {
        int code = (int) k;
        g_array_append_val (plan, code);
        g_ptr_array_add (names, (gpointer) columns[k].name);
      }
  return plan;
}

/* The text for a recognised column: the cell as it was read when it still
 * says the same as the field (so "0.50" stays "0.50"), else the field. */
static char *
save_recognised (const GsMeasureRow *row, guint col, int file_col)
{
  char *now = cell_format (row, col);
  if (row->cells == NULL || file_col < 0
      || (guint) file_col >= g_strv_length (row->cells))
    return now;
  const char *orig = row->cells[file_col];
  GsMeasureRow scratch;
  gs_measure_row_init (&scratch);
  const char *what = NULL;
  gboolean same = FALSE;
  if (cell_parse (&scratch, col, orig, &what))
    {
      g_autofree char *was = cell_format (&scratch, col);
      same = strcmp (was, now) == 0;
    }
  gs_measure_row_clear (&scratch);
  if (!same)
    return now;
  g_free (now);
  return g_strdup (orig);
}

static void
save_row (GString *out, const GsMeasureSet *set, const GsMeasureRow *row,
          GArray *plan)
{
  guint have = row->cells ? g_strv_length (row->cells) : 0;
  for (guint i = 0; i < plan->len; i++)
    {
      int code = g_array_index (plan, int, i);
      if (code >= 0)
        {
          int file_col = i < (guint) g_strv_length (set->columns) ? (int) i : -1;
          g_autofree char *text = save_recognised (row, code, file_col);
          gs_csv_append_cell (out, text, i == 0);
        }
      else
        {
          guint idx = (guint) (-2 - code);
          gs_csv_append_cell (out, idx < have ? row->cells[idx] : "", i == 0);
        }
    }
  g_string_append_c (out, '\n');
}

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
save_provenance (GString *out, const GsMeasureSet *set)
{
  g_autofree gpointer *keys = g_hash_table_get_keys_as_array (set->provenance, NULL);
  guint n = g_hash_table_size (set->provenance);
  qsort (keys, n, sizeof *keys, compare_strings);
  for (guint i = 0; i < n; i++)
    g_string_append_printf (out, "# %s: %s\n", (char *) keys[i],
                            (char *) g_hash_table_lookup (set->provenance, keys[i]));
}

GString *
gs_measure_to_text (const GsMeasureSet *set)
{
  GString *out = g_string_sized_new (128 * (set->rows->len + 1));
  save_provenance (out, set);
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  g_autoptr (GArray) plan = save_plan (set, names);
  gs_csv_append_row (out, (const char *const *) names->pdata, names->len);
  for (guint i = 0; i < set->rows->len; i++)
    save_row (out, set, &g_array_index (set->rows, GsMeasureRow, i), plan);
  return out;
}

gboolean
gs_measure_save (const GsMeasureSet *set, const char *file, GError **error)
{
  GString *out = gs_measure_to_text (set);
  gboolean ok = gs_csv_write_file (file, out->str, out->len, error);
  g_string_free (out, TRUE);
  return ok;
}
