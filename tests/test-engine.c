/* gpusim tests: the discrete-event core and the GPU model's textbook cases.
 *
 * The toy GPU (tests/data/arch/toy.cfg) has round numbers so expected times
 * are worked out by hand in the comments; the wave checks use the real H100
 * description.
 */
#include "config.h"
#include "tests/testlib.h"
#include "sim/arch.h"
#include "sim/engine.h"
#include "sim/error.h"
#include "sim/gpu.h"

#include <math.h>

static char *
toy_path (void)
{
  return g_build_filename (g_getenv ("GS_SRCDIR") ? g_getenv ("GS_SRCDIR")
                                                  : ".",
                           "tests", "data", "arch", "toy.cfg", NULL);
}

static GsArch *
load_arch (const char *name)
{
  GError *error = NULL;
  GsArch *a = gs_arch_load (name, &error);
  g_assert_no_error (error);
  g_assert_nonnull (a);
  return a;
}

static GsArch *
toy (void)
{
  g_autofree char *p = toy_path ();
  return load_arch (p);
}

static double
kernel_us (const GsGpu *gpu, guint i)
{
  const GsKernelResult *r = gs_gpu_result (gpu, i);
  return (double) (r->end - r->start) / GS_PS_PER_US;
}

/* ------------------------------------------------------------ the engine */

typedef struct {
  GArray *order;
} Log;

static void
log_event (GsEngine *e, void *data, uint64_t arg)
{
  Log *l = data;
  guint v = (guint) arg;
  g_array_append_val (l->order, v);
}

static void
test_engine_fifo (void)
{
  g_autoptr (GsEngine) e = gs_engine_new ();
  Log l = { g_array_new (FALSE, FALSE, sizeof (guint)) };
  int t = gs_engine_register (e, "log", log_event, &l);
  /* Same time: first in, first out; earlier times first. */
  gs_engine_schedule (e, t, 20, 3);
  gs_engine_schedule (e, t, 10, 1);
  gs_engine_schedule (e, t, 10, 2);
  gs_engine_schedule (e, t, 20, 4);
  gs_engine_schedule (e, t, 5, 0);
  g_assert_cmpint (gs_engine_run (e, 1000, GS_TIME_NEVER - 1), ==,
                   GS_FINISH_EMPTY);
  g_assert_cmpuint (l.order->len, ==, 5);
  for (guint i = 0; i < 5; i++)
    g_assert_cmpuint (g_array_index (l.order, guint, i), ==, i);
  g_assert_cmpint (gs_engine_now (e), ==, 20);
  g_array_unref (l.order);
}

static void
reschedule (GsEngine *e, void *data, uint64_t arg)
{
  int *type = data;
  gs_engine_schedule (e, *type, gs_engine_now (e) + 1, arg + 1);
}

static void
test_engine_runaway (void)
{
  g_autoptr (GsEngine) e = gs_engine_new ();
  int type = 0;
  type = gs_engine_register (e, "again", reschedule, &type);
  gs_engine_schedule (e, type, 0, 0);
  g_assert_cmpint (gs_engine_run (e, 1000, GS_TIME_NEVER - 1), ==,
                   GS_FINISH_EVENT_LIMIT);
  g_assert_cmpuint (gs_engine_events (e), ==, 1000);
  g_assert_cmpint (gs_engine_run (e, G_MAXUINT64, 5000), ==,
                   GS_FINISH_TIME_LIMIT);
}

/* ------------------------------------------------------------------ waves */

/* One block per SM: 1024 threads and more than half the shared memory. */
static void
one_per_sm (GsKernel *k, const GsArch *a, uint32_t blocks)
{
  gs_kernel_init (k);
  k->name = g_strdup ("big-blocks");
  k->grid[0] = blocks;
  k->block[0] = 1024;
  k->regs = 32;
  k->smem_dynamic = (uint32_t) (a->smem_per_block_kib * 1024 * 6 / 10);
  k->work.fp32_ops = 1024.0 * 4096;
  k->work.ilp = 4;
}

