/* gpusim: residual tables and their nearest-neighbour correction (see
 * residuals.h).
 */
#include "config.h"
#include "workloads/residuals.h"
#include "sim/error.h"
#include "sim/param.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct GsResiduals {
  guint dims;
  char *legend;
  GHashTable *sets;        /* key -> GArray of GsResidual */
  GsResidualRule rule;
};

static const GsResidualRule default_rule = {
  GS_RESIDUAL_K, GS_RESIDUAL_MEDIAN, 1.0
};
static const char *const average_names[] = { "median", "trimmed" };

GsResiduals *
gs_residuals_new (guint dims, const char *legend)
{
  g_return_val_if_fail (dims >= 1 && dims <= GS_RESIDUAL_MAX_DIMS, NULL);
  GsResiduals *t = g_new0 (GsResiduals, 1);
  t->dims = dims;
  t->legend = g_strdup (legend);
  t->sets = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                   (GDestroyNotify) g_array_unref);
  t->rule = default_rule;
  return t;
}

GsResiduals *
gs_residuals_copy (const GsResiduals *t)
{
  GsResiduals *c = gs_residuals_new (t->dims, t->legend);
  c->rule = t->rule;
  GHashTableIter it;
  gpointer k, v;
  g_hash_table_iter_init (&it, t->sets);
  while (g_hash_table_iter_next (&it, &k, &v))
    {
      const GArray *a = v;
      GArray *b = g_array_sized_new (FALSE, FALSE, sizeof (GsResidual),
                                     a->len);
      g_array_append_vals (b, a->data, a->len);
      g_hash_table_insert (c->sets, g_strdup (k), b);
    }
  return c;
}

void
gs_residuals_free (GsResiduals *t)
{
  if (t == NULL)
    return;
  g_hash_table_unref (t->sets);
  g_free (t->legend);
  g_free (t);
}

guint
gs_residuals_n_keys (const GsResiduals *t)
{
  return g_hash_table_size (t->sets);
}

void
gs_residuals_clear (GsResiduals *t)
{
  g_hash_table_remove_all (t->sets);
}

/* X as the arch file keeps it. */
static double
as_written (double x)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (buf, sizeof buf, GS_RESIDUAL_FMT, x);
  return g_ascii_strtod (buf, NULL);
}

static GArray *
set_of (GsResiduals *t, const char *key)
{
  GArray *a = g_hash_table_lookup (t->sets, key);
  if (a == NULL)
    {
      a = g_array_new (FALSE, TRUE, sizeof (GsResidual));
      g_hash_table_insert (t->sets, g_strdup (key), a);
    }
  return a;
}

void
gs_residuals_add (GsResiduals *t, const char *key, const double *f, double r)
{
  GsResidual e = { { 0 }, as_written (r) };
  for (guint k = 0; k < t->dims; k++)
    e.f[k] = as_written (f[k]);
  g_array_append_val (set_of (t, key), e);
}

