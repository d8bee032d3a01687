/* Tests of the importers (calibrate/import.c, import-ops.c): a small
 * Kineto trace in the layout torch.profiler writes
 * (tests/data/kineto-small.json), the per-op model traces of
 * data/neusight/e2e-examples, and format detection. */
#include "config.h"
#include "tests/testlib.h"
#include "calibrate/import.h"
#include "calibrate/csv.h"
#include "sim/error.h"

#include <glib/gstdio.h>
#include <string.h>

static char *
fixture_path (void)
{
  const char *srcdir = g_getenv ("GS_SRCDIR");
  return g_build_filename (srcdir ? srcdir : ".", "tests", "data",
                           "kineto-small.json", NULL);
}

static GsMeasureRow *
row_at (GsMeasureSet *set, guint i)
{
  g_assert_cmpuint (i, <, set->rows->len);
  return &g_array_index (set->rows, GsMeasureRow, i);
}

static void
assert_shape (const GsMeasureRow *r, gint64 B, gint64 M, gint64 N, gint64 K,
              gint64 H)
{
  g_assert_cmpint (r->B, ==, B);
  g_assert_cmpint (r->M, ==, M);
  g_assert_cmpint (r->N, ==, N);
  g_assert_cmpint (r->K, ==, K);
  g_assert_cmpint (r->H, ==, H);
}

typedef GsMeasureSet *(*Loader) (const char *file,
                                 const GsImportOptions *options,
                                 GError **error);

/* LOAD fails on a file NAME holding TEXT with error CODE and a message that
 * is DIR/MESSAGE, or starts so and ends with SUFFIX when SUFFIX is set. */
static void
expect_load_error (Loader load, const char *dir, const char *name,
                   const char *text, int code, const char *message,
                   const char *suffix)
{
  GError *error = NULL;
  g_autofree char *path = g_build_filename (dir, name, NULL);
  g_file_set_contents (path, text, -1, &error);
  g_assert_no_error (error);
  g_assert_null (load (path, NULL, &error));
  g_assert_error (error, GS_ERROR, code);
  g_autofree char *want = g_strdup_printf ("%s/%s", dir, message);
  if (suffix == NULL)
    g_assert_cmpstr (error->message, ==, want);
  else
    {
      g_assert_true (g_str_has_prefix (error->message, want));
      g_assert_true (g_str_has_suffix (error->message, suffix));
    }
  g_clear_error (&error);
  g_unlink (path);
}

