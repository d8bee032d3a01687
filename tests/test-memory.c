/* Tests of the memory-bound kernel library model (workloads/mem-*.c,
 * lib-memory.c), its fitter (calibrate/fit-memory.c) and the device
 * memory a model must fit in (workloads/model-memory.c). */
#include "config.h"
#include "tests/testlib.h"
#include "calibrate/fit.h"
#include "calibrate/fit-memory.h"
#include "calibrate/measure.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/gpu.h"
#include "workloads/library.h"
#include "workloads/mem-kernels.h"
#include "workloads/mem-model.h"
#include "workloads/model.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static GsOp
shape_op (const char *name, int64_t rows, int64_t cols, GsDtype dtype)
{
  GsOp op;
  const char *bad = NULL;
  gboolean ok = gs_mem_op_from_shape (name, rows, cols, dtype, &op, &bad);
  g_assert_true (ok);
  return op;
}

/* Lowers OP on A with the default parameters. */
static GArray *
lower (const GsArch *a, const GsOp *op, const GsKernelHint *hint)
{
  GsMemParams p;
  gs_mem_params_init (&p);
  GArray *k = gs_test_kernels_new ();
  GError *error = NULL;
  g_assert_true (gs_mem_lower (a, &p, op, GS_RUNTIME_EAGER, hint, k, &error));
  g_assert_no_error (error);
  return k;
}

/* The kernel name up to its template arguments. */
static char *
base_name (const char *name)
{
  const char *lt = strchr (name, '<');
  return lt ? g_strndup (name, lt - name) : g_strdup (name);
}

/* ------------------------------------------------------ launch configs */

/* Every measured ln, softmax and pointwise row: our kernel (one of them
 * when PyTorch splits the op) has the measured name, grid and block. */
static void
test_launch_configs (void)
{
  GsMeasureSet *set = gs_test_neusight ();
  g_autoptr (GHashTable) archs = g_hash_table_new_full (
    g_str_hash, g_str_equal, g_free, (GDestroyNotify) gs_arch_free);
  guint checked = 0, matched = 0;
  for (guint i = 0; i < set->rows->len; i++)
    {
      const GsMeasureRow *r = &g_array_index (set->rows, GsMeasureRow, i);
      GsOp op;
      if (!gs_fit_memory_op (r, &op))
        continue;
      GsArch *a = g_hash_table_lookup (archs, r->device);
      if (a == NULL)
        {
          a = gs_test_arch (r->device);
          g_hash_table_insert (archs, g_strdup (r->device), a);
        }
      g_autoptr (GArray) k = lower (a, &op, NULL);
      g_autofree char *want = base_name (r->kernel);
      gboolean ok = FALSE;
      for (guint j = 0; j < k->len && !ok; j++)
        {
          const GsKernel *kk = &g_array_index (k, GsKernel, j);
          g_autofree char *got = base_name (kk->name);
          ok = strcmp (got, want) == 0 && kk->grid[0] == r->grid[0]
               && kk->block[0] == r->block[0] && kk->block[1] == r->block[1];
          /* The warp softmax names log2(cols) as a template argument. */
          if (ok && strstr (want, "softmax_warp_forward"))
            {
              g_autofree char *tmpl = g_strndup (
                r->kernel, strstr (r->kernel, ", false") - r->kernel);
              ok = g_str_has_prefix (kk->name, tmpl);
            }
        }
      if (!ok && g_test_verbose ())
        g_printerr ("%s:%u: %s B=%" G_GINT64_FORMAT " H=%" G_GINT64_FORMAT
                    ": measured %s grid %u block %ux%u\n", set->file,
                    r->line, r->op, r->B, r->H, r->kernel, r->grid[0],
                    r->block[0], r->block[1]);
      checked++;
      matched += ok;
      gs_op_clear (&op);
    }
  g_assert_cmpuint (checked, >, 40000);
  g_assert_cmpuint (matched, ==, checked);
}

/* ------------------------------------------------------- kernel choice */

static const GsKernel *
only (GArray *k)
{
  g_assert_cmpuint (k->len, ==, 1);
  return &g_array_index (k, GsKernel, 0);
}

static void
test_vectorized_or_not (void)
{
  g_autoptr (GsArch) a = gs_test_arch ("a100-pcie-40gb");
  GsOp op = shape_op ("add", 1000, 1000, GS_DTYPE_FP32);
  g_autoptr (GArray) v = lower (a, &op, NULL);
  g_assert_true (strstr (only (v)->name, "vectorized_elementwise_kernel<4"));
  g_assert_cmpuint (only (v)->grid[0], ==, (1000 * 1000 + 511) / 512);
  g_assert_cmpuint (only (v)->block[0], ==, 128);

  /* A broadcast operand: the offset-calculator kernel, 2 per thread. */
  op.n_in = 1;
  op.n_small_in = 1;
  g_autoptr (GArray) s = lower (a, &op, NULL);
  g_assert_true (g_str_has_prefix (only (s)->name,
                                   "at::native::elementwise_kernel<128, 2"));
  g_assert_cmpuint (only (s)->grid[0], ==, (1000 * 1000 + 255) / 256);
  /* Its elements go in dependent rounds, one a thread each; the
   * vectorized kernel loads up front. */
  g_assert_cmpfloat (only (s)->work.serial_trips, ==, 2);
  g_assert_cmpfloat (only (v)->work.serial_trips, ==, 0);
  GsOp h16 = op;
  h16.dtype = GS_DTYPE_BF16;
  g_autoptr (GArray) s16 = lower (a, &h16, NULL);
  g_assert_true (g_str_has_prefix (only (s16)->name,
                                   "at::native::elementwise_kernel<128, 4"));
  g_assert_cmpfloat (only (s16)->work.serial_trips, ==, 4);
  /* The offset calculator walks the dimensions the operands do not share
   * contiguously, a division and a multiply-add per operand each: a 0-dim
   * tensor operand collapses them all to one, a mask broadcast over the
   * heads keeps three (19 instructions per dimension per element, 256
   * elements a block in fp32). */
  GsOp b3 = op;
  b3.bcast_elems = 10000;
  g_autoptr (GArray) sb = lower (a, &b3, NULL);
  g_assert_cmpfloat (only (sb)->work.other_ops - only (s)->work.other_ops,
                     ==, 2 * 19.0 * 256);
  /* matmul's copy of a head-split view (a clone marked strided) runs the
   * offset-calculator kernel over four dimensions; a contiguous clone is
   * vectorized. */
  GsOp cp;
  gs_op_init (&cp);
  cp.kind = GS_OP_COPY;
  cp.name = g_strdup ("clone");
  cp.dtype = GS_DTYPE_BF16;
  cp.rows = 4096;
  cp.cols = 64;
  g_autoptr (GArray) cv = lower (a, &cp, NULL);
  g_assert_true (strstr (only (cv)->name, "vectorized_elementwise_kernel"));
  cp.strided = TRUE;
  g_autoptr (GArray) cs = lower (a, &cp, NULL);
  g_assert_true (g_str_has_prefix (only (cs)->name,
                                   "at::native::elementwise_kernel<128, 4"));
  g_assert_cmpfloat (only (cs)->work.other_ops / 512, >,
                     only (sb)->work.other_ops / 256);
  /* k^T made contiguous: a warp's reads fall one bf16 element to a
   * 32-byte sector, sixteen times the bytes through L2, DRAM's the
   * same. */
  cp.transpose = TRUE;
  g_autoptr (GArray) ct = lower (a, &cp, NULL);
  const GsWork *wt = &only (ct)->work, *ws = &only (cs)->work;
  g_assert_cmpfloat_with_epsilon (wt->l2_bytes - ws->l2_bytes,
                                  15 * 512 * 2.0, 1e-9);
  g_assert_cmpfloat (wt->dram_bytes, ==, ws->dram_bytes);
  gs_op_clear (&cp);

  /* A measured hint names the unrolled (misaligned) kernel. */
  GsKernelHint h = { "at::native::unrolled_elementwise_kernel<add>",
                     { 0 }, { 0 } };
  op.n_in = 2;
  op.n_small_in = 0;
  g_autoptr (GArray) u = lower (a, &op, &h);
  g_assert_true (strstr (only (u)->name, "unrolled_elementwise_kernel"));
  /* Scalar loads cost more instructions than vector ones. */
  g_assert_cmpfloat (only (u)->work.other_ops, >,
                     only (v)->work.other_ops);
  gs_op_clear (&op);

  /* Byte offsets past int32: split in halves (2^31 fp32 -> 4 launches). */
  GsOp big = shape_op ("relu", 1 << 21, 1024, GS_DTYPE_FP32);
  g_autoptr (GArray) b = lower (a, &big, NULL);
  g_assert_cmpuint (b->len, ==, 4);
  g_assert_cmpuint (g_array_index (b, GsKernel, 0).grid[0], ==, 1048576);
  gs_op_clear (&big);
  /* Half the bytes per element: half the launches. */
  GsOp half = shape_op ("relu", 1 << 21, 1024, GS_DTYPE_FP16);
  g_autoptr (GArray) hb = lower (a, &half, NULL);
  g_assert_cmpuint (hb->len, ==, 2);
  gs_op_clear (&half);

  /* Layer norm: vectorized with H % 4 == 0, two kernels otherwise. */
  GsOp ln = shape_op ("ln", 512, 1024, GS_DTYPE_FP32);
  g_autoptr (GArray) l1 = lower (a, &ln, NULL);
  g_assert_true (strstr (only (l1)->name, "vectorized_layer_norm_kernel"));
  g_assert_cmpuint (only (l1)->grid[0], ==, 512);
  ln.cols = 1022;
  g_autoptr (GArray) l2 = lower (a, &ln, NULL);
  g_assert_cmpuint (l2->len, ==, 2);
  g_assert_true (strstr (g_array_index (l2, GsKernel, 0).name,
                         "RowwiseMomentsCUDAKernel"));
  g_assert_true (strstr (g_array_index (l2, GsKernel, 1).name,
                         "LayerNormForwardCUDAKernel"));
  gs_op_clear (&ln);
}

