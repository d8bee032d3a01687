/* Tests of the collector's bookkeeping (calibrate/collect.c) without a GPU:
 * kernel records are handed to it as CUPTI would hand them over, then the
 * rows it writes are read back. */
#include "config.h"
#include "tests/testlib.h"
#include "calibrate/collect.h"
#include "calibrate/collect-private.h"
#include "calibrate/measure.h"

#include <glib/gstdio.h>
#include <math.h>

/* Mangled names as nvcc emits them (checked with c++filt). */
#define GEMM_KERNEL "_Z14my_gemm_kernelPfi"
#define TAIL_KERNEL "_ZN2at6native12_GLOBAL__N_115layer_norm_tailIfEEvPT_"

static const uint32_t grid[3] = { 64, 32, 1 }, block[3] = { 256, 1, 1 };

static GsCollectLabel
gemm_label (void)
{
  GsCollectLabel l = { .op = "linear", .dtype = "fp16", .B = 1, .M = 2048,
                       .N = 4096, .K = 1024, .H = -1,
                       .flops = 2.0 * 2048 * 4096 * 1024, .bytes = 1e6,
                       .variant = "cublasGemmEx" };
  return l;
}

/* 25 calls of a main kernel (100+i us) and a tail kernel (10 us); event
 * times 0.2 + i/1000 ms. */
static void
run_gemm_label (const GsCollectLabel *l, float *events)
{
  uint64_t t = 1000000;
  /* A warm-up kernel outside any call is not counted. */
  gs_collect_feed_kernel (GEMM_KERNEL, grid, block, 128, 0, 49152, t, t + 500000, 1, 0);
  gs_collect_begin_label (l);
  for (int i = 0; i < GS_COLLECT_RUNS; i++)
    {
      uint64_t call = gs_collect_next_call ();
      gs_collect_call_begin ();
      gs_collect_call_end ();
      uint32_t corr = 100 + 2 * i;
      gs_collect_feed_kernel (GEMM_KERNEL, grid, block, 128, 0, 49152,
                              t, t + (100 + i) * 1000, corr, call);
      gs_collect_feed_kernel (TAIL_KERNEL, (uint32_t[3]) { 8, 1, 1 }, block, 30, 1024, 0,
                              t, t + 10000, corr + 1, call);
      events[i] = 0.2f + i / 1000.0f;
      t += 1000000;
    }
}

static GsMeasureRow *
row_at (GsMeasureSet *set, guint i)
{
  g_assert_cmpuint (i, <, set->rows->len);
  return &g_array_index (set->rows, GsMeasureRow, i);
}

static double
cell_number (GsMeasureSet *set, GsMeasureRow *r, const char *column)
{
  const char *c = gs_measure_get_cell (set, r, column);
  g_assert_nonnull (c);
  return g_ascii_strtod (c, NULL);
}

