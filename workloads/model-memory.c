/* gpusim: bounds on model requests (see model-memory.h). */
#include "config.h"
#include "workloads/model-memory.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/partition.h"

#include <math.h>
#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

static double
layer_passes (const GsHfConfig *cfg, const GsModelSize *s)
{
  double layers = (double) cfg->layers + cfg->dec_layers;
  double passes = layers * (1.0 + s->gen_built) * (s->training ? 3 : 1);
  return cfg->experts > 0 ? passes * (1.0 + cfg->experts / 8.0) : passes;
}

gboolean
gs_model_check_size (const GsHfConfig *cfg, const GsModelSize *s,
                     GError **error)
{
  double passes = layer_passes (cfg, s);
  if (passes > GS_MODEL_MAX_LAYER_PASSES)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: %d layers%s%s need %.0f layer passes; gpusim builds "
                   "at most %d per run (fewer --gen-tokens or "
                   "--decode-samples)", cfg->file,
                   cfg->layers + cfg->dec_layers,
                   s->gen > 0 ? " generating tokens" : "",
                   s->training ? " in training" : "", passes,
                   GS_MODEL_MAX_LAYER_PASSES);
      return FALSE;
    }
  /* Every token's hidden state and, with eager attention, every head's
   * scores exist at once: the largest tensors, bounded before any size is
   * multiplied out in integers. */
  double ctx = (double) s->seq + s->gen;
  double tokens = (double) s->batch * ctx;
  double width = MAX (MAX (cfg->hidden, cfg->ffn), cfg->vocab);
  double elems = tokens * width;
  if (s->eager_attn)
    elems = MAX (elems, (double) s->batch * cfg->heads * ctx * ctx);
  if (elems > (double) GS_MODEL_MAX_TENSOR_ELEMS)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
                   "%s: batch %d x %.0f tokens makes tensors of %.3g "
                   "elements, beyond any GPU's memory; use a smaller --batch "
                   "or --seq", cfg->file, s->batch, ctx, elems);
      return FALSE;
    }
  return TRUE;
}

/* Bytes PyTorch's caching allocator hands out for a tensor of BYTES: it
 * rounds every request up to a multiple of 512 bytes (kMinBlockSize,
 * round_size in c10/cuda/CUDACachingAllocator.cpp). */
static double
allocated (double bytes)
{
  return bytes > 0 ? ceil (bytes / 512.0) * 512.0 : 0;
}

/* A node that writes into its first input's storage: a view (launches
 * nothing) or an in-place op (aten's trailing underscore); AccumulateGrad
 * writes into the .grad, counted with the gradients. */
static gboolean
aliases_input (const GsMgNode *n)
{
  if (n->n_in == 0 || n->in[0] < 0 || n->accumulate)
    return FALSE;
  if (n->op.kind == GS_OP_KIND_COUNT)
    return TRUE;
  const char *name = n->op.name;
  size_t len = name ? strlen (name) : 0;
  return len > 1 && name[len - 1] == '_' && name[len - 2] != '_';
}

/* Each value's storage: itself, or for the output of a view or an
 * in-place op the storage of its first input.  Memory is counted per
 * storage, once, whole (a saved view keeps its whole base alive). */
static int *
storage_roots (const GsMg *g)
{
  int *root = g_new (int, g->values->len);
  for (guint v = 0; v < g->values->len; v++)
    root[v] = (int) v;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const GsMgNode *n = &g_array_index (g->nodes, GsMgNode, i);
      if (n->out >= 0 && aliases_input (n))
        root[n->out] = root[n->in[0]];
    }
  return root;
}

/* Whether storage R is a parameter's or a gradient's (counted apart). */
static gboolean
state_storage (const GsMg *g, int r)
{
  const GsMgValue *val = &g_array_index (g->values, GsMgValue, r);
  return val->param || val->pgrad;
}

