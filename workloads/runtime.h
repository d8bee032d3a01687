/* gpusim: runtimes (private to workloads/): how a recorded model graph
 * becomes the op list a framework launches, and what the host spends
 * issuing it.
 *
 * runtime-host.c      the host (CPU) cost model (one table for both
 *                     runtimes) and eager PyTorch: one op per recorded
 *                     kernel node
 * runtime-compiled.c  torch.compile (Inductor) fusion
 */
#ifndef GS_RUNTIME_H
#define GS_RUNTIME_H

#include <glib.h>
#include "workloads/library.h"
#include "workloads/model-graph.h"

/* The ops a runtime launches, with their host cost. */
typedef struct {
  GArray *ops;             /* GsOp */
  GArray *host_ns;         /* double: host time before the op's first
                            * launch, since the previous op's last, ns */
  GArray *sync_ns;         /* double: the part of host_ns spent before the
                            * host first waits for the GPU to drain (a
                            * blocking copy, synchronize); < 0: no wait */
  GArray *call;            /* guint: framework call each op belongs to */
  /* The compiled runtime: for each graph value the one whose buffer holds
   * it (itself where a kernel writes it; for one a fused kernel keeps in
   * registers, the input it is recomputed from, -1: none), for the peak
   * memory (gs_model_peak_compiled).  NULL from the eager runtime. */
  int *read_as;
} GsRtPlan;

void gs_rt_plan_init (GsRtPlan *p);
void gs_rt_plan_clear (GsRtPlan *p);

/* Host time gathered since the last launch. */
typedef struct {
  double ns;
  double sync_ns;          /* where the host first waited, < 0: it did not */
} GsRtPending;

void gs_rt_pending_init (GsRtPending *p);
/* Adds NS of host work of class C (a wait first, for SYNC and WAIT). */
void gs_rt_pending_add (GsRtPending *p, GsHostClass c, double ns);
/* Appends OP (taking it) with the pending host time, and resets it. */
void gs_rt_plan_push (GsRtPlan *plan, GsOp *op, guint call,
                      GsRtPending *p);

/* Eager host time of node N: its class's cost (per unit for host-only
 * nodes), its module call, a launch for a kernel with no host work of
 * its own, ns. */
double gs_rt_eager_node_ns (const GsMgNode *n);

/* Host cost of one unit of work of class C, ns. */
double gs_rt_host_ns (GsHostClass c, GsRuntime rt);
/* Host cost of each launch after an op's first (cudaLaunchKernel), ns. */
double gs_rt_launch_ns (GsRuntime rt);

/* Eager: every kernel node of G, in order. */
void gs_rt_eager (GsMg *g, GsRtPlan *plan);
/* Compiled: pointwise/reduction chains fused (GS_OP_FUSED), GEMMs and
 * attention left as library calls. */
void gs_rt_compiled (GsMg *g, GsRtPlan *plan);

#endif
