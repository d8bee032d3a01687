/* gpusim: which GEMM kernel the library launches for a shape.
 *
 * Three sources, in order: a measurement's hint (the kernel name and grid
 * it recorded); learned rules, a decision tree per (dtype, layout) fitted
 * to measured kernel choices and kept in the arch file's
 * calibration.library.gemm.select group; and a documented heuristic that
 * covers every shape, dtype and arch without data:
 *
 *   For every configuration cuBLAS has for the arch generation and dtype,
 *   and every split-K factor s in 1..16 that leaves each slice at least
 *   four k stages (none where the unsplit grid fills four waves), estimate
 *     t = waves x (blocks per SM x tile FLOPs / SM peak / efficiency)
 *         + (s > 1: the partial tiles written, read back and reduced)
 *   with waves = ceil(blocks / (blocks per SM x SMs)) and the family's
 *   efficiency, and take the smallest.  That is what a library heuristic
 *   weighs: wave quantization against tile efficiency.
 */
#include "config.h"
#include "workloads/gemm.h"
#include "workloads/mem-model.h"
#include "sim/arch.h"
#include "sim/error.h"
#include "sim/gpu.h"
#include "sim/kernel.h"

#include <math.h>
#include <string.h>

struct GsGemmTree {
  GPtrArray *classes;      /* char * */
  GArray *nodes;           /* GsGemmTreeNode */
  gboolean has_domain;
  double lo[GS_GEMM_N_FEATURES], hi[GS_GEMM_N_FEATURES];
};

/* How far (log2) below its training range a base dimension may be and
 * still use the tree: a factor of two.  Only the low side counts: a shape
 * smaller than any the tree saw is where the library's choice changes in
 * kind (small tiles, split-K, wave quantization), while above the range
 * the large-tile kernels at its top edge stay the library's choice. */
#define DOMAIN_SLACK 1.0
/* The features checked against the domain: rows, cols, depth, batch. */
#define DOMAIN_FEATURES 4

static const char *const feature_names[GS_GEMM_N_FEATURES] = {
  "log2_rows", "log2_cols", "log2_depth", "log2_batch", "log2_waves128",
  "log2_area", "depth_aspect", "log2_work"
};

const char *
gs_gemm_feature_name (int i)
{
  g_return_val_if_fail (i >= 0 && i < GS_GEMM_N_FEATURES, "?");
  return feature_names[i];
}

void
gs_gemm_features (const GsArch *arch, const GsGemmShape *s,
                  double f[GS_GEMM_N_FEATURES])
{
  double r = log2 ((double) s->rows), c = log2 ((double) s->cols);
  double d = log2 ((double) s->depth), b = log2 ((double) s->batch);
  double tiles = ceil (s->rows / 128.0) * ceil (s->cols / 128.0) * s->batch;
  f[0] = r;
  f[1] = c;
  f[2] = d;
  f[3] = b;
  f[4] = log2 (tiles / arch->sm_count);
  f[5] = r + c;
  f[6] = d - 0.5 * (r + c);
  f[7] = r + c + d + b;
}

char *
gs_gemm_selector_key (const GsGemmShape *s)
{
  static const char *const lay[] = { "nn", "nt", "tn", "tt" };
  return g_strdup_printf ("%s_%s", gs_dtype_name (s->dtype), lay[s->layout]);
}

/* ------------------------------------------------------------- heuristic */

/* What the estimate needs of one configuration, computed once. */
typedef struct {
  const GsGemmCfg *cfg;
  int bps;                 /* blocks per SM */
  double rate;             /* FLOP/s one SM reaches with this kernel */
  double lsu;              /* s per FLOP of the SM's smem/L1 pipe, at eff */
  double eff_memory;       /* share of the DRAM bandwidth its loads reach */
  double block_fixed_ns;
  double l2_keep;          /* GsGemmParams.l2_keep: the reduction's L2 */
} Candidate;

