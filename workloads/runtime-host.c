/* gpusim: the host (CPU) side of the timeline.
 *
 * Eager PyTorch spends CPU time on every op before its kernel reaches the
 * GPU: Python, the dispatcher, the caching allocator, cudaLaunchKernel.
 * When kernels are short the GPU waits for the host; the engine sees that
 * through each launch's issue time.  The costs below are per unit of each
 * host class (model-graph.h).
 *
 * Sources.  The eager figures come from the per-node timings in
 * data/neusight/e2e-examples/ (V100 host, PyTorch 2.1): each node was timed
 * alone with CUDA events, so a node without GPU work measures the host
 * time between the two events.  Python-only nodes (int add, getitem on
 * sizes) take 10.2-11.3 us: the harness floor.  Above it:
 *   view / permute / transpose            +5.0 .. +6.4 us
 *   .to()/.type() to the same dtype       +1.0 us
 *   nn.Dropout module in eval             +6.4 .. +7.2 us
 *   ones / full / arange (one small kernel)  +13.3 .. +14.2 us
 *   rsub / mul of a tiny tensor           +16.4 .. +19.5 us
 * The harness moves each tensor argument with .cuda() (a no-op call through
 * the dispatcher, about 2 us), which is taken off the tensor-argument rows.
 * A GEMM call adds cuBLAS handle and workspace lookups to an op: taken as
 * 2 us more than a pointwise op (estimate).  cudaLaunchKernel itself costs
 * about 4 us per extra kernel of one op (estimate within the 2-5 us that
 * CUDA launch microbenchmarks report).
 *
 * Backward kernels are issued by the autograd engine's C++ thread: no
 * Python, one dispatcher pass and a launch (estimate: 6 us).
 *
 * Compiled (Inductor, PyTorch 2.1 default mode, no CUDA graphs): the
 * generated Python wrapper launches each Triton kernel through its Python
 * launcher and calls extern GEMMs directly; views cost nothing (they are
 * reinterpret_tensor calls folded into the wrapper).  Estimates: 7 us per
 * Triton kernel, 6 us per extern call, 60 us to enter a compiled graph
 * (Dynamo guards and the AOTAutograd wrapper).
 */
#include "config.h"
#include "workloads/runtime.h"

typedef struct {
  GsHostClass c;
  double eager_ns;
  double compiled_ns;
  const char *what;
} HostCost;

static const HostCost costs[GS_HOST_COUNT] = {
  { GS_HOST_NONE, 0, 0, "second kernel of one op: see launch cost" },
  { GS_HOST_PY, 500, 0, "Python int/size/getattr work" },
  { GS_HOST_VIEW, 3500, 0, "view, permute, transpose, slice" },
  { GS_HOST_MODULE, 6000, 0, "nn.Module call" },
  { GS_HOST_OP, 13000, 7000, "aten op launching a kernel" },
  { GS_HOST_GEMM, 15000, 6000, "matmul / linear (cuBLAS)" },
  { GS_HOST_AUTOGRAD, 6000, 7000, "backward function (autograd engine)" },
  { GS_HOST_SYNC, 20000, 20000, "device-to-host read (wait not modelled)" },
  { GS_HOST_GRAPH, 0, 60000, "entering a compiled graph (guards, wrappers)" },
};

double
gs_rt_host_ns (GsHostClass c, GsRuntime rt)
{
  g_assert (c < GS_HOST_COUNT && costs[c].c == c);
  return rt == GS_RUNTIME_COMPILED ? costs[c].compiled_ns : costs[c].eager_ns;
}

double
gs_rt_launch_ns (GsRuntime rt)
{
  return 4000;
}

void
gs_rt_plan_init (GsRtPlan *p)
{
  p->ops = gs_op_list_new ();
  p->host_ns = g_array_new (FALSE, FALSE, sizeof (double));
  p->call = g_array_new (FALSE, FALSE, sizeof (guint));
}

void
gs_rt_plan_clear (GsRtPlan *p)
{
  g_clear_pointer (&p->ops, g_array_unref);
  g_clear_pointer (&p->host_ns, g_array_unref);
  g_clear_pointer (&p->call, g_array_unref);
}

/* ------------------------------------------------------------- eager */

/* Host time of node N in eager mode, ns. */
static double
eager_node_ns (const GsMgNode *n)
{
  double units = n->op.kind == GS_OP_KIND_COUNT && n->arg > 0 ? n->arg : 1;
  double ns = units * gs_rt_host_ns (n->host, GS_RUNTIME_EAGER);
  if (n->op.kind != GS_OP_KIND_COUNT && n->host == GS_HOST_NONE)
    ns += gs_rt_launch_ns (GS_RUNTIME_EAGER);
  if (n->module)
    ns += gs_rt_host_ns (GS_HOST_MODULE, GS_RUNTIME_EAGER);
  return ns;
}

void
gs_rt_eager (GsMg *g, GsRtPlan *plan)
{
  double pending = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const GsMgNode *n = gs_mg_node (g, i);
      pending += eager_node_ns (n);
      if (n->op.kind == GS_OP_KIND_COUNT)
        continue;
      GsOp op;
      gs_op_copy (&op, &n->op);
      g_array_append_val (plan->ops, op);
      g_array_append_val (plan->host_ns, pending);
      g_array_append_val (plan->call, n->call);
      pending = 0;
    }
}
