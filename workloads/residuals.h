/* gpusim: residual tables, what a calibrated library model still misses
 * on its training rows, and the nearest-neighbour correction built on them.
 *
 * `gpusim calibrate` keeps one entry per training row it predicted from
 * the shape alone: the row's coordinates (log2 of its sizes) and
 * r = log (measured / predicted), in the currency of the model that uses
 * the table (GEMMs: GPU time; memory-bound ops: op latency).  Entries are
 * grouped under a key that says which rows are comparable ("fp32_tn" for
 * the GEMMs of one selector, "fp32_ln" for layer norms).  An op timed
 * alone is corrected by exp (shrink x the average r of the entries of its
 * key nearest to it): Euclidean distance over the coordinates, at most
 * `neighbours` of them and only those within GS_RESIDUAL_RADIUS, when at
 * least GS_RESIDUAL_MIN are; the average is their median or their mean
 * without the smallest and the largest.  The table's rule (neighbours,
 * average, shrink) is chosen by the calibration, leave-one-out on the
 * entries themselves (gs_residuals_choose_rule); a table that names none
 * uses the median of 5, unshrunk (docs/kernel-library.md, "Residuals of
 * the training rows").
 *
 * In an arch file (libconfig), one string per key (adjacent literals
 * concatenate), each entry its coordinates then r, ended by ';' (the
 * writer puts 8 to a line):
 *
 *   residuals = {
 *     rule = { neighbours = 9; average = "trimmed"; shrink = 0.75; };
 *     fp32_tn =
 *       "0.0000 12.0000 10.0000 12.0000 -0.0412; 0.0000 12.0000 ..."
 *       "0.0000 12.0000 11.0000 12.0000 0.0170; ...";
 *   };
 *
 * which libconfig reads several times faster than the equivalent list of
 * arrays, `fp32_tn = ( [0.0, 12.0, 10.0, 12.0, -0.0412], ... );`, also
 * accepted (easier to write by hand).
 */
#ifndef GS_RESIDUALS_H
#define GS_RESIDUALS_H

#include <glib.h>
#include <libconfig.h>

/* Coordinates per entry, at most. */
#define GS_RESIDUAL_MAX_DIMS 4
/* The radius (log2 units: a factor of 4 in one size, or of 2 in four),
 * how many entries must be within it, the neighbours a table's rule may
 * take at most and what a table without a rule takes. */
#define GS_RESIDUAL_RADIUS 2.0
#define GS_RESIDUAL_MIN 3
#define GS_RESIDUAL_MAX_K 15
#define GS_RESIDUAL_K 5
/* How the arch file writes each number; entries are rounded to it when
 * added, so that a table learned in memory predicts exactly what the
 * file written from it does. */
#define GS_RESIDUAL_FMT "%.4f"

typedef struct {
  double f[GS_RESIDUAL_MAX_DIMS]; /* coordinates (DIMS of them used) */
  double r;                       /* log (measured / predicted) */
} GsResidual;

typedef enum {
  GS_RESIDUAL_MEDIAN,      /* the middle value (the upper of two) */
  GS_RESIDUAL_TRIMMED      /* the mean without the smallest and largest
                            * (the median when fewer than four) */
} GsResidualAverage;

/* How a table turns its nearest entries into a correction. */
typedef struct {
  guint neighbours;        /* 1 .. GS_RESIDUAL_MAX_K */
  GsResidualAverage average;
  double shrink;           /* 0 .. 1: the share of the average applied */
} GsResidualRule;

typedef struct GsResiduals GsResiduals;

/* An empty table of entries with DIMS coordinates.  LEGEND names the
 * numbers of an entry for the arch file's comment and error messages
 * ("log2 batch, rows, depth, cols, log(implied / simulated GPU time)"). */
GsResiduals *gs_residuals_new (guint dims, const char *legend);
GsResiduals *gs_residuals_copy (const GsResiduals *t);
void gs_residuals_free (GsResiduals *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsResiduals, gs_residuals_free)

/* Number of keys with entries. */
guint gs_residuals_n_keys (const GsResiduals *t);
/* Removes every entry. */
void gs_residuals_clear (GsResiduals *t);
/* Appends an entry under KEY (F: the table's DIMS coordinates), rounded
 * as the arch file writes it. */
void gs_residuals_add (GsResiduals *t, const char *key, const double *f,
                       double r);
/* The entries of KEY (a GArray of GsResidual owned by the table, which a
 * caller may shorten), or NULL. */
GArray *gs_residuals_lookup (const GsResiduals *t, const char *key);

/* The correction factor for an op at coordinates F under KEY: exp of
 * shrink x the average r of its nearest entries, or 1 when fewer than
 * GS_RESIDUAL_MIN are within the radius (or KEY has none). */
double gs_residuals_scale (const GsResiduals *t, const char *key,
                           const double *f);

/* The table's rule; setting one checks its ranges. */
GsResidualRule gs_residuals_rule (const GsResiduals *t);
void gs_residuals_set_rule (GsResiduals *t, const GsResidualRule *rule);

/* The rule in words, for a fit's method line: "trimmed mean of the 9
 * nearest within 2 log2 units, x 0.75" (g_free). */
char *gs_residuals_rule_text (const GsResiduals *t);

/* Chooses the rule that corrects the table's own entries best, each
 * predicted from the others as gs_residuals_scale would (leave one out),
 * over neighbours 3, 5, 9 and 15, both averages and shrinks 1, 0.75,
 * 0.5 and 0 (no correction), and sets it.  The error is the mean
 * |corrected / measured - 1| over all entries; *LOO gets the chosen
 * rule's, *NONE the uncorrected one's (either may be NULL).  An empty
 * table keeps its rule.  Deterministic: ties go to the earlier rule of
 * that list, which starts with the default. */
void gs_residuals_choose_rule (GsResiduals *t, double *loo, double *none);

/* Adds the entries of GROUP, the `residuals = { ... }` group of an arch
 * file (either form); errors name file:line and the entry
 * (GS_ERROR_INPUT).  Coordinates must lie in [0, 64] and r within +-5. */
gboolean gs_residuals_load (GsResiduals *t, const config_setting_t *group,
                            GError **error);
/* Appends the table as that group, in the string form (its rule, a
 * comment line with the legend, keys sorted, INDENT spaces deep); nothing
 * when it is empty. */
void gs_residuals_format (const GsResiduals *t, GString *out, int indent);

#endif
