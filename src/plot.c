/* gpusim: line charts as standalone SVG (see plot.h). */
#include "config.h"
#include "src/plot.h"

#include <math.h>
#include <string.h>

/* Canvas and margins, SVG user units (pixels).  The right margin grows
 * with the legend's longest label. */
#define PLOT_WIDTH 560.0
#define HEIGHT 480.0
#define LEFT 80.0
#define TOP 50.0
#define BOTTOM 60.0
#define CHAR_WIDTH 7.5       /* of the 12-pixel legend font, at most */
#define MAX_DATA_TICKS 12    /* up to this many x values get a tick each */

/* A colour-blind-safe palette (Okabe and Ito, "Color Universal Design"). */
static const char *const palette[] = {
  "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
  "#F0E442", "#000000"
};

typedef struct {
  char *label;
  GArray *x, *y;           /* double */
} Series;

struct GsPlot {
  char *title, *x_label, *y_label, *legend_title;
  char **categories;       /* NULL: numeric x */
  GPtrArray *series;       /* Series * */
};

static void
series_free (gpointer p)
{
  Series *s = p;
  g_free (s->label);
  g_array_unref (s->x);
  g_array_unref (s->y);
  g_free (s);
}

GsPlot *
gs_plot_new (const char *title, const char *x_label, const char *y_label)
{
  GsPlot *p = g_new0 (GsPlot, 1);
  p->title = g_strdup (title);
  p->x_label = g_strdup (x_label);
  p->y_label = g_strdup (y_label);
  p->series = g_ptr_array_new_with_free_func (series_free);
  return p;
}

void
gs_plot_free (GsPlot *p)
{
  if (p == NULL)
    return;
  g_free (p->title);
  g_free (p->x_label);
  g_free (p->y_label);
  g_free (p->legend_title);
  g_strfreev (p->categories);
  g_ptr_array_unref (p->series);
  g_free (p);
}

void
gs_plot_set_x_categories (GsPlot *p, char *const *labels, guint n)
{
  g_strfreev (p->categories);
  p->categories = g_new0 (char *, n + 1);
  for (guint i = 0; i < n; i++)
    p->categories[i] = g_strdup (labels[i]);
}

void
gs_plot_set_legend_title (GsPlot *p, const char *title)
{
  g_free (p->legend_title);
  p->legend_title = g_strdup (title);
}

void
gs_plot_add_series (GsPlot *p, const char *label, const double *x,
                    const double *y, guint n)
{
  Series *s = g_new0 (Series, 1);
  s->label = g_strdup (label);
  s->x = g_array_new (FALSE, FALSE, sizeof (double));
  s->y = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; i < n; i++)
    if (isfinite (x[i]) && isfinite (y[i]))
      {
        g_array_append_val (s->x, x[i]);
        g_array_append_val (s->y, y[i]);
      }
  g_ptr_array_add (p->series, s);
}

double
gs_plot_ticks (double lo, double hi, int target, double *first, int *n)
{
  if (!(hi > lo))
    hi = lo + (lo != 0 ? fabs (lo) : 1);
  double raw = (hi - lo) / MAX (1, target);
  double mag = pow (10, floor (log10 (raw)));
  double step = mag;
  if (raw / mag > 5)
    step = 10 * mag;
  else if (raw / mag > 2)
    step = 5 * mag;
  else if (raw / mag > 1)
    step = 2 * mag;
  *first = ceil (lo / step - 1e-9) * step;
  *n = (int) floor ((hi - *first) / step + 1e-9) + 1;
  return step;
}

static void
xml_text (FILE *out, const char *s)
{
  for (const char *c = s ? s : ""; *c; c++)
    switch (*c)
      {
      case '<': fputs ("&lt;", out); break;
      case '>': fputs ("&gt;", out); break;
      case '&': fputs ("&amp;", out); break;
      case '"': fputs ("&quot;", out); break;
      default: fputc (*c, out);
      }
}

