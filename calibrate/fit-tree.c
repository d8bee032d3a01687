/* gpusim: learning kernel-selection rules (see fit-tree.h). */
#include "config.h"
#include "calibrate/fit-tree.h"

#include <math.h>
#include <string.h>

typedef struct {
  GsTreeExample *ex;
  int *cls;                /* class index per example (parallel to ex) */
  guint n_classes;
  int *class_label;        /* class -> index of its label in the tree */
  int *class_split;        /* class -> its split-K (joint classes) */
  const GsTreeOptions *opt;
  GsGemmTree *tree;
  int *counts;             /* scratch: n_classes x 2 */
  guint *order;            /* scratch permutation */
  guint *tmp;
  double *keys;
} Learner;

/* Stable merge sort of ORDER[0..n) by KEYS[ORDER[i]]. */
static void
sort_by_key (guint *order, guint *tmp, const double *keys, guint n)
{
  for (guint width = 1; width < n; width *= 2)
    {
      for (guint lo = 0; lo < n; lo += 2 * width)
        {
          guint mid = MIN (lo + width, n), hi = MIN (lo + 2 * width, n);
          guint i = lo, j = mid, k = lo;
          while (i < mid && j < hi)
            tmp[k++] = keys[order[j]] < keys[order[i]] ? order[j++]
                                                       : order[i++];
          while (i < mid)
            tmp[k++] = order[i++];
          while (j < hi)
            tmp[k++] = order[j++];
        }
      memcpy (order, tmp, n * sizeof *order);
    }
}

static double
gini_sum (const int *counts, guint nc, int total)
{
  if (total == 0)
    return 0;
  double s = 0;
  for (guint c = 0; c < nc; c++)
    s += (double) counts[c] * counts[c];
  return total - s / total;            /* total x impurity */
}

/* The leaf of examples [lo, hi): the majority class (its label and
 * split-K). */
static GsGemmTreeNode
make_leaf (Learner *L, guint lo, guint hi)
{
  memset (L->counts, 0, L->n_classes * sizeof (int));
  for (guint i = lo; i < hi; i++)
    L->counts[L->cls[i]]++;
  int best = 0;
  for (guint c = 1; c < L->n_classes; c++)
    if (L->counts[c] > L->counts[best])
      best = (int) c;
  GsGemmTreeNode node = { -1, 0, 0, 0, L->class_label[best],
                          L->class_split[best] };
  return node;
}

typedef struct {
  int feature;
  double threshold;
  double score;
} Cut;

/* A threshold between A and B (A < B) with as few decimals as possible,
 * so that the tree reads back exactly as learned. */
static double
round_between (double a, double b)
{
  for (int digits = 0; digits <= 15; digits++)
    {
      double scale = pow (10, digits);
      double t = floor ((a + b) / 2 * scale + 0.5) / scale;
      if (t >= a && t < b)
        return t;
    }
  return a;
}

/* The best cut of [lo, hi) on feature F. */
static void
best_cut_on (Learner *L, guint lo, guint hi, int f, Cut *best)
{
  guint n = hi - lo;
  for (guint i = 0; i < n; i++)
    {
      L->order[i] = lo + i;
      L->keys[lo + i] = L->ex[lo + i].f[f];
    }
  sort_by_key (L->order, L->tmp, L->keys, n);
  int *left = L->counts, *right = L->counts + L->n_classes;
  memset (L->counts, 0, 2 * L->n_classes * sizeof (int));
  for (guint i = lo; i < hi; i++)
    right[L->cls[i]]++;
  guint min_leaf = (guint) MAX (1, L->opt->min_leaf);
  for (guint i = 0; i + 1 < n; i++)
    {
      guint e = L->order[i];
      left[L->cls[e]]++;
      right[L->cls[e]]--;
      double a = L->keys[e], b = L->keys[L->order[i + 1]];
      if (i + 1 < min_leaf || n - i - 1 < min_leaf || !(b > a))
        continue;
      double score = gini_sum (left, L->n_classes, (int) (i + 1))
                     + gini_sum (right, L->n_classes, (int) (n - i - 1));
      if (score < best->score - 1e-9)
        {
          best->score = score;
          best->feature = f;
          best->threshold = round_between (a, b);
        }
    }
}

/* Moves the examples with feature F <= T to the front, keeping their
 * order (stable); returns where the others start. */
