/* gpusim: bounds on model requests (see model-memory.h). */
#include "config.h"
#include "workloads/model-memory.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/partition.h"

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

/* Training keeps every input of a forward GEMM for its backward (dW needs
 * X, dX needs W): summed once per value, what autograd saves at the least
 * (the compiled runtime's partitioner recomputes the rest, docs/models.md
 * "Device memory"). */
static double
saved_gemm_inputs (const GsMg *g, guint8 *seen)
{
  double sum = 0;
  for (guint i = 0; i < g->nodes->len; i++)
    {
      const GsMgNode *n = &g_array_index (g->nodes, GsMgNode, i);
      if (n->op.kind != GS_OP_GEMM || n->op.phase != GS_PHASE_FORWARD)
        continue;
      for (guint j = 0; j < n->n_in; j++)
        {
          int v = n->in[j];
          if (v < 0 || seen[v])
            continue;
          seen[v] = 1;
          const GsMgValue *val = &g_array_index (g->values, GsMgValue, v);
          if (!val->param)
            sum += (double) val->elems * gs_mg_val_esize (g, v);
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
saved_for_backward (const GsMg *g, guint8 *seen)
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
          if (v < 0 || !forward[v] || seen[v])
            continue;
          const GsMgValue *val = &g_array_index (g->values, GsMgValue, v);
          if (val->param || val->cache)
            continue;
          int P = val->producer >= 0
                  ? g_array_index (g->nodes, GsMgNode, val->producer).op.layer
                  : -1;
          /* A recomputed layer reads what its checkpoint kept, its inputs;
           * its own values are made again. */
          if (n->recompute && P == n->op.layer)
            continue;
          seen[v] = 1;
          double bytes = (double) val->elems * gs_mg_val_esize (g, v);
          *(ckpt && !n->recompute && P >= 0 ? &layer[P] : &sum) += bytes;
        }
    }
  double peak = 0;
  for (int i = 0; i < layers; i++)
    peak = MAX (peak, layer[i]);
  return sum + peak;
}

/* The largest activation is one not counted as saved already. */
static GsModelMemory
footprint (const GsMg *g, const GsModelSize *s)
{
  GsModelMemory f = { 0 };
  double bytes = gs_dtype_bytes (g->opt.dtype);
  g_autofree guint8 *saved = g_new0 (guint8, g->values->len);
  if (s->training)
    f.saved = g->opt.compiled ? saved_gemm_inputs (g, saved)
                              : saved_for_backward (g, saved);
  double params = 0, largest = 0, cache = 0;
  for (guint v = 0; v < g->values->len; v++)
    {
      const GsMgValue *val = &g_array_index (g->values, GsMgValue, v);
      if (val->param)
        params += (double) val->elems;
      else if (val->cache)
        cache += (double) val->elems;
      else if (!saved[v])
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

gboolean
gs_model_check_memory (const GsMg *g, const GsMg *last,
                       const GsHfConfig *cfg, const GsModelSize *s,
                       const GsArch *arch, GsModelMemory *mem,
                       GError **error)
{
  GsModelMemory f = footprint (g, s);
  if (last != NULL)
    {
      GsModelMemory l = footprint (last, s);
      f.cache = l.cache;
      f.largest = MAX (f.largest, l.largest);
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
   * the activations and the cache, fewer generated tokens the cache, a
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