/* Training keeps every input of a forward GEMM for its backward (dW needs
 * X, dX needs W): summed once per value, what autograd saves at the least
 * (the compiled runtime's partitioner recomputes the rest, docs/models.md
 * "Device memory"). */
static double
saved_gemm_inputs (const GsMg *g, const int *root, guint8 *seen)
{
  double sum = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const GsMgNode *n = &g_array_index (g->nodes, GsMgNode, i);
      if (n->op.kind != GS_OP_GEMM || n->op.phase != GS_PHASE_FORWARD)
        continue;
      for (guint j = 0; j < n->n_in; j++)
        {
          int r = n->in[j] >= 0 ? root[n->in[j]] : -1;
          if (r < 0 || seen[r])
            continue;
          seen[r] = 1;
          const GsMgValue *val = &g_array_index (g->values, GsMgValue, r);
          if (!state_storage (g, r))
            sum += (double) val->elems * gs_mg_val_esize (g, r);
        }
    }
  return sum;
}

/* What eager autograd keeps from the forward until the backward has used
 * it: every value the forward (or the loss) produced that a backward
 * kernel reads (a GEMM's input for dW, a softmax's output, a GELU's
 * input, a layer norm's input), once each, plus the dropout masks, one
 * byte an element.  For a GPT layer this is Korthikanti et al.'s
 * 34 s b h + 5 a s^2 b bytes in 16 bits (tests/test-memory.c). */
static double
saved_for_backward (const GsMg *g, const int *root, guint8 *seen)
{
  guint nv = g->values->len;
  g_autofree guint8 *forward = g_new0 (guint8, nv);
  /* With checkpointed layers, what a layer saves exists only while its
   * backward runs (after its forward is run again): the peak holds one
   * layer's, the largest, beside what lies outside the layers and the
   * inputs each checkpoint keeps. */
  gboolean ckpt = g->opt.checkpoint;
  int layers = gs_mg_layer_count (g);
  g_autofree double *layer = g_new0 (double, layers + 1);
  double sum = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const GsMgNode *n = &g_array_index (g->nodes, GsMgNode, i);
      int L = ckpt ? n->op.layer : -1;
      if (n->op.phase == GS_PHASE_FORWARD || n->op.phase == GS_PHASE_LOSS)
        {
          if (n->out >= 0)
            forward[n->out] = 1;
          if (n->op.kind != GS_OP_KIND_COUNT)
            *(L >= 0 ? &layer[L] : &sum) += (double) n->op.n_mask_out
                                            * (double) gs_op_elems (&n->op);
          continue;
        }
      if (n->op.phase != GS_PHASE_BACKWARD)
        continue;
      for (guint j = 0; j < n->n_in; j++)
        {
          int v = n->in[j];
          int r = v >= 0 ? root[v] : -1;
          if (v < 0 || !forward[v] || seen[r])
            continue;
          /* A view of a weight (a tied LM head's) is the weight. */
          const GsMgValue *val = &g_array_index (g->values, GsMgValue, r);
          if (state_storage (g, r) || val->cache)
            continue;
          int P = val->producer >= 0
                  ? g_array_index (g->nodes, GsMgNode, val->producer).op.layer
                  : -1;
          /* A recomputed layer reads what its checkpoint kept, its inputs;
           * its own values are made again. */
          if (n->recompute && P == n->op.layer)
            continue;
          seen[r] = 1;
          double bytes = (double) val->elems * gs_mg_val_esize (g, r);
          *(ckpt && !n->recompute && P >= 0 ? &layer[P] : &sum) += bytes;
        }
    }
  double peak = 0;
  for (int i = 0; i < layers; i++)
    peak = MAX (peak, layer[i]);
  return sum + peak;
}

/* A storage freed after a node. */
typedef struct {
  guint node;
  int root;
} Release;

static gint
release_cmp (gconstpointer a, gconstpointer b)
{
  const Release *x = a, *y = b;
  if (x->node != y->node)
    return x->node < y->node ? -1 : 1;
  return (x->root > y->root) - (x->root < y->root);
}