static void
check_fixture_rows (GsMeasureSet *set)
{
  g_assert_cmpuint (set->rows->len, ==, 9);     /* kernels only, no memcpy */

  /* Matched through "External id": aten::addmm inside aten::linear. */
  GsMeasureRow *r = row_at (set, 0);
  g_assert_cmpstr (r->device, ==, "a100-pcie-40gb");
  g_assert_cmpstr (r->kernel, ==, "ampere_sgemm_128x64_tn");
  g_assert_cmpstr (r->op, ==, "linear");
  /* x [4096, 1024] @ W^T [1024, 4096]: N the reduction, K the outputs. */
  assert_shape (r, 1, 4096, 1024, 4096, -1);
  g_assert_cmpuint (r->grid[0], ==, 64);
  g_assert_cmpuint (r->grid[1], ==, 32);
  g_assert_cmpuint (r->grid[2], ==, 1);
  g_assert_cmpuint (r->block[0], ==, 256);
  g_assert_cmpint (r->regs, ==, 122);
  g_assert_cmpint (r->smem_static, ==, 49152);
  g_assert_cmpint (r->smem_dynamic, ==, 0);
  g_assert_cmpfloat_with_epsilon (r->latency_ms, 0.812345, 1e-12);
  g_assert_cmpint (r->dtype, ==, GS_DTYPE_FP32);
  g_assert_cmpstr (gs_measure_get_cell (set, r, "cpu_op"), ==, "aten::addmm");
  g_assert_cmpstr (gs_measure_get_cell (set, r, "input_dims"), ==,
                   "[[4096],[4096,1024],[1024,4096],[],[]]");
  g_assert_cmpstr (gs_measure_get_cell (set, r, "stream"), ==, "7");
  g_assert_cmpstr (gs_measure_get_cell (set, r, "start_us"), ==, "2000.000");

  /* Correlation id -> cudaLaunchKernel -> innermost cpu_op on its thread
   * (not the long aten::empty on another thread). */
  r = row_at (set, 1);
  g_assert_cmpstr (r->kernel, ==,
                   "anon::softmax_warp_forward<float, float, float, 9, false, false>");
  g_assert_cmpstr (r->op, ==, "softmax");
  g_assert_cmpstr (gs_measure_get_cell (set, r, "cpu_op"), ==, "aten::_softmax");
  assert_shape (r, 65536, -1, -1, -1, 512);

  /* Only the ac2g flow arrow links it. */
  r = row_at (set, 2);
  g_assert_cmpstr (r->kernel, ==,
                   "at::native::anon::vectorized_layer_norm_kernel<float, float>");
  g_assert_cmpstr (r->op, ==, "ln");
  g_assert_cmpstr (gs_measure_get_cell (set, r, "cpu_op"), ==,
                   "aten::native_layer_norm");
  assert_shape (r, 4096, -1, -1, -1, 1024);
  g_assert_cmpint (r->regs, ==, 40);

  /* In-place add of a scalar: addu. */
  r = row_at (set, 3);
  g_assert_cmpstr (r->op, ==, "addu");
  g_assert_cmpstr (r->kernel, ==,
                   "at::native::vectorized_elementwise_kernel<4, at::native::"
                   "CUDAFunctorOnSelf_add<float>, at::detail::Array<char*, 2> >");
  assert_shape (r, 4096, -1, -1, -1, 1024);

  /* fp16 tensor-tensor mul. */
  r = row_at (set, 4);
  g_assert_cmpstr (r->op, ==, "mul");
  g_assert_cmpint (r->dtype, ==, GS_DTYPE_FP16);
  assert_shape (r, 4, -1, -1, -1, 1024);

  r = row_at (set, 5);
  g_assert_cmpstr (r->op, ==, "bmm");
  g_assert_cmpstr (r->kernel, ==,
                   "cutlass::Kernel<cutlass_80_simt_sgemm_128x64_8x5_nn_align1>");
  assert_shape (r, 128, 512, 64, 512, -1);       /* [512,64] x [64,512] */
  g_assert_cmpuint (r->grid[2], ==, 128);

  /* Nothing links this one: the op stays empty. */
  r = row_at (set, 6);
  g_assert_cmpstr (r->kernel, ==, "my_custom_kernel");
  g_assert_null (r->op);
  g_assert_cmpstr (gs_measure_get_cell (set, r, "cpu_op"), ==, "");
  g_assert_cmpfloat_with_epsilon (r->latency_ms, 0.0015, 1e-12);

  /* aten::relu_ runs aten::clamp_min_ on the same tensor: relu. */
  r = row_at (set, 7);
  g_assert_cmpstr (r->op, ==, "relu");
  g_assert_cmpstr (gs_measure_get_cell (set, r, "cpu_op"), ==, "aten::clamp_min_");
  assert_shape (r, 4096, -1, -1, -1, 4096);
  g_assert_true (g_str_has_prefix (r->kernel, "at::native::vectorized_elementwise_"
                                   "kernel<4, at::native::anon::launch_clamp_scalar("));
  g_assert_true (g_str_has_suffix (r->kernel, "at::detail::Array<char*, 2> >"));

  /* "Input Strides" show the second operand as a transposed view (k^T of
   * q @ k.transpose(-1, -2)): bmm_nt, same shape columns. */
  r = row_at (set, 8);
  g_assert_cmpstr (r->op, ==, "bmm_nt");
  assert_shape (r, 128, 512, 64, 512, -1);
  g_assert_cmpstr (r->kernel, ==, "ampere_sgemm_128x64_tn");
}

