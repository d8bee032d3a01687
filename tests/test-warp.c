/* gpusim tests: the warp level (sim/warp.c, --fidelity warp).
 *
 * Textbook cases on the toy GPU (1 GHz, 4 schedulers, 64 FP32 lanes per
 * SM, 100 GB/s) with times worked out by hand; agreement with the block
 * level on every teaching lab's kernels; the size limit; the scheduling
 * policies.
 */
#include "config.h"
#include "tests/testlib.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/gpu.h"
#include "sim/warp.h"
#include "workloads/workload.h"

#include <math.h>
#include <string.h>

#define AGREEMENT 0.10           /* warp vs block level, relative */

static char *
src_path (const char *first, ...)
{
  const char *root = g_getenv ("GS_SRCDIR") ? g_getenv ("GS_SRCDIR") : ".";
  va_list ap;
  va_start (ap, first);
  GString *s = g_string_new (root);
  for (const char *p = first; p; p = va_arg (ap, const char *))
    g_string_append_printf (s, "/%s", p);
  va_end (ap);
  return g_string_free (s, FALSE);
}

static GsArch *
load (const char *path)
{
  GError *error = NULL;
  GsArch *a = gs_arch_load (path, &error);
  g_assert_no_error (error);
  return a;
}

static GsArch *
toy (void)
{
  g_autofree char *p = src_path ("tests", "data", "arch", "toy.cfg", NULL);
  return load (p);
}

static GsGpu *
run (const GsArch *a, const GsKernel *ks, guint n, GsFidelity f,
     GsWarpPolicy policy, const GsRecorder *rec, void *rec_data)
{
  GsGpuOptions o = { 0 };
  o.fidelity = f;
  o.warp_policy = policy;
  o.recorder = rec;
  o.recorder_data = rec_data;
  return gs_test_simulate (a, ks, n, &o);
}

static double
kernel_ns (const GsGpu *gpu, guint i)
{
  const GsKernelResult *r = gs_gpu_result (gpu, i);
  return (double) (r->end - r->start) / GS_PS_PER_NS;
}

static GsKernel
fma_kernel (guint blocks, guint threads, double fmas_per_thread, double ilp)
{
  GsKernel k;
  gs_kernel_init (&k);
  k.name = (char *) "fma";
  k.grid[0] = blocks;
  k.block[0] = threads;
  k.work.fp32_ops = fmas_per_thread * threads;
  k.work.ilp = ilp;
  return k;
}

/* ------------------------------------------------------------- textbook */

/* One warp of dependent FMAs: each waits 4 cycles for the one before, so
 * 1000 of them take 4000 cycles = 4 us at 1 GHz.  The toy GPU has no
 * launch gap and no fixed costs. */
static void
test_warp_dependent_chain (void)
{
  g_autoptr (GsArch) a = toy ();
  GsKernel k = fma_kernel (1, 32, 1000, 1);
  g_autoptr (GsGpu) gpu = run (a, &k, 1, GS_FIDELITY_WARP,
                               GS_WARP_POLICY_LRR, NULL, NULL);
  g_assert_cmpfloat (fabs (kernel_ns (gpu, 0) - 4000), <=, 4);
  g_assert_cmpint (gs_gpu_result (gpu, 0)->bound, ==, GS_BOUND_LATENCY);
}

/* 16 warps per SM, 4 per scheduler, ilp 1: with 16 FP32 lanes per
 * scheduler a warp instruction holds the pipe 2 cycles, so the pipe, not
 * the latency, limits: 4 warps x 1000 x 2 cycles = 8 us. */
static void
test_warp_pipe_bound (void)
{
  g_autoptr (GsArch) a = toy ();
  GsKernel k = fma_kernel (4, 512, 1000, 1);
  g_autoptr (GsGpu) gpu = run (a, &k, 1, GS_FIDELITY_WARP,
                               GS_WARP_POLICY_LRR, NULL, NULL);
  g_assert_cmpfloat (fabs (kernel_ns (gpu, 0) - 8000), <=, 8);
  g_assert_cmpint (gs_gpu_result (gpu, 0)->bound, ==, GS_BOUND_FP32);
}

/* Streaming 16 MiB at 100 GB/s takes 167.8 us whatever the warps do. */
static void
test_warp_dram_bound (void)
{
  g_autoptr (GsArch) a = toy ();
  GsKernel k;
  gs_kernel_init (&k);
  k.name = (char *) "copy";
  k.grid[0] = 1024;
  k.block[0] = 256;
  k.work.ld_bytes = 8192;
  k.work.st_bytes = 8192;
  k.work.mlp = 4;
  g_autoptr (GsGpu) gpu = run (a, &k, 1, GS_FIDELITY_WARP,
                               GS_WARP_POLICY_LRR, NULL, NULL);
  double want = 1024.0 * 16384 / 100e9 * 1e9;
  g_assert_cmpfloat (fabs (kernel_ns (gpu, 0) / want - 1), <, 0.01);
  g_assert_cmpint (gs_gpu_result (gpu, 0)->bound, ==, GS_BOUND_DRAM);
}