/* The most bytes of activations eager PyTorch holds at once while G runs,
 * parameters and their gradients left out (counted whole beside it);
 * ROOT is storage_roots (G), READ_AS the compiled runtime's
 * GsRtPlan.read_as (NULL: eager, every value in memory).
 * Every tensor is allocated when the op that writes it runs and freed
 * after the last op that reads it (a view or an in-place op shares its
 * input's storage and keeps it alive): what reference counting does when
 * nothing else holds the tensor.  Autograd's saved tensors are read by
 * the backward, so they live until then; a dropout's mask lives from the
 * forward to the backward kernel that reads it (the backward takes the
 * masks in the reverse order); graph outputs and KV caches live to the
 * end; inputs (the token ids, a decode step's cache of the earlier
 * tokens) exist from the start; so do the K and V a forward returns in
 * past_key_values.  A checkpointed layer's tensors live twice: in its
 * forward, until the forward has read them, and again from its
 * recomputation to the last backward kernel that reads them.  What
 * Python frames hold longer (a module's locals until it returns) is not
 * counted. */
/* An allocation (BYTES > 0) or a free (BYTES < 0) of storage ID (a value,
 * or nv + node for a dropout mask) at NODE, for the allocator's walk. */
typedef struct {
  guint node;
  double bytes;
  guint id;
} AllocEvent;

static void
alloc_event (GArray *events, guint node, double bytes, guint id)
{
  if (events == NULL || bytes == 0)
    return;
  AllocEvent e = { node, bytes, id };
  g_array_append_val (events, e);
}