/* Data ranges of every series: x in [*x0, *x1], y in [0, *y1]. */
static void
ranges (const GsPlot *p, double *x0, double *x1, double *y1)
{
  *x0 = G_MAXDOUBLE;
  *x1 = -G_MAXDOUBLE;
  *y1 = 0;
  for (guint i = 0; i < p->series->len; i++)
    {
      const Series *s = p->series->pdata[i];
      for (guint j = 0; j < s->x->len; j++)
        {
          *x0 = MIN (*x0, g_array_index (s->x, double, j));
          *x1 = MAX (*x1, g_array_index (s->x, double, j));
          *y1 = MAX (*y1, g_array_index (s->y, double, j));
        }
    }
  if (*x0 > *x1)
    *x0 = 0, *x1 = 1;
  if (p->categories)
    *x0 -= 0.5, *x1 += 0.5;
  else if (*x0 == *x1)
    *x0 -= 1, *x1 += 1;
  else
    {
      /* Keep the first and last points off the axes. */
      double pad = 0.05 * (*x1 - *x0);
      *x0 -= pad;
      *x1 += pad;
    }
  if (*y1 <= 0)
    *y1 = 1;
}

typedef struct {
  double x0, x1, y1;       /* data ranges */
  double width;            /* of the canvas */
} Frame;

static double
px (const Frame *f, double x)
{
  return LEFT + (x - f->x0) / (f->x1 - f->x0) * PLOT_WIDTH;
}

/* The distinct x values of every series, sorted, if there are few. */
static GArray *
data_ticks (const GsPlot *p)
{
  GArray *v = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; i < p->series->len; i++)
    {
      const Series *s = p->series->pdata[i];
      for (guint j = 0; j < s->x->len; j++)
        {
          double x = g_array_index (s->x, double, j);
          guint k = 0;
          while (k < v->len && g_array_index (v, double, k) < x)
            k++;
          if (k == v->len || g_array_index (v, double, k) != x)
            g_array_insert_val (v, k, x);
        }
    }
  if (v->len > MAX_DATA_TICKS)
    g_array_set_size (v, 0);
  return v;
}

static void
x_tick (const Frame *f, double v, FILE *out)
{
  fprintf (out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
           "stroke=\"#333\"/>\n", px (f, v), HEIGHT - BOTTOM, px (f, v),
           HEIGHT - BOTTOM + 5);
  fprintf (out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g"
           "</text>\n", px (f, v), HEIGHT - BOTTOM + 18, v);
}

static double
py (const Frame *f, double y)
{
  return HEIGHT - BOTTOM - y / f->y1 * (HEIGHT - TOP - BOTTOM);
}

static void
write_axes (const GsPlot *p, const Frame *f, FILE *out)
{
  double y_first, x_first;
  int ny, nx;
  double ys = gs_plot_ticks (0, f->y1, 6, &y_first, &ny);
  fprintf (out, "<g font-size=\"12\" fill=\"#333\">\n");
  for (int i = 0; i < ny; i++)
    {
      double v = y_first + i * ys;
      fprintf (out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
               "stroke=\"#ddd\"/>\n", LEFT, py (f, v), LEFT + PLOT_WIDTH,
               py (f, v));
      fprintf (out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g"
               "</text>\n", LEFT - 8, py (f, v) + 4, v);
    }
  if (p->categories)
    for (int i = 0; p->categories[i]; i++)
      {
        fprintf (out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                 px (f, i), HEIGHT - BOTTOM + 18);
        xml_text (out, p->categories[i]);
        fputs ("</text>\n", out);
      }
  else
    {
      /* A tick at each swept value, or nice ticks when there are many. */
      GArray *at = data_ticks (p);
      for (guint i = 0; i < at->len; i++)
        x_tick (f, g_array_index (at, double, i), out);
      if (at->len == 0)
        {
          double xs = gs_plot_ticks (f->x0, f->x1, 6, &x_first, &nx);
          for (int i = 0; i < nx; i++)
            x_tick (f, x_first + i * xs, out);
        }
      g_array_unref (at);
    }
  fprintf (out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
           "stroke=\"#333\"/>\n", LEFT, HEIGHT - BOTTOM, LEFT + PLOT_WIDTH,
           HEIGHT - BOTTOM);
  fprintf (out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
           "stroke=\"#333\"/>\n", LEFT, TOP, LEFT, HEIGHT - BOTTOM);
  fprintf (out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
           "font-size=\"14\">", LEFT + PLOT_WIDTH / 2, HEIGHT - 15);
  xml_text (out, p->x_label);
  fprintf (out, "</text>\n<text transform=\"translate(20,%.1f) rotate(-90)\" "
           "text-anchor=\"middle\" font-size=\"14\">", (TOP + HEIGHT
                                                        - BOTTOM) / 2);
  xml_text (out, p->y_label);
  fputs ("</text>\n</g>\n", out);
}

