/* gpusim: whole Transformers from Hugging Face configs.
 *
 * gs_model_load reads a config.json, builds the op list PyTorch (HF
 * transformers) executes for the requested mode (inference prefill, decode
 * with a KV cache, training forward + loss + backward, optional optimizer),
 * applies the runtime (eager, or compiled fusion), lowers every op through
 * the kernel library model and sets host issue times.
 *
 * The same work in two steps: gs_model_plan builds the op list with each
 * op's host cost (no kernel library needed), gs_model_plan_lower turns it
 * into a program.  docs/models.md describes what each builder emits.
 */
#ifndef GS_MODEL_H
#define GS_MODEL_H

#include <glib.h>
#include "workloads/workload.h"

/* CONFIG is the config.json path.  OPT are the workload's settings (file
 * values already merged with the command line).  Errors: GS_ERROR_INPUT
 * for a bad config (naming the file and key), GS_ERROR_USAGE for a bad
 * option value, GS_ERROR_PREDICT for a valid request gpusim cannot model
 * (fp8 on a GPU without it, FlashAttention-2 in fp32, ...). */
GsProgram *gs_model_load (const char *config, const GsWorkloadOptions *opt,
                          const GsArch *arch, GError **error);

typedef struct {
  char *config;            /* the config.json */
  char *model;             /* its model_type */
  char *mode;              /* "inference", "training", "decode" */
  GsRuntime runtime;
  GsDtype dtype;
  GsAttnImpl attn;
  int batch, seq, gen_tokens;
  int decode_steps;        /* decode steps of the generation */
  GArray *samples;         /* GsStepSample: the decode steps built, when
                            * not every one is (NULL: all) */
  int layers;              /* transformer layers (encoder + decoder) */
  GArray *ops;             /* GsOp, in host launch order */
  GArray *host_ns;         /* double per op: host time since the previous
                            * op's launches before this op's first, ns */
  GArray *sync_ns;         /* double per op: the part of host_ns spent
                            * before the host waits for the GPU to finish
                            * every kernel issued so far (< 0: no wait) */
  GArray *mallocs;         /* guint per op: cudaMalloc calls before it
                            * when the run starts from an emptied cache
                            * (eager prefill or training; NULL:
                            * otherwise); paid at the arch's
                            * model_runs.malloc_us */
  GArray *call;            /* guint per op: framework call it belongs to
                            * (the kernels of one torch call share it) */
  double host_us;          /* host time to issue everything, us */
  const char *routing;     /* MoE routing, "identical" or "balanced" (a
                            * static string; NULL: no experts) */
  char *note;              /* what the model leaves out (NULL: nothing) */
  GsModelMemory memory;    /* device memory it needs */
  gboolean checkpoint;     /* training with checkpointed layers */
  const char *transformers; /* the release the op list follows, "4.36"
                             * or "5" (a static string) */
  GsProgressFunc progress; /* told of lowering and of the simulation that
                            * settles the host's waits (NULL: none) */
  void *progress_data;
} GsModelPlan;

/* ARCH may be NULL (no dtype/arch checks: fp8 and FlashAttention are
 * taken as available). */
GsModelPlan *gs_model_plan (const char *config, const GsWorkloadOptions *opt,
                            const GsArch *arch, GError **error);
void gs_model_plan_free (GsModelPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsModelPlan, gs_model_plan_free)

/* Lowers every op through the kernel library model for ARCH; launches go
 * to stream 0 at the host times of the plan.  Where the host waits for
 * the GPU (a blocking copy, synchronize) the issue times depend on kernel
 * times: the program is simulated once on ARCH (default GPU options) and
 * the host replayed against those kernel times. */
GsProgram *gs_model_plan_lower (const GsModelPlan *plan, const GsArch *arch,
                                GError **error);

/* The host the runtimes' cost table describes (workloads/runtime-host.c),
 * as a per-op profile shows it: the median time of a traced node that
 * launches no kernel (a size(), view, permute, transpose or dim() method
 * call timed alone between two CUDA events), us.  A profile of another
 * machine gives its host's ratio (model_runs.host_ratio): gpusim calibrate
 * --model-runs takes the median of its nodes for which
 * gs_model_host_floor_node is TRUE over this. */
#define GS_MODEL_HOST_FLOOR_US 14.34
/* TRUE for a traced node of that kind: FX_OP "call_method" and FX_TARGET
 * one of size, view, permute, transpose, dim. */
gboolean gs_model_host_floor_node (const char *fx_op, const char *fx_target);

#endif