static double
peak_activations (const GsMg *g, const int *root, const int *read_as,
                  GArray *events)
{
  guint nv = g->values->len, nn = g->nodes->len;
  gboolean ckpt = g->opt.checkpoint;
  /* Per storage (root): its last reader, its last forward reader, its
   * last backward reader, and whether a backward node of another layer
   * than its producer's reads it (then it is a checkpoint's input, kept
   * from the forward on). */
  g_autofree guint *last = g_new0 (guint, nv);
  g_autofree guint *fw_last = g_new0 (guint, nv);
  g_autofree guint *bw_last = g_new0 (guint, nv);
  g_autofree guint8 *other = g_new0 (guint8, nv);
  g_autofree double *bytes = g_new0 (double, nv);
  g_autofree guint8 *hold = g_new0 (guint8, nv);
  g_autofree guint8 *alive = g_new0 (guint8, nv);
  /* A recomputing node's original (G_MAXUINT: none): recompute_layer
   * copies a layer's forward nodes in order. */
  g_autofree guint *orig = g_new (guint, nn);
  int layers = gs_mg_layer_count (g);
  g_autoptr (GPtrArray) forward = g_ptr_array_new_with_free_func (
    (GDestroyNotify) g_array_unref);
  g_autofree guint *cursor = g_new0 (guint, layers + 1);
  for (int l = 0; l < layers; l++)
    g_ptr_array_add (forward, g_array_new (FALSE, FALSE, sizeof (guint)));
  guint next_value = 0;
  for (guint i = 0; i < nn; i++)
    {
      const GsMgNode *n = &g_array_index (g->nodes, GsMgNode, i);
      int L = n->op.layer;
      orig[i] = G_MAXUINT;
      if (ckpt && L >= 0 && L < layers)
        {
          GArray *f = forward->pdata[L];
          if (!n->recompute && n->op.phase == GS_PHASE_FORWARD)
            g_array_append_val (f, i);
          else if (n->recompute && cursor[L] < f->len)
            orig[i] = g_array_index (f, guint, cursor[L]++);
        }
      /* An input nothing reads goes with the node after it is made (a
       * decode step's cache of the earlier tokens, which the cat
       * replaces). */
      guint made = n->out >= 0 ? (guint) n->out : next_value;
      for (; next_value < made; next_value++)
        last[next_value] = fw_last[next_value] = i;
      if (n->out >= 0)
        next_value = (guint) n->out + 1;
      gboolean bw = n->op.phase == GS_PHASE_BACKWARD;
      for (guint j = 0; j <= n->n_in; j++)
        {
          int v = j < n->n_in ? n->in[j] : n->out;
          /* Under the compiled runtime a kernel reads a value a fused
           * kernel did not write from its source. */
          if (v >= 0 && j < n->n_in && read_as != NULL)
            v = read_as[v];
          if (v < 0)
            continue;
          int r = root[v];
          last[r] = MAX (last[r], i);
          if (!bw)
            fw_last[r] = MAX (fw_last[r], i);
          else if (j < n->n_in)
            {
              bw_last[r] = MAX (bw_last[r], i);
              const GsMgValue *rv = &g_array_index (g->values, GsMgValue, r);
              int P = rv->producer >= 0
                      ? g_array_index (g->nodes, GsMgNode,
                                       rv->producer).op.layer : -1;
              other[r] |= L != P;
            }
        }
    }
  for (; next_value < nv; next_value++)
    last[next_value] = fw_last[next_value] = nn;
  double live = 0;
  for (guint v = 0; v < nv; v++)
    {
      const GsMgValue *val = &g_array_index (g->values, GsMgValue, v);
      hold[root[v]] |= val->keep || val->cache || val->held;
    }
  for (guint v = 0; v < nv; v++)
    {
      const GsMgValue *val = &g_array_index (g->values, GsMgValue, v);
      if (root[v] != (int) v || val->param || val->pgrad)
        continue;
      /* Not in memory: kept in a fused kernel's registers (but what the
       * model returns, or what nothing reads, which a kernel writes as
       * the graph's output). */
      gboolean unread = val->producer >= 0 && last[v] == (guint) val->producer;
      if (read_as != NULL && read_as[v] != (int) v && !hold[v] && !unread)
        continue;
      bytes[v] = allocated ((double) val->elems * gs_mg_val_esize (g, v));
      if (val->producer < 0)
        {
          live += bytes[v];
          alive[v] = 1;
        }
    }
  /* Which storages live twice: made by a checkpointed layer's first
   * forward and read again, by that layer's backward alone. */
  g_autofree guint8 *twice = g_new0 (guint8, nv);
  for (guint v = 0; ckpt && v < nv; v++)
    {
      const GsMgValue *val = &g_array_index (g->values, GsMgValue, v);
      if (root[v] != (int) v || val->producer < 0 || bytes[v] == 0)
        continue;
      const GsMgNode *p = &g_array_index (g->nodes, GsMgNode, val->producer);
      twice[v] = p->op.layer >= 0 && !p->recompute
                 && p->op.phase == GS_PHASE_FORWARD && !other[v]
                 && bw_last[v] > 0 && !hold[v];
    }
  /* When each storage is freed, in node order: after its last reader, or
   * for one that lives twice after its forward's last read and after its
   * backward's. */
  g_autoptr (GArray) frees = g_array_new (FALSE, FALSE, sizeof (Release));
  for (guint v = 0; v < nv; v++)
    {
      if (root[v] != (int) v || bytes[v] == 0 || hold[v])
        continue;
      int producer = g_array_index (g->values, GsMgValue, v).producer;
      Release f = { twice[v] ? MAX (fw_last[v], (guint) producer) : last[v],
                    (int) v };
      g_array_append_val (frees, f);
      if (twice[v])
        {
          f.node = bw_last[v];
          g_array_append_val (frees, f);
        }
    }
  g_array_sort (frees, release_cmp);
  guint next = 0;
  g_autoptr (GArray) masks = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) mask_ids = g_array_new (FALSE, FALSE, sizeof (guint));
  double peak = live;
  for (guint i = 0; i < nn; i++)
    {
      const GsMgNode *n = &g_array_index (g->nodes, GsMgNode, i);
      /* What the node writes: its output's storage, or for a recomputing
       * node the original's output, made again. */
      int made = n->out;
      if (orig[i] != G_MAXUINT)
        made = g_array_index (g->nodes, GsMgNode, orig[i]).out;
      if (made >= 0 && root[made] == made && !alive[made]
          && (orig[i] == G_MAXUINT || twice[made]))
        {
          live += bytes[made];
          alive[made] = 1;
          alloc_event (events, i, bytes[made], (guint) made);
        }
      double mask = n->op.n_mask_out > 0
                    ? allocated ((double) n->op.n_mask_out
                                 * (double) gs_op_elems (&n->op)) : 0;
      live += mask;
      alloc_event (events, i, mask, nv + i);
      peak = MAX (peak, live);
      /* A checkpointed layer's first forward saves nothing: its masks
       * are made again when it is recomputed. */
      gboolean saves = g->opt.training
                       && (!ckpt || n->recompute || n->op.layer < 0);
      if (mask > 0 && saves)
        {
          guint id = nv + i;
          g_array_append_val (masks, mask);
          g_array_append_val (mask_ids, id);
        }
      else
        {
          live -= mask;
          alloc_event (events, i, -mask, nv + i);
        }
      if (n->op.n_mask_in > 0 && masks->len > 0)
        {
          double m = g_array_index (masks, double, masks->len - 1);
          live -= m;
          alloc_event (events, i, -m,
                       g_array_index (mask_ids, guint, mask_ids->len - 1));
          g_array_set_size (masks, masks->len - 1);
          g_array_set_size (mask_ids, mask_ids->len - 1);
        }
      /* Free what this node read last, an output nothing reads, and an
       * input nothing reads. */
      for (; next < frees->len
             && g_array_index (frees, Release, next).node == i; next++)
        {
          int r = g_array_index (frees, Release, next).root;
          if (alive[r])
            {
              live -= bytes[r];
              alive[r] = 0;
              alloc_event (events, i, -bytes[r], (guint) r);
            }
        }
    }
  return peak;
}

