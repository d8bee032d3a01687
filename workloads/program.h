/* gpusim: a program is what a workload becomes: kernel launches in host
 * order, each with its stream and the time the host issues it, plus the ops
 * they came from (for per-op and per-layer reports).
 */
#ifndef GS_PROGRAM_H
#define GS_PROGRAM_H

#include <glib.h>
#include "sim/kernel.h"
#include "sim/gpu.h"
#include "workloads/op.h"
#include "workloads/library.h"

typedef struct GsArch GsArch;

typedef struct {
  GsKernel k;              /* name, op_class, tag, stream and issue_ps set */
  GsPhase phase;
  int layer;               /* -1 outside transformer layers */
  guint op;                /* index into the program's ops, G_MAXUINT: none */
} GsLaunch;

/* A decode step simulated for a generation that simulates only some: the
 * step and how many of the generation's steps it stands for. */
typedef struct {
  int step;
  double weight;
} GsStepSample;

/* Device memory a model request needs, bytes: a lower bound (no CUDA
 * context, library workspaces or allocator slack), from the built graph
 * (workloads/model-memory.c), and an estimate of its peak. */
typedef struct {
  double weights;          /* parameters (fp8: their FP8 copies) */
  double grads;            /* training: the parameters' gradients */
  double optimizer;        /* training: Adam's two moments */
  double cache;            /* the KV cache at its longest */
  double saved;            /* training: what autograd keeps for backward */
  double largest;          /* the largest activation tensor */
  double device;           /* what the GPU or MIG instance has (0: unknown) */
  /* The most the caching allocator holds at once while the request
   * runs, weights and training state included, an estimate
   * (workloads/model-memory.c, peak_activations); 0: not estimated (a
   * generation or decode steps under the compiled runtime).  Not part of
   * the total. */
  double peak;
} GsModelMemory;

/* Their sum. */
double gs_model_memory_total (const GsModelMemory *m);

typedef struct {
  char *name;              /* workload name */
  char *source;            /* file it came from */
  GArray *ops;             /* GsOp (may be empty for kernel-level workloads) */
  GArray *launches;        /* GsLaunch */
  /* What was modelled, for reports (NULL/0 for kernel-level workloads). */
  char *model;             /* "gpt2", "bert", "llama" ... */
  char *mode;              /* "inference", "training", "decode" */
  GsRuntime runtime;
  GsDtype dtype;
  int batch, seq;
  int gen_tokens;          /* tokens generated (0: none); GsOp.step tells
                            * the prefill's ops from each decode step's */
  int decode_steps;        /* decode steps the generation takes */
  GArray *samples;         /* GsStepSample by step: the decode steps built
                            * when a long generation simulates some and
                            * interpolates the rest (NULL: every step) */
  int layers;
  const char *routing;     /* MoE routing, "identical" or "balanced" (a
                            * static string; NULL: no experts) */
  char *note;              /* what the model leaves out, for the header
                            * (NULL: nothing) */
  GsModelMemory memory;    /* device memory it needs (all 0: not a model) */
  gboolean checkpoint;     /* training with checkpointed layers */
  const char *transformers; /* model: the transformers release its op list
                             * follows ("4.36", "5"; static), else NULL */
  double host_us;          /* host time to issue everything */
  int cuda_mallocs;        /* model: cudaMalloc calls of a run from an
                            * emptied allocator cache (-1: not counted) */
  GsMemo *memo;            /* kernel timings found while building it, for
                              every later run on the same GPU */
} GsProgram;

GsProgram *gs_program_new (const char *name, const char *source);
void gs_program_free (GsProgram *prog);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsProgram, gs_program_free)

/* Appends a launch (the kernel is copied). */
void gs_program_add (GsProgram *prog, const GsKernel *k, GsPhase phase,
                     int layer, guint op);
/* The same, taking K's strings instead of copying them (K keeps none:
 * clearing it afterwards frees nothing). */
void gs_program_take (GsProgram *prog, GsKernel *k, GsPhase phase,
                      int layer, guint op);

/* How many launches launch I stands for: the weight of its decode step
 * when only some steps are simulated, else 1. */
double gs_program_launch_weight (const GsProgram *prog, guint i);

/* Submits every launch to GPU. */
gboolean gs_program_submit (const GsProgram *prog, GsGpu *gpu,
                            GError **error);

/* Submits every launch to a new GPU and runs it. */
GsGpu *gs_program_run (const GsProgram *prog, const GsArch *arch,
                       const GsGpuOptions *options, GError **error);

#endif
