/* gpusim: the compiled runtime (torch.compile with Inductor, PyTorch 2.1
 * defaults).
 *
 * What Inductor does with a Transformer graph, as modelled here:
 *  - GEMMs (mm, addmm, bmm) and fused attention stay library calls
 *    (extern_kernels.*); ops Inductor cannot generate (nonzero, sort,
 *    topk, cumsum) fall back to their eager kernels.
 *  - everything else is generated Triton code.  Its scheduler fuses a
 *    node into a kernel of the same graph when they share a buffer (a
 *    producer feeds it, or both read the same input) and their iteration
 *    spaces match: the same number of elements, or the rows of a row
 *    reduction (layer norm's statistics, softmax's max and sum) that the
 *    kernel already computes.  A reduction over the other axis (a bias or
 *    weight gradient summed over tokens) joins a pointwise kernel but not
 *    a row reduction.  Library calls in between do not stop it (the
 *    dropout backward and the bias gradient after the two GEMMs that read
 *    the dropout's output are one kernel), as long as the kernel can run
 *    where it is launched: everything the node reads is produced before
 *    that or in the kernel itself, or else nothing launched since has
 *    read what the kernel produced, and the kernel is launched later, in
 *    the node's place (the adds summing the q, k and v projections'
 *    input gradients, one after each GEMM, are one kernel).  It looks
 *    back over the last FUSE_WINDOW kernels of the graph.
 *  - views and permutes become index arithmetic: the copies eager matmul
 *    needs fold into the kernel producing the operand when there is one.
 *  - 0-dim constants (torch.full([], c)) are folded into the kernel.
 *  - a fused kernel reads each outside buffer once and writes only what
 *    a later kernel reads.  In training, the partitioner (min-cut
 *    rematerialization) saves the inputs of pointwise chains and
 *    recomputes the chain in the backward kernel; dropout masks are saved.
 *  - nodes marked eager in the graph run outside the compiled graphs, as
 *    eager PyTorch runs them: the loss the caller computes, its backward,
 *    AccumulateGrad, and blocks whose frame Dynamo skips (a graph break
 *    inside a loop: the MoE expert loops).  They end the graph being
 *    fused, but for AccumulateGrad: the compiled backward hands every
 *    parameter's gradient to autograd when it returns, so the .grad adds
 *    run after the graph's kernels.
 */
#include "config.h"
#include "workloads/runtime.h"

#include <string.h>

/* Kernels of the graph being fused a node may join, newest first. */
#define FUSE_WINDOW 16

typedef struct {
  int id;                /* group number (values' group_of) */
  guint first;           /* its first node */
  guint at;              /* the node in whose place it is launched */
  GArray *members;       /* guint node indices, ascending */
  int64_t numel;         /* iteration space */
  int64_t red_rows;      /* rows of its row reduction (0: none) */
  gboolean col_reduce;   /* has a reduction over rows (to columns) */
  gboolean closed;       /* a kernel of its own: nothing joins it */
  GsPhase phase;
  int step;              /* decode step of its members */
  int layer;
} Group;

/* What the graph being fused launches, in order: a generated kernel (a
 * group) or a library call (a node). */
typedef struct {
  Group *group;          /* NULL: node */
  guint node;
} Item;

typedef struct {
  GsMg *g;
  int *alias;            /* value -> the value it views */
  guint *readers_at;     /* value -> its readers in readers (nv + 1) */
  guint *readers;        /* kernel nodes reading each value */
  int *group_of;         /* value -> group producing it (-1: none) */
  int *node_group;       /* node -> its group (-1: none) */
  guint *pos;            /* value -> the node in whose place the kernel
                          * producing it is launched */
  int *recompute;        /* unwritten forward value -> what is read instead
                          * (-2: written) */
  GsRtPlan *plan;
  int n_groups;
  int graph_groups;      /* the first group of the graph being fused */
  GPtrArray *open;       /* Group: the graph's kernels */
  GArray *items;         /* Item: the graph's launches */
  GArray *after;         /* guint: eager nodes run when the graph returns */
  GsRtPending pending;     /* host time since the last launch */
} Fuse;