/* The largest activation is one not counted as saved already. */
static GsModelMemory
footprint (const GsMg *g, const int *root, const GsModelSize *s)
{
  GsModelMemory f = { 0 };
  double bytes = gs_dtype_bytes (g->opt.dtype);
  g_autofree guint8 *saved = g_new0 (guint8, g->values->len);
  if (s->training)
    f.saved = g->opt.compiled ? saved_gemm_inputs (g, root, saved)
                              : saved_for_backward (g, root, saved);
  double params = 0, largest = 0, cache = 0;
  for (guint v = 0; v < g->values->len; v++)
    {
      const GsMgValue *val = &g_array_index (g->values, GsMgValue, v);
      if (val->param)
        params += (double) val->elems;
      else if (val->cache)
        cache += (double) val->elems;
      else if (!saved[root[v]] && !state_storage (g, root[v])
               && !g_array_index (g->values, GsMgValue, root[v]).cache)
        largest = MAX (largest,
                       (double) val->elems * gs_mg_val_esize (g, (int) v));
    }
  /* fp8 GEMMs read their weights in FP8: at least those copies exist. */
  f.weights = params * MIN (bytes, gs_dtype_bytes (g->opt.gemm_dtype));
  f.cache = cache * bytes;
  f.largest = largest;
  if (s->training)
    {
      f.grads = params * bytes;
      f.optimizer = s->optimizer ? 2 * params * bytes : 0;
    }
  return f;
}

/* ------------------------------------------------------ the allocator */

/* PyTorch's caching allocator (c10/cuda/CUDACachingAllocator.cpp,
 * PyTorch 2.x): requests of at most 1 MiB come from the small pool, whose
 * segments are 2 MiB; larger ones from the large pool, whose segments
 * are 20 MiB for requests under 10 MiB and the request rounded up to
 * 2 MiB otherwise.  A request takes the smallest free block that holds
 * it (best fit) and splits off the rest when the rest is at least 512
 * bytes (small) or more than 1 MiB (large); a freed block merges with
 * free neighbours of its segment.  Only a request no free block holds
 * calls cudaMalloc for a new segment. */