static guint
partition (Learner *L, guint lo, guint hi, int f, double t)
{
  guint n = hi - lo, w = 0;
  GsTreeExample *ex = g_new (GsTreeExample, n);
  int *cls = g_new (int, n);
  for (int pass = 0; pass < 2; pass++)
    for (guint i = lo; i < hi; i++)
      if ((L->ex[i].f[f] <= t) == (pass == 0))
        {
          ex[w] = L->ex[i];
          cls[w++] = L->cls[i];
        }
  guint mid = lo;
  for (guint i = lo; i < hi; i++)
    mid += L->ex[i].f[f] <= t;
  memcpy (&L->ex[lo], ex, n * sizeof *ex);
  memcpy (&L->cls[lo], cls, n * sizeof *cls);
  g_free (ex);
  g_free (cls);
  return mid;
}

static int
build (Learner *L, guint lo, guint hi, int depth)
{
  GsGemmTreeNode leaf = make_leaf (L, lo, hi);
  int index = gs_gemm_tree_add (L->tree, &leaf);
  memset (L->counts, 0, L->n_classes * sizeof (int));
  for (guint i = lo; i < hi; i++)
    L->counts[L->cls[i]]++;
  double here = gini_sum (L->counts, L->n_classes, (int) (hi - lo));
  if (depth >= L->opt->max_depth || here < 1e-9
      || hi - lo < 2 * (guint) MAX (1, L->opt->min_leaf))
    return index;
  Cut best = { -1, 0, here };
  for (int f = 0; f < GS_GEMM_N_FEATURES; f++)
    best_cut_on (L, lo, hi, f, &best);
  if (best.feature < 0)
    return index;
  guint mid = partition (L, lo, hi, best.feature, best.threshold);
  GsGemmTreeNode node = { best.feature, best.threshold, 0, 0, 0, 0 };
  node.left = build (L, lo, mid, depth + 1);
  node.right = build (L, mid, hi, depth + 1);
  gs_gemm_tree_set (L->tree, index, &node);
  return index;
}

/* Classes are (label, split-K) pairs: a leaf that mixes split factors
 * would mispredict some, and a wrong split-K costs more than a similar
 * tile.  Sorted by label, then split. */
static gint
cmp_example (gconstpointer a, gconstpointer b)
{
  const GsTreeExample *x = *(GsTreeExample *const *) a;
  const GsTreeExample *y = *(GsTreeExample *const *) b;
  int c = strcmp (x->label, y->label);
  return c ? c : (x->split > y->split) - (x->split < y->split);
}

GsGemmTree *
gs_fit_tree_learn (GsTreeExample *ex, guint n, const GsTreeOptions *opt)
{
  g_return_val_if_fail (n > 0, NULL);
  g_autoptr (GPtrArray) sorted = g_ptr_array_new ();
  for (guint i = 0; i < n; i++)
    g_ptr_array_add (sorted, &ex[i]);
  g_ptr_array_sort (sorted, cmp_example);
  g_autoptr (GPtrArray) labels = g_ptr_array_new ();
  g_autoptr (GArray) cl = g_array_new (FALSE, FALSE, sizeof (int));
  g_autoptr (GArray) cs = g_array_new (FALSE, FALSE, sizeof (int));
  const GsTreeExample *prev = NULL;
  for (guint i = 0; i < n; i++)
    {
      const GsTreeExample *e = sorted->pdata[i];
      if (prev == NULL || strcmp (prev->label, e->label) != 0)
        g_ptr_array_add (labels, (gpointer) e->label);
      if (prev == NULL || cmp_example (&prev, &e) != 0)
        {
          int li = (int) labels->len - 1;
          g_array_append_val (cl, li);
          g_array_append_val (cs, e->split);
        }
      prev = e;
    }
  Learner L = { ex, g_new (int, n), cl->len, (int *) cl->data,
                (int *) cs->data, opt, NULL, g_new (int, 2 * cl->len),
                g_new (guint, n), g_new (guint, n), g_new (double, n) };
  for (guint i = 0; i < n; i++)
    for (guint c = 0; c < cl->len; c++)
      if (strcmp (labels->pdata[g_array_index (cl, int, c)], ex[i].label) == 0
          && g_array_index (cs, int, c) == ex[i].split)
        L.cls[i] = (int) c;
  L.tree = gs_gemm_tree_new ((const char *const *) labels->pdata,
                             labels->len);
  build (&L, 0, n, 0);
  g_free (L.cls);
  g_free (L.counts);
  g_free (L.order);
  g_free (L.tmp);
  g_free (L.keys);
  return L.tree;
}