/* The estimate's view of CFG on S: blocks per SM, the SM's FLOP rate at
 * the family's efficiency, the time its shared-memory and L1 traffic
 * takes per FLOP at the same efficiency (sim/gpu.c divides both the
 * compute and the smem/L1 time by the kernel's eff_compute), and the
 * share of the DRAM bandwidth its loads reach (sim/gpu.c divides the
 * DRAM time by the kernel's eff_memory). */
static Candidate
candidate (const GsArch *arch, const GsGemmParams *p, const GsGemmShape *s,
           const GsGemmCfg *cfg)
{
  GsGemmFamily fam = gs_gemm_params_family_of (p, cfg, s);
  double peak = gs_arch_peak_flops (arch, s->dtype) / arch->sm_count;
  double eff = fam.eff_compute > 0 ? fam.eff_compute : 1.0;
  Candidate c = { cfg, gs_gemm_blocks_per_sm (arch, cfg, s->layout),
                  peak * fam.eff_compute,
                  gs_gemm_lsu_s_per_flop (arch, cfg, s) / eff,
                  fam.eff_memory > 0 ? fam.eff_memory : 1.0,
                  fam.block_fixed_ns,
                  p != NULL ? p->l2_keep : GS_L2_KEEP_DEFAULT };
  return c;
}

/* Estimated time of a configuration and split-K factor, ns: the waves
 * (an SM of a partial last wave runs only the blocks it holds) times a
 * block's FLOPs at the family's share of the SM peak or its shared-memory
 * and L1 time, whichever is longer, or the DRAM time of the operands (B
 * reread where the kernel's model rereads it), the output and (split-K)
 * the partial tiles, whichever is longer; then, under split-K, the
 * reduction kernel's DRAM time and its launch.  EFF_MEMORY is the share
 * of the DRAM bandwidth the GEMM's loads reach; ALONE_NS (0: not known)
 * the time a block takes alone on its SM, which every wave takes at
 * least. */
static double
estimate_time_ns (const GsArch *arch, const GsGemmShape *s,
                  const Candidate *c, int split, double eff_memory,
                  double alone_ns)
{
  const GsGemmCfg *cfg = c->cfg;
  double tr = cfg->tile_rows, tc = cfg->tile_cols;
  double tiles = ceil (s->rows / tr) * ceil (s->cols / tc);
  double blocks = tiles * s->batch * split;
  double per_wave = (double) c->bps * arch->sm_count;
  double full = floor (blocks / per_wave);
  double rest = blocks - full * per_wave;
  double last = rest > 0 ? MAX (1.0, ceil (rest / arch->sm_count)) : 0;
  double kslice = ceil ((double) s->depth / split / 8) * 8;
  double block_flops = 2 * tr * tc * kslice;
  double per_flop = MAX (1 / c->rate, c->lsu);
  double t = (full * c->bps + last) * block_flops * per_flop * 1e9
             + ceil (blocks / per_wave) * c->block_fixed_ns;
  t = MAX (t, ceil (blocks / per_wave) * alone_ns);
  double bw = gs_arch_dram_bw (arch) * gs_arch_dram_eff (arch);
  double out = (double) s->rows * s->cols * s->batch * 4;
  double mem = gs_gemm_dram_bytes (arch, cfg, s, split, c->bps)
               / (bw * eff_memory) * 1e9;
  /* The reduction is a kernel of its own, after the GEMM: its time adds to
   * the GEMM's, whichever bound the GEMM has.  It reads the partials the
   * GEMM just wrote, from L2 as far as they fit (gemm-kernels.c). */
  double reduce = 0;
  if (split > 1)
    {
      double touched = out * (split + 1);
      double hit = gs_l2_hit (arch, c->l2_keep, touched);
      double l2bw = gs_arch_l2_bw (arch) * gs_arch_l2_eff (arch);
      reduce = MAX (touched / l2bw, touched * (1 - hit) / bw) * 1e9 + 2000;
    }
  return MAX (t, mem) + reduce;
}

/* The time a block of CFG with SPLIT takes alone on an idle SM, ns, as
 * the simulation gives it (sim/gpu.c): bounded by its own warps' issue
 * and latencies, not by the SM's peak. */