static int
root (const Fuse *f, int v)
{
  return v < 0 ? v : f->alias[v];
}

static gboolean
is_fallback (const GsOp *op)
{
  static const char *const names[] = {
    "nonzero", "nonzero_select", "radix_sort_pairs", "topk", "cumsum"
  };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    if (strcmp (op->name, names[i]) == 0)
      return TRUE;
  return FALSE;
}

static gboolean
is_extern (const GsOp *op)
{
  return op->kind == GS_OP_GEMM || op->kind == GS_OP_ATTENTION
         || op->kind == GS_OP_OPTIMIZER || is_fallback (op);
}

/* Scatters (index_put, embedding backward) get a kernel of their own. */
static gboolean
is_solo (const GsOp *op)
{
  return (op->kind == GS_OP_EMBEDDING && strcmp (op->name, "embedding") != 0)
         || strcmp (op->name, "scatter_") == 0;
}

static int64_t
node_numel (const GsOp *op)
{
  return op->rows * op->cols;
}

/* ----------------------------------------------------------- analysis */

static void
analyse (Fuse *f)
{
  GsMg *g = f->g;
  guint nv = g->values->len;
  guint nn = g->nodes->len;
  f->alias = g_new (int, nv);
  f->readers_at = g_new0 (guint, nv + 1);
  f->group_of = g_new (int, nv);
  f->node_group = g_new (int, nn);
  f->pos = g_new0 (guint, nv);
  f->recompute = g_new (int, nv);
  for (guint v = 0; v < nv; v++)
    {
      f->alias[v] = (int) v;
      f->group_of[v] = -1;
      f->recompute[v] = -2;
    }
  for (guint i = 0; i < nn; i++)
    {
      const GsMgNode *n = gs_mg_node (g, i);
      f->node_group[i] = -1;
      if (n->op.kind == GS_OP_KIND_COUNT)
        {
          if (n->out >= 0 && n->n_in > 0 && n->in[0] >= 0)
            f->alias[n->out] = f->alias[n->in[0]];
          continue;
        }
      for (int j = 0; j < n->n_in; j++)
        if (root (f, n->in[j]) >= 0)
          f->readers_at[root (f, n->in[j]) + 1]++;
    }
  for (guint v = 0; v < nv; v++)
    f->readers_at[v + 1] += f->readers_at[v];
  f->readers = g_new (guint, MAX (f->readers_at[nv], 1));
  g_autofree guint *fill = g_memdup2 (f->readers_at, nv * sizeof (guint));
  for (guint i = 0; i < nn; i++)
    {
      const GsMgNode *n = gs_mg_node (g, i);
      if (n->op.kind == GS_OP_KIND_COUNT)
        continue;
      for (int j = 0; j < n->n_in; j++)
        if (root (f, n->in[j]) >= 0)
          f->readers[fill[root (f, n->in[j])]++] = i;
    }
}

/* The buffer a kernel reads for value V: the value itself, or where a
 * forward kernel did not write it, the input it is recomputed from. */
static int
source (const Fuse *f, int v)
{
  int r = root (f, v);
  return r >= 0 && f->recompute[r] != -2 ? f->recompute[r] : r;
}

/* ------------------------------------------------------------- grouping */

static gboolean
shares_buffer (const Fuse *f, const Group *grp, const GsMgNode *n,
               int grp_id)
{
  if (n->n_in == 0)
    return TRUE;                 /* a generated constant/mask: free to join */
  for (int j = 0; j < n->n_in; j++)
    {
      int r = root (f, n->in[j]);
      if (r < 0)
        continue;
      if (f->group_of[r] == grp_id)
        return TRUE;
      int s = source (f, r);
      for (guint m = 0; m < grp->members->len; m++)
        {
          const GsMgNode *o = gs_mg_node (f->g, g_array_index (grp->members,
                                                               guint, m));
          for (int k = 0; k < o->n_in; k++)
            if (s >= 0 && source (f, o->in[k]) == s)
              return TRUE;
        }
    }
  return FALSE;
}

/* Can the kernel of GRP compute N where it is launched: is everything N
 * reads produced before it, or in it? */