GArray *
gs_residuals_lookup (const GsResiduals *t, const char *key)
{
  return g_hash_table_lookup (t->sets, key);
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

/* The r of the (at most K) entries of A nearest to F within the radius,
 * nearest first (ties: the earlier entry), leaving out entry SKIP
 * (G_MAXUINT: none); returns how many. */
static guint
nearest (const GArray *a, guint dims, const double *f, guint skip, guint k,
         double *val)
{
  double dist[GS_RESIDUAL_MAX_K];
  guint n = 0;
  const double r2 = GS_RESIDUAL_RADIUS * GS_RESIDUAL_RADIUS;
  for (guint i = 0; i < a->len; i++)
    {
      const GsResidual *e = &g_array_index (a, GsResidual, i);
      double d = 0;
      for (guint c = 0; c < dims; c++)
        d += (e->f[c] - f[c]) * (e->f[c] - f[c]);
      if (i == skip || d > r2 || (n == k && d >= dist[n - 1]))
        continue;
      guint j = n < k ? n++ : n - 1;
      while (j > 0 && dist[j - 1] > d)
        {
          dist[j] = dist[j - 1];
          val[j] = val[j - 1];
          j--;
        }
      dist[j] = d;
      val[j] = e->r;
    }
  return n;
}

/* The log correction RULE makes of the N nearest r in VAL (reordered). */
static double
correction (const GsResidualRule *rule, double *val, guint n)
{
  if (n < GS_RESIDUAL_MIN || rule->shrink == 0)
    return 0;
  qsort (val, n, sizeof *val, cmp_double);
  double avg = val[n / 2];
  if (rule->average == GS_RESIDUAL_TRIMMED && n >= 4)
    {
      avg = 0;
      for (guint i = 1; i + 1 < n; i++)
        avg += val[i];
      avg /= n - 2;
    }
  return rule->shrink * avg;
}

double
gs_residuals_scale (const GsResiduals *t, const char *key, const double *f)
{
  const GArray *a = key ? g_hash_table_lookup (t->sets, key) : NULL;
  if (a == NULL || a->len == 0)
    return 1;
  double val[GS_RESIDUAL_MAX_K];
  guint n = nearest (a, t->dims, f, G_MAXUINT, t->rule.neighbours, val);
  return exp (correction (&t->rule, val, n));
}

GsResidualRule
gs_residuals_rule (const GsResiduals *t)
{
  return t->rule;
}

void
gs_residuals_set_rule (GsResiduals *t, const GsResidualRule *rule)
{
  g_return_if_fail (rule->neighbours >= 1
                    && rule->neighbours <= GS_RESIDUAL_MAX_K);
  g_return_if_fail (rule->shrink >= 0 && rule->shrink <= 1);
  t->rule = *rule;
}

char *
gs_residuals_rule_text (const GsResiduals *t)
{
  return g_strdup_printf ("%s of the %u nearest within %g log2 units, x %.2f",
                          t->rule.average == GS_RESIDUAL_TRIMMED
                          ? "trimmed mean" : "median", t->rule.neighbours,
                          GS_RESIDUAL_RADIUS, t->rule.shrink);
}

void
gs_residuals_choose_rule (GsResiduals *t, double *loo, double *none)
{
  static const guint ks[] = { 5, 3, 9, 15 };
  static const double shrinks[] = { 1, 0.75, 0.5, 0 };
  enum { N_RULES = G_N_ELEMENTS (ks) * 2 * G_N_ELEMENTS (shrinks) };
  GsResidualRule rules[N_RULES];
  guint nr = 0;
  for (guint k = 0; k < G_N_ELEMENTS (ks); k++)
    for (int avg = GS_RESIDUAL_MEDIAN; avg <= GS_RESIDUAL_TRIMMED; avg++)
      for (guint s = 0; s < G_N_ELEMENTS (shrinks); s++)
        rules[nr++] = (GsResidualRule) { ks[k], avg, shrinks[s] };
  /* Each entry's neighbours once, nearest first, then every rule on the
   * first of them (the nearest K of the nearest 15 are the nearest K). */
  double err[N_RULES] = { 0 };
  guint count = 0;
  g_autoptr (GPtrArray) keys = gs_sorted_keys (t->sets);
  for (guint key = 0; key < keys->len; key++)
    {
      const GArray *a = g_hash_table_lookup (t->sets, keys->pdata[key]);
      for (guint i = 0; i < a->len; i++)
        {
          const GsResidual *e = &g_array_index (a, GsResidual, i);
          double near[GS_RESIDUAL_MAX_K], val[GS_RESIDUAL_MAX_K];
          guint n = nearest (a, t->dims, e->f, i, GS_RESIDUAL_MAX_K, near);
          for (guint r = 0; r < nr; r++)
            {
              guint m = MIN (n, rules[r].neighbours);
              memcpy (val, near, m * sizeof *val);
              err[r] += fabs (exp (correction (&rules[r], val, m) - e->r)
                              - 1);
            }
          count++;
        }
    }
  if (count == 0)
    return;
  guint best = 0;
  for (guint r = 1; r < nr; r++)
    if (err[r] < err[best])
      best = r;
  t->rule = rules[best];
  if (loo != NULL)
    *loo = err[best] / count;
  /* The first rule with shrink 0 (5, median, 0) corrects nothing. */
  const guint uncorrected = G_N_ELEMENTS (shrinks) - 1;
  g_assert (rules[uncorrected].shrink == 0);
  if (none != NULL)
    *none = err[uncorrected] / count;
}

/* Checks and keeps one entry of WIDTH numbers V under KEY (the setting S
 * for messages; N: the entry's number, from 1). */
static gboolean
take_entry (GsResiduals *t, GArray *a, const config_setting_t *s,
            const char *key, guint n, const double *v, GError **error)
{
  GsResidual r = { { 0 }, 0 };
  for (guint k = 0; k <= t->dims; k++)
    {
      gboolean coord = k < t->dims;
      if (!isfinite (v[k]) || (coord && (v[k] < 0 || v[k] > 64))
          || (!coord && fabs (v[k]) > 5))
        return gs_cfg_fail (s, error, "residuals.%s: entry %u: value %g out "
                            "of range (sizes: log2 in [0, 64]; log ratio: "
                            "within +-5)", key, n, v[k]);
      if (coord)
        r.f[k] = v[k];
      else
        r.r = v[k];
    }
  g_array_append_val (a, r);
  return TRUE;
}

/* The written form: one string (adjacent literals concatenate), entries
 * ended by ';', numbers separated by blanks.  libconfig reads it several
 * times faster than a list of arrays, and the tables are most of a
 * calibrated arch file. */
static gboolean
load_packed (GsResiduals *t, GArray *a, const config_setting_t *e,
             const char *key, GError **error)
{
  const char *p = config_setting_get_string (e);
  const guint width = t->dims + 1;
  for (guint n = 1;; n++)
    {
      while (g_ascii_isspace (*p))
        p++;
      if (*p == '\0')
        return TRUE;
      double v[GS_RESIDUAL_MAX_DIMS + 1];
      guint got = 0;
      while (*p != ';' && *p != '\0')
        {
          char *end;
          double x = g_ascii_strtod (p, &end);
          if (end == p || got == width)
            return gs_cfg_fail (e, error, "residuals.%s: entry %u: expected "
                                "%u numbers (%s) ended by ';'", key, n, width,
                                t->legend);
          v[got++] = x;
          p = end;
          while (g_ascii_isspace (*p))
            p++;
        }
      if (*p != ';' || got != width)
        return gs_cfg_fail (e, error, "residuals.%s: entry %u: expected %u "
                            "numbers (%s) ended by ';'", key, n, width,
                            t->legend);
      p++;
      if (!take_entry (t, a, e, key, n, v, error))
        return FALSE;
    }
}

/* rule = { neighbours = N; average = "median" | "trimmed"; shrink = S; }:
 * each optional, the default's value where absent. */
static gboolean
load_rule (GsResiduals *t, const config_setting_t *e, GError **error)
{
  if (config_setting_type (e) != CONFIG_TYPE_GROUP)
    return gs_cfg_fail (e, error, "residuals.rule: expected a group { "
                        "neighbours = N; average = \"median\" or "
                        "\"trimmed\"; shrink = S; }");
  GsResidualRule rule = default_rule;
  for (int i = 0; i < config_setting_length (e); i++)
    {
      const config_setting_t *x = config_setting_get_elem (e, i);
      const char *n = config_setting_name (x);
      gboolean number = config_setting_type (x) == CONFIG_TYPE_INT
                        || config_setting_type (x) == CONFIG_TYPE_INT64
                        || config_setting_type (x) == CONFIG_TYPE_FLOAT;
      if (strcmp (n, "neighbours") == 0)
        {
          double k = number ? gs_cfg_number (x) : NAN;
          if (!(k >= 1 && k <= GS_RESIDUAL_MAX_K) || k != floor (k))
            return gs_cfg_fail (x, error, "residuals.rule.neighbours: "
                                "expected a whole number from 1 to %d",
                                GS_RESIDUAL_MAX_K);
          rule.neighbours = (guint) k;
        }
      else if (strcmp (n, "shrink") == 0)
        {
          double v = number ? gs_cfg_number (x) : NAN;
          if (!(v >= 0 && v <= 1))
            return gs_cfg_fail (x, error, "residuals.rule.shrink: expected "
                                "a number from 0 to 1");
          rule.shrink = v;
        }
      else if (strcmp (n, "average") == 0)
        {
          const char *v = config_setting_type (x) == CONFIG_TYPE_STRING
                          ? config_setting_get_string (x) : "";
          guint a = 0;
          while (a < G_N_ELEMENTS (average_names)
                 && strcmp (v, average_names[a]) != 0)
            a++;
          if (a == G_N_ELEMENTS (average_names))
            return gs_cfg_fail (x, error, "residuals.rule.average: expected "
                                "\"median\" or \"trimmed\"");
          rule.average = (GsResidualAverage) a;
        }
      else
        return gs_cfg_fail (x, error, "residuals.rule: unknown setting "
                            "'%s' (known: neighbours, average, shrink)", n);
    }
  t->rule = rule;
  return TRUE;
}

gboolean
gs_residuals_load (GsResiduals *t, const config_setting_t *group,
                   GError **error)
{
  if (config_setting_type (group) != CONFIG_TYPE_GROUP)
    return gs_cfg_fail (group, error, "residuals: expected a group { KEY = "
                        "\"...;\" or ( [%s], ... ); ... }", t->legend);
  const guint width = t->dims + 1;
  for (int i = 0; i < config_setting_length (group); i++)
    {
      config_setting_t *e = config_setting_get_elem (group, i);
      const char *key = config_setting_name (e);
      if (strcmp (key, "rule") == 0)
        {
          if (!load_rule (t, e, error))
            return FALSE;
          continue;
        }
      GArray *a = set_of (t, key);
      if (config_setting_type (e) == CONFIG_TYPE_STRING)
        {
          if (!load_packed (t, a, e, key, error))
            return FALSE;
          continue;
        }
      /* By hand, a list of arrays reads better. */
      if (config_setting_type (e) != CONFIG_TYPE_LIST)
        return gs_cfg_fail (e, error, "residuals.%s: expected a string of "
                            "entries \"%s;\" or a list ( [...], ... )", key,
                            t->legend);
      for (int j = 0; j < config_setting_length (e); j++)
        {
          config_setting_t *x = config_setting_get_elem (e, j);
          if (config_setting_type (x) != CONFIG_TYPE_ARRAY
              || config_setting_length (x) != (int) width)
            return gs_cfg_fail (x, error, "residuals.%s: each entry is an "
                                "array of %u numbers (%s)", key, width,
                                t->legend);
          double v[GS_RESIDUAL_MAX_DIMS + 1];
          for (guint k = 0; k < width; k++)
            v[k] = gs_cfg_number (config_setting_get_elem (x, k));
          if (!take_entry (t, a, x, key, (guint) j + 1, v, error))
            return FALSE;
        }
    }
  return TRUE;
}

void
gs_residuals_format (const GsResiduals *t, GString *out, int indent)
{
  if (g_hash_table_size (t->sets) == 0)
    return;
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append_printf (out, "%*sresiduals = {\n%*s# the correction: "
                          "exp (shrink x the average r of the nearest "
                          "entries within %g log2 units, at least %d)\n"
                          "%*srule = { neighbours = %u; average = \"%s\"; "
                          "shrink = %s; };\n%*s# training rows predicted "
                          "from the shape, one \"...;\" each: %s\n",
                          indent, "", indent + 2, "", GS_RESIDUAL_RADIUS,
                          GS_RESIDUAL_MIN, indent + 2, "",
                          t->rule.neighbours,
                          average_names[t->rule.average],
                          g_ascii_formatd (buf, sizeof buf, "%.2f",
                                           t->rule.shrink),
                          indent + 2, "", t->legend);
  g_autoptr (GPtrArray) keys = gs_sorted_keys (t->sets);
  for (guint i = 0; i < keys->len; i++)
    {
      const GArray *a = g_hash_table_lookup (t->sets, keys->pdata[i]);
      g_string_append_printf (out, "%*s%s =", indent + 2, "",
                              (const char *) keys->pdata[i]);
      if (a->len == 0)
        g_string_append (out, " \"\"");
      /* PER_LINE entries to a literal: fewer bytes and tokens to read. */
      const guint per_line = 8;
      for (guint j = 0; j < a->len; j++)
        {
          const GsResidual *r = &g_array_index (a, GsResidual, j);
          if (j % per_line == 0)
            g_string_append_printf (out, "\n%*s\"", indent + 4, "");
          for (guint d = 0; d < t->dims; d++)
            g_string_append_printf (out, "%s ",
                                    g_ascii_formatd (buf, sizeof buf,
                                                     GS_RESIDUAL_FMT,
                                                     r->f[d]));
          g_string_append_printf (out, "%s;",
                                  g_ascii_formatd (buf, sizeof buf,
                                                   GS_RESIDUAL_FMT, r->r));
          g_string_append (out, (j + 1) % per_line == 0 || j + 1 == a->len
                                ? "\"" : " ");
        }
      g_string_append (out, ";\n");
    }
  g_string_append_printf (out, "%*s};\n", indent, "");
}
