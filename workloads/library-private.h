/* gpusim: the parts of the kernel library model (see library.h).
 *
 * lib-gemm.c   GEMM, batched GEMM and fused attention kernels
 * lib-memory.c elementwise, norm, softmax, reduce, embedding, copy, fused
 *              (compiled) and optimizer kernels
 * Each part keeps private state built from the arch file's
 * `calibration.library` group (or its heuristics when there is none).
 */
#ifndef GS_LIBRARY_PRIVATE_H
#define GS_LIBRARY_PRIVATE_H

#include "workloads/library.h"

typedef struct GsLibGemm GsLibGemm;
typedef struct GsLibMemory GsLibMemory;

GsLibGemm *gs_lib_gemm_new (const GsArch *arch, GError **error);
void gs_lib_gemm_free (GsLibGemm *lib);
gboolean gs_lib_gemm_lower (const GsLibGemm *lib, const GsOp *op,
                            GsRuntime runtime, const GsKernelHint *hint,
                            GArray *kernels, GError **error);

void gs_lib_gemm_set_alone (GsLibGemm *lib, gboolean alone);
GsTime gs_lib_gemm_op_latency (const GsLibGemm *lib, const GsOp *op,
                                GsTime gpu_time);

GsLibMemory *gs_lib_memory_new (const GsArch *arch, GError **error);
void gs_lib_memory_free (GsLibMemory *lib);
gboolean gs_lib_memory_lower (const GsLibMemory *lib, const GsOp *op,
                              GsRuntime runtime, const GsKernelHint *hint,
                              GArray *kernels, GError **error);

void gs_lib_memory_set_alone (GsLibMemory *lib, gboolean alone);
GsTime gs_lib_memory_op_latency (const GsLibMemory *lib, const GsOp *op,
                                  GsTime gpu_time);

#endif
