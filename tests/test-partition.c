/* gpusim tests: partitions of a GPU (sim/partition.c): MPS active-thread
 * percentages and MIG instances, and what they do to kernel times.
 */
#include "config.h"
#include "tests/testlib.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/gpu.h"
#include "sim/partition.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

static GsArch *
load (const char *name)
{
  GError *error = NULL;
  GsArch *a = gs_arch_load (name, &error);
  g_assert_no_error (error);
  return a;
}

/* Time of K alone on ARCH with the partition, us. */
static double
time_us (const GsArch *arch, const GsKernel *k, const char *mig,
         double sm_limit)
{
  GError *error = NULL;
  GsGpuOptions o = { 0 };
  gs_partition_apply (arch, mig, sm_limit, &o, &error);
  g_assert_no_error (error);
  g_autoptr (GsGpu) gpu = gs_gpu_new (arch, &o, &error);
  g_assert_no_error (error);
  gs_gpu_submit (gpu, k, NULL, &error);
  g_assert_no_error (error);
  gs_gpu_run (gpu, &error);
  g_assert_no_error (error);
  const GsKernelResult *r = gs_gpu_result (gpu, 0);
  return (double) (r->end - r->start) / GS_PS_PER_US;
}

static void
test_mps_rounding (void)
{
  g_assert_cmpint (gs_partition_mps_sms (132, 50), ==, 66);
  g_assert_cmpint (gs_partition_mps_sms (108, 30), ==, 33);  /* 32.4 up */
  g_assert_cmpint (gs_partition_mps_sms (108, 25), ==, 27);
  g_assert_cmpint (gs_partition_mps_sms (132, 100), ==, 132);
  g_assert_cmpint (gs_partition_mps_sms (132, 0.1), ==, 1);
}

static void
test_apply (void)
{
  g_autoptr (GsArch) h100 = load ("h100-sxm5-80gb");
  GError *error = NULL;
  GsGpuOptions o = { 0 };
  g_assert_true (gs_partition_apply (h100, "3g.40gb", 0, &o, &error));
  g_assert_no_error (error);
  g_assert_cmpint (o.sm_count, ==, 60);
  g_assert_cmpfloat (o.dram_fraction, ==, 0.5);
  g_assert_cmpfloat (o.l2_fraction, ==, 0.5);
  /* MPS inside the instance: half of its 60 SMs. */
  GsGpuOptions m = { 0 };
  g_assert_true (gs_partition_apply (h100, "3g.40gb", 50, &m, &error));
  g_assert_cmpint (m.sm_count, ==, 30);
  g_autofree char *d = gs_partition_describe (h100, "3g.40gb", 50, &m);
  g_assert_cmpstr (d, ==, "MIG 3g.40gb: with MPS 50% of the SMs: 30 of 132 "
                          "SMs, 50% of the DRAM bandwidth, 50% of the L2");
  g_assert_null (gs_partition_describe (h100, NULL, 0, &(GsGpuOptions) { 0 }));
  /* A user's smaller SM count stays. */
  GsGpuOptions u = { 0 };
  u.sm_count = 20;
  g_assert_true (gs_partition_apply (h100, "7g.80gb", 0, &u, &error));
  g_assert_cmpint (u.sm_count, ==, 20);
}

