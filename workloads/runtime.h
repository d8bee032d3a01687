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
  GArray *call;            /* guint: framework call each op belongs to */
} GsRtPlan;

void gs_rt_plan_init (GsRtPlan *p);
void gs_rt_plan_clear (GsRtPlan *p);

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