static gboolean
inputs_ready (const Fuse *f, const Group *grp, const GsMgNode *n)
{
  for (int j = 0; j < n->n_in; j++)
    {
      int r = root (f, n->in[j]);
      if (r >= 0 && f->group_of[r] != grp->id && f->pos[r] >= grp->at)
        return FALSE;
    }
  return TRUE;
}

/* Can the kernel of GRP be launched in node I's place instead: has no
 * node before I read what it produces (but AccumulateGrad, which runs
 * after the graph)? */
static gboolean
can_delay (const Fuse *f, const Group *grp, guint i)
{
  for (guint m = 0; m < grp->members->len; m++)
    {
      int r = root (f, gs_mg_node (f->g, g_array_index (grp->members, guint,
                                                        m))->out);
      if (r < 0)
        continue;
      for (guint k = f->readers_at[r]; k < f->readers_at[r + 1]; k++)
        {
          guint j = f->readers[k];
          if (j < i && f->node_group[j] != grp->id
              && !gs_mg_node (f->g, j)->accumulate)
            return FALSE;
        }
    }
  return TRUE;
}

/* Launches GRP in node I's place. */
static void
delay (Fuse *f, Group *grp, guint i)
{
  grp->at = i;
  for (guint m = 0; m < grp->members->len; m++)
    {
      int r = root (f, gs_mg_node (f->g, g_array_index (grp->members, guint,
                                                        m))->out);
      if (r >= 0)
        f->pos[r] = i;
    }
  for (guint k = 0; k < f->items->len; k++)
    if (g_array_index (f->items, Item, k).group == grp)
      {
        Item it = g_array_index (f->items, Item, k);
        g_array_remove_index (f->items, k);
        g_array_append_val (f->items, it);
        break;
      }
}

/* Can N join the kernel of GRP (launched in its place or, with *LATER,
 * in node I's)? */
static gboolean
can_join (const Fuse *f, const Group *grp, const GsMgNode *n, guint i,
          gboolean *later)
{
  const GsOp *op = &n->op;
  if (grp->members->len == 0 || grp->closed)
    return FALSE;
  if (op->phase != grp->phase || op->step != grp->step || is_solo (op)
      || grp->members->len >= 64)
    return FALSE;
  int64_t numel = node_numel (op);
  gboolean fits = numel == grp->numel
                  || (grp->red_rows > 0 && numel == grp->red_rows);
  if (!fits)
    return FALSE;
  gboolean col = op->kind == GS_OP_REDUCE && op->reduce_dim == 0;
  gboolean row = (op->kind == GS_OP_REDUCE && op->reduce_dim == 1)
                 || op->kind == GS_OP_NORM || op->kind == GS_OP_SOFTMAX;
  if ((col && grp->red_rows > 0) || (row && grp->col_reduce)
      || (col && grp->col_reduce))
    return FALSE;
  if (!shares_buffer (f, grp, n, grp->id))
    return FALSE;
  *later = !inputs_ready (f, grp, n);
  return !*later || can_delay (f, grp, i);
}

/* A new kernel starting with node I, launched in its place. */
static Group *
group_new (Fuse *f, guint i)
{
  const GsOp *op = &gs_mg_node (f->g, i)->op;
  Group *grp = g_new0 (Group, 1);
  grp->id = f->n_groups++;
  grp->first = i;
  grp->at = i;
  grp->members = g_array_new (FALSE, FALSE, sizeof (guint));
  grp->numel = node_numel (op);
  grp->phase = op->phase;
  grp->step = op->step;
  grp->layer = op->layer;
  g_ptr_array_add (f->open, grp);
  Item it = { grp, i };
  g_array_append_val (f->items, it);
  return grp;
}

static void
group_free (gpointer p)
{
  Group *grp = p;
  g_array_unref (grp->members);
  g_free (grp);
}

/* The newest kernel of the graph node I can join, or NULL; delayed to
 * I's place where it has to be.  A node that reads nothing (a fill)
 * shares no buffer: it joins the kernel before it or none. */