/* Dependent rounds (GsWork.serial_trips): one warp loads and stores 128
 * bytes a round, 100 rounds, each waiting out the DRAM latency (500
 * cycles at 1 GHz) before the next: 50 us at both fidelities, where the
 * same bytes as independent requests take a fraction of that. */
static void
test_warp_serial_rounds (void)
{
  g_autoptr (GsArch) a = toy ();
  GsKernel k;
  gs_kernel_init (&k);
  k.name = (char *) "rounds";
  k.grid[0] = 1;
  k.block[0] = 32;
  k.work.ld_bytes = 100 * 128;
  k.work.st_bytes = 100 * 128;
  k.work.mlp = 1;
  k.work.serial_trips = 100;
  double ns[2];
  for (int f = 0; f < 2; f++)
    {
      g_autoptr (GsGpu) gpu = run (a, &k, 1, f ? GS_FIDELITY_WARP
                                               : GS_FIDELITY_BLOCK,
                                   GS_WARP_POLICY_LRR, NULL, NULL);
      ns[f] = kernel_ns (gpu, 0);
    }
  g_test_message ("100 rounds: block %.0f ns, warp %.0f ns", ns[0], ns[1]);
  g_assert_cmpfloat (fabs (ns[0] / 50000 - 1), <, 0.05);
  g_assert_cmpfloat (fabs (ns[1] / 50000 - 1), <, 0.05);
  k.work.serial_trips = 0;
  k.work.mlp = 8;
  g_autoptr (GsGpu) free = run (a, &k, 1, GS_FIDELITY_WARP,
                                GS_WARP_POLICY_LRR, NULL, NULL);
  g_test_message ("independent requests: warp %.0f ns", kernel_ns (free, 0));
  g_assert_cmpfloat (kernel_ns (free, 0), <, 25000);
}

/* Waves and block counts: 9 blocks that fill an SM each (64 registers x
 * 1024 threads use every register) run in 3 waves on the toy GPU's 4 SMs. */
static void
test_warp_waves (void)
{
  g_autoptr (GsArch) a = toy ();
  GsKernel k = fma_kernel (9, 1024, 100, 4);
  k.regs = 64;
  g_autoptr (GsGpu) gpu = run (a, &k, 1, GS_FIDELITY_WARP,
                               GS_WARP_POLICY_LRR, NULL, NULL);
  const GsKernelResult *r = gs_gpu_result (gpu, 0);
  g_assert_cmpint (r->occ.blocks_per_sm, ==, 1);
  g_assert_cmpint (r->waves, ==, 3);
  GsGpuStats st;
  gs_gpu_stats (gpu, &st);
  g_assert_cmpuint (st.blocks, ==, 9);
}

/* ----------------------------------------------------- block vs warp */

static void
compare_program (const GsArch *a, const char *file, GsWarpPolicy policy)
{
  GError *error = NULL;
  g_autoptr (GsProgram) prog = gs_workload_load (file, NULL, a, &error);
  g_assert_no_error (error);
  GsGpuOptions block = { 0 }, warp = { 0 };
  warp.fidelity = GS_FIDELITY_WARP;
  warp.warp_policy = policy;
  g_autoptr (GsGpu) gb = gs_program_run (prog, a, &block, &error);
  g_assert_no_error (error);
  g_autoptr (GsGpu) gw = gs_program_run (prog, a, &warp, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < prog->launches->len; i++)
    {
      double b = kernel_ns (gb, i), w = kernel_ns (gw, i);
      const char *name = g_array_index (prog->launches, GsLaunch, i).k.name;
      if (g_test_verbose ())
        g_printerr ("%s %s (%s): block %.1f ns, warp %.1f ns\n", file, name,
                    gs_warp_policy_name (policy), b, w);
      if (fabs (w / b - 1) > AGREEMENT)
        g_error ("%s: kernel %s: warp level %.1f ns, block level %.1f ns "
                 "(%s): more than %.0f%% apart", file, name, w, b,
                 gs_warp_policy_name (policy), 100 * AGREEMENT);
    }
}