static void
test_softmax_choice (void)
{
  g_autoptr (GsArch) a = gs_test_arch ("t4");
  struct { int64_t cols; GsDtype dt; const char *kernel; uint32_t bx, by; }
  cases[] = {
    { 1, GS_DTYPE_FP32, "softmax_warp_forward<float, float, float, 0,", 1,
      128 },
    { 100, GS_DTYPE_FP32, "softmax_warp_forward<float, float, float, 7,", 32,
      4 },
    { 1024, GS_DTYPE_FP32, "softmax_warp_forward<float, float, float, 10,",
      32, 4 },
    { 1024, GS_DTYPE_FP16, "softmax_warp_forward<c10::Half", 32, 4 },
    { 1025, GS_DTYPE_FP32, "cunn_SoftMaxForward<4,", 128, 1 },
    { 1600, GS_DTYPE_FP32, "cunn_SoftMaxForward<4,", 256, 1 },
    { 10240, GS_DTYPE_FP32, "cunn_SoftMaxForward<4,", 512, 1 },
    { 4096, GS_DTYPE_FP16, "cunn_SoftMaxForward<8,", 256, 1 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      GsOp op = shape_op ("softmax", 3000, cases[i].cols, cases[i].dt);
      g_autoptr (GArray) k = lower (a, &op, NULL);
      const GsKernel *kk = only (k);
      g_assert_true (strstr (kk->name, cases[i].kernel));
      g_assert_cmpuint (kk->block[0], ==, cases[i].bx);
      g_assert_cmpuint (kk->block[1], ==, cases[i].by);
      gs_op_clear (&op);
    }
  /* Two rows per warp up to 128 columns, one beyond: rows per block. */
  GsOp s = shape_op ("softmax", 1000, 128, GS_DTYPE_FP32);
  g_autoptr (GArray) k1 = lower (a, &s, NULL);
  g_assert_cmpuint (only (k1)->grid[0], ==, 125);
  s.cols = 129;
  g_autoptr (GArray) k2 = lower (a, &s, NULL);
  g_assert_cmpuint (only (k2)->grid[0], ==, 250);
  /* Launches of at most 2^30 / cols rows. */
  s.rows = 1310720;
  s.cols = 1024;
  g_autoptr (GArray) k3 = lower (a, &s, NULL);
  g_assert_cmpuint (k3->len, ==, 2);
  g_assert_cmpuint (g_array_index (k3, GsKernel, 0).grid[0], ==, 262144);
  g_assert_cmpuint (g_array_index (k3, GsKernel, 1).grid[0], ==, 65536);
  /* The backward (_softmax_backward_data) runs PyTorch's backward kernels
   * and reads the gradient and the forward's output: a warp per row moves
   * 3 rows where the forward moves 2; a block per row reads both twice
   * and writes once (5 rows) where the forward reads its row three times
   * and writes once (4).  log_softmax says so in the name. */
  s.rows = 3000;
  struct { int64_t cols; double ratio; const char *name, *fwd, *bwd; }
  dir[] = {
    { 512, 1.5, "_softmax_backward_data", "softmax_warp_forward<float, float, "
      "float, 9, false", "softmax_warp_backward<float, float, float, 9, "
      "false" },
    { 4096, 1.25, "_log_softmax_backward_data", "cunn_SoftMaxForward<4, float, "
      "float, float, at::native::anon::SoftMaxForwardEpilogue",
      "cunn_SoftMaxBackward<4, float, float, float, "
      "at::native::anon::LogSoftMaxBackwardEpilogue" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (dir); i++)
    {
      s.cols = dir[i].cols;
      g_autoptr (GArray) f = lower (a, &s, NULL);
      GsOp b;
      gs_op_copy (&b, &s);
      g_free (b.name);
      b.name = g_strdup (dir[i].name);
      b.n_in = 2;
      g_autoptr (GArray) bk = lower (a, &b, NULL);
      const GsKernel *fk = only (f), *kb = only (bk);
      g_assert_nonnull (strstr (fk->name, dir[i].fwd));
      g_assert_nonnull (strstr (kb->name, dir[i].bwd));
      double fb = (fk->work.ld_bytes + fk->work.st_bytes) * gs_kernel_blocks (fk);
      double bb = (kb->work.ld_bytes + kb->work.st_bytes) * gs_kernel_blocks (kb);
      g_assert_cmpfloat (fabs (bb / fb - dir[i].ratio), <, 0.01);
      gs_op_clear (&b);
    }
  gs_op_clear (&s);
}

/* ------------------------------------------------------------ timing */

/* Latency of OP on A alone (host costs included), us. */
static double
latency_us (const GsArch *a, const GsMemParams *p, const GsOp *op)
{
  g_autoptr (GArray) k = gs_test_kernels_new ();
  GError *error = NULL;
  g_assert_true (gs_mem_lower (a, p, op, GS_RUNTIME_EAGER, NULL, k, &error));
  GsTime t = 0;
  g_assert_true (gs_fit_run (a, k, &t, NULL, &error));
  g_assert_no_error (error);
  return (double) gs_mem_op_latency (p, op, t) / 1e6;
}

/* A sum NAME of ROWS x COLS over its rows (reduce_dim 0), as the
 * backward emits bias and gamma/beta gradients. */
static GsOp
row_sum_op (const char *name, int64_t rows, int64_t cols, GsDtype dtype)
{
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_REDUCE;
  op.name = g_strdup (name);
  op.dtype = dtype;
  op.rows = rows;
  op.cols = cols;
  op.reduce_dim = 0;
  op.n_in = 1;
  op.n_out = 1;
  return op;
}

/* Simulated time of KERNELS run alone on A, us. */
static double
kernels_us (const GsArch *a, const GArray *kernels)
{
  GsTime t = 0;
  GError *error = NULL;
  g_assert_true (gs_fit_run (a, kernels, &t, NULL, &error));
  g_assert_no_error (error);
  return (double) t / 1e6;
}

static void
test_monotonic (void)
{
  const char *archs[] = { "a100-pcie-40gb", "t4", "h100-sxm5-80gb" };
  const char *ops[] = { "add", "relu", "powu", "ln", "softmax" };
  const int64_t cols[] = { 100, 1000, 1024, 3000, 8192 };
  for (guint a = 0; a < G_N_ELEMENTS (archs); a++)
    {
      g_autoptr (GsArch) ar = gs_test_arch (archs[a]);
      GsMemParams p;
      GError *error = NULL;
      g_assert_true (gs_mem_params_load (&p, ar, &error));
      for (guint o = 0; o < G_N_ELEMENTS (ops); o++)
        for (guint c = 0; c < G_N_ELEMENTS (cols); c++)
          {
            double prev = 0;
            for (int64_t rows = 1; rows <= (1 << 18); rows *= 4)
              {
                GsOp op = shape_op (ops[o], rows, cols[c], GS_DTYPE_FP32);
                double t = latency_us (ar, &p, &op);
                g_assert_cmpfloat (t, >=, prev * 0.999);
                prev = t;
                gs_op_clear (&op);
              }
          }
    }
}

/* A streaming op moves its bytes at the fitted fraction of DRAM
 * bandwidth; fp16 moves half the bytes in about half the time. */
static void
test_bandwidth (void)
{
  g_autoptr (GsArch) a = gs_test_arch ("v100-pcie-32gb");
  GsMemParams p;
  gs_mem_params_init (&p);
  GsOp op = shape_op ("add", 1 << 16, 4096, GS_DTYPE_FP32);
  double t = latency_us (a, &p, &op) - p.host[GS_MEM_HOST_ADD].pre_us;
  double bytes = 12.0 * (1 << 16) * 4096;
  double gbs = bytes / t / 1e3;
  double want = a->dram_bandwidth_gbs * gs_arch_dram_eff (a);
  g_assert_cmpfloat (fabs (gbs - want) / want, <, 0.03);
  op.dtype = GS_DTYPE_FP16;
  double th = latency_us (a, &p, &op) - p.host[GS_MEM_HOST_ADD].pre_us;
  g_assert_cmpfloat (th / t, >, 0.45);
  g_assert_cmpfloat (th / t, <, 0.56);
  gs_op_clear (&op);
}

/* DRAM bytes per element of a broadcast add over the scores [B,H,S,S]
 * (fp32, B 8, H 32, S 2048): a row bias stays cached (8 bytes: read the
 * scores, write the sum); a [B,1,S,S] mask shared by the heads is read
 * again for every head when one head's slab (3 x 16 MiB) outgrows L2 (12
 * bytes), and read once when the slab is small (S 256 on the A100: about
 * 8 bytes). */
static double
bcast_dram_per_elem (const GsArch *a, int64_t S, int64_t bcast, int64_t per)
{
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_ELEMENTWISE;
  op.name = g_strdup ("add");
  op.dtype = GS_DTYPE_FP32;
  op.rows = 8 * 32 * S;
  op.cols = S;
  op.n_in = 1;
  op.n_small_in = 1;
  op.n_out = 1;
  op.alu_per_elem = 1;
  op.bcast_elems = bcast;
  op.bcast_period = per;
  g_autoptr (GArray) k = lower (a, &op, NULL);
  double dram = 0;
  for (guint i = 0; i < k->len; i++)
    {
      const GsKernel *kk = &g_array_index (k, GsKernel, i);
      dram += kk->work.dram_bytes * kk->grid[0];
    }
  double n = (double) gs_op_elems (&op);
  gs_op_clear (&op);
  return dram / n;
}

static void
test_broadcast_bytes (void)
{
  g_autoptr (GsArch) a = gs_test_arch ("a100-pcie-40gb");
  int64_t S = 2048;
  double row = bcast_dram_per_elem (a, S, 0, 0);
  double mask = bcast_dram_per_elem (a, S, 8 * S * S, S * S);
  g_assert_cmpfloat (fabs (row - 8.0), <, 0.1);
  g_assert_cmpfloat (fabs (mask - 12.0), <, 0.1);
  /* The same mask used again only after all of it: still re-read. */
  g_assert_cmpfloat (bcast_dram_per_elem (a, S, 8 * S * S, 0), >, 11.9);
  /* S = 256: a slab of 3 x 256 KiB stays in L2. */
  double small = bcast_dram_per_elem (a, 256, 8 * 256 * 256, 256 * 256);
  g_assert_cmpfloat (small, <, 8.0 + 4.0 / 32 + 0.05);
  g_assert_cmpfloat (small, >, 8.0);
}

/* A small op costs its host floor: pre + post. */
static void
test_host_floor (void)
{
  GsMemParams p;
  gs_mem_params_init (&p);
  p.host[GS_MEM_HOST_GELU].pre_us = 10;
  p.host[GS_MEM_HOST_GELU].post_us = 20;
  GsOp op = shape_op ("gelu", 4, 4, GS_DTYPE_FP32);
  g_assert_cmpint (gs_mem_op_latency (&p, &op, 5000000), ==, 30000000);
  g_assert_cmpint (gs_mem_op_latency (&p, &op, 50000000), ==, 60000000);
  gs_op_clear (&op);
}

/* Every other op kind lowers to something that runs. */
static void
test_other_kinds (void)
{
  g_autoptr (GsArch) a = gs_test_arch ("a100-pcie-40gb");
  GsMemParams p;
  gs_mem_params_init (&p);
  struct { GsOpKind kind; const char *name, *fused; GsRuntime rt;
           const char *prefix; } cases[] = {
    { GS_OP_REDUCE, "sum", NULL, GS_RUNTIME_EAGER, "at::native::reduce_kernel" },
    { GS_OP_EMBEDDING, "embedding", NULL, GS_RUNTIME_EAGER,
      "at::native::indexSelectLargeIndex" },
    { GS_OP_COPY, "permute", NULL, GS_RUNTIME_EAGER,
      "at::native::elementwise_kernel<128, 4, copy<c10::Half>" },
    { GS_OP_COPY, "clone", NULL, GS_RUNTIME_EAGER,
      "at::native::vectorized_elementwise_kernel" },
    { GS_OP_NORM, "rms_norm", NULL, GS_RUNTIME_EAGER,
      "at::native::vectorized_elementwise_kernel<4, copy<c10::Half>" },
    { GS_OP_FUSED, "fused", "add+gelu", GS_RUNTIME_COMPILED,
      "triton_poi_fused_add_gelu" },
    { GS_OP_FUSED, "fused", "softmax+dropout", GS_RUNTIME_COMPILED,
      "triton_per_fused_softmax_dropout" },
    { GS_OP_SOFTMAX, "softmax", NULL, GS_RUNTIME_COMPILED,
      "triton_per_fused_softmax" },
    { GS_OP_NORM, "layer_norm", NULL, GS_RUNTIME_COMPILED,
      "triton_per_fused_layer_norm" },
    { GS_OP_OPTIMIZER, "adam", NULL, GS_RUNTIME_EAGER,
      "at::native::multi_tensor_apply_kernel<lerp" },
    { GS_OP_OPTIMIZER, "fused_adam", NULL, GS_RUNTIME_EAGER,
      "at::native::multi_tensor_apply_kernel<FusedAdamMathFunctor" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      GsOp op;
      gs_op_init (&op);
      op.kind = cases[i].kind;
      op.name = g_strdup (cases[i].name);
      op.fused = g_strdup (cases[i].fused);
      op.dtype = GS_DTYPE_FP16;
      op.rows = 4096;
      op.cols = 1024;
      op.n_in = 2;
      op.reduce_dim = 1;
      op.params = 350000000;
      g_autoptr (GArray) k = gs_test_kernels_new ();
      GError *error = NULL;
      g_assert_true (gs_mem_lower (a, &p, &op, cases[i].rt, NULL, k, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (k->len, >=, 1);
      if (!g_str_has_prefix (g_array_index (k, GsKernel, 0).name,
                             cases[i].prefix))
        g_error ("%s: got %s", cases[i].name,
                 g_array_index (k, GsKernel, 0).name);
      GsTime t = 0;
      g_assert_true (gs_fit_run (a, k, &t, NULL, &error));
      g_assert_cmpint (t, >, 0);
      gs_op_clear (&op);
    }
}

/* Bytes OP's kernels load and store in all, from their blocks. */
static void
op_bytes (const GsArch *a, const GsOp *op, GsRuntime runtime, double *ld,
          double *st)
{
  GsMemParams p;
  gs_mem_params_init (&p);
  g_autoptr (GArray) k = gs_test_kernels_new ();
  GError *error = NULL;
  g_assert_true (gs_mem_lower (a, &p, op, runtime, NULL, k, &error));
  g_assert_no_error (error);
  *ld = *st = 0;
  for (guint i = 0; i < k->len; i++)
    {
      const GsKernel *kn = &g_array_index (k, GsKernel, i);
      *ld += kn->work.ld_bytes * gs_kernel_blocks (kn);
      *st += kn->work.st_bytes * gs_kernel_blocks (kn);
    }
}

/* A generated kernel of fp16 4096 x 2048 with FUSED members. */
static void
fused_op (GsOp *op, const char *fused, int reduce_dim, int n_in, int n_out)
{
  gs_op_init (op);
  op->kind = GS_OP_FUSED;
  op->name = g_strdup ("triton_red_fused");
  op->fused = g_strdup (fused);
  op->dtype = GS_DTYPE_FP16;
  op->rows = 4096;
  op->cols = 2048;
  op->n_in = n_in;
  op->n_out = n_out;
  op->reduce_dim = reduce_dim;
}

/* Bytes a generated kernel loads and stores in all, from its blocks. */
static void
fused_bytes (const GsArch *a, const char *fused, int reduce_dim, int n_in,
             int n_out, double *ld, double *st)
{
  GsOp op;
  fused_op (&op, fused, reduce_dim, n_in, n_out);
  op_bytes (a, &op, GS_RUNTIME_COMPILED, ld, st);
  gs_op_clear (&op);
}

/* A generated reduction writes the full-size values its pointwise members
 * hand on (n_out of them) besides its result, whatever its name: an
 * RMSNorm (pow, mean, rsqrt, mul) writes the normalized rows and the
 * residual sum; a relu backward fused with the bias gradient writes the
 * gradient.  A sum over the rows (gamma and beta gradients) reads its
 * inputs once and writes a row. */
static void
test_fused_sums (void)
{
  g_autoptr (GsArch) a = gs_test_arch ("a100-pcie-40gb");
  double full = 4096.0 * 2048 * 2, ld, st;
  fused_bytes (a, "add+pow+mean+add+rsqrt+mul+mul", 1, 2, 2, &ld, &st);
  g_assert_cmpfloat (fabs (st / (2 * full) - 1), <, 0.01);
  /* A sum over the rows' 2048 outputs is split 32 ways on the A100's 108
   * SMs (/memory/outer-splits): 2048 x 32 fp32 partials are written and
   * read back, and the fp16 result written. */
  double partials = 2048.0 * 32 * 4;
  fused_bytes (a, "threshold_backward+sum", 0, 2, 1, &ld, &st);
  g_assert_cmpfloat (fabs (st / (full + partials + 2048.0 * 2) - 1), <, 0.001);
  g_assert_cmpfloat (fabs (ld / (2 * full + partials) - 1), <, 0.001);
  fused_bytes (a, "layer_norm_backward_gamma_beta", 0, 2, 0, &ld, &st);
  g_assert_cmpfloat (fabs (st / (partials + 2048.0 * 2) - 1), <, 0.001);
  g_assert_cmpfloat (fabs (ld / (2 * full + partials) - 1), <, 0.001);
}

/* Inductor's split of a sum over rows with few outputs
 * (Reduction.num_splits, outer branch), worked by hand from its formula:
 * 2048 threads an SM, 256-thread blocks, 4 rows a thread per split. */
static void
test_outer_splits (void)
{
  /* A100: 108 SMs.  Below 32 x 108 x 2048 elements: 32 rows a thread. */
  g_assert_cmpint (gs_triton_outer_splits (108, 4096, 1024), ==, 32);
  g_assert_cmpint (gs_triton_outer_splits (108, 3000, 1024), ==, 24);
  /* Middle: 864 blocks over 8 or 16 column blocks; the wanted rows a
   * thread (19, 38) round to the divisor 16 or 32, at least 32. */
  g_assert_cmpint (gs_triton_outer_splits (108, 4096, 2048), ==, 32);
  g_assert_cmpint (gs_triton_outer_splits (108, 16384, 1024), ==, 128);
  /* 10007 is prime: no divisor within 20 of 24, so 24 stays. */
  g_assert_cmpint (gs_triton_outer_splits (108, 10007, 1024), ==, 105);
  /* Above 512 x 108 x 2048 elements: 512 rows a thread. */
  g_assert_cmpint (gs_triton_outer_splits (108, 1 << 20, 128), ==, 512);
  /* Not split: 64 outputs an SM or more, or 32 rows or fewer. */
  g_assert_cmpint (gs_triton_outer_splits (108, 16384, 6912), ==, 1);
  g_assert_cmpint (gs_triton_outer_splits (108, 16384, 6911), >, 1);
  g_assert_cmpint (gs_triton_outer_splits (40, 4096, 4096), ==, 1);
  g_assert_cmpint (gs_triton_outer_splits (108, 32, 1024), ==, 1);
}

/* Eager sums over the rows as setReduceConfig launches them, against the
 * grids the H100 bf16 training traces record (data/measured/
 * h100-sxm5-80gb/profiles): four outputs a thread, 32 x 4 threads, the
 * rows split over CTAs up to a GPU-full of blocks; the vocabulary's bias
 * (30522 columns, not a multiple of 4) two outputs a thread.  The split
 * sums' kernel times are near the traces' (12.8 us for 4096 x 1024); the layer
 * norm's gamma and beta gradients walk the rows, so four times the rows
 * take more than twice as long. */
static void
test_outer_reduce (void)
{
  g_autoptr (GsArch) a = gs_test_arch ("h100-sxm5-80gb");
  GsMemParams p;
  GError *error = NULL;
  g_assert_true (gs_mem_params_load (&p, a, &error));
  const struct {
    const char *name;
    int64_t rows, cols;
    const char *kernel;
    uint64_t blocks;
    uint32_t bx, by;
  } cases[] = {
    { "sum", 4096, 1024, "at::native::reduce_kernel<128, 4,", 8 * 64, 32, 4 },
    { "sum", 4096, 4096, "at::native::reduce_kernel<128, 4,", 32 * 64, 32, 4 },
    { "sum", 1024, 1280, "at::native::reduce_kernel<128, 4,", 10 * 16, 32, 4 },
    { "sum", 1024, 5120, "at::native::reduce_kernel<128, 4,", 40 * 16, 32, 4 },
    { "sum", 4096, 30522, "at::native::reduce_kernel<256, 2,", 477 * 3, 32,
      8 },
    /* 32 rows (fewer than 16 a y thread): the y threads take outputs. */
    { "sum", 32, 1024, "at::native::reduce_kernel<128, 4,", 2, 32, 4 },
    { "layer_norm_backward_gamma_beta", 4096, 1024,
      "at::native::anon::GammaBetaBackwardCUDAKernel<", 32, 32, 16 },
    { "layer_norm_backward_gamma_beta", 1024, 1024,
      "at::native::anon::GammaBetaBackwardCUDAKernel<", 32, 32, 16 },
    { "layer_norm_backward_gamma_beta", 64, 1024,
      "at::native::anon::GammaBetaBackwardSimpleCUDAKernel<", 4, 256, 1 },
  };
  double t_gb[2] = { 0, 0 };
  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      GsOp op = row_sum_op (cases[i].name, cases[i].rows, cases[i].cols,
                            GS_DTYPE_BF16);
      g_autoptr (GArray) k = lower (a, &op, NULL);
      g_assert_cmpuint (k->len, ==, 1);
      const GsKernel *k0 = &g_array_index (k, GsKernel, 0);
      g_assert_true (g_str_has_prefix (k0->name, cases[i].kernel));
      g_assert_cmpuint (gs_kernel_blocks (k0), ==, cases[i].blocks);
      g_assert_cmpuint (k0->block[0], ==, cases[i].bx);
      g_assert_cmpuint (k0->block[1], ==, cases[i].by);
      double t = kernels_us (a, k);
      if (i == 0)
        {
          g_assert_cmpfloat (t, >, 8.0);
          g_assert_cmpfloat (t, <, 16.0);
        }
      if (i == 6)
        t_gb[0] = t;
      if (i == 7)
        t_gb[1] = t;
      gs_op_clear (&op);
    }
  g_assert_cmpfloat (t_gb[0], >, 2 * t_gb[1]);
}

/* native_dropout's forward is fused_dropout_kernel_vec: 256 threads, at
 * most a GPU-full of blocks (the H100 traces' 1056 = 132 x 8) striding
 * over the tensor, at 0.8 of the elementwise kernels' memory efficiency:
 * the H100 bf16 trace's [8,16,512,512] took 68.0 us, NeuSight's fp32
 * profile 128.7 us, where the plain vectorized kernel gave 57.7 and 103.5
 * (docs/kernel-library.md, "Dropout").  Compiled runs keep Triton. */
static void
test_dropout_kernel (void)
{
  g_autoptr (GsArch) a = gs_test_arch ("h100-sxm5-80gb");
  GsMemParams p;
  GError *error = NULL;
  g_assert_true (gs_mem_params_load (&p, a, &error));
  const GsDtype dts[] = { GS_DTYPE_BF16, GS_DTYPE_FP32 };
  const double meas[] = { 68.0, 128.7 };
  for (guint i = 0; i < G_N_ELEMENTS (dts); i++)
    {
      GsOp op;
      gs_op_init (&op);
      op.kind = GS_OP_ELEMENTWISE;
      op.name = g_strdup ("native_dropout");
      op.dtype = dts[i];
      op.rows = 8 * 16 * 512;
      op.cols = 512;
      op.n_in = 1;
      op.n_out = 1;
      op.n_mask_out = 1;
      g_autoptr (GArray) k = gs_test_kernels_new ();
      g_assert_true (gs_mem_lower (a, &p, &op, GS_RUNTIME_EAGER, NULL, k,
                                   &error));
      g_assert_no_error (error);
      g_assert_cmpuint (k->len, ==, 1);
      const GsKernel *k0 = &g_array_index (k, GsKernel, 0);
      g_assert_true (strstr (k0->name, "fused_dropout_kernel_vec") != NULL);
      g_assert_cmpuint (gs_kernel_blocks (k0), ==, 132 * 8);
      g_assert_cmpuint (k0->block[0], ==, 256);
      g_assert_cmpfloat (fabs (kernels_us (a, k) / meas[i] - 1), <, 0.15);
      g_array_set_size (k, 0);
      g_assert_true (gs_mem_lower (a, &p, &op, GS_RUNTIME_COMPILED, NULL, k,
                                   &error));
      g_assert_true (g_str_has_prefix (g_array_index (k, GsKernel, 0).name,
                                       "triton_"));
      gs_op_clear (&op);
    }
}

/* A split sum is two generated kernels: the first over 128 outputs x 8
 * rows a block, X x split outputs in all; the second sums the partials,
 * with the tiny configuration when it has at most 512 outputs. */
static void
test_outer_split_kernels (void)
{
  g_autoptr (GsArch) a = gs_test_arch ("a100-pcie-40gb");
  GsMemParams p;
  gs_mem_params_init (&p);
  GsOp op = row_sum_op ("sum", 4096, 1024, GS_DTYPE_FP32);
  g_autoptr (GArray) k = gs_test_kernels_new ();
  GError *error = NULL;
  g_assert_true (gs_mem_lower (a, &p, &op, GS_RUNTIME_COMPILED, NULL, k,
                               &error));
  g_assert_no_error (error);
  g_assert_cmpuint (k->len, ==, 2);
  const GsKernel *k0 = &g_array_index (k, GsKernel, 0);
  const GsKernel *k1 = &g_array_index (k, GsKernel, 1);
  g_assert_cmpstr (k0->name, ==, "triton_red_fused_sum_0");
  g_assert_cmpuint (k0->grid[0], ==, 1024 * 32 / 128);
  g_assert_cmpuint (k0->block[0], ==, 256);
  g_assert_cmpstr (k1->name, ==, "triton_per_fused_sum_1");
  g_assert_cmpuint (k1->grid[0], ==, 1024 / 128);
  g_assert_cmpfloat (fabs (k0->work.ld_bytes * gs_kernel_blocks (k0)
                           / (4096.0 * 1024 * 4) - 1), <, 0.01);
  g_assert_cmpfloat (fabs (k1->work.ld_bytes * gs_kernel_blocks (k1)
                           / (1024.0 * 32 * 4) - 1), <, 0.01);
  /* 256 outputs: the tiny configuration, 16 outputs of 32 partials a
   * block.  Eager keeps its one reduce_kernel. */
  op.cols = 256;
  g_array_set_size (k, 0);
  g_assert_true (gs_mem_lower (a, &p, &op, GS_RUNTIME_COMPILED, NULL, k,
                               &error));
  g_assert_cmpuint (k->len, ==, 2);
  g_assert_cmpuint (g_array_index (k, GsKernel, 1).grid[0], ==, 256 / 16);
  g_array_set_size (k, 0);
  g_assert_true (gs_mem_lower (a, &p, &op, GS_RUNTIME_EAGER, NULL, k,
                               &error));
  g_assert_cmpuint (k->len, ==, 1);
  /* 8192 outputs on 108 SMs: one kernel. */
  op.cols = 8192;
  g_array_set_size (k, 0);
  g_assert_true (gs_mem_lower (a, &p, &op, GS_RUNTIME_COMPILED, NULL, k,
                               &error));
  g_assert_cmpuint (k->len, ==, 1);
  gs_op_clear (&op);
}

/* A cast writes another element size than it reads: bf16 to fp32 moves 2
 * + 4 bytes an element, fp32 to bf16 4 + 2. */
static void
test_cast_bytes (void)
{
  g_autoptr (GsArch) a = gs_test_arch ("a100-pcie-40gb");
  double n = 4096.0 * 4096, ld, st;
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_ELEMENTWISE;
  op.name = g_strdup ("_to_copy");
  op.dtype = GS_DTYPE_BF16;
  op.rows = 4096;
  op.cols = 4096;
  op.out_esize = 4;
  op_bytes (a, &op, GS_RUNTIME_EAGER, &ld, &st);
  g_assert_cmpfloat (fabs (ld / (2 * n) - 1), <, 1e-9);
  g_assert_cmpfloat (fabs (st / (4 * n) - 1), <, 1e-9);
  op.dtype = GS_DTYPE_FP32;
  op.out_esize = 2;
  op_bytes (a, &op, GS_RUNTIME_EAGER, &ld, &st);
  g_assert_cmpfloat (fabs (ld / (4 * n) - 1), <, 1e-9);
  g_assert_cmpfloat (fabs (st / (2 * n) - 1), <, 1e-9);
  gs_op_clear (&op);
}

/* native_dropout writes its output and a bool mask, one byte an element;
 * native_dropout_backward reads the gradient and that mask.  So in fp32
 * the forward moves 4 + 4 + 1 bytes an element and the backward 4 + 1 +
 * 4, in eager's elementwise kernels and in generated ones (a softmax with
 * its dropout writes the probabilities and the mask). */
static void
test_dropout_mask_bytes (void)
{
  g_autoptr (GsArch) a = gs_test_arch ("a100-pcie-40gb");
  double n = 8.0 * 16 * 512 * 512, ld, st;
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_ELEMENTWISE;
  op.name = g_strdup ("native_dropout");
  op.dtype = GS_DTYPE_FP32;
  op.rows = 8 * 16 * 512;
  op.cols = 512;
  op.n_mask_out = 1;
  op_bytes (a, &op, GS_RUNTIME_EAGER, &ld, &st);
  g_assert_cmpfloat (fabs (ld / (4 * n) - 1), <, 0.01);
  g_assert_cmpfloat (fabs (st / (5 * n) - 1), <, 0.01);
  g_free (op.name);
  op.name = g_strdup ("masked_scale");
  op.n_mask_out = 0;
  op.n_mask_in = 1;
  op_bytes (a, &op, GS_RUNTIME_EAGER, &ld, &st);
  g_assert_cmpfloat (fabs (ld / (5 * n) - 1), <, 0.01);
  g_assert_cmpfloat (fabs (st / (4 * n) - 1), <, 0.01);
  gs_op_clear (&op);

  /* Generated kernels (fp16): the mask adds one byte an element to what
   * the same kernel moves without it. */
  double full = 4096.0 * 2048, ld0, st0;
  static const struct {
    const char *fused;
    int n_in, mask_in, mask_out;
  } gen[] = {
    { "native_dropout+add", 2, 0, 1 },                 /* pointwise */
    { "_softmax+native_dropout", 1, 0, 1 },            /* persistent */
    { "masked_scale+_softmax_backward_data", 2, 1, 0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS (gen); i++)
    {
      fused_op (&op, gen[i].fused, 1, gen[i].n_in, 1);
      op.cols = i == 0 ? 2048 : 512;
      op.rows = 4096 * 2048 / op.cols;
      op_bytes (a, &op, GS_RUNTIME_COMPILED, &ld0, &st0);
      op.n_mask_in = gen[i].mask_in;
      op.n_mask_out = gen[i].mask_out;
      op_bytes (a, &op, GS_RUNTIME_COMPILED, &ld, &st);
      g_assert_cmpfloat (fabs ((ld - ld0) / full - gen[i].mask_in), <, 0.01);
      g_assert_cmpfloat (fabs ((st - st0) / full - gen[i].mask_out), <,
                         0.01);
      gs_op_clear (&op);
    }
}

/* ------------------------------------------------------------- params */

/* FILE of the source tree's arch/ directory (g_free). */
static char *
src_arch (const char *file)
{
  const char *dir = g_getenv ("GS_SRCDIR");
  return g_build_filename (dir ? dir : ".", "arch", file, NULL);
}

static char *
write_temp (const char *name, const char *text)
{
  g_autofree char *dir = gs_test_temp_dir ("gs-mem-XXXXXX");
  char *file = g_build_filename (dir, name, NULL);
  g_assert_true (g_file_set_contents (file, text, -1, NULL));
  return file;
}

static void
test_params_round_trip (void)
{
  GsMemParams p;
  gs_mem_params_init (&p);
  p.rows = 77;
  p.l2_keep = 0.5;
  p.regs_layer_norm = 48;
  p.host[GS_MEM_HOST_TANH].pre_us = 12.5;
  g_autofree char *group = gs_mem_params_to_cfg (&p, "  ");
  g_autofree char *src = src_arch ("t4.cfg");
  g_autofree char *text = g_strdup_printf (
    "base = \"%s\";\ncalibration = { library = { memory = {\n%s}; }; };\n",
    src, group);
  g_autofree char *file = write_temp ("t.cfg", text);
  g_autoptr (GsArch) a = gs_test_arch (file);
  GsMemParams q;
  GError *error = NULL;
  g_assert_true (gs_mem_params_load (&q, a, &error));
  g_assert_no_error (error);
  g_assert_cmpint (q.rows, ==, 77);
  g_assert_cmpfloat (q.l2_keep, ==, 0.5);
  g_assert_cmpint (q.regs_layer_norm, ==, 48);
  g_assert_cmpfloat (q.host[GS_MEM_HOST_TANH].pre_us, ==, 12.5);
}

static void
test_params_unknown_key (void)
{
  g_autofree char *src = src_arch ("t4.cfg");
  g_autofree char *text = g_strdup_printf (
    "base = \"%s\";\ncalibration = {\n  library = {\n    memory = {\n"
    "      l2_kep = 0.5;\n    };\n  };\n};\n", src);
  g_autofree char *file = write_temp ("bad.cfg", text);
  g_autoptr (GsArch) a = gs_test_arch (file);
  GsMemParams q;
  GError *error = NULL;
  g_assert_false (gs_mem_params_load (&q, a, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_INPUT);
  g_autofree char *where = g_strdup_printf ("%s:5:", file);
  g_assert_true (strstr (error->message, where));
  g_assert_true (strstr (error->message, "l2_keep"));
  g_clear_error (&error);
}

/* ------------------------------------------------------------ residuals */

/* The latency of OP alone through LIB. */
static GsTime
lib_latency (const GsArch *a, const GsLibrary *lib, const GsOp *op)
{
  g_autoptr (GArray) k = gs_test_kernels_new ();
  GError *error = NULL;
  g_assert_true (gs_library_lower (lib, op, GS_RUNTIME_EAGER, NULL, k,
                                   &error));
  GsTime t = 0;
  g_assert_true (gs_fit_run (a, k, &t, NULL, &error));
  g_assert_no_error (error);
  return gs_library_op_latency (lib, op, t);
}

/* An op of `gpusim predict` timed alone has its latency moved by exp of
 * the median residual of its nearest training rows of the same op (when
 * at least three are near); other ops, far ops and ops inside a program
 * keep the model's. */
static void
test_residuals (void)
{
  g_autofree char *src = src_arch ("t4.cfg");
  /* ln over 4096 rows of 1024: log2 (12, 10). */
  g_autofree char *text = g_strdup_printf (
    "base = \"%s\";\ncalibration = { library = { memory = {\n"
    "  residuals = { fp32_ln = ( [12.0, 10.0, 0.1], [12.0, 10.5, 0.2], "
    "[11.5, 10.0, 0.3], [12.5, 10.0, 0.25], [12.0, 9.5, 0.4], "
    "[13.9, 10.0, 0.9] ); };\n}; }; };\n", src);
  g_autofree char *file = write_temp ("r.cfg", text);
  g_autoptr (GsArch) a = gs_test_arch (file);
  GError *error = NULL;
  g_autoptr (GsLibrary) lib = gs_library_new (a, &error);
  g_assert_no_error (error);

  GsOp ln = shape_op ("ln", 4096, 1024, GS_DTYPE_FP32);
  GsOp far = shape_op ("ln", 64, 1024, GS_DTYPE_FP32);
  GsOp sm = shape_op ("softmax", 4096, 1024, GS_DTYPE_FP32);
  GsOp ops[] = { ln, far, sm };
  GsTime in_program[3], alone[3];
  for (guint i = 0; i < 3; i++)
    in_program[i] = lib_latency (a, lib, &ops[i]);
  gs_library_set_alone (lib, TRUE);
  for (guint i = 0; i < 3; i++)
    alone[i] = lib_latency (a, lib, &ops[i]);
  /* The 5 nearest (the sixth is 1.9 away, but farther than the others)
   * have the median 0.25. */
  g_assert_cmpfloat (fabs ((double) alone[0] / in_program[0] - exp (0.25)),
                     <, 1e-6);
  g_assert_cmpint (alone[1], ==, in_program[1]);
  g_assert_cmpint (alone[2], ==, in_program[2]);

  g_autoptr (GsResiduals) t = gs_mem_residuals_new ();
  g_assert_true (gs_mem_residuals_load (t, a, &error));
  g_assert_no_error (error);
  g_assert_cmpfloat (fabs (gs_mem_residual_scale (t, &ln) - exp (0.25)), <,
                     1e-12);
  /* Fewer than three within the radius. */
  g_array_set_size (gs_residuals_lookup (t, "fp32_ln"), 2);
  g_assert_cmpfloat (gs_mem_residual_scale (t, &ln), ==, 1);
  /* fp16 rows have their own key. */
  GsOp half = shape_op ("ln", 4096, 1024, GS_DTYPE_FP16);
  g_autofree char *key = gs_mem_residual_key (&half);
  g_assert_cmpstr (key, ==, "fp16_ln");
  /* Ops that are not predict's shape ops have none. */
  GsOp other;
  gs_op_init (&other);
  other.kind = GS_OP_REDUCE;
  other.name = g_strdup ("sum");
  other.rows = 4096;
  other.cols = 1024;
  g_assert_null (gs_mem_residual_key (&other));

  /* Round trip through the arch file's text. */
  g_autoptr (GString) out = g_string_new (NULL);
  gs_residuals_format (t, out, 0);
  g_assert_true (strstr (out->str, "fp32_ln =\n"));
  g_autofree char *text2 = g_strdup_printf (
    "base = \"%s\";\ncalibration = { library = { memory = {\n%s}; }; };\n",
    src, out->str);
  g_autofree char *file2 = write_temp ("r2.cfg", text2);
  g_autoptr (GsArch) b = gs_test_arch (file2);
  g_autoptr (GsResiduals) u = gs_mem_residuals_new ();
  g_assert_true (gs_mem_residuals_load (u, b, &error));
  g_assert_cmpuint (gs_residuals_lookup (u, "fp32_ln")->len, ==, 2);

  /* A file based on one with residuals inherits them unless it has a
   * memory group of its own (they belong to the base's parameters). */
  g_autofree char *child = g_strdup_printf ("base = \"%s\";\nname = \"c\";\n",
                                            file);
  g_autofree char *own = g_strdup_printf (
    "base = \"%s\";\ncalibration = { library = { memory = { l2_keep = 0.5; "
    "}; }; };\n", file);
  const char *texts[] = { child, own };
  for (guint i = 0; i < 2; i++)
    {
      g_autofree char *f = write_temp ("c.cfg", texts[i]);
      g_autoptr (GsArch) c = gs_test_arch (f);
      g_autoptr (GsResiduals) v = gs_mem_residuals_new ();
      g_assert_true (gs_mem_residuals_load (v, c, &error));
      g_assert_no_error (error);
      g_assert_cmpuint (gs_residuals_n_keys (v), ==, i == 0 ? 1 : 0);
    }
  for (guint i = 0; i < 3; i++)
    gs_op_clear (&ops[i]);
  gs_op_clear (&half);
  gs_op_clear (&other);
}

/* Bad residual tables fail naming file:line. */
static void
test_residuals_bad (void)
{
  g_autofree char *src = src_arch ("t4.cfg");
  const char *bad[][2] = {
    { "residuals = 5;", "expected a group" },
    { "residuals = { fp32_ln = [1.0, 2.0, 3.0]; };", "expected a string" },
    { "residuals = { fp32_ln = \"1.0 2.0;\"; };", "entry 1: expected 3" },
    { "residuals = { fp32_ln = \"1.0 2.0 0.1; 1.0 2.0 0.1\"; };",
      "entry 2: expected 3" },
    { "residuals = { fp32_ln = \"1.0 2.0 0.1 0.2;\"; };", "expected 3" },
    { "residuals = { fp32_ln = \"1.0 x 0.1;\"; };", "expected 3" },
    { "residuals = { fp32_ln = \"1.0 70.0 0.1;\"; };", "out of range" },
    { "residuals = { fp32_ln = ( [1.0, 2.0] ); };", "array of 3 numbers" },
    { "residuals = { fp32_ln = ( [1.0, 70.0, 0.1] ); };", "out of range" },
    { "residuals = { fp32_ln = ( [1.0, 2.0, 6.0] ); };", "out of range" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *text = g_strdup_printf (
        "base = \"%s\";\ncalibration = {\n  library = {\n    memory = {\n"
        "      %s\n    };\n  };\n};\n", src, bad[i][0]);
      g_autofree char *file = write_temp ("bad.cfg", text);
      g_autoptr (GsArch) a = gs_test_arch (file);
      GError *error = NULL;
      g_autoptr (GsLibrary) lib = gs_library_new (a, &error);
      g_assert_null (lib);
      g_assert_error (error, GS_ERROR, GS_ERROR_INPUT);
      g_autofree char *where = g_strdup_printf ("%s:5:", file);
      if (!strstr (error->message, where) || !strstr (error->message,
                                                       bad[i][1]))
        g_error ("case %u: %s", i, error->message);
      g_clear_error (&error);
    }
}

/* ------------------------------------------------------------------ fit */

/* A small fit: one GPU, a few ops; deterministic, better than the
 * defaults on its holdout rows. */
static void
test_fit_small (void)
{
  GsMeasureSet *set = gs_test_neusight ();
  g_autoptr (GsMeasureSet) mine = gs_measure_new ();
  mine->file = g_strdup ("l4-relu-ln.csv");
  for (guint i = 0; i < set->rows->len; i++)
    {
      const GsMeasureRow *r = &g_array_index (set->rows, GsMeasureRow, i);
      if (g_strcmp0 (r->device, "l4") != 0
          || (g_strcmp0 (r->op, "relu") != 0 && g_strcmp0 (r->op, "ln") != 0))
        continue;
      GsMeasureRow *c = gs_measure_append (mine);
      c->device = g_strdup (r->device);
      c->op = g_strdup (r->op);
      c->B = r->B;
      c->H = r->H;
      c->latency_ms = r->latency_ms;
      c->line = r->line;
    }
  g_autoptr (GsArch) a = gs_test_arch ("l4");
  char *out[2];
  double ln_mape = 0;
  for (int run = 0; run < 2; run++)
    {
      g_autoptr (GsFit) fit = gs_fit_new (a, NULL);
      g_assert_cmpuint (gs_fit_add_set (fit, mine), >, 50);
      GError *error = NULL;
      g_assert_true (gs_fit_memory (fit, &error));
      g_assert_no_error (error);
      const GsFitError *e = gs_fit_error (fit, "relu");
      g_assert_nonnull (e);
      g_assert_cmpfloat (e->holdout_mape, <, 3.0);
      g_assert_nonnull (gs_fit_error (fit, "ln"));
      ln_mape = gs_fit_error (fit, "ln")->holdout_mape;
      g_assert_true (strstr (fit->library->str, "memory = {"));
      g_assert_true (strstr (fit->library->str, "fp32_ln ="));
      out[run] = gs_fit_render (fit, "2025-01-01");
    }
  g_assert_cmpstr (out[0], ==, out[1]);

  /* The recorded error is that of the file as written: spliced into the
   * arch file, the library (ops alone, residuals applied) predicts the
   * holdout rows with it. */
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (a->file, &text, NULL, NULL));
  g_autofree char *file = write_temp ("l4.cfg", "");
  GError *error = NULL;
  g_autofree char *spliced = gs_fit_splice (text, a->file, file, out[0],
                                            &error);
  g_assert_no_error (error);
  g_assert_true (g_file_set_contents (file, spliced, -1, NULL));
  g_autoptr (GsArch) b = gs_test_arch (file);
  g_autoptr (GsLibrary) lib = gs_library_new (b, &error);
  g_assert_no_error (error);
  gs_library_set_alone (lib, TRUE);
  double sum = 0;
  guint n = 0, moved = 0;
  for (guint i = 0; i < mine->rows->len; i++)
    {
      const GsMeasureRow *r = &g_array_index (mine->rows, GsMeasureRow, i);
      if (strcmp (r->op, "ln") != 0 || !gs_measure_is_holdout (r))
        continue;
      GsOp op = shape_op ("ln", r->B, r->H, GS_DTYPE_FP32);
      GsTime alone = lib_latency (b, lib, &op);
      gs_library_set_alone (lib, FALSE);
      moved += lib_latency (b, lib, &op) != alone;
      gs_library_set_alone (lib, TRUE);
      sum += gs_fit_ape (alone / 1e9, r->latency_ms);
      n++;
      gs_op_clear (&op);
    }
  g_assert_cmpuint (n, >, 10);
  g_assert_cmpuint (moved, >, 0);
  g_assert_cmpfloat (fabs (sum / n - ln_mape), <, 1e-3);
  g_free (out[0]);
  g_free (out[1]);
}

/* The transfer rule: DRAM efficiency from the same memory technology,
 * host costs from every donor. */
static void
test_transfer (void)
{
  g_autoptr (GPtrArray) donors = g_ptr_array_new_with_free_func (
    (GDestroyNotify) gs_arch_free);
  const char *names[] = { "a100-pcie-40gb", "t4", "v100-pcie-32gb" };
  const double dram[] = { 0.9, 0.7, 0.8 };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      GsMemParams p;
      gs_mem_params_init (&p);
      p.rows = 100;
      p.host[GS_MEM_HOST_ADD].pre_us = 10 + i;
      g_autofree char *group = gs_mem_params_to_cfg (&p, "  ");
      g_autofree char *base = g_strconcat (names[i], ".cfg", NULL);
      g_autofree char *src = src_arch (base);
      g_autofree char *text = g_strdup_printf (
        "base = \"%s\";\ncalibration = { dram_eff = %g; library = { "
        "memory = {\n%s}; }; };\n", src, dram[i], group);
      g_autofree char *file = write_temp ("d.cfg", text);
      g_ptr_array_add (donors, gs_test_arch (file));
    }
  g_autoptr (GsArch) h100 = gs_test_arch ("h100-sxm5-80gb");
  GsMemParams p;
  g_autoptr (GString) how = g_string_new (NULL);
  GError *error = NULL;
  g_assert_true (gs_fit_memory_transfer (h100, donors, &p, how, &error));
  g_assert_no_error (error);
  /* HBM donors: the A100 (0.9) and the V100 (0.8). */
  g_assert_cmpfloat (fabs (h100->cal.dram_eff - 0.85), <, 1e-9);
  g_assert_cmpfloat (p.host[GS_MEM_HOST_ADD].pre_us, ==, 11);
  g_assert_cmpint (p.rows, ==, 0);
  g_assert_true (strstr (how->str, "a100-pcie-40gb"));
  g_autoptr (GPtrArray) none = g_ptr_array_new ();
  g_assert_false (gs_fit_memory_transfer (h100, none, &p, how, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_PREDICT);
  g_clear_error (&error);
}

/* ------------------------------------------------------- device memory */

/* The error of planning examples/configs/t5-base.json in fp32 on the T4
 * (16 GiB) at BATCH x SEQ, in decode mode or generating GEN tokens; NULL
 * where it fits. */
static GError *
t5_on_t4 (int batch, int seq, const char *mode, int gen)
{
  const char *dir = g_getenv ("GS_SRCDIR");
  g_autofree char *file = g_build_filename (dir ? dir : ".", "examples",
                                            "configs", "t5-base.json", NULL);
  g_autoptr (GsArch) t4 = gs_test_arch ("t4");
  GsWorkloadOptions o;
  gs_workload_options_init (&o);
  o.batch = batch;
  o.seq = seq;
  o.mode = mode;
  o.gen_tokens = gen;
  o.dtype = GS_DTYPE_FP32;
  GError *error = NULL;
  GsModelPlan *p = gs_model_plan (file, &o, t4, &error);
  gs_model_plan_free (p);
  return error;
}

/* The device memory of training a BERT with LAYERS layers of hidden
 * 256, 4 heads and FFN 1024 in fp16, batch 2 x seq 128, eager or
 * COMPILED. */
static GsModelMemory
bert_memory_with (int layers, gboolean compiled, const char *mode,
                  const char *checkpointing)
{
  g_autofree char *dir = gs_test_temp_dir ("gs-mem-XXXXXX");
  g_autofree char *file = g_build_filename (dir, "config.json", NULL);
  g_autofree char *json = g_strdup_printf (
    "{\"model_type\": \"bert\", \"hidden_size\": 256, "
    "\"num_attention_heads\": 4, \"intermediate_size\": 1024, "
    "\"num_hidden_layers\": %d, \"vocab_size\": 1000, "
    "\"max_position_embeddings\": 512, \"type_vocab_size\": 2, "
    "\"hidden_act\": \"gelu\", \"hidden_dropout_prob\": 0.1, "
    "\"attention_probs_dropout_prob\": 0.1, \"layer_norm_eps\": 1e-12}",
    layers);
  g_assert_true (g_file_set_contents (file, json, -1, NULL));
  GsWorkloadOptions o;
  gs_workload_options_init (&o);
  o.batch = 2;
  o.seq = 128;
  o.mode = mode;
  o.checkpointing = checkpointing;
  o.attention = "eager";
  o.dtype = GS_DTYPE_FP16;
  o.runtime = compiled ? GS_RUNTIME_COMPILED : GS_RUNTIME_EAGER;
  g_autoptr (GsArch) a = gs_test_arch ("a100-pcie-40gb");
  GError *error = NULL;
  GsModelPlan *p = gs_model_plan (file, &o, a, &error);
  g_assert_no_error (error);
  GsModelMemory m = p->memory;
  gs_model_plan_free (p);
  return m;
}

static GsModelMemory
bert_memory (int layers, gboolean compiled)
{
  return bert_memory_with (layers, compiled, "training", NULL);
}

/* What eager training keeps for the backward, per layer: Korthikanti et
 * al., "Reducing Activation Recomputation in Large Transformer Models"
 * (MLSys 2023), section 4.1: 34 s b h + 5 a s^2 b bytes in 16-bit with
 * dropout (the attention's inputs 11 s b h + 5 a s^2 b, the MLP's 19 s b
 * h, the two layer norms' 4 s b h).  BERT's post-norm layer saves the
 * same tensors (its q and k are the contiguous copies matmul makes).  The
 * compiled runtime counts only the GEMMs' inputs; the weights, gradients
 * and device follow the parameters and the arch. */
static void
test_saved_activations (void)
{
  const double s = 128, b = 2, h = 256, a = 4;
  GsModelMemory one = bert_memory (1, FALSE), two = bert_memory (2, FALSE);
  double layer = two.saved - one.saved;
  g_assert_cmpfloat (fabs (layer / (34 * s * b * h + 5 * a * s * s * b) - 1),
                     <, 1e-9);
  double params = 12 * h * h + 13 * h;       /* a BERT layer's parameters */
  g_assert_cmpfloat (fabs (two.weights - one.weights - 2 * params), <, 0.5);
  g_assert_cmpfloat (two.grads, ==, two.weights);
  g_assert_cmpfloat (two.optimizer, ==, 0);
  g_assert_cmpfloat (two.device, ==, 40.0 * 1024 * 1024 * 1024);
  GsModelMemory compiled = bert_memory (2, TRUE);
  g_assert_cmpfloat (compiled.saved, <, two.saved);
  g_assert_cmpfloat (compiled.saved, >, 0);
}

/* The estimated peak.  In eager training it comes where the
 * backward starts, with every layer's saved tensors alive: one more layer
 * adds exactly its saved tensors (Korthikanti et al.'s count, above), its
 * weights and their gradients, to within the allocator's 512-byte
 * rounding of each tensor.  With checkpointed layers a layer adds its
 * input (s b h 16-bit values) instead of what it saves.  In inference a
 * layer's activations are freed before the next layer's are made: only
 * its weights add.  The peak is never below the sum of the parts where
 * they coexist. */
static void
test_peak (void)
{
  const double s = 128, b = 2, h = 256, a = 4, slack = 64 * 512;
  const double params = 12 * h * h + 13 * h;
  GsModelMemory one = bert_memory (1, FALSE), two = bert_memory (2, FALSE);
  double step = two.peak - one.peak;
  double want = 34 * s * b * h + 5 * a * s * s * b + 2 * 2 * params;
  g_assert_cmpfloat (fabs (step - want), <, slack);
  g_assert_cmpfloat (two.peak, >=, gs_model_memory_total (&two));

  GsModelMemory c1 = bert_memory_with (1, FALSE, "training", "layers");
  GsModelMemory c2 = bert_memory_with (2, FALSE, "training", "layers");
  g_assert_cmpfloat (fabs (c2.peak - c1.peak - (2 * s * b * h
                                                + 2 * 2 * params)), <, slack);
  g_assert_cmpfloat (c2.peak, <, two.peak);

  GsModelMemory i1 = bert_memory_with (1, FALSE, "inference", NULL);
  GsModelMemory i2 = bert_memory_with (2, FALSE, "inference", NULL);
  g_assert_cmpfloat (fabs (i2.peak - i1.peak - 2 * params), <, slack);
  /* Eager attention holds a head's scores and their softmax at once. */
  g_assert_cmpfloat (i1.peak - i1.weights, >=, 2 * 2 * a * s * s * b);

  /* Compiled, pointwise chains stay in registers and the backward
   * recomputes them from their inputs: less than eager holds, no less
   * than the compiled sum. */
  GsModelMemory compiled = bert_memory (2, TRUE);
  g_assert_cmpfloat (compiled.peak, <, two.peak);
  g_assert_cmpfloat (compiled.peak, >=, gs_model_memory_total (&compiled));
}

/* A decode step holds the cache of the earlier tokens until each layer's
 * cat replaces it with one a token longer: the peak is one cache (and a
 * layer's K and V), not two.  Llama-3-8B in bf16 at 16 x 4096 with
 * FlashAttention: 8.0 GiB of cache beside 15.0 GiB of weights. */
static void
test_peak_decode (void)
{
  const char *dir = g_getenv ("GS_SRCDIR");
  g_autofree char *file = g_build_filename (dir ? dir : ".", "examples",
                                            "configs", "llama3-8b.json",
                                            NULL);
  g_autoptr (GsArch) h100 = gs_test_arch ("h100-sxm5-80gb");
  GsWorkloadOptions o;
  gs_workload_options_init (&o);
  o.batch = 16;
  o.seq = 4096;
  o.mode = "decode";
  o.dtype = GS_DTYPE_BF16;
  o.attention = "flash2";   /* eager would add a layer's repeated K and V */
  GError *error = NULL;
  GsModelPlan *p = gs_model_plan (file, &o, h100, &error);
  g_assert_no_error (error);
  GsModelMemory m = p->memory;
  gs_model_plan_free (p);
  const double gib = 1024.0 * 1024.0 * 1024.0;
  g_assert_cmpfloat (fabs (m.cache / gib - 16 * 4097 * 131072.0 / gib), <,
                     1e-9);
  g_assert_cmpfloat (m.peak - m.weights, >=, m.cache);
  g_assert_cmpfloat (m.peak - m.weights, <, m.cache + 0.5 * gib);
}

/* An encoder-decoder's generation keeps, beside each decoder layer's
 * self-attention K and V, the K and V of the encoder output its
 * cross-attention computed at the first step: T5-Base's 12 decoder layers
 * of 12 heads x 64 keep 2 x 768 values per encoder token each. */
/* "weights N GiB" out of a does-not-fit message. */
static char *
weights_figure (const char *message)
{
  const char *w = strstr (message, "weights ");
  g_assert_nonnull (w);
  const char *end = strstr (w, " GiB");
  g_assert_nonnull (end);
  return g_strndup (w, end + 4 - w);
}

static void
test_cross_attention_cache (void)
{
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const double per_token = 12 * 2 * 768 * 4.0;   /* layers, K and V, fp32 */
  /* Decode at batch 32 over 4096 tokens: the self-attention cache of
   * 4097 tokens is 9.0 GiB, which fits in 16 GiB with the weights; the
   * cross-attention cache of 4096 encoder tokens doubles it. */
  GError *error = t5_on_t4 (32, 4096, "decode", -1);
  g_assert_error (error, GS_ERROR, GS_ERROR_PREDICT);
  g_autofree char *want = g_strdup_printf (
    "KV cache %.1f GiB", 32 * (4097 + 4096) * per_token / gib);
  g_assert_cmpstr (want, ==, "KV cache 18.0 GiB");
  g_assert_nonnull (strstr (error->message, want));
  g_assert_nonnull (strstr (error->message, "does not fit in t4's 16 GiB"));
  /* Decode steps run no encoder, but its weights are held: the whole
   * model's, as a generation counts them below. */
  g_autofree char *decode_weights = weights_figure (error->message);
  g_clear_error (&error);
  /* Half the batch fits: 9.0 GiB of cache. */
  error = t5_on_t4 (16, 4096, "decode", -1);
  g_assert_no_error (error);
  /* A generation after a 4096-token prompt: the decoder started from one
   * token, so its own cache is 8 tokens at the last step; the cross-
   * attention cache is the prompt's 4096, counted at that length. */
  error = t5_on_t4 (16, 4096, NULL, 8);
  g_assert_error (error, GS_ERROR, GS_ERROR_PREDICT);
  g_autofree char *gen = g_strdup_printf (
    "KV cache %.1f GiB", 16 * (8 + 4096) * per_token / gib);
  g_assert_cmpstr (gen, ==, "KV cache 4.5 GiB");
  g_assert_nonnull (strstr (error->message, gen));
  g_autofree char *gen_weights = weights_figure (error->message);
  g_assert_cmpstr (gen_weights, ==, "weights 0.8 GiB");
  g_assert_cmpstr (decode_weights, ==, gen_weights);
  g_clear_error (&error);
}

/* ------------------------------------------------------ kernel fixed time */

/* A kernel's own fixed duration (calibration.kernel_fixed_us) is fitted on
 * the block-dispatch rows of GPU time: the H100's micro.csv (empty blocks,
 * CUPTI) gives the intercept of its duration-against-blocks lines, 0.834
 * us; rows made on a known line give its intercept back; rows that timed
 * an op's latency are not taken.  In the simulation a kernel's duration
 * holds it once, the time from the launch the launch gap besides. */
static void
test_kernel_fixed (void)
{
  const char *src = g_getenv ("GS_SRCDIR");
  g_autofree char *file = g_build_filename (src ? src : ".", "data",
                                            "measured", "h100-sxm5-80gb",
                                            "micro.csv", NULL);
  GError *error = NULL;
  g_autoptr (GsMeasureSet) set = gs_measure_load (file, FALSE, &error);
  g_assert_no_error (error);
  g_autoptr (GsArch) a = gs_test_arch ("h100-sxm5-80gb");
  a->cal.kernel_fixed_us = 0;
  g_autoptr (GsFit) fit = gs_fit_new (a, NULL);
  for (guint i = 0; i < set->rows->len; i++)
    {
      const GsMeasureRow *r = &g_array_index (set->rows, GsMeasureRow, i);
      g_ptr_array_add (fit->rows, (gpointer) r);
      if (gs_measure_is_gpu_time (set, r))
        g_hash_table_add (fit->gpu_time, (gpointer) r);
    }
  g_assert_cmpuint (gs_fit_kernel_fixed (fit), ==, 9);
  g_test_message ("micro.csv: kernel_fixed_us %.4f",
                  fit->arch->cal.kernel_fixed_us);
  g_assert_cmpfloat (fabs (fit->arch->cal.kernel_fixed_us - 0.834), <,
                     0.01);
  g_autofree char *group = gs_fit_render (fit, "2026-01-01");
  g_assert_nonnull (strstr (group, "kernel_fixed_us: the median over 3 "
                                   "block sizes"));

  /* Rows on 2 us + 0.5 ns a block, two block sizes; then the same rows
   * timed as latencies. */
  GsMeasureRow rows[6];
  g_autoptr (GsFit) line = gs_fit_new (a, NULL);
  g_autoptr (GsFit) lat = gs_fit_new (a, NULL);
  for (int i = 0; i < 6; i++)
    {
      memset (&rows[i], 0, sizeof rows[i]);
      rows[i].op = (char *) "block_dispatch";
      rows[i].grid[0] = (uint32_t) (1000 * (1 + i % 3) * (1 + i % 3));
      rows[i].grid[1] = rows[i].grid[2] = 1;
      rows[i].block[0] = i < 3 ? 32 : 256;
      rows[i].block[1] = rows[i].block[2] = 1;
      rows[i].latency_ms = (2.0 + 0.5e-3 * rows[i].grid[0]) / 1e3;
      g_ptr_array_add (line->rows, &rows[i]);
      g_hash_table_add (line->gpu_time, &rows[i]);
      g_ptr_array_add (lat->rows, &rows[i]);
    }
  g_assert_cmpuint (gs_fit_kernel_fixed (line), ==, 6);
  g_assert_cmpfloat (fabs (line->arch->cal.kernel_fixed_us - 2.0), <, 1e-9);
  lat->arch->cal.kernel_fixed_us = 0.25;
  g_assert_cmpuint (gs_fit_kernel_fixed (lat), ==, 0);
  g_assert_cmpfloat (lat->arch->cal.kernel_fixed_us, ==, 0.25);

  /* One small kernel with and without the fixed duration. */
  GsKernel k;
  gs_kernel_init (&k);
  k.name = g_strdup ("small");
  k.grid[0] = 4;
  k.block[0] = 128;
  k.regs = 32;
  k.work.fp32_ops = 128.0 * 64;
  GsTime dur[2], from_launch[2];
  for (int f = 0; f < 2; f++)
    {
      a->cal.kernel_fixed_us = f ? 1.5 : 0;
      g_autoptr (GsGpu) g = gs_test_simulate (a, &k, 1, NULL);
      dur[f] = gs_gpu_kernel_time (g);
      from_launch[f] = gs_gpu_end_time (g);
      const GsKernelResult *r = gs_gpu_result (g, 0);
      g_assert_cmpint (dur[f], ==, r->end - r->start);
    }
  g_assert_cmpint (dur[1] - dur[0], ==, 1500000);
  g_assert_cmpint (from_launch[1] - dur[1], ==, from_launch[0] - dur[0]);
  g_assert_cmpint (from_launch[0] - dur[0], >, 0);
  gs_kernel_clear (&k);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/memory/launch-configs", test_launch_configs);
  g_test_add_func ("/memory/vectorized-or-not", test_vectorized_or_not);
  g_test_add_func ("/memory/softmax-choice", test_softmax_choice);
  g_test_add_func ("/memory/monotonic", test_monotonic);
  g_test_add_func ("/memory/bandwidth", test_bandwidth);
  g_test_add_func ("/memory/host-floor", test_host_floor);
  g_test_add_func ("/memory/broadcast-bytes", test_broadcast_bytes);
  g_test_add_func ("/memory/other-kinds", test_other_kinds);
  g_test_add_func ("/memory/fused-sums", test_fused_sums);
  g_test_add_func ("/memory/saved-activations", test_saved_activations);
  g_test_add_func ("/memory/peak", test_peak);
  g_test_add_func ("/memory/peak-decode", test_peak_decode);
  g_test_add_func ("/memory/outer-splits", test_outer_splits);
  g_test_add_func ("/memory/outer-split-kernels", test_outer_split_kernels);
  g_test_add_func ("/memory/outer-reduce", test_outer_reduce);
  g_test_add_func ("/memory/dropout-kernel", test_dropout_kernel);
  g_test_add_func ("/memory/dropout-mask-bytes", test_dropout_mask_bytes);
  g_test_add_func ("/memory/cast-bytes", test_cast_bytes);
  g_test_add_func ("/memory/params-round-trip", test_params_round_trip);
  g_test_add_func ("/memory/params-unknown-key", test_params_unknown_key);
  g_test_add_func ("/memory/residuals", test_residuals);
  g_test_add_func ("/memory/residuals-bad", test_residuals_bad);
  g_test_add_func ("/memory/fit-small", test_fit_small);
  g_test_add_func ("/memory/transfer", test_transfer);
  g_test_add_func ("/memory/kernel-fixed", test_kernel_fixed);
  g_test_add_func ("/memory/cross-attention-cache",
                   test_cross_attention_cache);
  return g_test_run ();
}