static Group *
find_group (Fuse *f, guint i)
{
  const GsMgNode *n = gs_mg_node (f->g, i);
  guint window = n->n_in == 0 ? 1 : FUSE_WINDOW, seen = 0;
  for (guint k = f->open->len; k-- > 0 && seen < window; seen++)
    {
      Group *grp = g_ptr_array_index (f->open, k);
      gboolean later = FALSE;
      if (can_join (f, grp, n, i, &later))
        {
          if (later)
            delay (f, grp, i);
          return grp;
        }
    }
  return NULL;
}

static void
group_add (Fuse *f, Group *grp, guint i)
{
  const GsMgNode *n = gs_mg_node (f->g, i);
  const GsOp *op = &n->op;
  g_array_append_val (grp->members, i);
  f->node_group[i] = grp->id;
  if ((op->kind == GS_OP_REDUCE && op->reduce_dim == 1)
      || op->kind == GS_OP_NORM || op->kind == GS_OP_SOFTMAX)
    grp->red_rows = op->rows;
  if (op->kind == GS_OP_REDUCE && op->reduce_dim == 0)
    grp->col_reduce = TRUE;
  if (n->out >= 0)
    {
      f->group_of[root (f, n->out)] = grp->id;
      f->pos[root (f, n->out)] = grp->at;
    }
}

/* -------------------------------------------------------------- emission */

/* Is a value the group produced needed outside it?  A forward kernel
 * writes what later forward kernels read; the backward recomputes the
 * rest from the kernel's input. */
static gboolean
written (const Fuse *f, const Group *grp, const GsMgNode *n)
{
  int r = root (f, n->out);
  if (r < 0)
    return FALSE;
  if (gs_mg_val (f->g, r)->keep)
    return TRUE;
  gboolean later = FALSE;
  for (guint k = f->readers_at[r]; k < f->readers_at[r + 1]; k++)
    {
      guint j = f->readers[k];
      if (f->node_group[j] == grp->id)
        continue;
      if (grp->phase != GS_PHASE_FORWARD
          || gs_mg_node (f->g, j)->op.phase == GS_PHASE_FORWARD)
        return TRUE;
      later = TRUE;
    }
  /* Dropout's output, when the backward reads it, is saved (random: not
   * recomputable from the group's input); its mask always is (the group's
   * n_mask_out). */
  return later && strcmp (n->op.name, "native_dropout") == 0;
}

static void
add_read (Fuse *f, int r, int64_t numel, GArray *seen, int *full, int *small)
{
  r = source (f, r);                  /* not written: read its source */
  if (r < 0)
    return;
  for (guint k = 0; k < seen->len; k++)
    if (g_array_index (seen, int, k) == r)
      return;
  g_array_append_val (seen, r);
  if (gs_mg_val (f->g, r)->elems >= numel)
    (*full)++;
  else
    (*small)++;
}

