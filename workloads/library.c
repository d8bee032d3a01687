/* gpusim: the kernel library model, dispatching by op kind (see library.h). */
#include "config.h"
#include "workloads/library-private.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <string.h>

struct GsLibrary {
  GsArch *arch;
  GsLibGemm *gemm;
  GsLibMemory *memory;
};

const char *
gs_runtime_name (GsRuntime r)
{
  return r == GS_RUNTIME_COMPILED ? "compiled" : "eager";
}

int
gs_runtime_parse (const char *s)
{
  if (s == NULL)
    return -1;
  if (strcmp (s, "eager") == 0)
    return GS_RUNTIME_EAGER;
  if (strcmp (s, "compiled") == 0 || strcmp (s, "inductor") == 0)
    return GS_RUNTIME_COMPILED;
  return -1;
}

void
gs_library_set_alone (GsLibrary *lib, gboolean alone)
{
  gs_lib_gemm_set_alone (lib->gemm, alone);
  gs_lib_memory_set_alone (lib->memory, alone);
}

GsLibrary *
gs_library_new (const GsArch *arch, GError **error)
{
  GsLibrary *lib = g_new0 (GsLibrary, 1);
  lib->arch = gs_arch_copy (arch);
  lib->gemm = gs_lib_gemm_new (lib->arch, error);
  if (lib->gemm == NULL)
    goto fail;
  lib->memory = gs_lib_memory_new (lib->arch, error);
  if (lib->memory == NULL)
    goto fail;
  return lib;
fail:
  gs_library_free (lib);
  return NULL;
}

void
gs_library_free (GsLibrary *lib)
{
  if (lib == NULL)
    return;
  gs_lib_gemm_free (lib->gemm);
  gs_lib_memory_free (lib->memory);
  gs_arch_free (lib->arch);
  g_free (lib);
}

gboolean
gs_library_lower (const GsLibrary *lib, const GsOp *op, GsRuntime runtime,
                  const GsKernelHint *hint, GArray *kernels, GError **error)
{
  switch (op->kind)
    {
    case GS_OP_GEMM:
    case GS_OP_ATTENTION:
      return gs_lib_gemm_lower (lib->gemm, op, runtime, hint, kernels, error);
    case GS_OP_ELEMENTWISE:
    case GS_OP_NORM:
    case GS_OP_SOFTMAX:
    case GS_OP_REDUCE:
    case GS_OP_EMBEDDING:
    case GS_OP_COPY:
    case GS_OP_FUSED:
    case GS_OP_OPTIMIZER:
      return gs_lib_memory_lower (lib->memory, op, runtime, hint, kernels,
                                  error);
    case GS_OP_KIND_COUNT:
      break;
    }
  g_set_error (error, GS_ERROR, GS_ERROR_PREDICT, "%s: unknown op kind %d",
               op->name ? op->name : "op", op->kind);
  return FALSE;
}

GsTime
gs_library_op_latency (const GsLibrary *lib, const GsOp *op, GsTime gpu_time)
{
  if (op->kind == GS_OP_GEMM || op->kind == GS_OP_ATTENTION)
    return gs_lib_gemm_op_latency (lib->gemm, op, gpu_time);
  return gs_lib_memory_op_latency (lib->memory, op, gpu_time);
}