static void
test_kineto (void)
{
  g_autofree char *path = fixture_path ();
  GsImportOptions opts = { .device = "a100-pcie-40gb" };
  GError *error = NULL;
  g_autoptr (GsMeasureSet) set = gs_import_kineto (path, &opts, &error);
  g_assert_no_error (error);
  check_fixture_rows (set);
  g_assert_cmpstr (g_hash_table_lookup (set->provenance, "gpu"), ==,
                   "NVIDIA A100-PCIE-40GB");
  g_assert_cmpstr (g_hash_table_lookup (set->provenance, "compute_capability"),
                   ==, "8.0");
  g_assert_cmpstr (g_hash_table_lookup (set->provenance, "sm_count"), ==, "108");
  g_assert_cmpstr (g_hash_table_lookup (set->provenance, "source"), ==,
                   "pytorch profiler trace kineto-small.json");
  g_assert_cmpstr (g_hash_table_lookup (set->provenance, "trace_schemaVersion"),
                   ==, "1");
  /* The kernel event of row 0 starts on line 53 of the fixture. */
  g_assert_cmpuint (row_at (set, 0)->line, ==, 53);
}

/* Imported, saved, loaded again: the same rows (the import is a
 * measurement set like any other). */
static void
test_kineto_gz_round_trip (void)
{
  g_autofree char *path = fixture_path ();
  g_autofree char *text = NULL;
  gsize len = 0;
  GError *error = NULL;
  g_file_get_contents (path, &text, &len, &error);
  g_assert_no_error (error);
  g_autofree char *dir = gs_test_temp_dir ("gs-import-XXXXXX");
  g_autofree char *gz = g_build_filename (dir, "trace.json.gz", NULL);
  g_assert_true (gs_csv_write_file (gz, text, len, &error));
  GsImportOptions opts = { .device = "a100-pcie-40gb" };
  g_autoptr (GsMeasureSet) set = gs_import_kineto (gz, &opts, &error);
  g_assert_no_error (error);
  g_autofree char *csv = g_build_filename (dir, "rows.csv", NULL);
  g_assert_true (gs_measure_save (set, csv, &error));
  g_autoptr (GsMeasureSet) back = gs_measure_load (csv, TRUE, &error);
  g_assert_no_error (error);
  check_fixture_rows (back);
  g_assert_cmpstr (g_hash_table_lookup (back->provenance, "gpu"), ==,
                   "NVIDIA A100-PCIE-40GB");
}