static void
emit_group (Fuse *f, Group *grp)
{
  GsMg *g = f->g;
  int gid = grp->id;
  g_autoptr (GArray) seen = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr (GString) names = g_string_new (NULL);
  int full = 0, small = 0, outs = 0, first_in = -1, mask_in = 0,
      mask_out = 0;
  double alu = 0, sfu = 0;
  const GsOp *shape = NULL, *bcast = NULL;
  for (guint m = 0; m < grp->members->len; m++)
    {
      const GsMgNode *n = gs_mg_node (g, g_array_index (grp->members, guint,
                                                        m));
      if (n->op.bcast_elems > 0
          && (bcast == NULL || n->op.bcast_elems > bcast->bcast_elems))
        bcast = &n->op;     /* a mask added in the group: still streamed */
      int ids = 0;
      for (int j = 0; j < n->n_in; j++)
        {
          int r = root (f, n->in[j]);
          if (r < 0 || f->group_of[r] == gid)
            continue;
          ids++;
          if (first_in < 0 && gs_mg_val (g, r)->elems >= grp->numel)
            first_in = r;
          add_read (f, r, grp->numel, seen, &full, &small);
        }
      if (ids == 0 && n->n_in == 0)
        full += n->op.n_in;
      /* Full-size values written; a reduction's result is small. */
      if (written (f, grp, n)
          && gs_mg_val (g, root (f, n->out))->elems >= grp->numel)
        outs++;
      mask_in += n->op.n_mask_in;
      mask_out += n->op.n_mask_out;
      double w = (double) node_numel (&n->op) / (double) grp->numel;
      alu += n->op.alu_per_elem * w;
      sfu += n->op.sfu_per_elem * w;
      g_string_append_printf (names, "%s%s", m ? "+" : "", n->op.name);
      if (shape == NULL || n->op.kind == GS_OP_NORM
          || n->op.kind == GS_OP_SOFTMAX
          || (n->op.kind == GS_OP_REDUCE && shape->kind == GS_OP_ELEMENTWISE))
        shape = &n->op;
    }
  /* Values produced here and not written are recomputed from the group's
   * input by whoever needs them later (backward). */
  for (guint m = 0; m < grp->members->len; m++)
    {
      const GsMgNode *n = gs_mg_node (g, g_array_index (grp->members, guint,
                                                        m));
      if (n->out >= 0 && !written (f, grp, n))
        f->recompute[root (f, n->out)] = first_in;
    }
  GsOp op;
  gs_op_init (&op);
  op.kind = GS_OP_FUSED;
  gboolean red = grp->red_rows > 0 || grp->col_reduce;
  op.name = g_strdup_printf ("triton_%s_fused", red ? "red" : "poi");
  op.fused = g_string_free (g_steal_pointer (&names), FALSE);
  op.tag = g_strdup (shape->tag);
  op.dtype = shape->dtype;
  op.phase = grp->phase;
  op.step = grp->step;
  op.layer = grp->layer;
  op.rows = grp->red_rows > 0 ? grp->red_rows : shape->rows;
  op.cols = grp->numel / op.rows;
  op.reduce_dim = grp->col_reduce ? 0 : 1;
  op.n_in = full;
  op.n_small_in = small;
  if (bcast != NULL && small > 0)
    {
      op.bcast_elems = bcast->bcast_elems;
      op.bcast_period = bcast->bcast_period;
      op.bcast_esize = bcast->bcast_esize;
    }
  op.n_out = red ? outs : MAX (outs, 1);
  op.n_mask_in = mask_in;
  op.n_mask_out = mask_out;
  op.alu_per_elem = alu;
  op.sfu_per_elem = sfu;
  gs_rt_pending_add (&f->pending, GS_HOST_OP,
                     gs_rt_host_ns (GS_HOST_OP, GS_RUNTIME_COMPILED));
  gs_rt_plan_push (f->plan, &op, gs_mg_node (g, grp->first)->call,
                   &f->pending);
}

static void
emit_extern (Fuse *f, const GsMgNode *n)
{
  GsOp op;
  gs_op_copy (&op, &n->op);
  gs_rt_pending_add (&f->pending, GS_HOST_GEMM,
                     gs_rt_host_ns (GS_HOST_GEMM, GS_RUNTIME_COMPILED));
  gs_rt_plan_push (f->plan, &op, n->call, &f->pending);
}

/* A node outside the compiled graphs: launched as eager PyTorch would. */
static void
emit_eager (Fuse *f, const GsMgNode *n)
{
  GsOp op;
  gs_op_copy (&op, &n->op);
  op.eager = TRUE;
  gs_rt_pending_add (&f->pending, n->host, gs_rt_eager_node_ns (n));
  gs_rt_plan_push (f->plan, &op, n->call, &f->pending);
}

/* torch.cat of values that kernels of this graph produce launches
 * nothing: Inductor's ConcatKernel has each producer write its slice of
 * the result (the q, k and v gradients of GPT-2's split c_attn output).
 * The result is there once the last of them has run. */
static gboolean
realized_into (Fuse *f, const GsMgNode *n)
{
  if (n->op.kind != GS_OP_COPY || strcmp (n->op.name, "cat") != 0
      || n->n_in < 2 || n->out < 0)
    return FALSE;
  guint at = 0;
  for (int j = 0; j < n->n_in; j++)
    {
      int r = root (f, n->in[j]);
      if (r < 0 || f->group_of[r] < f->graph_groups)
        return FALSE;
      at = MAX (at, f->pos[r]);
    }
  f->pos[root (f, n->out)] = at;
  return TRUE;
}

