/* gpusim: the host (CPU) side of the timeline.
 *
 * Eager PyTorch spends CPU time on every op before its kernel reaches the
 * GPU: Python, the dispatcher, the caching allocator, cudaLaunchKernel.
 * When kernels are short the GPU waits for the host; the engine sees that
 * through each launch's issue time.  The costs below are per unit of each
 * host class (model-graph.h).
 *
 * Sources.  The eager figures come from the per-node timings in
 * data/neusight/e2e-examples/ (V100 host, PyTorch 2.1): the harness times
 * each traced node alone between two CUDA events on an idle GPU (its
 * arguments are moved to the GPU before the timed loop), so a node without
 * GPU work measures host time.  Python-only nodes (int add, getitem on
 * sizes) take 10.2-11.3 us: the harness floor (two event records and the
 * call).  Above that floor:
 *   view / permute / transpose / expand    +5.0 .. +6.4 us
 *   .to()/.type() to the same dtype        +1.0 us
 *   nn.Dropout module in eval              +6.4 .. +7.2 us  (module call)
 *   ones / full / arange (one small kernel) +13.3 .. +14.2 us
 *   rsub / mul of a tiny tensor            +16.4 .. +19.5 us
 *   nn.Tanh module on 8 x 1024             +18.7 us
 *   nn.Linear 1024 -> 2 on 8 rows          +37.9 us
 *   nn.Linear 1024 -> 1024 on 8 rows       +37.5 us
 * A node with a kernel also includes the launch gap (2 us) and the tiny
 * kernel itself (2-6 us), less the Python that returns after the launch
 * while the GPU runs (about 3 us).  So: a view 5 us; a module call 6 us;
 * a pointwise op 12-16 us (13 us taken); nn.Linear minus its module call
 * 26-29 us (26 us taken: cuBLAS's heuristics, handle and workspace
 * lookups and the linear/matmul composite's reshapes come on top of a
 * pointwise op's dispatch).  cudaLaunchKernel itself costs about 4 us per
 * extra kernel of one op (estimate within the 2-5 us that CUDA launch
 * microbenchmarks report).  These describe the host NeuSight measured the
 * V100 on.  Other hosts are the same table times the arch's
 * model_runs.host_ratio (applied where the issue times are set, model.c):
 * the median of the no-kernel method calls (size, view, permute,
 * transpose, dim) of a machine's own per-op profiles over the same median
 * on this host, 14.34 us (55 such nodes in the two files above; the
 * V100's own model-run profiles give 14.34 too).  NeuSight's profiles
 * put the H100's and the A100 40GB's hosts at 0.55-0.57 of it, the A100
 * 80GB's at 0.77, the T4's at 0.91, the L4's at 1.14 (docs/calibration.md).
 *
 * Backward kernels are issued by the autograd engine's C++ thread: no
 * Python, one dispatcher pass and a launch: 15 us each, measured.  The
 * host-bound training runs of data/measured/h100-sxm5-80gb/models-small.csv
 * (BERT-Large and GPT2-Large, batch 1 x 32 tokens, fp32 and bf16; PyTorch
 * 2.11 on a VM) spend 13.2-15.9 us (median 14.8) of backward per backward
 * kernel gpusim issues for them, once divided by that host's ratio to this
 * one, 1.256, which the same file's inference runs give (bench/
 * measured-e2e.py --fit-host).  The estimate it replaces, 6 us, left those
 * backwards 54-62% short and the larger bf16 runs' too (BERT-Large
 * training b2: -55%, now -4%); no backward of NeuSight's runs is bound
 * by its host, so they do not move.  NeuSight's V100 per-node backward
 * times (PyTorch 2.1, this host) agree in size: a backward function
 * called alone spends 4-27 us of host a kernel (median about 12) beyond
 * one that launches none, before the engine's bookkeeping.
 *
 * A blocking copy (the count nonzero reads, item(), a tensor made from a
 * Python number) is cudaMemcpyAsync then cudaStreamSynchronize
 * (c10::cuda::memcpy_and_sync in PyTorch 2.1, used by copy_ unless
 * non_blocking): the host first waits for every kernel it issued, then
 * spends the copy's cost (20 us, estimate).  torch.cuda.synchronize()
 * waits without a copy (5 us, estimate).  The wait itself comes from the
 * simulation (model.c replays the host against simulated kernel times).
 *
 * Compiled (Inductor, PyTorch 2.1 default mode, no CUDA graphs): the
 * generated Python wrapper launches each Triton kernel through its Python
 * launcher and calls extern GEMMs directly; views cost nothing (they are
 * reinterpret_tensor calls folded into the wrapper).  Estimates: 7 us per
 * Triton kernel, 6 us per extern call, 60 us to enter a compiled graph
 * (Dynamo guards and the AOTAutograd wrapper).  Nodes that run outside
 * the compiled graphs (the loss, AccumulateGrad, frames Dynamo skips)
 * cost what they cost in eager.
 */