static void
test_waves_h100 (void)
{
  g_autoptr (GsArch) a = load_arch ("h100");
  g_assert_cmpint (a->sm_count, ==, 132);
  GsKernel k[2];
  one_per_sm (&k[0], a, 132);
  one_per_sm (&k[1], a, 133);
  GsGpuOptions o = { .no_memo = TRUE };
  g_autoptr (GsGpu) g1 = gs_test_simulate (a, &k[0], 1, &o);
  g_autoptr (GsGpu) g2 = gs_test_simulate (a, &k[1], 1, &o);
  const GsKernelResult *r1 = gs_gpu_result (g1, 0);
  const GsKernelResult *r2 = gs_gpu_result (g2, 0);
  g_assert_cmpint (r1->occ.blocks_per_sm, ==, 1);
  g_assert_cmpint (r1->waves, ==, 1);
  g_assert_cmpint (r2->waves, ==, 2);
  /* The 133rd block runs alone in a second wave as long as the first;
   * the kernel's own fixed duration is paid once. */
  double fixed = a->cal.kernel_fixed_us;
  double t1 = kernel_us (g1, 0) - fixed, t2 = kernel_us (g2, 0) - fixed;
  g_test_message ("132 blocks: %.3f us, 133 blocks: %.3f us, beyond the "
                  "kernel's fixed %.3f us", t1, t2, fixed);
  g_assert_cmpfloat (fabs (t2 - 2 * t1) / t1, <, 1e-6);
  gs_kernel_clear (&k[0]);
  gs_kernel_clear (&k[1]);
}

/* Partial last wave and mixed block lengths come out of the simulation. */
static void
test_partial_wave (void)
{
  g_autoptr (GsArch) a = toy ();
  GsKernel k;
  one_per_sm (&k, a, 6);          /* 4 SMs: one wave of 4, one of 2 */
  k.work.ilp = 1;
  k.work.fp32_ops = 1024.0 * 1000;
  GsGpuOptions o = { .no_memo = TRUE };
  g_autoptr (GsGpu) g = gs_test_simulate (a, &k, 1, &o);
  const GsKernelResult *r = gs_gpu_result (g, 0);
  g_assert_cmpint (r->waves, ==, 2);
  g_assert_cmpfloat (r->waves_exact, ==, 1.5);
  /* Half the SMs idle in the tail: busy 6 of 8 SM-waves. */
  g_assert_cmpfloat (fabs (r->sm_busy - 0.75), <, 1e-6);

  /* Mixed lengths: 4 long blocks then 4 short ones of a quarter the work:
   * the short ones fill the SMs as the long ones finish. */
  GsKernel m;
  one_per_sm (&m, a, 8);
  m.work = k.work;
  m.n_variants = 2;
  m.variants[0] = (GsBlockVariant) { 4, 1.0 };
  m.variants[1] = (GsBlockVariant) { 4, 0.25 };
  g_autoptr (GsGpu) gm = gs_test_simulate (a, &m, 1, &o);
  double one = kernel_us (g, 0) / 2;     /* one full-length wave */
  g_assert_cmpfloat (fabs (kernel_us (gm, 0) - 1.25 * one) / one, <, 1e-6);
  gs_kernel_clear (&k);
  gs_kernel_clear (&m);
}

/* --------------------------------------------------------------- memory */

static void
streaming (GsKernel *k, uint32_t blocks, int stream)
{
  gs_kernel_init (k);
  k->name = g_strdup ("stream");
  k->grid[0] = blocks;
  k->block[0] = 256;
  k->regs = 32;
  k->stream = stream;
  k->work.ld_bytes = 256 * 16;
  k->work.st_bytes = 256 * 16;
  k->work.int_ops = 256 * 8;
}