static void
write_series (const GsPlot *p, const Frame *f, FILE *out)
{
  double lx = LEFT + PLOT_WIDTH + 15, ly0 = TOP + 10;
  if (p->legend_title)
    {
      fprintf (out, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" "
               "font-weight=\"bold\" fill=\"#333\">", lx, ly0 + 4);
      xml_text (out, p->legend_title);
      fputs ("</text>\n", out);
      ly0 += 20;
    }
  for (guint i = 0; i < p->series->len; i++)
    {
      const Series *s = p->series->pdata[i];
      const char *c = palette[i % G_N_ELEMENTS (palette)];
      fprintf (out, "<g stroke=\"%s\" fill=\"%s\">\n<polyline fill=\"none\" "
               "stroke-width=\"2\" points=\"", c, c);
      for (guint j = 0; j < s->x->len; j++)
        fprintf (out, "%s%.1f,%.1f", j ? " " : "",
                 px (f, g_array_index (s->x, double, j)),
                 py (f, g_array_index (s->y, double, j)));
      fputs ("\"/>\n", out);
      for (guint j = 0; j < s->x->len; j++)
        fprintf (out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\"/>\n",
                 px (f, g_array_index (s->x, double, j)),
                 py (f, g_array_index (s->y, double, j)));
      /* Legend entry. */
      double ly = ly0 + 20 * i;
      fprintf (out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
               "stroke-width=\"2\"/>\n", lx, ly, lx + 25, ly);
      fprintf (out, "<text x=\"%.1f\" y=\"%.1f\" stroke=\"none\" "
               "fill=\"#333\" font-size=\"12\">", lx + 31, ly + 4);
      xml_text (out, s->label);
      fputs ("</text>\n</g>\n", out);
    }
}

/* Canvas width: the plot, then the legend's longest line. */
static double
canvas_width (const GsPlot *p)
{
  size_t longest = p->legend_title ? strlen (p->legend_title) : 0;
  for (guint i = 0; i < p->series->len; i++)
    longest = MAX (longest, strlen (((Series *) p->series->pdata[i])->label)
                            + 5);
  return LEFT + PLOT_WIDTH + 30 + MAX (80.0, CHAR_WIDTH * longest);
}

void
gs_plot_write_svg (const GsPlot *p, FILE *out)
{
  Frame f;
  ranges (p, &f.x0, &f.x1, &f.y1);
  f.width = canvas_width (p);
  double first;
  int n;
  double step = gs_plot_ticks (0, f.y1, 6, &first, &n);
  f.y1 = first + (n - 1) * step < f.y1 ? first + n * step
                                       : first + (n - 1) * step;
  fprintf (out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
           "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
           "font-family=\"sans-serif\">\n", f.width, HEIGHT, f.width, HEIGHT);
  fputs ("<title>", out);
  xml_text (out, p->title);
  fprintf (out, "</title>\n<rect width=\"100%%\" height=\"100%%\" "
           "fill=\"white\"/>\n<text x=\"%.1f\" y=\"28\" text-anchor=\"middle\" "
           "font-size=\"16\" font-weight=\"bold\" fill=\"#222\">",
           f.width / 2);
  xml_text (out, p->title);
  fputs ("</text>\n", out);
  write_axes (p, &f, out);
  write_series (p, &f, out);
  fputs ("</svg>\n", out);
}
