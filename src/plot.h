/* gpusim: line charts as standalone SVG files (for `gpusim sweep --plot`).
 *
 * A chart has a title, axis labels and one or more series of (x, y)
 * points drawn as lines with markers and a legend.  The y axis starts at 0
 * (times are compared against zero); ticks fall on 1, 2 and 5 times powers
 * of ten.  The x axis is numeric, or categorical when labels are given.
 */
#ifndef GS_PLOT_H
#define GS_PLOT_H

#include <glib.h>
#include <stdio.h>

typedef struct GsPlot GsPlot;

GsPlot *gs_plot_new (const char *title, const char *x_label,
                     const char *y_label);
void gs_plot_free (GsPlot *plot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsPlot, gs_plot_free)

/* Categorical x axis: point x = i sits at LABELS[i] (N labels, copied). */
void gs_plot_set_x_categories (GsPlot *plot, char *const *labels, guint n);

/* A heading over the legend (e.g. the parameter the lines stand for). */
void gs_plot_set_legend_title (GsPlot *plot, const char *title);

/* Adds a series (copied).  Points with a non-finite y are skipped. */
void gs_plot_add_series (GsPlot *plot, const char *label, const double *x,
                         const double *y, guint n);

/* Writes the chart as a standalone SVG document. */
void gs_plot_write_svg (const GsPlot *plot, FILE *out);

/* Tick positions from LO to HI: a step of 1, 2 or 5 x 10^k giving about
 * TARGET intervals.  Returns the step; *FIRST and *N describe the ticks. */
double gs_plot_ticks (double lo, double hi, int target, double *first,
                      int *n);

#endif