static void
test_streaming (void)
{
  g_autoptr (GsArch) a = toy ();
  GsKernel k[2];
  streaming (&k[0], 4096, 0);
  GsGpuOptions o = { .no_memo = TRUE };
  g_autoptr (GsGpu) g = gs_test_simulate (a, k, 1, &o);
  /* 4096 blocks x 8 KiB = 32 MiB at 100 GB/s (efficiency 1: uncalibrated)
   * = 335.54432 us. */
  double bytes = 4096.0 * 256 * 32;
  double expect = bytes / (gs_arch_dram_bw (a) * gs_arch_dram_eff (a)) * 1e6;
  double got = kernel_us (g, 0);
  g_test_message ("streaming: %.3f us, bandwidth bound %.3f us", got, expect);
  g_assert_cmpfloat (fabs (got - expect) / expect, <, 0.01);
  g_assert_cmpint (gs_gpu_result (g, 0)->bound, ==, GS_BOUND_DRAM);

  /* With a calibrated DRAM efficiency, time scales by 1/eff. */
  g_autoptr (GsArch) b = gs_arch_copy (a);
  GError *error = NULL;
  gs_arch_set (b, "calibration.dram_eff", "0.8", &error);
  g_assert_no_error (error);
  g_autoptr (GsGpu) gb = gs_test_simulate (b, k, 1, &o);
  g_assert_cmpfloat (fabs (kernel_us (gb, 0) - expect / 0.8) / expect, <,
                     0.01);

  /* Two on two streams, few enough blocks to be co-resident: the bandwidth
   * is shared, not duplicated, so the pair takes about twice one alone. */
  gs_kernel_clear (&k[0]);
  streaming (&k[0], 64, 0);
  streaming (&k[1], 64, 1);
  g_autoptr (GsGpu) g1 = gs_test_simulate (a, k, 1, &o);
  g_autoptr (GsGpu) g2 = gs_test_simulate (a, k, 2, &o);
  double alone = (double) gs_gpu_end_time (g1);
  double pair = (double) gs_gpu_end_time (g2);
  g_test_message ("one stream kernel %.3f us, two overlapping %.3f us",
                  alone / 1e6, pair / 1e6);
  const GsKernelResult *r0 = gs_gpu_result (g2, 0), *r1 = gs_gpu_result (g2, 1);
  g_assert_cmpint (r1->start, <, r0->end);          /* they overlap */
  g_assert_cmpfloat (fabs (pair / alone - 2.0), <, 0.05);
  gs_kernel_clear (&k[0]);
  gs_kernel_clear (&k[1]);
}

/* Dependent rounds (GsWork.serial_trips): each round's latency and the
 * resident blocks' bytes through DRAM meet at the knee sqrt(L^2 + Q^2),
 * where loads issued up front stream at the bandwidth. */
static void
test_serial_rounds (void)
{
  g_autoptr (GsArch) a = toy ();
  GsKernel k;
  gs_kernel_init (&k);
  k.name = g_strdup ("rounds");
  k.grid[0] = 640;                 /* 16 blocks per SM x 4 SMs: 10 waves */
  k.block[0] = 128;
  k.regs = 32;
  k.work.ld_bytes = 1024;          /* two rounds of 4 bytes a thread */
  k.work.st_bytes = 1024;
  k.work.serial_trips = 2;
  GsGpuOptions o = { .no_memo = TRUE };
  g_autoptr (GsGpu) g = gs_test_simulate (a, &k, 1, &o);
  /* Per block: 2 rounds x 500 cycles at 1 GHz = 1000 ns of latency; 64
   * resident blocks x 2048 bytes at 100 GB/s = 1310.72 ns of DRAM. */
  double block_ns = hypot (1000.0, 64 * 2048 / 100.0);
  double expect = 10 * block_ns / 1e3;
  double got = kernel_us (g, 0);
  g_test_message ("serial rounds: %.3f us, knee %.3f us", got, expect);
  g_assert_cmpfloat (fabs (got - expect) / expect, <, 0.01);
  g_assert_cmpint (gs_gpu_result (g, 0)->bound, ==, GS_BOUND_LATENCY);

  /* The same bytes loaded up front stream at the DRAM's rate. */
  k.work.serial_trips = 0;
  g_autoptr (GsGpu) g0 = gs_test_simulate (a, &k, 1, &o);
  double stream = 640 * 2048 / 100.0 / 1e3;
  g_assert_cmpfloat (fabs (kernel_us (g0, 0) - stream) / stream, <, 0.01);
  g_assert_cmpint (gs_gpu_result (g0, 0)->bound, ==, GS_BOUND_DRAM);

  /* Half the bandwidth (an MPS or MIG share): the rounds wait longer. */
  GsGpuOptions h = { .no_memo = TRUE, .dram_fraction = 0.5 };
  k.work.serial_trips = 2;
  g_autoptr (GsGpu) gh = gs_test_simulate (a, &k, 1, &h);
  double half = 10 * hypot (1000.0, 2 * 64 * 2048 / 100.0) / 1e3;
  g_assert_cmpfloat (fabs (kernel_us (gh, 0) - half) / half, <, 0.01);
  gs_kernel_clear (&k);
}

/* --------------------------------------------------------------- compute */