#define SMALL_SIZE (1 << 20)
#define SMALL_BUFFER (2 << 20)
#define LARGE_BUFFER (20 << 20)
#define MIN_LARGE_ALLOC (10 << 20)
#define ROUND_LARGE (2 << 20)

typedef struct {
  double size;
  int prev, next;          /* neighbours in the segment, -1: none */
  gboolean free, small;
} Block;

/* A free block in a pool's list, which is kept sorted by size (then
 * index) for the best-fit search. */
typedef struct {
  double size;
  int block;
} FreeEntry;

typedef struct {
  GArray *blocks;          /* Block */
  GArray *free[2];         /* FreeEntry, sorted: the large pool, the small */
  guint mallocs;
} Allocator;

/* The first entry of LIST not before (SIZE, BLOCK). */
static guint
free_lower_bound (const GArray *list, double size, int block)
{
  guint lo = 0, hi = list->len;
  while (lo < hi)
    {
      guint mid = lo + (hi - lo) / 2;
      const FreeEntry *e = &g_array_index (list, FreeEntry, mid);
      if (e->size < size || (e->size == size && e->block < block))
        lo = mid + 1;
      else
        hi = mid;
    }
  return lo;
}

static void
free_list_add (Allocator *a, int b)
{
  const Block *k = &g_array_index (a->blocks, Block, b);
  GArray *list = a->free[k->small];
  FreeEntry e = { k->size, b };
  g_array_insert_val (list, free_lower_bound (list, k->size, b), e);
}

static void
free_list_remove (Allocator *a, int b)
{
  const Block *k = &g_array_index (a->blocks, Block, b);
  GArray *list = a->free[k->small];
  guint i = free_lower_bound (list, k->size, b);
  g_assert (i < list->len
            && g_array_index (list, FreeEntry, i).block == b);
  g_array_remove_index (list, i);
}

static int
block_new (Allocator *a, double size, gboolean small, int prev, int next)
{
  Block nb = { size, prev, next, TRUE, small };
  g_array_append_val (a->blocks, nb);
  return (int) a->blocks->len - 1;
}

static int
allocator_alloc (Allocator *a, double bytes)
{
  gboolean small = bytes <= SMALL_SIZE;
  GArray *list = a->free[small];
  guint i = free_lower_bound (list, bytes, -1);
  int best;
  if (i < list->len)
    best = g_array_index (list, FreeEntry, i).block;
  else
    {
      double seg = small ? SMALL_BUFFER
                   : bytes < MIN_LARGE_ALLOC ? LARGE_BUFFER
                   : ceil (bytes / ROUND_LARGE) * ROUND_LARGE;
      best = block_new (a, seg, small, -1, -1);
      free_list_add (a, best);
      a->mallocs++;
    }
  free_list_remove (a, best);
  Block *k = &g_array_index (a->blocks, Block, best);
  double rest = k->size - bytes;
  if (small ? rest >= 512 : rest > SMALL_SIZE)
    {
      int next = k->next;
      int r = block_new (a, rest, small, best, next);
      k = &g_array_index (a->blocks, Block, best);   /* the array moved */
      k->size = bytes;
      k->next = r;
      if (next >= 0)
        g_array_index (a->blocks, Block, next).prev = r;
      free_list_add (a, r);
    }
  k->free = FALSE;
  return best;
}

/* Block L takes in its right neighbour R (R already off the free list). */
static void
absorb (Allocator *a, int l, int r)
{
  Block *kl = &g_array_index (a->blocks, Block, l);
  const Block *kr = &g_array_index (a->blocks, Block, r);
  kl->size += kr->size;
  kl->next = kr->next;
  if (kr->next >= 0)
    g_array_index (a->blocks, Block, kr->next).prev = l;
}