#include "config.h"
#include "workloads/model.h"
#include "workloads/runtime.h"
#include <string.h>

typedef struct {
  GsHostClass c;
  double eager_ns;
  double compiled_ns;
  const char *what;
} HostCost;

static const HostCost costs[GS_HOST_COUNT] = {
  { GS_HOST_NONE, 0, 0, "second kernel of one op: see launch cost" },
  { GS_HOST_PY, 500, 0, "Python int/size/getattr work" },
  { GS_HOST_VIEW, 5000, 0, "view, permute, transpose, slice" },
  { GS_HOST_MODULE, 6000, 0, "nn.Module call" },
  { GS_HOST_OP, 13000, 7000, "aten op launching a kernel" },
  { GS_HOST_GEMM, 26000, 6000, "matmul / linear (cuBLAS)" },
  { GS_HOST_AUTOGRAD, 15000, 7000, "backward kernel (autograd engine)" },
  { GS_HOST_SYNC, 20000, 20000, "blocking copy, after waiting for the GPU" },
  { GS_HOST_WAIT, 5000, 5000, "torch.cuda.synchronize(), after the wait" },
  { GS_HOST_GRAPH, 0, 60000, "entering a compiled graph (guards, wrappers)" },
};

gboolean
gs_model_host_floor_node (const char *fx_op, const char *fx_target)
{
  static const char *const kinds[] = { "size", "view", "permute",
                                       "transpose", "dim", NULL };
  if (fx_op == NULL || fx_target == NULL
      || strcmp (fx_op, "call_method") != 0)
    return FALSE;
  return g_strv_contains (kinds, fx_target);
}

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
  p->sync_ns = g_array_new (FALSE, FALSE, sizeof (double));
  p->call = g_array_new (FALSE, FALSE, sizeof (guint));
  p->read_as = NULL;
}

void
gs_rt_plan_clear (GsRtPlan *p)
{
  g_clear_pointer (&p->ops, g_array_unref);
  g_clear_pointer (&p->host_ns, g_array_unref);
  g_clear_pointer (&p->sync_ns, g_array_unref);
  g_clear_pointer (&p->call, g_array_unref);
  g_clear_pointer (&p->read_as, g_free);
}

void
gs_rt_pending_init (GsRtPending *p)
{
  p->ns = 0;
  p->sync_ns = -1;
}

void
gs_rt_pending_add (GsRtPending *p, GsHostClass c, double ns)
{
  /* Only the first wait since the last launch matters: a second one finds
   * nothing new to wait for. */
  if ((c == GS_HOST_SYNC || c == GS_HOST_WAIT) && p->sync_ns < 0)
    p->sync_ns = p->ns;
  p->ns += ns;
}

void
gs_rt_plan_push (GsRtPlan *plan, GsOp *op, guint call, GsRtPending *p)
{
  g_array_append_val (plan->ops, *op);
  g_array_append_val (plan->host_ns, p->ns);
  g_array_append_val (plan->sync_ns, p->sync_ns);
  g_array_append_val (plan->call, call);
  gs_rt_pending_init (p);
}

/* ------------------------------------------------------------- eager */

double
gs_rt_eager_node_ns (const GsMgNode *n)
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
  GsRtPending pending;
  gs_rt_pending_init (&pending);
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const GsMgNode *n = gs_mg_node (g, i);
      gs_rt_pending_add (&pending, n->host, gs_rt_eager_node_ns (n));
      if (n->op.kind == GS_OP_KIND_COUNT)
        continue;
      GsOp op;
      gs_op_copy (&op, &n->op);
      gs_rt_plan_push (plan, &op, n->call, &pending);
    }
}