static void
fma_kernel (GsKernel *k, uint32_t blocks, uint32_t threads, double fma,
            double ilp)
{
  gs_kernel_init (k);
  k->name = g_strdup ("fma");
  k->grid[0] = blocks;
  k->block[0] = threads;
  k->regs = 32;
  k->work.fp32_ops = threads * fma;
  k->work.ilp = ilp;
}

static void
test_compute_peak (void)
{
  g_autoptr (GsArch) a = toy ();
  /* Full occupancy (8 blocks of 256 threads per SM), plenty of ILP. */
  GsKernel k;
  fma_kernel (&k, 4 * 8 * 10, 256, 10000, 8);
  GsGpuOptions o = { .no_memo = TRUE };
  g_autoptr (GsGpu) g = gs_test_simulate (a, &k, 1, &o);
  const GsKernelResult *r = gs_gpu_result (g, 0);
  double flops = r->flops;
  double secs = kernel_us (g, 0) / 1e6;
  double peak = gs_arch_peak_flops (a, GS_DTYPE_FP32) * gs_arch_issue_eff (a);
  g_test_message ("achieved %.1f GFLOP/s of %.1f", flops / secs / 1e9,
                  peak / 1e9);
  g_assert_cmpfloat (fabs (flops / secs / peak - 1.0), <, 0.01);
  g_assert_cmpint (r->bound, ==, GS_BOUND_FP32);

  /* A calibrated issue efficiency scales the peak. */
  g_autoptr (GsArch) b = gs_arch_copy (a);
  GError *error = NULL;
  gs_arch_set (b, "calibration.issue_eff", "0.9", &error);
  g_assert_no_error (error);
  g_autoptr (GsGpu) gb = gs_test_simulate (b, &k, 1, &o);
  double secs_b = kernel_us (gb, 0) / 1e6;
  g_assert_cmpfloat (fabs (flops / secs_b / (0.9 * peak) - 1.0), <, 0.01);
  gs_kernel_clear (&k);
}

/* Hopper's dense tensor rates are wgmma's; warp-level mma.sync reaches
 * tensor.mma_sync_share of them (sm90.cfg: 0.667), TF32
 * tensor.mma_sync_tf32_share (0.503, the H100's mma.csv), at both
 * fidelities.  An arch without the keys (the A100) runs both at the full
 * rate. */
static double
mma_dtype_kernel_us (const GsArch *a, gboolean wgmma, GsFidelity f,
                     GsDtype d)
{
  GsKernel k;
  gs_kernel_init (&k);
  k.name = g_strdup ("mma");
  k.grid[0] = a->sm_count * 4;
  k.block[0] = 256;
  k.regs = 64;
  k.work.tensor_flops[d] = 256.0 * 1024 * 1024;
  k.work.mma_flops = 65536;
  k.work.ilp = 4;
  k.work.wgmma = wgmma;
  GsGpuOptions o = { .no_memo = TRUE, .fidelity = f };
  g_autoptr (GsGpu) g = gs_test_simulate (a, &k, 1, &o);
  g_assert_cmpint (gs_gpu_result (g, 0)->bound, ==, GS_BOUND_TENSOR);
  double us = kernel_us (g, 0) - a->cal.kernel_fixed_us;
  gs_kernel_clear (&k);
  return us;
}

static double
mma_kernel_us (const GsArch *a, gboolean wgmma, GsFidelity f)
{
  return mma_dtype_kernel_us (a, wgmma, f, GS_DTYPE_FP16);
}

static void
test_mma_sync_share (void)
{
  g_autoptr (GsArch) h100 = load_arch ("h100");
  g_autoptr (GsArch) a100 = load_arch ("a100");
  g_assert_cmpfloat (fabs (h100->mma_sync_share - 0.667), <, 1e-9);
  g_assert_cmpfloat (a100->mma_sync_share, ==, 1);
  g_assert_cmpfloat (fabs (gs_arch_mma_sync_share (h100, GS_DTYPE_TF32)
                           - 0.503), <, 1e-9);
  g_assert_cmpfloat (gs_arch_mma_sync_share (a100, GS_DTYPE_TF32), ==, 1);
  for (int f = GS_FIDELITY_BLOCK; f <= GS_FIDELITY_WARP; f++)
    {
      double sync = mma_kernel_us (h100, FALSE, f);
      double wg = mma_kernel_us (h100, TRUE, f);
      g_test_message ("h100 fidelity %d: mma.sync %.2f us, wgmma %.2f us",
                      f, sync, wg);
      g_assert_cmpfloat (fabs (wg / sync - 0.667), <, 0.02);
      double t_sync = mma_dtype_kernel_us (h100, FALSE, f, GS_DTYPE_TF32);
      double t_wg = mma_dtype_kernel_us (h100, TRUE, f, GS_DTYPE_TF32);
      g_test_message ("h100 fidelity %d: tf32 mma.sync %.2f us, wgmma "
                      "%.2f us", f, t_sync, t_wg);
      g_assert_cmpfloat (fabs (t_wg / t_sync - 0.503), <, 0.02);
      double a_sync = mma_kernel_us (a100, FALSE, f);
      double a_wg = mma_kernel_us (a100, TRUE, f);
      g_assert_cmpfloat (fabs (a_wg / a_sync - 1), <, 1e-9);
    }
}