/* Launches the graph being fused: its kernels and library calls in
 * order, then the AccumulateGrad adds of the gradients it returned. */
static void
finish_graph (Fuse *f)
{
  for (guint k = 0; k < f->items->len; k++)
    {
      const Item *it = &g_array_index (f->items, Item, k);
      if (it->group != NULL)
        emit_group (f, it->group);
      else
        emit_extern (f, gs_mg_node (f->g, it->node));
    }
  for (guint k = 0; k < f->after->len; k++)
    emit_eager (f, gs_mg_node (f->g, g_array_index (f->after, guint, k)));
  g_array_set_size (f->items, 0);
  g_array_set_size (f->after, 0);
  g_ptr_array_set_size (f->open, 0);
  f->graph_groups = f->n_groups;
}

/* Host-only work: Python glue is gone from compiled graphs, and so are
 * blocking copies inside them (a tensor made from a Python number is a
 * graph constant; a data-dependent read would have broken the graph, and
 * such parts are marked eager).  What runs outside the graphs (its waits
 * included) and graph entries remain, and end the graph being fused: the
 * host time comes after it. */
static void
host_only (Fuse *f, const GsMgNode *n)
{
  if (!n->eager && n->host != GS_HOST_GRAPH)
    return;
  finish_graph (f);
  double ns = n->eager ? gs_rt_eager_node_ns (n)
                       : gs_rt_host_ns (n->host, GS_RUNTIME_COMPILED);
  gs_rt_pending_add (&f->pending, n->host, ns);
}

/* A 0-dim constant Inductor folds into its consumer. */
static gboolean
is_constant (const GsMgNode *n)
{
  return n->op.kind == GS_OP_ELEMENTWISE && n->n_in == 0
         && node_numel (&n->op) <= 1 && n->op.phase == GS_PHASE_FORWARD;
}

void
gs_rt_compiled (GsMg *g, GsRtPlan *plan)
{
  Fuse f = { 0 };
  f.g = g;
  f.plan = plan;
  gs_rt_pending_init (&f.pending);
  analyse (&f);
  f.open = g_ptr_array_new_with_free_func (group_free);
  f.items = g_array_new (FALSE, FALSE, sizeof (Item));
  f.after = g_array_new (FALSE, FALSE, sizeof (guint));
  GsPhase phase = GS_PHASE_COUNT;
  int step = -1;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const GsMgNode *n = gs_mg_node (g, i);
      if (n->op.kind == GS_OP_KIND_COUNT)
        {
          host_only (&f, n);
          continue;
        }
      if (n->accumulate)
        {
          g_array_append_val (f.after, i);
          continue;
        }
      if (n->eager)
        {
          finish_graph (&f);
          emit_eager (&f, n);
          continue;
        }
      if (n->op.phase != phase || n->op.step != step)
        {
          finish_graph (&f);
          phase = n->op.phase;
          step = n->op.step;
        }
      if (is_constant (n) || realized_into (&f, n))
        continue;
      if (is_extern (&n->op))
        {
          Item it = { NULL, i };
          g_array_append_val (f.items, it);
          if (root (&f, n->out) >= 0)
            f.pos[root (&f, n->out)] = i;
          continue;
        }
      Group *grp = find_group (&f, i);
      if (grp == NULL)
        grp = group_new (&f, i);
      group_add (&f, grp, i);
      if (is_solo (&n->op))
        grp->closed = TRUE;
    }
  finish_graph (&f);
  /* Where each value's bytes are: written, or recomputed from a source. */
  plan->read_as = g_new (int, g->values->len);
  for (guint v = 0; v < g->values->len; v++)
    plan->read_as[v] = source (&f, (int) v);
  g_ptr_array_unref (f.open);
  g_array_unref (f.items);
  g_array_unref (f.after);
  g_free (f.alias);
  g_free (f.readers_at);
  g_free (f.readers);
  g_free (f.group_of);
  g_free (f.node_group);
  g_free (f.pos);
  g_free (f.recompute);
}