static void
test_errors (void)
{
  g_autoptr (GsArch) h100 = load ("h100-sxm5-80gb");
  g_autoptr (GsArch) l4 = load ("l4");
  GError *error = NULL;
  GsGpuOptions o = { 0 };
  g_assert_false (gs_partition_apply (h100, "5g.60gb", 0, &o, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_USAGE);
  g_assert_nonnull (strstr (error->message, "valid: 1g.10gb, 1g.20gb, "
                                            "2g.20gb, 3g.40gb, 4g.40gb, "
                                            "7g.80gb"));
  g_clear_error (&error);
  g_assert_false (gs_partition_apply (l4, "1g.10gb", 0, &o, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_USAGE);
  g_assert_nonnull (strstr (error->message, "l4 has no MIG profiles"));
  g_clear_error (&error);
  g_assert_false (gs_partition_apply (h100, NULL, 0.0 - 5, &o, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_USAGE);
  g_clear_error (&error);
  g_assert_false (gs_partition_apply (h100, NULL, 101, &o, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_USAGE);
  g_clear_error (&error);
}

/* A hypothetical MIG GPU: a bad profile names file:line; a profile
 * without `sm` gets its share of the compute slices, without fractions its
 * share of the memory slices (gpusim-arch(5)). */
static void
test_mig_file (void)
{
  GError *error = NULL;
  const char *root = g_getenv ("GS_SRCDIR") ? g_getenv ("GS_SRCDIR") : ".";
  g_autofree char *dir = gs_test_temp_dir ("gs-mig-XXXXXX");
  g_autofree char *good = g_build_filename (dir, "good.cfg", NULL);
  g_autofree char *bad = g_build_filename (dir, "bad.cfg", NULL);
  g_autofree char *text = g_strdup_printf (
    "base = \"%s/tests/data/arch/toy.cfg\";\nname = \"toy-mig\";\n"
    "mig = {\n  compute_slices = 2;\n  memory_slices = 4;\n  profiles = (\n"
    "    { name = \"1g\"; compute_slices = 1; memory_slices = 1; }\n  );\n};\n",
    root);
  g_file_set_contents (good, text, -1, &error);
  g_assert_no_error (error);
  g_autofree char *btext = g_strdup_printf (
    "base = \"%s/tests/data/arch/toy.cfg\";\nname = \"toy-bad\";\n"
    "mig = {\n  profiles = (\n    { name = \"1g\"; sms = 2; }\n  );\n};\n",
    root);
  g_file_set_contents (bad, btext, -1, &error);
  g_assert_no_error (error);

  g_autoptr (GsArch) a = load (good);
  GsGpuOptions o = { 0 };
  g_assert_true (gs_partition_apply (a, "1g", 0, &o, &error));
  g_assert_no_error (error);
  g_assert_cmpint (o.sm_count, ==, 2);          /* 4 SMs x 1/2 */
  g_assert_cmpfloat (o.dram_fraction, ==, 0.25); /* 1 of 4 memory slices */

  g_autoptr (GsArch) b = load (bad);
  g_assert_false (gs_partition_apply (b, "1g", 0, &o, &error));
  g_assert_error (error, GS_ERROR, GS_ERROR_INPUT);
  g_autofree char *where = g_strdup_printf ("%s:5", bad);
  g_assert_nonnull (strstr (error->message, where));
  g_assert_nonnull (strstr (error->message, "sms"));
  g_clear_error (&error);
}

static GsKernel
kernel (guint blocks, guint threads, double fp32_ops, double ilp)
{
  GsKernel k;
  gs_kernel_init (&k);
  k.name = (char *) "k";
  k.grid[0] = blocks;
  k.block[0] = threads;
  k.work.fp32_ops = fp32_ops;
  k.work.ilp = ilp;
  return k;
}

/* At --sm-limit 50 a compute-bound kernel of many waves takes twice as
 * long: 66 SMs do the work of 132. */
static void
test_sm_limit_compute (void)
{
  g_autoptr (GsArch) h100 = load ("h100-sxm5-80gb");
  /* 132 x 40 blocks of 256 threads, 4096 independent-ish FMAs each. */
  GsKernel k = kernel (132 * 40, 256, 256.0 * 4096, 4);
  double full = time_us (h100, &k, NULL, 0);
  double half = time_us (h100, &k, NULL, 50);
  g_assert_cmpfloat (fabs (half / full - 2), <, 0.2);
}

/* A one-wave latency-bound kernel that fits in 66 SMs barely changes. */
static void
test_sm_limit_latency (void)
{
  g_autoptr (GsArch) h100 = load ("h100-sxm5-80gb");
  /* 40 blocks of one warp doing dependent FMAs. */
  GsKernel k = kernel (40, 32, 32.0 * 2000, 1);
  double full = time_us (h100, &k, NULL, 0);
  double half = time_us (h100, &k, NULL, 50);
  g_assert_cmpfloat (fabs (half / full - 1), <, 0.05);
}

/* A MIG 3g.40gb instance has half the DRAM bandwidth: a streaming kernel
 * takes twice as long. */
static void
test_mig_bandwidth (void)
{
  g_autoptr (GsArch) h100 = load ("h100-sxm5-80gb");
  GsKernel k;
  gs_kernel_init (&k);
  k.name = (char *) "copy";
  k.grid[0] = 60 * 64;
  k.block[0] = 256;
  k.work.ld_bytes = 65536;
  k.work.st_bytes = 65536;
  k.work.mlp = 8;
  double full = time_us (h100, &k, NULL, 0);
  double mig = time_us (h100, &k, "3g.40gb", 0);
  g_assert_cmpfloat (fabs (mig / full - 2), <, 0.1);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/partition/mps-rounding", test_mps_rounding);
  g_test_add_func ("/partition/apply", test_apply);
  g_test_add_func ("/partition/errors", test_errors);
  g_test_add_func ("/partition/mig-file", test_mig_file);
  g_test_add_func ("/partition/sm-limit-compute", test_sm_limit_compute);
  g_test_add_func ("/partition/sm-limit-latency", test_sm_limit_latency);
  g_test_add_func ("/partition/mig-bandwidth", test_mig_bandwidth);
  return g_test_run ();
}
