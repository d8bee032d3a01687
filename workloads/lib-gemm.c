/* gpusim: GEMM, batched GEMM and attention kernels (placeholder until the
 * kernel-selection model lands). */
#include "config.h"
#include "workloads/library-private.h"
#include "sim/arch.h"
#include "sim/error.h"

struct GsLibGemm { int unused; };

GsLibGemm *
gs_lib_gemm_new (const GsArch *arch, GError **error)
{
  return g_new0 (GsLibGemm, 1);
}

void
gs_lib_gemm_free (GsLibGemm *lib)
{
  g_free (lib);
}

gboolean
gs_lib_gemm_lower (const GsLibGemm *lib, const GsOp *op, GsRuntime runtime,
                   const GsKernelHint *hint, GArray *kernels, GError **error)
{
  g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
               "%s: GEMM kernels are not modelled yet", op->name);
  return FALSE;
}

GsTime
gs_lib_gemm_op_latency (const GsLibGemm *lib, const GsOp *op, GsTime gpu_time)
{
  return gpu_time;
}