static double
block_alone_ns (const GsArch *arch, const GsGemmParams *p,
                const GsGemmShape *s, const GsGemmCfg *cfg, int split)
{
  g_autoptr (GArray) k = g_array_new (FALSE, TRUE, sizeof (GsKernel));
  g_array_set_clear_func (k, (GDestroyNotify) gs_kernel_clear);
  GsGemmChoice choice = { cfg, split };
  gs_gemm_build (arch, p, s, &choice, k);
  return gs_gpu_block_alone_time (arch, &g_array_index (k, GsKernel, 0))
         / 1e3;
}

double
gs_gemm_estimate_ns (const GsArch *arch, const GsGemmParams *p,
                     const GsGemmShape *s, const GsGemmChoice *choice)
{
  Candidate c = candidate (arch, p, s, choice->cfg);
  if (c.bps <= 0)
    return INFINITY;
  return estimate_time_ns (arch, s, &c, choice->split, c.eff_memory,
                           block_alone_ns (arch, p, s, choice->cfg,
                                           choice->split));
}

typedef struct {
  Candidate c;
  int split;
  double t;                /* the estimate without the block's own floor */
  guint order;             /* catalogue order, then split: ties */
} Option;

static int
option_cmp (const void *a, const void *b)
{
  const Option *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* Waves of the unsplit grid from which the heuristic splits no more. */
#define SPLIT_MAX_WAVES 4

gboolean
gs_gemm_select_heuristic (const GsArch *arch, const GsGemmParams *p,
                          const GsGemmShape *s, GsGemmChoice *out)
{
  guint n;
  const GsGemmCfg *cat = gs_gemm_catalogue_for (gs_gemm_gen (arch), s, &n);
  g_autoptr (GArray) opts = g_array_new (FALSE, FALSE, sizeof (Option));
  /* Where the library has fitted tiles for the shape's kind of kernel,
   * the choice is among them: the measurements show which configurations
   * the library runs on this GPU, and the others' efficiencies are only
   * their kind's defaults. */
  gboolean fitted_only = FALSE;
  for (guint i = 0; p != NULL && !fitted_only && i < n; i++)
    fitted_only = gs_gemm_params_fitted (p, &cat[i])
                  && gs_gemm_blocks_per_sm (arch, &cat[i], s->layout) > 0;
  for (guint i = 0; i < n; i++)
    {
      if (fitted_only && !gs_gemm_params_fitted (p, &cat[i]))
        continue;
      Candidate c = candidate (arch, p, s, &cat[i]);
      if (c.bps <= 0)
        continue;
      /* Split-K is for grids that leave the GPU short of work: a grid of
       * SPLIT_MAX_WAVES waves or more is never split (cuBLAS ran the
       * H100's fp32 8192^3 as one kernel, data/public/h100-cublas, where
       * splitting it in two would even out its last wave by 1.6%). */
      double tiles = ceil ((double) s->rows / cat[i].tile_rows)
                     * ceil ((double) s->cols / cat[i].tile_cols) * s->batch;
      int max_split = tiles >= SPLIT_MAX_WAVES * c.bps * arch->sm_count
                      ? 1 : 16;
      for (int split = 1; split <= max_split; split++)
        {
          if (split > 1 && s->depth / split < 4 * cat[i].tile_k)
            break;
          Option o = { c, split,
                       estimate_time_ns (arch, s, &c, split, c.eff_memory, 0),
                       opts->len };
          g_array_append_val (opts, o);
        }
    }
  g_array_sort (opts, option_cmp);
  /* A block is never faster than alone on its SM: a tile of two warps
   * over a long depth slice is held by its own latencies long before the
   * SM's peak (the H100's 32x32 fp32 tile with split-K 2 on 64 x 16384 x
   * 1024: 46.6 us at the peak, 175 us simulated).  That floor only adds,
   * so the options are timed with it in the order of their estimates
   * without it, until the next cannot win. */
  double best = INFINITY;
  guint best_order = G_MAXUINT;
  out->cfg = NULL;
  out->split = 1;
  for (guint i = 0; i < opts->len; i++)
    {
      Option *o = &g_array_index (opts, Option, i);
      /* No finite estimate (no pipe for the dtype): none can run. */
      if (!isfinite (o->t) || o->t > best
          || (o->t == best && o->order > best_order))
        break;
      double t = estimate_time_ns (arch, s, &o->c, o->split,
                                   o->c.eff_memory,
                                   block_alone_ns (arch, p, s, o->c.cfg,
                                                   o->split));
      if (isfinite (t)
          && (t < best || (t == best && o->order < best_order)))
        {
          best = t;
          best_order = o->order;
          out->cfg = o->c.cfg;
          out->split = o->split;
        }
    }
  return out->cfg != NULL;
}

/* The choice TREE makes for features F, or FALSE when its class is not a
 * kernel of this GPU. */
static gboolean
tree_choice (const GsArch *arch, const GsGemmTree *tree, const GsGemmShape *s,
             const double *f, GsGemmChoice *out)
{
  int split = 1;
  const char *cls = gs_gemm_tree_eval (tree, f, &split);
  const GsGemmCfg *cfg = gs_gemm_cfg_find (gs_gemm_gen (arch), s->dtype, cls);
  if (cfg == NULL || gs_gemm_blocks_per_sm (arch, cfg, s->layout) <= 0)
    return FALSE;
  out->cfg = cfg;
  out->split = MAX (1, split);
  /* A slice needs some depth: never split below one stage each. */
  while (out->split > 1 && s->depth / out->split < cfg->tile_k)
    out->split--;
  return TRUE;
}

guint
gs_gemm_select_votes (const GsArch *arch, const GsGemmParams *p,
                      const GsGemmShape *s, GsGemmChoice *votes)
{
  /* The rules are those of the layout whose fits the shape runs with
   * (gs_gemm_params_layout): the measurements' nn rows are all batched
   * (bmm), their tn rows single GEMMs (nn.Linear).  A single nn GEMM
   * (GPT-2's Conv1D: x @ W with W as stored, and every input-gradient
   * GEMM of a backward) is a plain matrix product whose tile choice
   * follows the tn rules; a batched tn GEMM (attention's q @ k^T on a
   * transposed view, bmm_nt) or nt GEMM (a bmm's backward: a^T @ grad)
   * is a batch of small products that follows the nn ones.  Only the
   * tile configuration comes from there: the kernel still runs its own
   * layout.  Without tn rules a single nn GEMM goes to the heuristic,
   * never to the batched nn rules: those do not
   * hold at batch 1 (the A100 40GB's five batch-1 bmm rows ran 128x32,
   * 32x128 and 32x32_sliced1x4, while its batched rows ran 128x128 3077
   * times in 3082), and a spec-only GPU's one-leaf 128x128 rule
   * (gemm-spec.c) gave the 1024 x 32128-deep input gradient of a 32k
   * vocabulary's head 32 blocks on the A100's 108 SMs.  Without nn rules
   * a batched tn or nt GEMM keeps its own.  Where the arch says its
   * library picks otherwise for x @ W (model_runs.nn_heuristic: on the H100,
   * cuBLAS runs GPT-2's 4096 x 5120 x 1280 Conv1D as a 256x128 split-K
   * kernel, 1.16 ms inside NeuSight's runs, where the nn.Linear rules'
   * 128x64 tile takes 1.45 in the model), a single fp32 nn GEMM takes
   * the heuristic. */
  GsGemmShape rules = *s;
  rules.layout = gs_gemm_params_layout (s);
  char *key = gs_gemm_selector_key (&rules);
  const GsGemmTree *tree = p->trees ? g_hash_table_lookup (p->trees, key)
                                    : NULL;
  if (tree != NULL && gs_gemm_tree_size (tree) == 0)
    tree = NULL;
  if (arch->model_nn_heuristic && s->layout == GS_LAYOUT_NN && s->batch == 1
      && s->dtype == GS_DTYPE_FP32)
    tree = NULL;
  if (tree == NULL && rules.layout != s->layout && s->batch > 1
      && p->trees != NULL)
    {
      g_free (key);
      key = gs_gemm_selector_key (s);
      tree = g_hash_table_lookup (p->trees, key);
    }
  double f[GS_GEMM_N_FEATURES];
  gs_gemm_features (arch, s, f);
  /* A shape far smaller than any the tree saw (64-row expert GEMMs
   * against an H100 tree learned on 512 rows and more) gets the
   * heuristic, not the nearest leaf's extrapolation. */
  if (tree != NULL && !gs_gemm_tree_covers (tree, f))
    tree = NULL;
  guint n = 0;
  if (tree != NULL && gs_gemm_tree_size (tree) > 0)
    {
      if (tree_choice (arch, tree, s, f, &votes[n]))
        n++;
      for (int b = 1; b < GS_GEMM_BAGS; b++)
        {
          g_autofree char *bk = g_strdup_printf ("%s_bag%d", key, b);
          const GsGemmTree *t = g_hash_table_lookup (p->trees, bk);
          if (t == NULL)
            break;
          if (gs_gemm_tree_size (t) > 0
              && tree_choice (arch, t, s, f, &votes[n]))
            n++;
        }
    }
  g_free (key);
  if (n == 0 && gs_gemm_select_heuristic (arch, p, s, &votes[0]))
    n = 1;
  return n;
}

gboolean
gs_gemm_select (const GsArch *arch, const GsGemmParams *p,
                const GsGemmShape *s, GsGemmChoice *out)
{
  GsGemmChoice votes[GS_GEMM_BAGS];
  if (gs_gemm_select_votes (arch, p, s, votes) == 0)
    return FALSE;
  *out = votes[0];
  return TRUE;
}

gboolean
gs_gemm_select_hint (const GsArch *arch, const GsGemmShape *s,
                     const GsKernelHint *hint, GsGemmChoice *out)
{
  if (hint == NULL || hint->kernel == NULL)
    return FALSE;
  const GsGemmCfg *cfg = gs_gemm_cfg_from_name (gs_gemm_gen (arch), s->dtype,
                                                hint->kernel);
  if (cfg == NULL || cfg->kind == GS_GEMM_GEMV
      || gs_gemm_blocks_per_sm (arch, cfg, s->layout) <= 0)
    return FALSE;
  out->cfg = cfg;
  out->split = gs_gemm_split_from_grid (s, hint->grid);
  return TRUE;
}

/* ------------------------------------------------------------------ trees */

GsGemmTree *
gs_gemm_tree_new (const char *const *classes, guint n_classes)
{
  GsGemmTree *t = g_new0 (GsGemmTree, 1);
  t->classes = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < n_classes; i++)
    g_ptr_array_add (t->classes, g_strdup (classes[i]));
  t->nodes = g_array_new (FALSE, TRUE, sizeof (GsGemmTreeNode));
  return t;
}