static void
test_latency_bound (void)
{
  g_autoptr (GsArch) a = toy ();
  /* One block of 128 threads per SM: one warp per scheduler, dependent
   * FMAs (ILP 1).  Each warp issues one FMA every 4 cycles (the ALU
   * latency), so 4 warps reach 1 instruction per cycle of the 2 the
   * 64-lane pipe could take: latency-bound at half the peak. */
  GsKernel k;
  fma_kernel (&k, 4, 128, 10000, 1);
  GsGpuOptions o = { .no_memo = TRUE };
  g_autoptr (GsGpu) g = gs_test_simulate (a, &k, 1, &o);
  const GsKernelResult *r = gs_gpu_result (g, 0);
  g_assert_cmpint (r->bound, ==, GS_BOUND_LATENCY);
  /* 10000 dependent FMAs x 4 cycles at 1 GHz = 40 us. */
  g_assert_cmpfloat (fabs (kernel_us (g, 0) - 40.0), <, 0.01);

  /* More warps hide the latency: 4 blocks per SM reach the pipe limit. */
  GsKernel k4;
  fma_kernel (&k4, 16, 128, 10000, 1);
  g_autoptr (GsGpu) g4 = gs_test_simulate (a, &k4, 1, &o);
  const GsKernelResult *r4 = gs_gpu_result (g4, 0);
  g_assert_cmpint (r4->bound, ==, GS_BOUND_FP32);
  /* 4 x 128 x 10000 FMAs / 64 lanes = 80000 cycles = 80 us. */
  g_assert_cmpfloat (fabs (kernel_us (g4, 0) - 80.0), <, 0.01);
  gs_kernel_clear (&k);
  gs_kernel_clear (&k4);
}

/* ----------------------------------------------------- streams and speed */

static void
test_streams_serialize (void)
{
  g_autoptr (GsArch) a = toy ();
  GsKernel k[2];
  fma_kernel (&k[0], 4, 128, 1000, 1);
  fma_kernel (&k[1], 4, 128, 1000, 1);
  GsGpuOptions o = { .no_memo = TRUE };
  /* One stream: the second starts after the first ends (toy launch gap 0). */
  g_autoptr (GsGpu) g = gs_test_simulate (a, k, 2, &o);
  g_assert_cmpint (gs_gpu_result (g, 1)->start, >=, gs_gpu_result (g, 0)->end);
  /* Two streams: they run together, each latency-bound, no slower. */
  k[1].stream = 1;
  g_autoptr (GsGpu) g2 = gs_test_simulate (a, k, 2, &o);
  g_assert_cmpint (gs_gpu_result (g2, 1)->start, <,
                   gs_gpu_result (g2, 0)->end);
  g_assert_cmpint (gs_gpu_end_time (g2), <, gs_gpu_end_time (g));
  gs_kernel_clear (&k[0]);
  gs_kernel_clear (&k[1]);
}

/* A stream is FIFO in host order: a launch issued before the one listed
 * ahead of it on its stream still waits for that one to finish, at both
 * fidelities. */
