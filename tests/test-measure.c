/* Tests of the measurement CSV (calibrate/measure.c, calibrate/csv.c). */
#include "config.h"
#include "tests/testlib.h"
#include "calibrate/measure.h"
#include "calibrate/csv.h"
#include "sim/error.h"

#include <glib/gstdio.h>
#include <string.h>

/* DIR and what the test writes into it go when the test case ends
 * (gs_test_temp_dir); the teardown frees the path only. */
typedef struct {
  char *dir;
} Fixture;

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = gs_test_temp_dir ("gs-measure-XXXXXX");
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  g_free (f->dir);
}

static char *
write_file (Fixture *f, const char *name, const char *data, gssize len)
{
  char *path = g_build_filename (f->dir, name, NULL);
  GError *error = NULL;
  g_file_set_contents (path, data, len, &error);
  g_assert_no_error (error);
  return path;
}

static GsMeasureRow *
row_at (GsMeasureSet *set, guint i)
{
  g_assert_cmpuint (i, <, set->rows->len);
  return &g_array_index (set->rows, GsMeasureRow, i);
}

/* ------------------------------------------------------------ round trip */

static GsMeasureSet *
sample_set (void)
{
  GsMeasureSet *set = gs_measure_new ();
  gs_measure_set_provenance (set, "gpu", "NVIDIA H100 80GB HBM3");
  gs_measure_set_provenance (set, "driver", "550.54.15");
  GsMeasureRow *r = gs_measure_append (set);
  r->device = g_strdup ("h100-sxm5-80gb");
  r->op = g_strdup ("bmm");
  r->kernel = g_strdup ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x3_nn_align4>(Params, int)");
  r->grid[0] = 16; r->grid[1] = 8; r->grid[2] = 4;
  r->block[0] = 128; r->block[1] = 1; r->block[2] = 1;
  r->B = 4; r->M = 1024; r->N = 512; r->K = 64;
  r->latency_ms = 0.0123456789012345;
  r->dtype = GS_DTYPE_BF16;
  r->regs = 232;
  r->smem_static = 0;
  r->smem_dynamic = 73728;
  r = gs_measure_append (set);
  r->op = g_strdup ("softmax");
  r->kernel = g_strdup ("say \"hi\"\nand, then");   /* quote, comma, LF */
  r->B = 8192; r->H = 1024;
  r->latency_ms = 0.5;
  return set;
}

static void
assert_sample (GsMeasureSet *set)
{
  g_assert_cmpuint (set->rows->len, ==, 2);
  GsMeasureRow *r = row_at (set, 0);
  g_assert_cmpstr (r->device, ==, "h100-sxm5-80gb");
  g_assert_cmpstr (r->op, ==, "bmm");
  g_assert_cmpstr (r->kernel, ==, "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x64_32x3_nn_align4>(Params, int)");
  g_assert_cmpuint (r->grid[0], ==, 16);
  g_assert_cmpuint (r->grid[2], ==, 4);
  g_assert_cmpuint (r->block[0], ==, 128);
  g_assert_cmpint (r->B, ==, 4);
  g_assert_cmpint (r->K, ==, 64);
  g_assert_cmpint (r->H, ==, -1);
  g_assert_true (r->latency_ms == 0.0123456789012345);
  g_assert_cmpint (r->dtype, ==, GS_DTYPE_BF16);
  g_assert_cmpint (r->regs, ==, 232);
  g_assert_cmpint (r->smem_static, ==, 0);
  g_assert_cmpint (r->smem_dynamic, ==, 73728);
  r = row_at (set, 1);
  g_assert_null (r->device);
  g_assert_cmpstr (r->kernel, ==, "say \"hi\"\nand, then");
  g_assert_cmpuint (r->grid[0], ==, 0);
  g_assert_cmpint (r->M, ==, -1);
  g_assert_cmpint (r->H, ==, 1024);
  g_assert_cmpint (r->dtype, ==, GS_DTYPE_FP32);
  g_assert_cmpint (r->regs, ==, -1);
  g_assert_cmpstr (g_hash_table_lookup (set->provenance, "gpu"), ==,
                   "NVIDIA H100 80GB HBM3");
  g_assert_cmpstr (g_hash_table_lookup (set->provenance, "driver"), ==,
                   "550.54.15");
}