void
gs_gemm_tree_free (GsGemmTree *t)
{
  if (t == NULL)
    return;
  g_ptr_array_unref (t->classes);
  g_array_unref (t->nodes);
  g_free (t);
}

GsGemmTree *
gs_gemm_tree_copy (const GsGemmTree *t)
{
  GsGemmTree *c = gs_gemm_tree_new ((const char *const *) t->classes->pdata,
                                    t->classes->len);
  g_array_append_vals (c->nodes, t->nodes->data, t->nodes->len);
  if (t->has_domain)
    gs_gemm_tree_set_domain (c, t->lo, t->hi);
  return c;
}

void
gs_gemm_tree_set_domain (GsGemmTree *t, const double *lo, const double *hi)
{
  t->has_domain = TRUE;
  memcpy (t->lo, lo, sizeof t->lo);
  memcpy (t->hi, hi, sizeof t->hi);
}

gboolean
gs_gemm_tree_covers (const GsGemmTree *t, const double *f)
{
  if (!t->has_domain)
    return TRUE;
  for (int i = 0; i < DOMAIN_FEATURES; i++)
    if (f[i] < t->lo[i] - DOMAIN_SLACK)
      return FALSE;
  return TRUE;
}

int
gs_gemm_tree_add (GsGemmTree *t, const GsGemmTreeNode *node)
{
  g_array_append_val (t->nodes, *node);
  return (int) t->nodes->len - 1;
}

