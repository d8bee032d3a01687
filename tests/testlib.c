/* gpusim tests: helpers shared by the test programs. */
#include "config.h"
#include "tests/testlib.h"
#include "sim/kernel.h"

GsMeasureSet *
gs_test_neusight (void)
{
  static GsMeasureSet *set;
  if (set == NULL)
    {
      const char *src = g_getenv ("GS_SRCDIR");
      g_autofree char *file = g_build_filename (src ? src : ".", "data",
                                                "neusight", "kernels.csv.gz",
                                                NULL);
      GError *error = NULL;
      set = gs_measure_load (file, TRUE, &error);
      g_assert_no_error (error);
    }
  return set;
}

GsArch *
gs_test_arch (const char *name)
{
  GError *error = NULL;
  GsArch *a = gs_arch_load (name, &error);
  g_assert_no_error (error);
  return a;
}

GArray *
gs_test_kernels_new (void)
{
  GArray *k = g_array_new (FALSE, TRUE, sizeof (GsKernel));
  g_array_set_clear_func (k, (GDestroyNotify) gs_kernel_clear);
  return k;
}

GsGpu *
gs_test_simulate (const GsArch *arch, const GsKernel *ks, guint n,
                  const GsGpuOptions *o)
{
  GError *error = NULL;
  GsGpu *gpu = gs_gpu_new (arch, o, &error);
  g_assert_no_error (error);
  for (guint i = 0; i < n; i++)
    {
      gs_gpu_submit (gpu, &ks[i], NULL, &error);
      g_assert_no_error (error);
    }
  gs_gpu_run (gpu, &error);
  g_assert_no_error (error);
  return gpu;
}