static void
test_round_trip (Fixture *f, gconstpointer data)
{
  const char *name = data;
  g_autoptr (GsMeasureSet) set = sample_set ();
  g_autofree char *path = g_build_filename (f->dir, name, NULL);
  GError *error = NULL;
  g_assert_true (gs_measure_save (set, path, &error));
  g_assert_no_error (error);
  g_autoptr (GsMeasureSet) back = gs_measure_load (path, TRUE, &error);
  g_assert_no_error (error);
  assert_sample (back);
  g_assert_cmpuint (row_at (back, 1)->line, ==, 5);   /* 2 provenance + header + 1 */

  /* Saving what was loaded gives the same bytes. */
  g_autofree char *path2 = g_strconcat (path, ".again.csv", NULL);
  g_assert_true (gs_measure_save (back, path2, &error));
  g_autofree char *a = NULL, *b = NULL;
  gsize alen = 0, blen = 0;
  g_autofree char *plain = g_strconcat (path, ".plain.csv", NULL);
  g_assert_true (gs_measure_save (set, plain, &error));
  g_file_get_contents (plain, &a, &alen, &error);
  g_file_get_contents (path2, &b, &blen, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (a, ==, b);
}

static void
test_gz (Fixture *f, gconstpointer data)
{
  g_autoptr (GsMeasureSet) set = sample_set ();
  g_autofree char *path = g_build_filename (f->dir, "set.csv.gz", NULL);
  GError *error = NULL;
  g_assert_true (gs_measure_save (set, path, &error));
  g_autofree char *raw = NULL;
  gsize len = 0;
  g_file_get_contents (path, &raw, &len, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (len, >, 2);
  g_assert_cmpint ((guchar) raw[0], ==, 0x1f);       /* gzip magic */
  g_assert_cmpint ((guchar) raw[1], ==, 0x8b);
  g_autoptr (GsMeasureSet) back = gs_measure_load (path, TRUE, &error);
  g_assert_no_error (error);
  assert_sample (back);
  /* Recognised by content, whatever the name. */
  g_autofree char *renamed = write_file (f, "set-gz.csv", raw, len);
  g_autoptr (GsMeasureSet) again = gs_measure_load (renamed, TRUE, &error);
  g_assert_no_error (error);
  assert_sample (again);
}

/* TEXT as one gzip member, appended to OUT. */
static void
append_gzip (GByteArray *out, const char *text)
{
  g_autoptr (GZlibCompressor) z =
    g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP, 6);
  guint8 buf[4096];
  gsize in_len = strlen (text), r = 0, w = 0, done = 0;
  GConverterResult res;
  do
    {
      GError *error = NULL;
      res = g_converter_convert (G_CONVERTER (z), text + done, in_len - done,
                                 buf, sizeof buf, G_CONVERTER_INPUT_AT_END,
                                 &r, &w, &error);
      g_assert_no_error (error);
      done += r;
      g_byte_array_append (out, buf, (guint) w);
    }
  while (res != G_CONVERTER_FINISHED);
}

/* Several gzip members one after another (cat a.gz b.gz, pigz, bgzip)
 * are read to the end, as gzip -d reads them; an empty member too. */
static void
test_gz_members (Fixture *f, gconstpointer data)
{
  g_autoptr (GByteArray) gz = g_byte_array_new ();
  append_gzip (gz, "op,B,H,latency_ms\nadd,2,3,1.0\n");
  append_gzip (gz, "");
  append_gzip (gz, "mul,4,5,2.0\nrelu,6,7,3.0\n");
  g_autofree char *path = write_file (f, "members.csv.gz",
                                      (const char *) gz->data, gz->len);
  GError *error = NULL;
  g_autoptr (GsMeasureSet) set = gs_measure_load (path, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (set->rows->len, ==, 3);
  g_assert_cmpstr (row_at (set, 2)->op, ==, "relu");
  g_assert_cmpint (row_at (set, 2)->H, ==, 7);
  /* Cut inside the last member: an error, not a short set. */
  g_autofree char *cut = write_file (f, "cut.csv.gz",
                                     (const char *) gz->data, gz->len - 6);
  g_autoptr (GsMeasureSet) none = gs_measure_load (cut, TRUE, &error);
  g_assert_null (none);
  g_assert_nonnull (error);
  g_clear_error (&error);
}

/* -------------------------------------------------------- reading forms */

static void
test_quoting_crlf_bom (Fixture *f, gconstpointer data)
{
  const char text[] =
    "\xef\xbb\xbf# gpu: Tesla T4\r\n"
    "#   driver  :  535.1  \r\n"
    "# just a remark\r\n"
    "\r\n"
    "op,kernel,B,H,latency_ms,note\r\n"
    "add,\"a, \"\"quoted\"\" name\",2,,1.5,\"two\r\nlines\"\r\n"
    "\r\n"
    "mul,plain,3,7,0.25,\r\n"
    "relu,,,,,\"\"";                     /* no final line break */
  g_autofree char *path = write_file (f, "forms.csv", text, sizeof text - 1);
  GError *error = NULL;
  g_autoptr (GsMeasureSet) set = gs_measure_load (path, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (g_hash_table_lookup (set->provenance, "gpu"), ==, "Tesla T4");
  g_assert_cmpstr (g_hash_table_lookup (set->provenance, "driver"), ==, "535.1");
  g_assert_cmpuint (g_hash_table_size (set->provenance), ==, 2);
  g_assert_cmpstr (set->columns[0], ==, "op");     /* BOM gone */
  g_assert_cmpuint (set->rows->len, ==, 3);
  GsMeasureRow *r = row_at (set, 0);
  g_assert_cmpuint (r->line, ==, 6);
  g_assert_cmpstr (r->kernel, ==, "a, \"quoted\" name");
  g_assert_cmpint (r->B, ==, 2);
  g_assert_cmpint (r->H, ==, -1);
  g_assert_cmpstr (gs_measure_get_cell (set, r, "note"), ==, "two\r\nlines");
  r = row_at (set, 1);
  g_assert_cmpuint (r->line, ==, 9);                /* after the 2-line field */
  g_assert_true (r->latency_ms == 0.25);
  g_assert_cmpstr (gs_measure_get_cell (set, r, "note"), ==, "");
  r = row_at (set, 2);
  g_assert_cmpstr (r->op, ==, "relu");
  g_assert_null (r->kernel);
  g_assert_true (r->latency_ms < 0);
  g_assert_null (gs_measure_get_cell (set, r, "nosuch"));
}

static void
test_keeps_text_and_extras (Fixture *f, gconstpointer data)
{
  const char text[] = "op,B,H,latency_ms,run\nadd,1,4,0.50,first\n";
  g_autofree char *path = write_file (f, "keep.csv", text, -1);
  GError *error = NULL;
  g_autoptr (GsMeasureSet) set = gs_measure_load (path, FALSE, &error);
  g_assert_no_error (error);
  GsMeasureRow *r = row_at (set, 0);
  r->dtype = GS_DTYPE_FP16;                         /* a column the file lacks */
  gs_measure_set_cell (set, r, "gpu_clock_mhz", "1410");
  g_autofree char *out = g_build_filename (f->dir, "keep-out.csv", NULL);
  g_assert_true (gs_measure_save (set, out, &error));
  g_autofree char *got = NULL;
  g_file_get_contents (out, &got, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (got, ==,
                   "op,B,H,latency_ms,run,gpu_clock_mhz,dtype\n"
                   "add,1,4,0.50,first,1410,fp16\n");
  r->latency_ms = 0.75;                             /* edited: the field wins */
  g_assert_true (gs_measure_save (set, out, &error));
  g_free (got);
  got = NULL;
  g_file_get_contents (out, &got, NULL, &error);
  g_assert_nonnull (strstr (got, "add,1,4,0.75,first"));
}

/* ------------------------------------------------------------- errors */

typedef struct {
  const char *name;
  const char *text;
  gsize len;                /* 0: strlen */
  gboolean require_latency;
  const char *message;      /* expected, after "DIR/" */
} BadCase;

static const BadCase bad_cases[] = {
  { "ragged.csv", "op,B,latency_ms\nadd,1,2\nadd,1\n", 0, TRUE,
    "ragged.csv:3: 2 fields, but the header (line 1) has 3 columns: "
    "quote fields that hold commas (\"a,b\")" },
  { "comma.csv", "# gpu: x\nop,kernel,latency_ms\nadd,f<a, b>,1\n", 0, TRUE,
    "comma.csv:3: 4 fields, but the header (line 2) has 3 columns: "
    "quote fields that hold commas (\"a,b\")" },
  { "number.csv", "op,grid_x,latency_ms\nadd,12x,1\n", 0, TRUE,
    "number.csv:2: column 'grid_x': '12x' is not valid: expected a whole "
    "number from 0 to 4294967295, or empty" },
  { "negative.csv", "op,B,latency_ms\nadd,-3,1\n", 0, TRUE,
    "negative.csv:2: column 'B': '-3' is not valid: expected a whole "
    "number >= 0, or empty" },
  { "latency.csv", "op,latency_ms\nadd,fast\n", 0, TRUE,
    "latency.csv:2: column 'latency_ms': 'fast' is not valid: expected a "
    "time in milliseconds >= 0 (e.g. 0.0123), or empty" },
  { "nan.csv", "op,latency_ms\nadd,nan\n", 0, FALSE,
    "nan.csv:2: column 'latency_ms': 'nan' is not valid: expected a "
    "time in milliseconds >= 0 (e.g. 0.0123), or empty" },
  { "dtype.csv", "op,dtype,latency_ms\nadd,fp7,1\n", 0, TRUE,
    "dtype.csv:2: column 'dtype': 'fp7' is not valid: expected fp32, tf32, "
    "fp16, bf16, fp8, int8 or fp64" },
  { "nolat.csv", "op,B\nadd,1\n", 0, TRUE,
    "nolat.csv:1: no 'latency_ms' column: a measurement set needs each "
    "row's measured latency in milliseconds" },
  { "emptylat.csv", "op,latency_ms\nadd,1\nmul,\n", 0, TRUE,
    "emptylat.csv:3: column 'latency_ms' is empty: every row of a "
    "measurement set needs its measured latency in ms" },
  { "noop.csv", "device,B,latency_ms\nt4,1,1\n", 0, TRUE,
    "noop.csv:1: the header has neither an 'op' nor a 'kernel' column: "
    "expected a header such as device,op,kernel,grid_x,grid_y,grid_z,"
    "block_x,block_y,block_z,B,M,N,K,H,latency_ms" },
  { "dup.csv", "op,B,b,latency_ms\n", 0, TRUE,
    "dup.csv:1: column 'b' appears twice in the header (columns 2 and 3)" },
  { "noname.csv", "op,,latency_ms\n", 0, TRUE,
    "noname.csv:1: column 2 of the header has no name" },
  { "empty.csv", "# gpu: x\n\n", 0, TRUE,
    "empty.csv:1: no header line: expected a CSV header such as "
    "device,op,kernel,grid_x,grid_y,grid_z,block_x,block_y,block_z,B,M,N,"
    "K,H,latency_ms" },
  { "unclosed.csv", "op,kernel,latency_ms\nadd,1,2\nadd,\"open,3\nmul,x,4\n",
    0, TRUE,
    "unclosed.csv:3: quoted field 2 is never closed: end its text with '\"' "
    "and write a quote inside it as '\"\"'" },
  { "afterquote.csv", "op,kernel,latency_ms\nadd,\"k\"x,1\n", 0, TRUE,
    "afterquote.csv:2: 'x' after the closing quote of field 2: write a "
    "quote inside a quoted field as '\"\"'" },
  { "barequote.csv", "op,kernel,latency_ms\nadd,k\"x,1\n", 0, TRUE,
    "barequote.csv:2: quote inside unquoted field 2: quote the whole field "
    "and double the quote (\"a\"\"b\")" },
  { "nul.csv", "op,latency_ms\nadd,1\nmu\0l,2\n", 27, TRUE,
    "nul.csv:3: NUL byte: this is not a text CSV file (binary data, or "
    "UTF-16 text; save it as UTF-8)" },
  { "utf16.csv", "\xff\xfeo\0p\0\n\0", 8, TRUE,
    "utf16.csv:1: NUL byte: this is not a text CSV file (binary data, or "
    "UTF-16 text; save it as UTF-8)" },
  { "latin1.csv", "op,kernel,latency_ms\nadd,caf\xe9,1\n", 0, TRUE,
    "latin1.csv:2: field 2 is not valid UTF-8 (byte 0xe9): this is not a "
    "text CSV file, or it is in another encoding" },
};

static void
test_bad_input (Fixture *f, gconstpointer data)
{
  for (guint i = 0; i < G_N_ELEMENTS (bad_cases); i++)
    {
      const BadCase *c = &bad_cases[i];
      gsize len = c->len ? c->len : strlen (c->text);
      g_autofree char *path = write_file (f, c->name, c->text, (gssize) len);
      GError *error = NULL;
      GsMeasureSet *set = gs_measure_load (path, c->require_latency, &error);
      g_assert_null (set);
      g_assert_error (error, GS_ERROR, GS_ERROR_INPUT);
      g_autofree char *want = g_strdup_printf ("%s/%s", f->dir, c->message);
      g_assert_cmpstr (error->message, ==, want);
      g_error_free (error);
    }
}

static void
test_missing_file (Fixture *f, gconstpointer data)
{
  g_autofree char *path = g_build_filename (f->dir, "absent.csv", NULL);
  GError *error = NULL;
  g_assert_null (gs_measure_load (path, FALSE, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_IO);
  g_assert_true (g_str_has_prefix (error->message, path));
  g_error_free (error);
}

/* A file with no line breaks at all must fail at the record limit, not
 * be read whole (and not hang). */
static void
test_huge_line (Fixture *f, gconstpointer data)
{
  gsize len = 8u << 20;
  char *big = g_malloc (len);
  memset (big, 'x', len);
  memcpy (big, "op,", 3);
  g_autofree char *path = write_file (f, "huge.csv", big, (gssize) len);
  g_free (big);
  GError *error = NULL;
  g_assert_null (gs_measure_load (path, FALSE, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_INPUT);
  g_autofree char *want = g_strdup_printf (
      "%s:1: record longer than %u bytes: this is not a CSV file, or a quote "
      "is never closed", path, GS_CSV_MAX_RECORD_BYTES);
  g_assert_cmpstr (error->message, ==, want);
  g_error_free (error);
}

static void
test_too_many_fields (Fixture *f, gconstpointer data)
{
  GString *text = g_string_new ("op");
  for (guint i = 1; i < GS_CSV_MAX_FIELDS + 1; i++)
    g_string_append_printf (text, ",c%u", i);
  g_string_append_c (text, '\n');
  g_autofree char *path = write_file (f, "wide.csv", text->str, (gssize) text->len);
  g_string_free (text, TRUE);
  GError *error = NULL;
  g_assert_null (gs_measure_load (path, FALSE, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_INPUT);
  g_autofree char *want = g_strdup_printf ("%s:1: more than %u fields in one record",
                                           path, GS_CSV_MAX_FIELDS);
  g_assert_cmpstr (error->message, ==, want);
  g_error_free (error);
}

static void
test_save_error (Fixture *f, gconstpointer data)
{
  g_autoptr (GsMeasureSet) set = sample_set ();
  g_autofree char *path = g_build_filename (f->dir, "no", "such", "dir.csv", NULL);
  GError *error = NULL;
  g_assert_false (gs_measure_save (set, path, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_IO);
  /* As every output file says it (src/output.c): no temporary name. */
  g_autofree char *want = g_strdup_printf (
    "%s: cannot create: No such file or directory", path);
  g_assert_cmpstr (error->message, ==, want);
  g_error_free (error);
}

static void
test_corrupt_gz (Fixture *f, gconstpointer data)
{
  const char text[] = "\x1f\x8b\x08\x00garbage that is not deflate data";
  g_autofree char *path = write_file (f, "bad.csv.gz", text, sizeof text - 1);
  GError *error = NULL;
  g_assert_null (gs_measure_load (path, FALSE, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_IO);
  g_autofree char *prefix = g_strdup_printf ("%s:1: cannot read:", path);
  g_assert_true (g_str_has_prefix (error->message, prefix));
  g_error_free (error);
}

/* ------------------------------------------------------------- split */

static void
test_fnv (void)
{
  /* Reference values of FNV-1a 32 (draft-eastlake-fnv test vectors). */
  g_assert_cmphex (gs_measure_fnv1a32 (""), ==, 0x811c9dc5);
  g_assert_cmphex (gs_measure_fnv1a32 ("a"), ==, 0xe40c292c);
  g_assert_cmphex (gs_measure_fnv1a32 ("foobar"), ==, 0xbf9cf968);
}

static void
test_split_by_shape (void)
{
  GsMeasureRow a, b;
  gs_measure_row_init (&a);
  a.op = g_strdup ("add");
  a.B = 32768;
  a.H = 1600;
  g_autofree char *key = gs_measure_shape_key (&a);
  g_assert_cmpstr (key, ==, "add|32768||||1600");
  g_assert_cmpint (gs_measure_is_holdout (&a), ==,
                   gs_measure_fnv1a32 ("add|32768||||1600") % 2 == 1);

  /* Everything but op and B,M,N,K,H leaves the side unchanged. */
  gboolean side = gs_measure_is_holdout (&a);
  gs_measure_row_init (&b);
  b.op = g_strdup ("add");
  b.B = 32768;
  b.H = 1600;
  b.device = g_strdup ("t4");
  b.kernel = g_strdup ("other");
  b.grid[0] = 7;
  b.block[0] = 64;
  b.dtype = GS_DTYPE_FP16;
  b.latency_ms = 99;
  b.regs = 40;
  g_assert_cmpint (gs_measure_is_holdout (&b), ==, side);

  /* Shapes do move rows: among a few shapes both sides occur. */
  guint held = 0;
  for (int h = 1; h <= 64; h++)
    {
      b.H = h;
      held += gs_measure_is_holdout (&b);
    }
  g_assert_cmpuint (held, >, 16);
  g_assert_cmpuint (held, <, 48);
  gs_measure_row_clear (&a);
  gs_measure_row_clear (&b);
}

/* --------------------------------------------------------- NeuSight data */

static void
test_neusight (void)
{
  const char *srcdir = g_getenv ("GS_SRCDIR");
  if (srcdir == NULL)
    srcdir = ".";
  g_autofree char *path = g_build_filename (srcdir, "data", "neusight",
                                            "kernels.csv.gz", NULL);
  GError *error = NULL;
  g_autoptr (GsMeasureSet) set = gs_measure_load (path, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (set->rows->len, ==, 82519);
  g_assert_cmpuint (g_strv_length (set->columns), ==, 15);
  GsMeasureRow *r = row_at (set, 0);
  g_assert_cmpstr (r->device, ==, "a100-pcie-40gb");
  g_assert_cmpstr (r->op, ==, "add");
  g_assert_cmpstr (r->kernel, ==, "at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >");
  g_assert_cmpuint (r->grid[0], ==, 102400);
  g_assert_cmpuint (r->block[0], ==, 128);
  g_assert_cmpint (r->B, ==, 32768);
  g_assert_cmpint (r->M, ==, -1);
  g_assert_cmpint (r->H, ==, 1600);
  g_assert_true (r->latency_ms == 0.464166);
  g_assert_cmpuint (r->line, ==, 2);

  /* The split is near half, and one shape is on one side on every GPU. */
  g_autoptr (GHashTable) side = g_hash_table_new_full (g_str_hash, g_str_equal,
                                                       g_free, NULL);
  guint held = 0;
  for (guint i = 0; i < set->rows->len; i++)
    {
      r = row_at (set, i);
      gboolean h = gs_measure_is_holdout (r);
      held += h;
      char *key = gs_measure_shape_key (r);
      gpointer was = NULL;
      if (g_hash_table_lookup_extended (side, key, NULL, &was))
        {
          g_assert_cmpint (GPOINTER_TO_INT (was), ==, h + 1);
          g_free (key);
        }
      else
        g_hash_table_insert (side, key, GINT_TO_POINTER (h + 1));
    }
  g_assert_cmpuint (held, ==, 41222);         /* as docs/calibration.md says */
  g_assert_cmpfloat ((double) held / set->rows->len, >, 0.45);
  g_assert_cmpfloat ((double) held / set->rows->len, <, 0.55);
  g_assert_cmpuint (g_hash_table_size (side), <, set->rows->len);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define FIX(path, fn, data) \
  g_test_add (path, Fixture, data, fixture_setup, fn, fixture_teardown)
  FIX ("/measure/round-trip", test_round_trip, "set.csv");
  FIX ("/measure/gz", test_gz, NULL);
  FIX ("/measure/gz-members", test_gz_members, NULL);
  FIX ("/measure/quoting-crlf-bom", test_quoting_crlf_bom, NULL);
  FIX ("/measure/keeps-text-and-extras", test_keeps_text_and_extras, NULL);
  FIX ("/measure/bad-input", test_bad_input, NULL);
  FIX ("/measure/missing-file", test_missing_file, NULL);
  FIX ("/measure/huge-line", test_huge_line, NULL);
  FIX ("/measure/corrupt-gz", test_corrupt_gz, NULL);
  FIX ("/measure/too-many-fields", test_too_many_fields, NULL);
  FIX ("/measure/save-error", test_save_error, NULL);
  g_test_add_func ("/measure/fnv1a", test_fnv);
  g_test_add_func ("/measure/split-by-shape", test_split_by_shape);
  g_test_add_func ("/measure/neusight", test_neusight);
  return g_test_run ();
}