/* Frees block B, merged with its free neighbours. */
static void
allocator_free (Allocator *a, int b)
{
  Block *k = &g_array_index (a->blocks, Block, b);
  k->free = TRUE;
  int n = k->next, p = k->prev;
  if (n >= 0 && g_array_index (a->blocks, Block, n).free)
    {
      free_list_remove (a, n);
      absorb (a, b, n);
    }
  if (p >= 0 && g_array_index (a->blocks, Block, p).free)
    {
      free_list_remove (a, p);
      absorb (a, p, b);
      b = p;
    }
  free_list_add (a, b);
}

/* The cudaMalloc calls of G's tensors' EVENTS (peak_activations' walk)
 * from an emptied cache, per op gs_rt_eager launches (see
 * gs_model_check_memory). */
static GArray *
walk_allocator (const GsMg *g, const GArray *events)
{
  guint nn = g->nodes->len, nv = g->values->len;
  g_autofree guint *per_node = g_new0 (guint, nn + 1);
  g_autofree int *block_of = g_new (int, nv + nn + 1);
  for (guint i = 0; i < nv + nn + 1; i++)
    block_of[i] = -1;
  Allocator a = { g_array_new (FALSE, FALSE, sizeof (Block)),
                  { g_array_new (FALSE, FALSE, sizeof (FreeEntry)),
                    g_array_new (FALSE, FALSE, sizeof (FreeEntry)) }, 0 };
  for (guint e = 0; e < events->len; e++)
    {
      const AllocEvent *ev = &g_array_index (events, AllocEvent, e);
      if (ev->bytes > 0)
        {
          guint before = a.mallocs;
          block_of[ev->id] = allocator_alloc (&a, ev->bytes);
          per_node[MIN (ev->node, nn)] += a.mallocs - before;
        }
      else if (block_of[ev->id] >= 0)
        {
          allocator_free (&a, block_of[ev->id]);
          block_of[ev->id] = -1;
        }
    }
  g_array_unref (a.blocks);
  g_array_unref (a.free[0]);
  g_array_unref (a.free[1]);
  /* Per op: the kernel nodes in order, host-only nodes' allocations
   * carried to the next kernel. */
  GArray *ops = g_array_new (FALSE, TRUE, sizeof (guint));
  guint carry = 0;
  for (guint i = 0; i < nn; i++)
    {
      const GsMgNode *n = &g_array_index (g->nodes, GsMgNode, i);
      carry += per_node[i];
      if (n->op.kind == GS_OP_KIND_COUNT)
        continue;
      g_array_append_val (ops, carry);
      carry = 0;
    }
  return ops;
}

double
gs_model_peak_compiled (const GsMg *g, const int *read_as,
                        const GsModelMemory *m)
{
  g_autofree int *root = storage_roots (g);
  return m->weights + m->grads + m->optimizer
         + peak_activations (g, root, read_as, NULL);
}