void
gs_gemm_tree_set (GsGemmTree *t, int index, const GsGemmTreeNode *node)
{
  g_assert (index >= 0 && (guint) index < t->nodes->len);
  g_array_index (t->nodes, GsGemmTreeNode, index) = *node;
}

guint
gs_gemm_tree_size (const GsGemmTree *t)
{
  return t->nodes->len;
}

const char *
gs_gemm_tree_eval (const GsGemmTree *t, const double *f, int *split)
{
  guint i = 0, steps = 0;
  const GsGemmTreeNode *nodes = (const GsGemmTreeNode *) t->nodes->data;
  while (nodes[i].feature >= 0)
    {
      i = f[nodes[i].feature] <= nodes[i].threshold ? (guint) nodes[i].left
                                                    : (guint) nodes[i].right;
      g_assert (i < t->nodes->len && ++steps <= t->nodes->len);
    }
  *split = nodes[i].split;
  return g_ptr_array_index (t->classes, nodes[i].cls);
}

static gboolean
bad_node (const config_setting_t *s, guint index, const char *what,
          GError **error)
{
  g_autofree char *w = gs_cfg_where (s);
  g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
               "%s: selection tree node %u: %s", w, index, what);
  return FALSE;
}

/* Node INDEX from its four numbers V: (feature, threshold, left, right)
 * or (-1, class, split, 0).  S locates it for messages. */