static void
test_labelled_rows (void)
{
  float events[GS_COLLECT_RUNS];
  GsCollectLabel l = gemm_label ();
  run_gemm_label (&l, events);
  g_assert_cmpint (gs_collect_end_label (events, GS_COLLECT_RUNS), ==, 0);

  /* A label whose calls launched nothing CUPTI saw: CUDA-event time. */
  GsCollectLabel bare = { .op = "launch_empty", .dtype = "fp32", .B = 1,
                          .M = -1, .N = -1, .K = -1, .H = 1000 };
  gs_collect_begin_label (&bare);
  for (int i = 0; i < GS_COLLECT_RUNS; i++)
    events[i] = 3.0f - i * 0.01f;
  g_assert_cmpint (gs_collect_end_label (events, GS_COLLECT_RUNS), ==, 0);

  /* use_events: kernels seen, but the events decide. */
  l.use_events = 1;
  run_gemm_label (&l, events);
  g_assert_cmpint (gs_collect_end_label (events, GS_COLLECT_RUNS), ==, 0);

  /* CUPTI saw only one call's kernel (records lost): the events decide,
   * not a mean over calls that would count as taking no time. */
  GsCollectLabel partial = gemm_label ();
  gs_collect_begin_label (&partial);
  for (int i = 0; i < GS_COLLECT_RUNS; i++)
    {
      uint64_t call = gs_collect_next_call ();
      gs_collect_call_begin ();
      gs_collect_call_end ();
      if (i == 0)
        gs_collect_feed_kernel (GEMM_KERNEL, grid, block, 128, 0, 0, 0, 50000, 999, call);
      events[i] = 1.0f;
    }
  g_assert_cmpint (gs_collect_end_label (events, GS_COLLECT_RUNS), ==, 0);

  GError *error = NULL;
  g_autofree char *dir = gs_test_temp_dir ("gs-collect-XXXXXX");
  g_autofree char *file = g_build_filename (dir, "rows.csv", NULL);
  gs_collect_provenance ("gpu", "Test GPU");
  g_assert_true (gs_collect_has_kernels ());
  g_assert_cmpint (gs_collect_write (file), ==, 0);
  g_autoptr (GsMeasureSet) set = gs_measure_load (file, TRUE, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (set->rows->len, ==, 4);
  g_assert_cmpstr (g_hash_table_lookup (set->provenance, "gpu"), ==, "Test GPU");
  g_assert_cmpstr (g_hash_table_lookup (set->provenance, "dropped_records"), ==, "0");
  g_assert_nonnull (g_hash_table_lookup (set->provenance, "date"));

  GsMeasureRow *r = row_at (set, 0);
  g_assert_cmpstr (r->op, ==, "linear");
  g_assert_cmpint (r->dtype, ==, GS_DTYPE_FP16);
  g_assert_cmpint (r->M, ==, 2048);
  g_assert_cmpint (r->H, ==, -1);
  /* The kernel that took most of the time, demangled and shortened. */
  g_assert_cmpstr (r->kernel, ==, "my_gemm_kernel");
  g_assert_cmpuint (r->grid[1], ==, 32);
  g_assert_cmpint (r->regs, ==, 128);
  g_assert_cmpint (r->smem_dynamic, ==, 49152);
  /* Per call: main + tail; the 5 fastest calls: (100..104) + 10 us. */
  g_assert_cmpfloat_with_epsilon (r->latency_ms, 0.112, 1e-9);
  g_assert_cmpfloat_with_epsilon (cell_number (set, r, "event_ms"), 0.202, 1e-6);
  g_assert_cmpfloat_with_epsilon (cell_number (set, r, "kernels_per_call"), 2, 1e-12);
  g_assert_cmpfloat_with_epsilon (cell_number (set, r, "tflops"),
                                  2.0 * 2048 * 4096 * 1024 / 0.112e-3 / 1e12, 1e-2);  /* 5 digits */
  g_assert_cmpstr (gs_measure_get_cell (set, r, "timing"), ==, "cupti");
  g_assert_cmpstr (gs_measure_get_cell (set, r, "variant"), ==, "cublasGemmEx");

  r = row_at (set, 1);
  g_assert_cmpstr (r->op, ==, "launch_empty");
  g_assert_null (r->kernel);
  g_assert_cmpfloat_with_epsilon (r->latency_ms, 2.78, 1e-6);  /* 2.76..2.80 */
  g_assert_cmpstr (gs_measure_get_cell (set, r, "timing"), ==, "cuda-events");

  r = row_at (set, 2);
  g_assert_cmpfloat_with_epsilon (r->latency_ms, 0.202, 1e-6);
  g_assert_cmpstr (gs_measure_get_cell (set, r, "timing"), ==, "cuda-events");
  g_assert_cmpstr (r->kernel, ==, "my_gemm_kernel");

  r = row_at (set, 3);
  g_assert_cmpfloat_with_epsilon (r->latency_ms, 1.0, 1e-9);
  g_assert_cmpstr (gs_measure_get_cell (set, r, "timing"), ==, "cuda-events");
  g_assert_cmpfloat_with_epsilon (cell_number (set, r, "kernels_per_call"), 0.04, 1e-9);
}

/* Runs the current test in a child process that writes the collector's
 * CSV to the file named by $ENV (the collector is a process singleton),
 * and loads what it wrote.  NAME is the file's name in a temporary
 * directory. */
static GsMeasureSet *
child_rows (const char *env, const char *name)
{
  GError *error = NULL;
  g_autofree char *dir = gs_test_temp_dir ("gs-collect-XXXXXX");
  g_autofree char *file = g_build_filename (dir, name, NULL);
  g_setenv (env, file, TRUE);
  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  GsMeasureSet *set = gs_measure_load (file, TRUE, &error);
  g_assert_no_error (error);
  return set;
}

/* Without labels (the injected use) every launch is a row.  The collector
 * is a process singleton: this runs in a child process. */
static void
test_raw_rows (void)
{
  if (g_test_subprocess ())
    {
      const char *file = g_getenv ("GS_TEST_RAW_FILE");
      gs_collect_feed_kernel (TAIL_KERNEL, grid, block, 30, 1024, 0, 5000, 6500, 7, 0);
      gs_collect_feed_kernel (GEMM_KERNEL, grid, block, 128, 0, 0, 9000, 19000, 8, 0);
      g_assert_cmpint (gs_collect_write (file), ==, 0);
      return;
    }
  g_autoptr (GsMeasureSet) set = child_rows ("GS_TEST_RAW_FILE", "raw.csv.gz");
  g_assert_cmpuint (set->rows->len, ==, 2);
  GsMeasureRow *r = row_at (set, 0);
  g_assert_cmpstr (r->kernel, ==, "at::native::anon::layer_norm_tail<float>");
  g_assert_cmpstr (gs_measure_get_cell (set, r, "kernel_full"), ==,
                   "void at::native::(anonymous namespace)::layer_norm_tail<float>(float*)");
  g_assert_cmpfloat_with_epsilon (r->latency_ms, 0.0015, 1e-12);
  g_assert_cmpint (r->smem_static, ==, 1024);
  g_assert_cmpstr (gs_measure_get_cell (set, r, "start_ns"), ==, "5000");
  g_assert_cmpstr (gs_measure_get_cell (set, r, "correlation"), ==, "7");
  g_assert_null (r->op);
  r = row_at (set, 1);
  g_assert_cmpfloat_with_epsilon (r->latency_ms, 0.01, 1e-12);
}

/* Kernels with no external-correlation record (CUPTI 13 writes none for
 * plain launches) are tied to calls by their start times: call i's window
 * runs from its call_begin to the next call's, the last one's to
 * end_label.  A child process: the collector is a singleton. */
static void
test_time_windows (void)
{
  if (g_test_subprocess ())
    {
      const char *file = g_getenv ("GS_TEST_WINDOW_FILE");
      float events[GS_COLLECT_RUNS];
      GsCollectLabel l = gemm_label ();
      uint64_t t = 1000000;
      /* warm-up, before the first call's window */
      gs_collect_feed_kernel (GEMM_KERNEL, grid, block, 128, 0, 0, t, t + 900000, 1, 0);
      t += 1000000;
      gs_collect_begin_label (&l);
      for (int i = 0; i < GS_COLLECT_RUNS; i++)
        {
          gs_collect_feed_call_start (t);
          gs_collect_call_begin ();
          gs_collect_call_end ();
          /* main kernel (200 + i us) and a tail (10 us), uncorrelated */
          gs_collect_feed_kernel (GEMM_KERNEL, grid, block, 128, 0, 0, t + 5000,
                                  t + 5000 + (200 + i) * 1000, 50 + 2 * i, 0);
          gs_collect_feed_kernel (TAIL_KERNEL, grid, block, 30, 0, 0, t + 300000,
                                  t + 310000, 51 + 2 * i, 0);
          events[i] = 0.5f;
          t += 1000000;
        }
      gs_collect_feed_label_end (t);
      /* launched after the label ended: someone else's */
      gs_collect_feed_kernel (GEMM_KERNEL, grid, block, 128, 0, 0, t + 10, t + 5000000, 99, 0);
      g_assert_cmpint (gs_collect_end_label (events, GS_COLLECT_RUNS), ==, 0);
      g_assert_cmpint (gs_collect_write (file), ==, 0);
      return;
    }
  g_autoptr (GsMeasureSet) set = child_rows ("GS_TEST_WINDOW_FILE", "windows.csv");
  g_assert_cmpuint (set->rows->len, ==, 1);
  GsMeasureRow *r = row_at (set, 0);
  g_assert_cmpstr (gs_measure_get_cell (set, r, "timing"), ==, "cupti");
  g_assert_cmpstr (r->kernel, ==, "my_gemm_kernel");
  /* the 5 fastest calls: (200..204) + 10 us; warm-up and late kernel out */
  g_assert_cmpfloat_with_epsilon (r->latency_ms, 0.212, 1e-9);
  g_assert_cmpfloat_with_epsilon (cell_number (set, r, "kernels_per_call"), 2, 1e-12);
  g_assert_cmpstr (g_hash_table_lookup (set->provenance, "labelled_kernels"), ==,
                   "0 by correlation, 50 by time window");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/collect/labelled-rows", test_labelled_rows);
  g_test_add_func ("/collect/raw-rows", test_raw_rows);
  g_test_add_func ("/collect/time-windows", test_time_windows);
  return g_test_run ();
}
