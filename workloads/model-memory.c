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

/* Device memory a built graph certainly needs, bytes. */
typedef struct {
  double weights;          /* parameters */
  double cache;            /* every layer's KV cache (the graph checked
                            * holds at most one decode step) */
  double state;            /* training: gradients and Adam's moments */
  double activations;      /* largest tensor; training: + saved GEMM inputs */
} Footprint;

/* Training keeps every input of a forward GEMM for its backward (dW needs
 * X, dX needs W): summed once per value, a lower bound of what autograd
 * saves. */
static double
saved_gemm_inputs (const GsMg *g, double bytes)
{
  g_autofree guint8 *seen = g_new0 (guint8, g->values->len);
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
            sum += (double) val->elems * bytes;
        }
    }
  return sum;
}

static Footprint
footprint (const GsMg *g, const GsModelSize *s)
{
  Footprint f = { 0, 0, 0, 0 };
  double bytes = gs_dtype_bytes (g->opt.dtype);
  double params = 0, largest = 0, cache = 0;
  for (guint v = 0; v < g->values->len; v++)
    {
      const GsMgValue *val = &g_array_index (g->values, GsMgValue, v);
      if (val->param)
        params += (double) val->elems;
      else if (val->cache)
        cache += (double) val->elems;
      else
        largest = MAX (largest, (double) val->elems);
    }
  /* fp8 GEMMs read their weights in FP8: at least those copies exist. */
  f.weights = params * MIN (bytes, gs_dtype_bytes (g->opt.gemm_dtype));
  f.cache = cache * bytes;
  f.activations = largest * bytes;
  if (s->training)
    {
      f.state = params * bytes * (s->optimizer ? 3 : 1);
      f.activations += saved_gemm_inputs (g, bytes);
    }
  return f;
}

gboolean
gs_model_check_memory (const GsMg *g, const GsMg *last,
                       const GsHfConfig *cfg, const GsModelSize *s,
                       const GsArch *arch, GError **error)
{
  if (arch == NULL)
    return TRUE;
  Footprint f = footprint (g, s);
  if (last != NULL)
    {
      Footprint l = footprint (last, s);
      f.cache = l.cache;
      f.activations = MAX (f.activations, l.activations);
    }
  double need = f.weights + f.cache + f.state + f.activations;
  /* An unknown profile is left to gs_partition_apply, which names the
   * valid ones. */
  double gib = gs_partition_memory_gib (arch, s->mig);
  gboolean mig = s->mig != NULL && *s->mig && gib >= 0;
  if (gib < 0)
    gib = arch->dram_gib;
  if (need <= gib * GIB)
    return TRUE;
  g_autofree char *state = s->training
    ? g_strdup_printf (", gradients%s %.1f GiB",
                       s->optimizer ? " and optimizer state" : "",
                       f.state / GIB)
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
  double have = gib * GIB, fixed = f.weights + f.state;
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
               f.weights / GIB, cache, state, f.activations / GIB, fix->str);
  g_string_free (fix, TRUE);
  return FALSE;
}