static void
test_streams_fifo (void)
{
  g_autoptr (GsArch) a = toy ();
  GsKernel k[2];
  fma_kernel (&k[0], 4, 128, 1000, 1);
  fma_kernel (&k[1], 4, 128, 1000, 1);
  k[0].issue_ps = 100 * GS_PS_PER_US;
  k[1].issue_ps = 0;
  for (int f = 0; f < 2; f++)
    {
      GsGpuOptions o = { .no_memo = TRUE };
      o.fidelity = f ? GS_FIDELITY_WARP : GS_FIDELITY_BLOCK;
      g_autoptr (GsGpu) g = gs_test_simulate (a, k, 2, &o);
      const GsKernelResult *r0 = gs_gpu_result (g, 0), *r1 = gs_gpu_result (g, 1);
      g_assert_cmpint (r0->start, >=, 100 * GS_PS_PER_US);
      g_assert_cmpint (r1->start, >=, r0->end);
      g_assert_cmpint (gs_gpu_end_time (g), ==, r1->end);
    }
  gs_kernel_clear (&k[0]);
  gs_kernel_clear (&k[1]);
}

/* Memo and fast-forward are optimizations: they must not change results. */
static void
test_shortcuts_exact (void)
{
  g_autoptr (GsArch) a = toy ();
  GsKernel k[3];
  fma_kernel (&k[0], 100000, 256, 64, 2);
  k[0].work.ld_bytes = 256 * 8;
  streaming (&k[1], 7777, 0);
  fma_kernel (&k[2], 100000, 256, 64, 2);
  k[2].work.ld_bytes = 256 * 8;
  GsGpuOptions slow = { .no_memo = TRUE, .no_fast_forward = TRUE };
  GsGpuOptions fast = { 0 };
  g_autoptr (GsGpu) gs = gs_test_simulate (a, k, 3, &slow);
  g_autoptr (GsGpu) gf = gs_test_simulate (a, k, 3, &fast);
  GsGpuStats st;
  gs_gpu_stats (gf, &st);
  g_assert_cmpuint (st.memo_hits, ==, 1);
  g_assert_cmpuint (st.blocks_skipped, >, 0);
  for (int i = 0; i < 3; i++)
    {
      const GsKernelResult *x = gs_gpu_result (gs, i), *y = gs_gpu_result (gf, i);
      g_assert_cmpint (x->end - x->start, ==, y->end - y->start);
      g_assert_cmpint (x->waves, ==, y->waves);
      g_assert_cmpfloat (fabs (x->achieved_occupancy - y->achieved_occupancy),
                         <, 1e-9);
    }
  g_assert_cmpint (gs_gpu_end_time (gs), ==, gs_gpu_end_time (gf));
  for (int i = 0; i < 3; i++)
    gs_kernel_clear (&k[i]);
}

static void
test_unsupported (void)
{
  g_autoptr (GsArch) a = toy ();
  GError *error = NULL;
  g_autoptr (GsGpu) g = gs_gpu_new (a, NULL, &error);
  g_assert_no_error (error);
  GsKernel k;
  fma_kernel (&k, 1, 128, 1, 1);
  k.work.tensor_flops[GS_DTYPE_FP8] = 1e6;     /* the toy has no FP8 */
  g_assert_false (gs_gpu_submit (g, &k, NULL, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_PREDICT);
  g_clear_error (&error);
  k.work.tensor_flops[GS_DTYPE_FP8] = 0;
  k.block[0] = 2048;                          /* too many threads */
  g_assert_false (gs_gpu_submit (g, &k, NULL, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_PREDICT);
  g_clear_error (&error);
  k.block[0] = 0;                             /* not a block */
  g_assert_false (gs_gpu_submit (g, &k, NULL, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_INPUT);
  g_clear_error (&error);
  gs_kernel_clear (&k);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/fifo", test_engine_fifo);
  g_test_add_func ("/engine/runaway", test_engine_runaway);
  g_test_add_func ("/gpu/waves-h100", test_waves_h100);
  g_test_add_func ("/gpu/partial-wave", test_partial_wave);
  g_test_add_func ("/gpu/streaming", test_streaming);
  g_test_add_func ("/gpu/serial-rounds", test_serial_rounds);
  g_test_add_func ("/gpu/compute-peak", test_compute_peak);
  g_test_add_func ("/gpu/mma-sync-share", test_mma_sync_share);
  g_test_add_func ("/gpu/latency-bound", test_latency_bound);
  g_test_add_func ("/gpu/streams", test_streams_serialize);
  g_test_add_func ("/gpu/streams-fifo", test_streams_fifo);
  g_test_add_func ("/gpu/shortcuts-exact", test_shortcuts_exact);
  g_test_add_func ("/gpu/unsupported", test_unsupported);
  return g_test_run ();
}
