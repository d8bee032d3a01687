/* gpusim: the memory-bound part of the kernel library model for
 * workloads/library.h: elementwise, norm, softmax, reduce, embedding,
 * copy, fused (compiled) and optimizer ops.  The model itself is in
 * mem-kernels.c, mem-pointwise.c and mem-rows.c (see mem-model.h); this
 * part keeps the arch's calibration.library.memory parameters.
 */
#include "config.h"
#include "workloads/library-private.h"
#include "workloads/mem-model.h"
#include "sim/arch.h"
#include "sim/error.h"

struct GsLibMemory {
  const GsArch *arch;      /* owned by the GsLibrary */
  GsMemParams params;
};

GsLibMemory *
gs_lib_memory_new (const GsArch *arch, GError **error)
{
  GsLibMemory *lib = g_new0 (GsLibMemory, 1);
  lib->arch = arch;
  if (!gs_mem_params_load (&lib->params, arch, error))
    {
      g_free (lib);
      return NULL;
    }
  return lib;
}

void
gs_lib_memory_free (GsLibMemory *lib)
{
  g_free (lib);
}

gboolean
gs_lib_memory_lower (const GsLibMemory *lib, const GsOp *op,
                     GsRuntime runtime, const GsKernelHint *hint,
                     GArray *kernels, GError **error)
{
  return gs_mem_lower (lib->arch, &lib->params, op, runtime, hint, kernels,
                       error);
}

GsTime
gs_lib_memory_op_latency (const GsLibMemory *lib, const GsOp *op,
                          GsTime gpu_time)
{
  return gs_mem_op_latency (&lib->params, op, gpu_time);
}