gboolean
gs_model_check_memory (const GsMg *g, const GsMg *last,
                       const GsHfConfig *cfg, const GsModelSize *s,
                       const GsArch *arch, GsModelMemory *mem,
                       GArray **mallocs, GError **error)
{
  g_autofree int *root = storage_roots (g);
  g_autofree int *last_root = last != NULL ? storage_roots (last) : NULL;
  GsModelMemory f = footprint (g, root, s);
  if (last != NULL)
    {
      GsModelMemory l = footprint (last, last_root, s);
      f.cache = l.cache;
      f.largest = MAX (f.largest, l.largest);
    }
  /* The peak: the persistent state beside the most activations held at
   * once, in the prefill or in the last decode step. */
  if (!g->opt.compiled)
    {
      /* The same walk drives the allocator's. */
      g_autoptr (GArray) events = mallocs && last == NULL
        ? g_array_new (FALSE, FALSE, sizeof (AllocEvent)) : NULL;
      double act = peak_activations (g, root, NULL, events);
      if (events != NULL)
        *mallocs = walk_allocator (g, events);
      if (last != NULL)
        act = MAX (act, peak_activations (last, last_root, NULL, NULL));
      /* Not bounded by the total above: a tensor saved through two views
       * counts twice there, once here (docs/models.md, "Device
       * memory"). */
      f.peak = f.weights + f.grads + f.optimizer + act;
    }
  if (mem != NULL)
    *mem = f;
  if (arch == NULL)
    return TRUE;
  double need = gs_model_memory_total (&f);
  /* An unknown profile is left to gs_partition_apply, which names the
   * valid ones. */
  double gib = gs_partition_memory_gib (arch, s->mig);
  gboolean mig = s->mig != NULL && *s->mig && gib >= 0;
  if (gib < 0)
    gib = arch->dram_gib;
  if (mem != NULL)
    mem->device = gib * GIB;
  if (need <= gib * GIB)
    return TRUE;
  g_autofree char *state = s->training
    ? g_strdup_printf (", gradients%s %.1f GiB",
                       s->optimizer ? " and optimizer state" : "",
                       (f.grads + f.optimizer) / GIB)
    : g_strdup ("");
  g_autofree char *cache = f.cache > 0
    ? g_strdup_printf (", KV cache %.1f GiB", f.cache / GIB) : g_strdup ("");
  g_autofree char *where = mig
    ? g_strdup_printf ("the %g GiB of device memory of %s's MIG %s instance "
                       "(memory_gb)", gib, arch->name, s->mig)
    : g_strdup_printf ("%s's %g GiB of device memory (dram.size_gib)",
                       arch->name, gib);
  /* Only the remedies that apply: a smaller batch or sequence shrinks
   * the activations and the cache, fewer generated tokens the cache,
   * checkpointed layers a training run's saved activations, a
   * 16-bit dtype halves a 32-bit model's every term (once), a larger MIG
   * profile gives more memory; where the weights and training state
   * alone exceed it, only more memory helps. */
  double have = gib * GIB, fixed = f.weights + f.grads + f.optimizer;
  gboolean smaller = fixed < have;
  gboolean half = gs_dtype_bytes (g->opt.dtype) > 2 && fixed / 2 < have;
  GPtrArray *ways = g_ptr_array_new ();
  if (smaller)
    g_ptr_array_add (ways, "a smaller --batch or --seq");
  if (smaller && s->gen > 1 && f.cache > 0)
    g_ptr_array_add (ways, "fewer --gen-tokens");
  /* Checkpointed layers keep only each layer's input for the backward. */
  if (smaller && s->training && !g->opt.checkpoint && f.saved > 0)
    g_ptr_array_add (ways, "--checkpointing layers");
  if (half)
    g_ptr_array_add (ways, "a 16-bit --dtype");
  if (mig)
    g_ptr_array_add (ways, "a larger MIG profile");
  g_ptr_array_add (ways, "a GPU with more memory");
  GString *fix = g_string_new (smaller ? ""
                               : !s->training ? "the weights alone do not "
                                                "fit: "
                               : s->optimizer ? "the weights, gradients and "
                                                "optimizer state alone do "
                                                "not fit: "
                               : "the weights and gradients alone do not "
                                 "fit: ");
  g_string_append (fix, "use ");
  for (guint i = 0; i < ways->len; i++)
    g_string_append_printf (fix, "%s%s", i == 0 ? ""
                                        : i + 1 == ways->len ? " or " : ", ",
                            (const char *) ways->pdata[i]);
  g_ptr_array_free (ways, TRUE);
  g_set_error (error, GS_ERROR, GS_ERROR_PREDICT,
               "%s: batch %d x seq %d does not fit in %s: it needs at least "
               "%.1f GiB (weights %.1f GiB%s%s, activations %.1f GiB); %s",
               cfg->file, s->batch, s->seq, where, need / GIB,
               f.weights / GIB, cache, state, (f.saved + f.largest) / GIB,
               fix->str);
  g_string_free (fix, TRUE);
  return FALSE;
}
