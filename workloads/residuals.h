/* gpusim: residual tables, what a calibrated library model still misses
 * on its training rows, and the nearest-neighbour correction built on them.
 *
 * `gpusim calibrate` keeps one entry per training row it predicted from
 * the shape alone: the row's coordinates (log2 of its sizes) and
 * r = log (measured / predicted), in the currency of the model that uses
 * the table (GEMMs: GPU time; memory-bound ops: op latency).  Entries are
 * grouped under a key that says which rows are comparable ("fp32_tn" for
 * the GEMMs of one selector, "fp32_ln" for layer norms).  An op timed
 * alone is corrected by exp of the median r of the GS_RESIDUAL_K entries
 * of its key nearest to it (Euclidean distance over the coordinates),
 * counting only those within GS_RESIDUAL_RADIUS, when at least
 * GS_RESIDUAL_MIN are (docs/kernel-library.md, "Residuals of the training
 * rows").
 *
 * In an arch file (libconfig), one string per key (adjacent literals
 * concatenate), each entry its coordinates then r, ended by ';' (the
 * writer puts 8 to a line):
 *
 *   residuals = {
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
/* Neighbours the median is taken over, the radius (log2 units: a factor
 * of 4 in one size, or of 2 in four) and how many must be within it. */
#define GS_RESIDUAL_K 5
#define GS_RESIDUAL_RADIUS 2.0
#define GS_RESIDUAL_MIN 3
/* How the arch file writes each number; entries are rounded to it when
 * added, so that a table learned in memory predicts exactly what the
 * file written from it does. */
#define GS_RESIDUAL_FMT "%.4f"

typedef struct {
  double f[GS_RESIDUAL_MAX_DIMS]; /* coordinates (DIMS of them used) */
  double r;                       /* log (measured / predicted) */
} GsResidual;

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

/* The correction factor for an op at coordinates F under KEY: exp of the
 * median r of its nearest entries, or 1 when fewer than GS_RESIDUAL_MIN
 * are within the radius (or KEY has none). */
double gs_residuals_scale (const GsResiduals *t, const char *key,
                           const double *f);

/* Adds the entries of GROUP, the `residuals = { ... }` group of an arch
 * file (either form); errors name file:line and the entry
 * (GS_ERROR_INPUT).  Coordinates must lie in [0, 64] and r within +-5. */
gboolean gs_residuals_load (GsResiduals *t, const config_setting_t *group,
                            GError **error);
/* Appends the table as that group, in the string form (a comment line
 * with the legend, keys sorted, INDENT spaces deep); nothing when it is
 * empty. */
void gs_residuals_format (const GsResiduals *t, GString *out, int indent);

#endif