static gboolean
node_from (const double *v, const config_setting_t *s, guint index,
           guint n_classes, guint n_nodes, GsGemmTreeNode *node,
           GError **error)
{
  for (int j = 0; j < 4; j++)
    if (!isfinite (v[j]) || (j != 1 && (v[j] != floor (v[j])
                                        || fabs (v[j]) > 1e9)))
      return bad_node (s, index, "entries must be numbers (all but the "
                       "threshold whole)", error);
  memset (node, 0, sizeof *node);
  node->feature = (int) v[0];
  if (node->feature < 0)
    {
      node->feature = -1;
      if (v[1] != floor (v[1]) || v[1] < 0 || v[1] >= n_classes)
        return bad_node (s, index, "leaf class is not an index into "
                         "classes", error);
      node->cls = (int) v[1];
      node->split = (int) v[2];
      if (node->split < 1 || node->split > 256)
        return bad_node (s, index, "leaf split-K must be 1..256", error);
      return TRUE;
    }
  if (node->feature >= GS_GEMM_N_FEATURES)
    return bad_node (s, index, "feature index out of range", error);
  node->threshold = v[1];
  node->left = (int) v[2];
  node->right = (int) v[3];
  if (node->left <= 0 || node->right <= 0 || (guint) node->left >= n_nodes
      || (guint) node->right >= n_nodes)
    return bad_node (s, index, "child index out of range", error);
  /* Children come after their parent, so evaluation cannot loop. */
  if (node->left <= (int) index || node->right <= (int) index)
    return bad_node (s, index, "children must come after their parent",
                     error);
  return TRUE;
}

/* The nodes as a list of lists, ( (f, t, l, r), ... ), the readable form;
 * appended to V (4 numbers each), with each node's setting in WHERE. */
static gboolean
nodes_from_list (const config_setting_t *nodes, GArray *v, GPtrArray *where,
                 GError **error)
{
  for (int i = 0; i < config_setting_length (nodes); i++)
    {
      const config_setting_t *e = config_setting_get_elem (nodes, i);
      if ((config_setting_type (e) != CONFIG_TYPE_LIST
           && config_setting_type (e) != CONFIG_TYPE_ARRAY)
          || config_setting_length (e) != 4)
        return bad_node (e, (guint) i, "expected (feature, threshold, left, "
                         "right) or (-1, class, split, 0)", error);
      for (int j = 0; j < 4; j++)
        {
          double x = gs_cfg_number (config_setting_get_elem (e, j));
          g_array_append_val (v, x);
        }
      g_ptr_array_add (where, (gpointer) e);
    }
  return TRUE;
}

