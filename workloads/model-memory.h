/* gpusim: what a model request may ask for, checked before and after the
 * model is built (private to workloads/).
 *
 * Before: the request must build in bounded time and memory (a bound on
 * layer passes) and its tensors must stay far from int64 overflow.  After:
 * its weights, training state and activations must fit in the GPU's
 * memory (dram.size_gib), or no prediction is made (GS_ERROR_PREDICT,
 * exit status 1).  gpusim-run(1), LIMITS, documents both.
 */
#ifndef GS_MODEL_MEMORY_H
#define GS_MODEL_MEMORY_H

#include <glib.h>
#include "workloads/hf-config.h"
#include "workloads/model-graph.h"
#include "workloads/program.h"

typedef struct GsArch GsArch;

/* Most layer passes one request builds: layers x (token passes built
 * after the prefill + 1),
 * x3 in training, a mixture-of-experts model counting 1 + experts/8 per
 * layer.  A layer pass costs about 200 KB and 3 ms, so this bounds a run
 * to about 3.5 GB and a minute. */
#define GS_MODEL_MAX_LAYER_PASSES 16384

/* Most elements of one tensor (2^50): its size in bytes and the products
 * the builders form stay exact in int64 and double. */
#define GS_MODEL_MAX_TENSOR_ELEMS (1LL << 50)

typedef struct {
  int batch, seq, gen;     /* as resolved (gen: tokens generated) */
  gboolean training;
  gboolean optimizer;      /* Adam's two moments are kept */
  gboolean eager_attn;     /* attention scores are materialized */
  int gen_built;           /* token passes built after the prefill (gen,
                            * or fewer when decode steps are sampled) */
  const char *mig;         /* MIG profile (NULL: the whole GPU) */
} GsModelSize;

gboolean gs_model_check_size (const GsHfConfig *cfg, const GsModelSize *s,
                              GError **error);

/* Lower bound of the device memory the built graph G needs (into MEM
 * unless NULL; its device 0 without ARCH), against ARCH's dram.size_gib,
 * or on a MIG instance its profile's memory (ARCH NULL: no check).  G holds at most one decode step.  LAST (NULL: none),
 * a generation's last decode step built alone after G's prefill, adds its
 * KV cache and its activations where they are larger than G's. */
/* MALLOCS (NULL: not wanted; set only for an eager G and no LAST): the
 * cudaMalloc calls of one run of G from an emptied allocator cache
 * (torch.cuda.empty_cache() before it), PyTorch's caching allocator
 * walked over the tensors the peak's walk allocates and frees
 * (parameters, their gradients and the inputs already resident); one
 * guint per op gs_rt_eager launches, in order: the segments requested
 * before its kernel. */
gboolean gs_model_check_memory (const GsMg *g, const GsMg *last,
                                const GsHfConfig *cfg,
                                const GsModelSize *s, const GsArch *arch,
                                GsModelMemory *mem, GArray **mallocs,
                                GError **error);

/* The estimated peak of a request under the compiled runtime, M's
 * weights and training state beside the most activations held at once
 * in G as gs_rt_compiled lowered it (READ_AS: GsRtPlan.read_as).  The
 * eager runtime's is computed by gs_model_check_memory. */
double gs_model_peak_compiled (const GsMg *g, const int *read_as,
                               const GsModelMemory *m);


#endif