/* Every teaching lab's kernels: the two levels agree within 10%. */
static void
test_warp_labs_agree (void)
{
  g_autofree char *t = src_path ("examples", "arch", "teaching-gpu.cfg",
                                 NULL);
  g_autoptr (GsArch) a = load (t);
  g_autofree char *labs = src_path ("examples", "labs", NULL);
  GError *error = NULL;
  GDir *dir = g_dir_open (labs, 0, &error);
  g_assert_no_error (error);
  guint files = 0;
  const char *lab;
  while ((lab = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *sub = g_build_filename (labs, lab, NULL);
      GDir *d = g_dir_open (sub, 0, NULL);
      if (d == NULL)
        continue;
      const char *f;
      while ((f = g_dir_read_name (d)) != NULL)
        if (g_str_has_suffix (f, ".workload"))
          {
            g_autofree char *path = g_build_filename (sub, f, NULL);
            compare_program (a, path, GS_WARP_POLICY_LRR);
            compare_program (a, path, GS_WARP_POLICY_GTO);
            files++;
          }
      g_dir_close (d);
    }
  g_dir_close (dir);
  g_assert_cmpuint (files, >=, 4);
}

/* The test workloads on the toy GPU as well. */
static void
test_warp_toy_agree (void)
{
  g_autoptr (GsArch) a = toy ();
  g_autofree char *lat = src_path ("tests", "data", "workloads",
                                   "latency.workload", NULL);
  g_autofree char *stream = src_path ("tests", "data", "workloads",
                                      "stream.workload", NULL);
  compare_program (a, lat, GS_WARP_POLICY_LRR);
  compare_program (a, stream, GS_WARP_POLICY_GTO);
}

/* ------------------------------------------------------------- limits */

static void
test_warp_refuses_large (void)
{
  g_autoptr (GsArch) a = toy ();
  /* 100000 blocks x 8 warps x 16 instructions = 1.28e7 > 1e7. */
  GsKernel k = fma_kernel (100000, 256, 16, 1);
  GError *error = NULL;
  GsGpuOptions o = { 0 };
  o.fidelity = GS_FIDELITY_WARP;
  g_autoptr (GsGpu) gpu = gs_gpu_new (a, &o, &error);
  g_assert_no_error (error);
  gs_gpu_submit (gpu, &k, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (gs_gpu_run (gpu, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_PREDICT);
  g_assert_nonnull (strstr (error->message, "too many for --fidelity warp"));
  g_clear_error (&error);
  g_assert_cmpfloat (gs_warp_kernel_instructions (a, &k), >,
                     GS_WARP_MAX_INSTRUCTIONS);
}

/* -------------------------------------------------------------- policy */

typedef struct {
  guint switches;          /* issue runs of a different warp than before */
  guint last;              /* block * 1000 + warp of the last run */
  gboolean any;
} Switches;

static void
count_switch (void *ud, guint kernel, uint64_t block, guint warp, guint sm,
              guint sched, GsTime start, GsTime end, guint instructions)
{
  Switches *s = ud;
  guint id = (guint) block * 1000 + warp;
  if (sm != 0 || sched != 0)
    return;
  if (s->any && id != s->last)
    s->switches++;
  s->last = id;
  s->any = TRUE;
}

/* Eight warps per scheduler with four independent chains each: greedy-
 * then-oldest keeps issuing one warp while it can (it never stalls here:
 * 8 warps, 7 switches), loose round-robin rotates every instruction.  Both
 * finish in the time the FP32 pipe needs. */
static void
test_warp_policies (void)
{
  g_autoptr (GsArch) a = toy ();
  GsKernel k = fma_kernel (4, 1024, 64, 4);
  GsRecorder rec = { 0 };
  rec.warp_issue = count_switch;
  Switches lrr = { 0 }, gto = { 0 };
  g_autoptr (GsGpu) g1 = run (a, &k, 1, GS_FIDELITY_WARP,
                              GS_WARP_POLICY_LRR, &rec, &lrr);
  g_autoptr (GsGpu) g2 = run (a, &k, 1, GS_FIDELITY_WARP,
                              GS_WARP_POLICY_GTO, &rec, &gto);
  g_assert_cmpuint (gto.switches, ==, 7);
  g_assert_cmpuint (lrr.switches, ==, 8 * 64 - 1);
  /* 8 warps x 64 instructions x 2 pipe cycles per scheduler. */
  g_assert_cmpfloat (fabs (kernel_ns (g1, 0) - 1024), <=, 8);
  g_assert_cmpfloat (fabs (kernel_ns (g2, 0) - 1024), <=, 8);
}

static void
test_warp_names (void)
{
  g_assert_cmpint (gs_fidelity_parse ("warp"), ==, GS_FIDELITY_WARP);
  g_assert_cmpint (gs_fidelity_parse ("block"), ==, GS_FIDELITY_BLOCK);
  g_assert_cmpint (gs_fidelity_parse ("cycle"), ==, -1);
  g_assert_cmpint (gs_warp_policy_parse ("gto"), ==, GS_WARP_POLICY_GTO);
  g_assert_cmpint (gs_warp_policy_parse ("lrr"), ==, GS_WARP_POLICY_LRR);
  g_assert_cmpint (gs_warp_policy_parse ("rr"), ==, -1);
  g_assert_cmpstr (gs_warp_policy_name (GS_WARP_POLICY_GTO), ==, "gto");
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/warp/dependent-chain", test_warp_dependent_chain);
  g_test_add_func ("/warp/pipe-bound", test_warp_pipe_bound);
  g_test_add_func ("/warp/dram-bound", test_warp_dram_bound);
  g_test_add_func ("/warp/waves", test_warp_waves);
  g_test_add_func ("/warp/serial-rounds", test_warp_serial_rounds);
  g_test_add_func ("/warp/labs-agree", test_warp_labs_agree);
  g_test_add_func ("/warp/toy-agree", test_warp_toy_agree);
  g_test_add_func ("/warp/refuses-large", test_warp_refuses_large);
  g_test_add_func ("/warp/policies", test_warp_policies);
  g_test_add_func ("/warp/names", test_warp_names);
  return g_test_run ();
}
