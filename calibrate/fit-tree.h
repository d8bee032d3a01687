/* gpusim: learning kernel-selection rules (a CART decision tree).
 *
 * Each training example is a shape's feature vector (gs_gemm_features),
 * the kernel family the library picked and its split-K factor.  The
 * classes are (family, split-K) pairs: a wrong split-K costs more than a
 * similar tile.  The tree splits on the feature and threshold that most
 * reduce the Gini impurity of the classes, down to a depth and leaf-size
 * limit; a leaf names its most common class.  Thresholds are the shortest
 * decimals between the two neighbouring values, so a tree written out
 * and read back decides exactly as learned.  Deterministic: ties go to
 * the lower feature index, the lower threshold and the first class in
 * (family, split-K) order.
 */
#ifndef GS_FIT_TREE_H
#define GS_FIT_TREE_H

#include <glib.h>
#include "workloads/gemm.h"

typedef struct {
  double f[GS_GEMM_N_FEATURES];
  const char *label;       /* family key (not owned) */
  int split;
} GsTreeExample;

typedef struct {
  int max_depth;
  int min_leaf;            /* examples per leaf, at least */
} GsTreeOptions;

/* Learns a tree from N examples (reordered in place). */
GsGemmTree *gs_fit_tree_learn (GsTreeExample *ex, guint n,
                               const GsTreeOptions *opt);

#endif
