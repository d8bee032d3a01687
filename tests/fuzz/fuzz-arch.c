/* gpusim fuzz harness: arch files (sim/arch.c, sim/param.c).
 *
 * An arch file that loads must also describe a GPU the simulator can run:
 * one small kernel is simulated on it, so a value the loader lets through
 * but the engine cannot use (a zero rate, an overflowing clock) shows up
 * here and not in a user's run. */
#include "config.h"
#include "tests/fuzz/fuzz.h"
#include "sim/arch.h"
#include "sim/gpu.h"

static void
run_one_kernel (const GsArch *arch)
{
  GsGpuOptions opt = { 0 };
  opt.max_events = 1000000;
  g_autoptr (GsGpu) gpu = gs_gpu_new (arch, &opt, NULL);
  if (gpu == NULL)
    return;
  GsKernel k;
  gs_kernel_init (&k);
  k.name = g_strdup ("saxpy");
  k.grid[0] = 1000;
  k.block[0] = 256;
  k.work.fp32_ops = 256;
  k.work.ld_bytes = 2048;
  k.work.st_bytes = 1024;
  if (gs_gpu_submit (gpu, &k, NULL, NULL))
    gs_gpu_run (gpu, NULL);
  gs_kernel_clear (&k);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  g_autofree char *path = gs_fuzz_write ("input.cfg", data, size);
  GError *error = NULL;
  GsArch *arch = gs_arch_load_file (path, &error);
  if (arch == NULL)
    {
      g_assert (error != NULL && error->message[0] != '\0');
      g_error_free (error);
      return 0;
    }
  g_assert (gs_arch_validate (arch, NULL));
  GsArch *copy = gs_arch_copy (arch);
  run_one_kernel (copy);
  gs_arch_free (copy);
  gs_arch_free (arch);
  return 0;
}