static void
test_short_names (void)
{
  static const char *const cases[][2] = {
    { "ampere_sgemm_128x128_nn", "ampere_sgemm_128x128_nn" },
    { "void cutlass::Kernel<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>"
      "(cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)",
      "cutlass::Kernel<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>" },
    /* Parentheses inside template arguments stay. */
    { "void at::native::vectorized_elementwise_kernel<4, at::native::"
      "tanh_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() "
      "const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, "
      "at::native::tanh_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::"
      "operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)",
      "at::native::vectorized_elementwise_kernel<4, at::native::"
      "tanh_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::operator()() "
      "const::{lambda(float)#1}, at::detail::Array<char*, 2> >" },
    { "void (anonymous namespace)::softmax_warp_forward<float, float, float, "
      "10, false, false>(float*, float const*, int, int, int, bool const*, "
      "int, bool)",
      "anon::softmax_warp_forward<float, float, float, 10, false, false>" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *got = gs_measure_short_kernel_name (cases[i][0]);
      g_assert_cmpstr (got, ==, cases[i][1]);
    }
}

typedef struct {
  const char *name;
  const char *text;
  GQuark domain;
  int code;
  const char *message;       /* after "DIR/" */
  const char *suffix;        /* when set, MESSAGE is only the start */
} BadTrace;

static void
test_bad_traces (void)
{
  const BadTrace cases[] = {
    { "notjson.json", "{\n  \"traceEvents\": [\n    {\"ph\": \"X\",,}\n  ]\n}\n",
      0, GS_ERROR_INPUT,
      /* the column is json-glib's to count */
      "notjson.json:3:", " (expected a Chrome trace in JSON, as written by "
      "torch.profiler's export_chrome_trace)" },
    { "noevents.json", "{\"schemaVersion\": 1}\n", 0, GS_ERROR_INPUT,
      "noevents.json:1: no 'traceEvents' array: expected a Chrome trace as "
      "written by torch.profiler's export_chrome_trace" },
    { "nodur.json",
      "{\"traceEvents\": [\n"
      "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k1\", \"ts\": 1, \"dur\": 2},\n"
      "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k2\",\n"
      "   \"ts\": 1, \"dur\": \"2\"}\n"
      "]}\n", 0, GS_ERROR_INPUT,
      "nodur.json:3: kernel event 'k2': no 'dur' (its duration in us, a "
      "number >= 0)" },
    { "nots.json",
      "{\"traceEvents\": [\n"
      "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"dur\": 2}\n"
      "]}\n", 0, GS_ERROR_INPUT,
      "nots.json:2: kernel event 'k': no 'ts' (its start in us)" },
    { "block.json",
      "{\"traceEvents\": [\n"
      "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1,\n"
      "   \"dur\": 2, \"args\": {\"block\": [128, 1, -1]}}\n"
      "]}\n", 0, GS_ERROR_INPUT,
      "block.json:2: kernel event 'k': 'block' is not [x, y, z] with whole "
      "numbers >= 0" },
    { "grid.json",
      "{\"traceEvents\": [\n"
      "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1,\n"
      "   \"dur\": 2, \"args\": {\"grid\": [1, 2]}}\n"
      "]}\n", 0, GS_ERROR_INPUT,
      "grid.json:2: kernel event 'k': 'grid' is not [x, y, z] with whole "
      "numbers >= 0" },
    { "regs.json",
      "{\"traceEvents\": [\n"
      "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"ts\": 1,\n"
      "   \"dur\": 2, \"args\": {\"registers per thread\": -4}}\n"
      "]}\n", 0, GS_ERROR_INPUT,
      "regs.json:2: kernel event 'k': 'registers per thread' is not a whole "
      "number >= 0" },
  };
  GError *error = NULL;
  g_autofree char *dir = gs_test_temp_dir ("gs-import-XXXXXX");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    expect_load_error (gs_import_kineto, dir, cases[i].name, cases[i].text,
                       cases[i].code, cases[i].message, cases[i].suffix);
  g_autofree char *absent = g_build_filename (dir, "absent.json", NULL);
  g_assert_null (gs_import_kineto (absent, NULL, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_IO);
  g_clear_error (&error);
}


/* ------------------------------------------------- per-op model traces */

static char *
e2e_path (const char *name)
{
  const char *srcdir = g_getenv ("GS_SRCDIR");
  return g_build_filename (srcdir ? srcdir : ".", "data", "neusight",
                           "e2e-examples", name, NULL);
}

/* The row of node NAME. */
static GsMeasureRow *
node_row (GsMeasureSet *set, const char *name)
{
  for (guint i = 0; i < set->rows->len; i++)
    {
      GsMeasureRow *r = row_at (set, i);
      if (g_strcmp0 (gs_measure_get_cell (set, r, "node"), name) == 0)
        return r;
    }
  g_error ("no node %s", name);
  return NULL;
}

static guint
rows_with_op (GsMeasureSet *set)
{
  guint n = 0;
  for (guint i = 0; i < set->rows->len; i++)
    n += row_at (set, i)->op != NULL;
  return n;
}

static void
test_ops_bert (void)
{
  g_autofree char *path = e2e_path ("v100-pcie-32gb-bert_large-inf-512-8-ops"
                                    ".csv");
  GError *error = NULL;
  GsImportOptions opts = { "v100-pcie-32gb" };
  g_autoptr (GsMeasureSet) set = gs_import_neusight_ops (path, &opts, &error);
  g_assert_no_error (error);
  /* 78 nodes; the placeholder, two get_attr and the output do no work. */
  g_assert_cmpuint (set->rows->len, ==, 75);
  /* One layer: 6 linear, 2 GEMMs of attention, softmax, divu, gelu, 3 ln,
   * 3 add; the embeddings' add and ln, the mask's mulu, pooler and
   * classifier. */
  g_assert_cmpuint (rows_with_op (set), ==, 20);

  GsMeasureRow *r = node_row (set, "bert_encoder_layer_0_attention_self_query");
  g_assert_cmpstr (r->op, ==, "linear");
  g_assert_cmpstr (r->device, ==, "v100-pcie-32gb");
  assert_shape (r, 8, 512, 1024, 1024, -1);
  g_assert_cmpfloat_with_epsilon (r->latency_ms, 0.85790079832077026, 1e-12);
  g_assert_cmpint (r->dtype, ==, GS_DTYPE_FP32);
  g_assert_cmpstr (gs_measure_get_cell (set, r, "fx_op"), ==, "call_module");
  assert_shape (node_row (set, "bert_encoder_layer_0_intermediate_dense"),
                8, 512, 1024, 4096, -1);
  assert_shape (node_row (set, "classifier"), 1, 8, 1024, 2, -1);
  /* q @ k^T on head-split views of 8 sequences: matmul copies q and the
   * transposed k contiguous, then runs an nn bmm.  probs @ v copies v. */
  r = node_row (set, "matmul");
  g_assert_cmpstr (r->op, ==, "bmm");
  assert_shape (r, 128, 512, 64, 512, -1);
  g_assert_cmpstr (gs_measure_get_cell (set, r, "clones"), ==, "ab");
  r = node_row (set, "matmul_1");
  g_assert_cmpstr (r->op, ==, "bmm");
  assert_shape (r, 128, 512, 512, 64, -1);
  g_assert_cmpstr (gs_measure_get_cell (set, r, "clones"), ==, "b");
  g_assert_cmpstr (gs_measure_get_cell (
                     set, node_row (set, "bert_encoder_layer_0_intermediate_"
                                    "dense"), "clones"), ==, "");
  r = node_row (set, "truediv");             /* scores / sqrt(d) */
  g_assert_cmpstr (r->op, ==, "divu");
  assert_shape (r, 65536, -1, -1, -1, 512);
  g_assert_cmpstr (node_row (set, "softmax")->op, ==, "softmax");
  g_assert_cmpstr (node_row (set, "gelu")->op, ==, "gelu");
  r = node_row (set, "bert_embeddings_layer_norm");
  g_assert_cmpstr (r->op, ==, "ln");
  assert_shape (r, 4096, -1, -1, -1, 1024);
  /* Not ops gpusim predicts alone: the mask's broadcast add, a dropout
   * module, an embedding gather, a copy, host arithmetic on sizes. */
  g_assert_null (node_row (set, "add_7")->op);
  g_assert_null (node_row (set, "bert_encoder_layer_0_attention_self_dropout")
                 ->op);
  g_assert_null (node_row (set, "bert_embeddings_word_embeddings")->op);
  g_assert_null (node_row (set, "contiguous")->op);
  r = node_row (set, "add");                 /* seq + 0: Python ints */
  g_assert_null (r->op);
  g_assert_cmpfloat (r->latency_ms, >, 0);
}

static void
test_ops_gpt2 (void)
{
  g_autofree char *path = e2e_path ("v100-pcie-32gb-gpt2_large-inf-1024-4-ops"
                                    ".csv");
  GError *error = NULL;
  g_autoptr (GsMeasureSet) set = gs_import_neusight_ops (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (rows_with_op (set), ==, 21);
  /* Conv1D traced as addmm(bias, x2d, W): W used as stored, an nn GEMM;
   * the head is an nn.Linear module, tn. */
  GsMeasureRow *r = node_row (set, "addmm");
  g_assert_cmpstr (r->op, ==, "linear_nn");
  g_assert_cmpstr (node_row (set, "lm_head")->op, ==, "linear");
  g_assert_null (r->device);
  assert_shape (r, 1, 4096, 1280, 3840, -1);
  assert_shape (node_row (set, "lm_head"), 4, 1024, 1280, 50257, -1);
  r = node_row (set, "matmul");
  g_assert_cmpstr (r->op, ==, "bmm");
  g_assert_cmpstr (gs_measure_get_cell (set, r, "clones"), ==, "ab");
  g_assert_cmpstr (gs_measure_get_cell (set, node_row (set, "matmul_1"),
                                        "clones"), ==, "b");
  g_assert_cmpstr (node_row (set, "pow_2")->op, ==, "powu");
  g_assert_cmpstr (node_row (set, "mul_3")->op, ==, "mul");
  g_assert_cmpstr (node_row (set, "tanh")->op, ==, "tanh");
  g_assert_cmpstr (node_row (set, "transformer_ln_f")->op, ==, "ln");
  /* attn / tensor(sqrt(d)): a one-element tensor, a broadcast. */
  g_assert_null (node_row (set, "truediv")->op);
}

/* One sequence: the head-split views' leading dimensions [1,H] merge, so
 * matmul copies nothing and q @ k^T reads k transposed (bmm_nt); with two
 * sequences both operands are copied. */
static void
test_ops_one_sequence (void)
{
  g_autofree char *dir = gs_test_temp_dir ("gs-import-XXXXXX");
  GError *error = NULL;
  for (int batch = 1; batch <= 2; batch++)
    {
      g_autofree char *path = g_build_filename (dir, "attn.csv", NULL);
      g_autofree char *text = g_strdup_printf (
        "name,op,target,input_shapes,output_shape,dtype,latency_ms\n"
        "view,call_method,view,\"[[%d, 256, 512], [1]]\",\"(%d, 256, 8, 64)\","
        "torch.float32,0.01\n"
        "permute,call_method,permute,\"[[%d, 256, 8, 64]]\","
        "\"(%d, 8, 256, 64)\",torch.float32,0.01\n"
        "transpose,call_method,transpose,\"[[%d, 8, 256, 64]]\","
        "\"(%d, 8, 64, 256)\",torch.float32,0.01\n"
        "matmul,call_function,<built-in method matmul of type object>,"
        "\"[[%d, 8, 256, 64], [%d, 8, 64, 256]]\",\"(%d, 8, 256, 256)\","
        "torch.float32,0.2\n",
        batch, batch, batch, batch, batch, batch, batch, batch, batch);
      g_file_set_contents (path, text, -1, &error);
      g_assert_no_error (error);
      g_autoptr (GsMeasureSet) set = gs_import_neusight_ops (path, NULL,
                                                             &error);
      g_assert_no_error (error);
      GsMeasureRow *r = node_row (set, "matmul");
      g_assert_cmpstr (r->op, ==, batch == 1 ? "bmm_nt" : "bmm");
      assert_shape (r, 8 * batch, 256, 64, 256, -1);
      g_assert_cmpstr (gs_measure_get_cell (set, r, "clones"), ==,
                       batch == 1 ? "" : "ab");
      g_unlink (path);
    }
  /* NeuSight's label files say which inputs were contiguous: a contiguous
   * one is never copied. */
  g_autofree char *path = g_build_filename (dir, "label.csv", NULL);
  g_file_set_contents (path,
    "op,target,input_shapes,input_contiguous,latency,output_shape,dtype,Name\n"
    "call_method,permute,\"[[2, 256, 8, 64]]\",[True],0.01,"
    "\"(2, 8, 256, 64)\",torch.float32,permute\n"
    "call_function,<built-in method matmul of type object>,"
    "\"[[2, 8, 256, 256], [2, 8, 256, 64]]\",\"[True, False]\",0.2,"
    "\"(2, 8, 256, 64)\",torch.float32,matmul_1\n"
    "call_function,<built-in method matmul of type object>,"
    "\"[[2, 8, 256, 256], [2, 8, 256, 64]]\",\"[True, True]\",0.2,"
    "\"(2, 8, 256, 64)\",torch.float32,matmul_2\n", -1, &error);
  g_assert_no_error (error);
  g_autoptr (GsMeasureSet) set = gs_import_neusight_ops (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (gs_measure_get_cell (set, row_at (set, 1), "clones"), ==,
                   "b");
  g_assert_cmpstr (gs_measure_get_cell (set, row_at (set, 2), "clones"), ==,
                   "");
  g_assert_cmpstr (row_at (set, 2)->op, ==, "bmm");
  g_unlink (path);
}

static void
test_ops_round_trip (void)
{
  g_autofree char *path = e2e_path ("v100-pcie-32gb-gpt2_large-inf-1024-4-ops"
                                    ".csv");
  g_autofree char *dir = gs_test_temp_dir ("gs-import-XXXXXX");
  g_autofree char *out = g_build_filename (dir, "ops.csv", NULL);
  GError *error = NULL;
  g_autoptr (GsMeasureSet) set = gs_import_load (path, GS_IMPORT_AUTO, NULL,
                                                 FALSE, &error);
  g_assert_no_error (error);
  g_assert_true (gs_measure_save (set, out, &error));
  g_assert_no_error (error);
  /* The saved set is a measurement CSV, read back as one. */
  GsImportFormat f = gs_import_detect (out);
  g_assert_cmpint (f, ==, GS_IMPORT_MEASUREMENTS);
  g_autoptr (GsMeasureSet) back = gs_import_load (out, f, NULL, FALSE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (back->rows->len, ==, set->rows->len);
  for (guint i = 0; i < set->rows->len; i++)
    {
      GsMeasureRow *a = row_at (set, i), *b = row_at (back, i);
      g_assert_cmpstr (a->op, ==, b->op);
      assert_shape (b, a->B, a->M, a->N, a->K, a->H);
      g_assert_cmpfloat_with_epsilon (a->latency_ms, b->latency_ms, 1e-12);
      g_assert_cmpstr (gs_measure_get_cell (set, a, "node"), ==,
                       gs_measure_get_cell (back, b, "node"));
    }
  g_unlink (out);
}

static void
test_detect (void)
{
  g_autofree char *dir = gs_test_temp_dir ("gs-import-XXXXXX");
  static const struct { const char *name, *text; GsImportFormat want; } cases[] = {
    { "trace.json", "  {\"traceEvents\": []}", GS_IMPORT_KINETO },
    { "list.json", "[{\"ph\": \"X\"}]", GS_IMPORT_KINETO },
    { "ops.csv", "name,op,target,input_shapes,output_shape,dtype,latency_ms\n",
      GS_IMPORT_NEUSIGHT_OPS },
    { "label.csv", "# from a run\nop,target,_args,input_shapes,latency,"
      "output_shape\n", GS_IMPORT_NEUSIGHT_OPS },
    { "meas.csv", "device,op,B,M,N,K,latency_ms\n", GS_IMPORT_MEASUREMENTS },
    { "empty.csv", "", GS_IMPORT_MEASUREMENTS },
  };
  GError *error = NULL;
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autofree char *path = g_build_filename (dir, cases[i].name, NULL);
      g_file_set_contents (path, cases[i].text, -1, &error);
      g_assert_no_error (error);
      GsImportFormat f = gs_import_detect (path);
      if (f != cases[i].want)
        g_error ("%s: detected %s", cases[i].name, gs_import_format_name (f));
      g_unlink (path);
    }
  GsImportFormat f;
  g_assert_true (gs_import_format_parse ("OPS", &f));
  g_assert_cmpint (f, ==, GS_IMPORT_NEUSIGHT_OPS);
  g_assert_false (gs_import_format_parse ("xlsx", &f));
  /* An unreadable file is the measurement reader's to report. */
  g_autofree char *absent = g_build_filename (dir, "absent.csv", NULL);
  g_assert_cmpint (gs_import_detect (absent), ==,
                   GS_IMPORT_MEASUREMENTS);
  g_autoptr (GsMeasureSet) none = gs_import_load (absent, GS_IMPORT_AUTO,
                                                  NULL, TRUE, &error);
  g_assert_null (none);
  g_assert_error (error, GS_ERROR, GS_ERROR_IO);
  g_clear_error (&error);
}

static void
test_bad_ops (void)
{
  static const struct { const char *name, *text, *message; } cases[] = {
    { "nolat.csv", "name,op,target,input_shapes,output_shape\n"
      "a,call_function,add,\"[[2, 2]]\",\"(2, 2)\"\n",
      "nolat.csv:1: not a per-op trace: no column 'latency_ms' (expected op, "
      "target, input_shapes, output_shape and latency_ms)" },
    { "badlat.csv", "name,op,target,input_shapes,output_shape,latency_ms\n"
      "a,call_function,add,\"[[2, 2]]\",\"(2, 2)\",0.5\n"
      "b,call_function,add,\"[[2, 2]]\",\"(2, 2)\",-1\n",
      "badlat.csv:3: latency: '-1' is not a time in ms >= 0" },
    { "fields.csv", "name,op,target,input_shapes,output_shape,latency_ms\n"
      "a,call_function,add,\"[[2, 2]]\",\"(2, 2)\"\n",
      "fields.csv:2: 5 fields where the header has 6" },
    { "nowork.csv", "name,op,target,input_shapes,output_shape,latency_ms\n"
      "x,placeholder,x,[],\"(2, 2)\",0\n",
      "nowork.csv: 1 node and none that ran (op call_module, call_function "
      "or call_method)" },
  };
  GError *error = NULL;
  g_autofree char *dir = gs_test_temp_dir ("gs-import-XXXXXX");
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    expect_load_error (gs_import_neusight_ops, dir, cases[i].name,
                       cases[i].text, GS_ERROR_INPUT, cases[i].message, NULL);
  /* Shapes that are not lists of whole numbers leave the op unknown. */
  g_autofree char *path = g_build_filename (dir, "odd.csv", NULL);
  g_file_set_contents (path, "name,op,target,input_shapes,output_shape,"
                       "latency_ms\n"
                       "a,call_function,add,\"[[2, x]]\",\"(2, 2)\",0.5\n"
                       "b,call_function,add,\"[[2, 2], [2, 2]]\",\"(2, 2)\",0.5\n"
                       "c,call_function,add,\"[[2, 2], [2, 2]\",\"(2, 2)\",0.5\n",
                       -1, &error);
  g_assert_no_error (error);
  g_autoptr (GsMeasureSet) set = gs_import_neusight_ops (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (set->rows->len, ==, 3);
  g_assert_null (row_at (set, 0)->op);
  g_assert_cmpstr (row_at (set, 1)->op, ==, "add");
  assert_shape (row_at (set, 1), 2, -1, -1, -1, 2);
  g_assert_null (row_at (set, 2)->op);
  g_unlink (path);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/import/kineto", test_kineto);
  g_test_add_func ("/import/kineto-gz-round-trip", test_kineto_gz_round_trip);
  g_test_add_func ("/import/short-kernel-names", test_short_names);
  g_test_add_func ("/import/bad-traces", test_bad_traces);
  g_test_add_func ("/import/ops-bert", test_ops_bert);
  g_test_add_func ("/import/ops-gpt2", test_ops_gpt2);
  g_test_add_func ("/import/ops-one-sequence", test_ops_one_sequence);
  g_test_add_func ("/import/ops-round-trip", test_ops_round_trip);
  g_test_add_func ("/import/detect", test_detect);
  g_test_add_func ("/import/bad-ops", test_bad_ops);
  return g_test_run ();
}