/* The nodes as the writer keeps them: one string (adjacent literals
 * concatenate) of "feature threshold left right;" entries, which
 * libconfig reads several times faster than a list of lists. */
static gboolean
nodes_from_string (const config_setting_t *nodes, GArray *v,
                   GPtrArray *where, GError **error)
{
  const char *p = config_setting_get_string (nodes);
  for (guint i = 0;; i++)
    {
      while (g_ascii_isspace (*p))
        p++;
      if (*p == '\0')
        return TRUE;
      for (int j = 0; j < 4; j++)
        {
          char *end;
          double x = g_ascii_strtod (p, &end);
          if (end == p)
            return bad_node (nodes, i, "expected four numbers \"feature "
                             "threshold left right;\"", error);
          g_array_append_val (v, x);
          p = end;
        }
      while (g_ascii_isspace (*p))
        p++;
      if (*p++ != ';')
        return bad_node (nodes, i, "expected four numbers \"feature "
                         "threshold left right;\"", error);
      g_ptr_array_add (where, (gpointer) nodes);
    }
}

/* domain_min or domain_max: one number per feature. */
static gboolean
parse_domain (const config_setting_t *group, const config_setting_t *a,
              double *out, GError **error)
{
  if (a == NULL || config_setting_type (a) != CONFIG_TYPE_ARRAY
      || config_setting_length (a) != GS_GEMM_N_FEATURES)
    {
      g_autofree char *w = gs_cfg_where (a != NULL ? a : group);
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: a selection tree's domain needs domain_min and "
                   "domain_max, arrays of %d numbers (one per feature)", w,
                   GS_GEMM_N_FEATURES);
      return FALSE;
    }
  for (int i = 0; i < GS_GEMM_N_FEATURES; i++)
    {
      const config_setting_t *e = config_setting_get_elem (a, i);
      int ty = config_setting_type (e);
      out[i] = ty == CONFIG_TYPE_FLOAT ? config_setting_get_float (e)
                                       : (double) config_setting_get_int64 (e);
      if (!isfinite (out[i]))
        {
          g_autofree char *w = gs_cfg_where (a);
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s: domain values must be finite numbers", w);
          return FALSE;
        }
    }
  return TRUE;
}

