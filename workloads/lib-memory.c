/* gpusim: memory-bound kernels (placeholder until the
 * kernel-selection model lands). */
#include "config.h"
#include "workloads/library-private.h"
#include "sim/arch.h"
#include "sim/error.h"

struct GsLibMemory { int unused; };

GsLibMemory *
gs_lib_memory_new (const GsArch *arch, GError **error)
{
  return g_new0 (GsLibMemory, 1);
}

void
gs_lib_memory_free (GsLibMemory *lib)
{
  g_free (lib);
}

gboolean
gs_lib_memory_lower (const GsLibMemory *lib, const GsOp *op, GsRuntime runtime,
                   const GsKernelHint *hint, GArray *kernels, GError **error)
{
  g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
               "%s: memory-bound kernels are not modelled yet", op->name);
  return FALSE;
}

GsTime
gs_lib_memory_op_latency (const GsLibMemory *lib, const GsOp *op, GsTime gpu_time)
{
  return gpu_time;
}