GsGemmTree *
gs_gemm_tree_parse (const config_setting_t *group, GError **error)
{
  config_setting_t *cls = config_setting_get_member (group, "classes");
  config_setting_t *nodes = config_setting_get_member (group, "nodes");
  if (cls == NULL || nodes == NULL
      || config_setting_type (cls) != CONFIG_TYPE_ARRAY
      || (config_setting_type (nodes) != CONFIG_TYPE_LIST
          && config_setting_type (nodes) != CONFIG_TYPE_STRING))
    {
      g_autofree char *w = gs_cfg_where (group);
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: a selection tree needs classes = [\"...\", ...] and "
                   "nodes = \"f t l r; ...\" or ( (f, t, l, r), ... )", w);
      return NULL;
    }
  guint nc = (guint) config_setting_length (cls);
  GPtrArray *names = g_ptr_array_new ();
  for (guint i = 0; i < nc; i++)
    {
      const char *s = config_setting_get_string_elem (cls, i);
      if (s == NULL)
        {
          g_ptr_array_unref (names);
          g_autofree char *w = gs_cfg_where (cls);
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s: classes must be strings", w);
          return NULL;
        }
      g_ptr_array_add (names, (char *) s);
    }
  GsGemmTree *t = gs_gemm_tree_new ((const char *const *) names->pdata, nc);
  g_ptr_array_unref (names);
  g_autoptr (GArray) v = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GPtrArray) where = g_ptr_array_new ();
  gboolean ok = config_setting_type (nodes) == CONFIG_TYPE_STRING
                ? nodes_from_string (nodes, v, where, error)
                : nodes_from_list (nodes, v, where, error);
  guint nn = where->len;
  if (ok && nn == 0)
    ok = bad_node (nodes, 0, "a tree needs at least one node", error);
  for (guint i = 0; ok && i < nn; i++)
    {
      GsGemmTreeNode node;
      ok = node_from (&g_array_index (v, double, 4 * i), where->pdata[i], i,
                      nc, nn, &node, error);
      if (ok)
        gs_gemm_tree_add (t, &node);
    }
  if (!ok)
    {
      gs_gemm_tree_free (t);
      return NULL;
    }
  config_setting_t *dlo = config_setting_get_member (group, "domain_min");
  config_setting_t *dhi = config_setting_get_member (group, "domain_max");
  if (dlo != NULL || dhi != NULL)
    {
      double lo[GS_GEMM_N_FEATURES], hi[GS_GEMM_N_FEATURES];
      if (!parse_domain (group, dlo, lo, error)
          || !parse_domain (group, dhi, hi, error))
        {
          gs_gemm_tree_free (t);
          return NULL;
        }
      for (int i = 0; i < GS_GEMM_N_FEATURES; i++)
        if (lo[i] > hi[i])
          {
            g_autofree char *w = gs_cfg_where (dlo);
            g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                         "%s: domain_min[%d] = %g is above domain_max[%d] = "
                         "%g", w, i, lo[i], i, hi[i]);
            gs_gemm_tree_free (t);
            return NULL;
          }
      gs_gemm_tree_set_domain (t, lo, hi);
    }
  return t;
}

void
gs_gemm_tree_format (const GsGemmTree *t, GString *out, int indent)
{
  g_string_append_printf (out, "%*sclasses = [", indent, "");
  for (guint i = 0; i < t->classes->len; i++)
    g_string_append_printf (out, "%s\"%s\"", i ? ", " : "",
                            (const char *) g_ptr_array_index (t->classes, i));
  g_string_append (out, "];\n");
  g_string_append_printf (out, "%*s# \"feature threshold left right;\" or "
                          "\"-1 class split-K 0;\" per node\n", indent, "");
  g_string_append_printf (out, "%*snodes =", indent, "");
  /* PER_LINE nodes to a string literal (adjacent ones concatenate). */
  const guint per_line = 8;
  for (guint i = 0; i < t->nodes->len; i++)
    {
      const GsGemmTreeNode *n = &g_array_index (t->nodes, GsGemmTreeNode, i);
      if (i % per_line == 0)
        g_string_append_printf (out, "\n%*s\"", indent + 2, "");
      if (n->feature < 0)
        g_string_append_printf (out, "-1 %d %d 0;", n->cls, n->split);
      else
        {
          char th[G_ASCII_DTOSTR_BUF_SIZE];
          g_ascii_formatd (th, sizeof th, "%.15g", n->threshold);
          g_string_append_printf (out, "%d %s %d %d;", n->feature, th,
                                  n->left, n->right);
        }
      g_string_append (out, (i + 1) % per_line == 0 || i + 1 == t->nodes->len
                            ? "\"" : " ");
    }
  g_string_append (out, ";\n");
  if (t->has_domain)
    {
      const double *v[2] = { t->lo, t->hi };
      const char *name[2] = { "domain_min", "domain_max" };
      g_string_append_printf (out, "%*s# training range of each feature "
                              "(the heuristic decides outside it)\n",
                              indent, "");
      for (int j = 0; j < 2; j++)
        {
          g_string_append_printf (out, "%*s%s = [", indent, "", name[j]);
          for (int i = 0; i < GS_GEMM_N_FEATURES; i++)
            {
              char num[G_ASCII_DTOSTR_BUF_SIZE];
              g_ascii_formatd (num, sizeof num, "%.15g", v[j][i]);
              g_string_append_printf (out, "%s%s%s", i ? ", " : "", num,
                                      strpbrk (num, ".en") ? "" : ".0");
            }
          g_string_append (out, "];\n");
        }
    }
}
