/* gpusim: declarative parameter tables (see param.h). */
#include "config.h"
#include "sim/param.h"
#include "sim/error.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <stdlib.h>
#include <errno.h>

struct GsCfgChain {
  gint refs;
  GPtrArray *cfgs;   /* config_t *, most specific first */
  GPtrArray *files;  /* char * */
};

#define GS_CFG_CHAIN_MAX_DEPTH 8

static void
cfg_free (gpointer p)
{
  config_destroy (p);
  g_free (p);
}

GsCfgChain *
gs_cfg_chain_ref (GsCfgChain *chain)
{
  g_atomic_int_inc (&chain->refs);
  return chain;
}

void
gs_cfg_chain_free (GsCfgChain *chain)
{
  if (chain == NULL || !g_atomic_int_dec_and_test (&chain->refs))
    return;
  g_ptr_array_unref (chain->cfgs);
  g_ptr_array_unref (chain->files);
  g_free (chain);
}

static gboolean
name_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-' || c == '*';
}

/* libconfig 1.5 reads a number without a fraction or an L suffix as a C
 * int and wraps one that does not fit (sm.count = 4294967297 becomes 1)
 * with no error, so the text is checked for such numbers after a
 * successful parse: TEXT of FILE, skipping strings and comments; an
 * @include'd file (libconfig has read it already) is checked in turn,
 * DEPTH deep at most. */
static gboolean
check_int_literals (const char *file, const char *text, int depth,
                    GError **error)
{
  int line = 1;
  const char *p = text;
  while (*p)
    {
      char c = *p;
      if (c == '\n')
        {
          line++;
          p++;
        }
      else if (c == '#' || (c == '/' && p[1] == '/'))
        while (*p && *p != '\n')
          p++;
      else if (c == '/' && p[1] == '*')
        {
          p += 2;
          while (*p && !(p[0] == '*' && p[1] == '/'))
            line += *p++ == '\n';
          p += *p ? 2 : 0;
        }
      else if (c == '"')
        {
          for (p++; *p && *p != '"'; p++)
            {
              if (*p == '\\' && p[1])
                p++;
              line += *p == '\n';
            }
          p += *p ? 1 : 0;
        }
      else if (c == '@' && g_str_has_prefix (p, "@include") && depth < 8)
        {
          const char *q = strchr (p, '"');
          const char *e = q ? strchr (q + 1, '"') : NULL;
          const char *nl = strchr (p, '\n');
          if (e != NULL && (nl == NULL || e < nl))
            {
              g_autofree char *name = g_strndup (q + 1, (gsize) (e - q - 1));
              g_autofree char *dir = g_path_get_dirname (file);
              g_autofree char *path = g_path_is_absolute (name)
                ? g_strdup (name) : g_build_filename (dir, name, NULL);
              g_autofree char *inc = NULL;
              if (g_file_get_contents (path, &inc, NULL, NULL)
                  && !check_int_literals (path, inc, depth + 1, error))
                return FALSE;
              p = e + 1;
            }
          else
            p++;
        }
      else if ((g_ascii_isdigit (c)
                || ((c == '-' || c == '+') && g_ascii_isdigit (p[1])))
               && (p == text || !name_char (p[-1])))
        {
          const char *start = p;
          if (c == '-' || c == '+')
            p++;
          gboolean hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X');
          if (hex)
            for (p += 2; g_ascii_isxdigit (*p); p++)
              ;
          else
            while (g_ascii_isdigit (*p))
              p++;
          gboolean is_float = !hex && (*p == '.' || *p == 'e' || *p == 'E');
          if (is_float || *p == 'L')
            {
              while (name_char (*p) || *p == '.' || *p == '+')
                p++;
              continue;
            }
          g_autofree char *lit = g_strndup (start, (gsize) (p - start));
          errno = 0;
          gint64 v = g_ascii_strtoll (lit, NULL, 0);
          if (errno == ERANGE || v > G_MAXINT32 || v < G_MININT32)
            {
              g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                           "%s:%d: %s does not fit in 32 bits, and libconfig "
                           "would read it wrapped; write it with a fraction "
                           "(%s.0) or a 64-bit L suffix (%sL)", file, line,
                           lit, lit, lit);
              return FALSE;
            }
        }
      else
        p++;
    }
  return TRUE;
}

/* Settings read from a string have no file: give each of SETTING's the
 * name FILE (which outlives them), as an @include'd file's have its own. */
static void
name_settings (config_setting_t *setting, const char *file)
{
  if (setting->file == NULL)
    setting->file = file;
  if (config_setting_is_aggregate (setting))
    for (int i = 0; i < config_setting_length (setting); i++)
      name_settings (config_setting_get_elem (setting, i), file);
}

/* FILE, or when TEXT is not NULL, TEXT named FILE (relative @include
 * paths resolve against FILE's directory, "." for a bare name). */
static config_t *
read_one (const char *file, const char *text, GError **error)
{
  if (text == NULL && !g_file_test (file, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: no such file", file);
      return NULL;
    }
  if (text == NULL && g_file_test (file, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: is a directory", file);
      return NULL;
    }
  config_t *cfg = g_new0 (config_t, 1);
  config_init (cfg);
  char *dir = g_path_get_dirname (file);
  config_set_include_dir (cfg, dir);
  g_free (dir);
  if ((text ? config_read_string (cfg, text)
            : config_read_file (cfg, file)) != CONFIG_TRUE)
    {
      const char *efile = config_error_file (cfg);
      int line = config_error_line (cfg);
      const char *etext = config_error_text (cfg);
      if (config_error_type (cfg) == CONFIG_ERR_FILE_IO)
        g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot read: %s",
                     efile ? efile : file, etext ? etext : "I/O error");
      else if (g_strcmp0 (etext, "memory exhausted") == 0)
        /* libconfig's parser stack: lists or groups nested too deep. */
        g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                     "%s:%d: lists and groups nest too deep",
                     efile ? efile : file, line);
      else
        g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s:%d: %s",
                     efile ? efile : file, line,
                     etext ? etext : "syntax error");
      cfg_free (cfg);
      return NULL;
    }
  g_autofree char *own = NULL;
  if ((text != NULL || g_file_get_contents (file, &own, NULL, NULL))
      && !check_int_literals (file, text ? text : own, 0, error))
    {
      cfg_free (cfg);
      return NULL;
    }
  return cfg;
}

static GsCfgChain *
chain_load (const char *file, const char *text, GError **error)
{
  GsCfgChain *chain = g_new0 (GsCfgChain, 1);
  chain->refs = 1;
  chain->cfgs = g_ptr_array_new_with_free_func (cfg_free);
  chain->files = g_ptr_array_new_with_free_func (g_free);
  char *cur = g_strdup (file);

  while (cur != NULL)
    {
      if (chain->cfgs->len >= GS_CFG_CHAIN_MAX_DEPTH)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s: base files nest deeper than %d (a cycle?)",
                       file, GS_CFG_CHAIN_MAX_DEPTH);
          goto fail;
        }
      for (guint i = 0; i < chain->files->len; i++)
        if (g_strcmp0 (chain->files->pdata[i], cur) == 0)
          {
            g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                         "%s: base file cycle through %s", file, cur);
            goto fail;
          }
      config_t *cfg = read_one (cur, chain->cfgs->len ? NULL : text, error);
      if (cfg == NULL)
        goto fail;
      g_ptr_array_add (chain->cfgs, cfg);
      g_ptr_array_add (chain->files, cur);
      if (chain->cfgs->len == 1 && text != NULL)
        name_settings (config_root_setting (cfg), cur);
      const char *prev = cur;
      cur = NULL;

      config_setting_t *base = config_lookup (cfg, "base");
      if (base != NULL)
        {
          if (config_setting_type (base) != CONFIG_TYPE_STRING)
            {
              g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                           "%s:%d: base: expected a file name string",
                           prev, config_setting_source_line (base));
              goto fail;
            }
          const char *b = config_setting_get_string (base);
          if (g_path_is_absolute (b))
            cur = g_strdup (b);
          else
            {
              char *dir = g_path_get_dirname (prev);
              cur = g_build_filename (dir, b, NULL);
              g_free (dir);
            }
          if (!g_file_test (cur, G_FILE_TEST_IS_REGULAR))
            {
              g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                           "%s:%d: base file '%s' not found", prev,
                           config_setting_source_line (base), b);
              goto fail;
            }
        }
    }
  return chain;

fail:
  g_free (cur);           /* not yet owned by the chain */
  gs_cfg_chain_free (chain);
  return NULL;
}

GsCfgChain *
gs_cfg_chain_load (const char *file, GError **error)
{
  return chain_load (file, NULL, error);
}

GsCfgChain *
gs_cfg_chain_load_text (const char *name, const char *text, GError **error)
{
  return chain_load (name, text, error);
}

config_setting_t *
gs_cfg_chain_lookup (const GsCfgChain *chain, const char *key)
{
  for (guint i = 0; i < chain->cfgs->len; i++)
    {
      config_setting_t *s = config_lookup (chain->cfgs->pdata[i], key);
      if (s != NULL)
        return s;
    }
  return NULL;
}

const char *
gs_cfg_chain_file (const GsCfgChain *chain)
{
  return chain->files->pdata[0];
}

guint
gs_cfg_chain_length (const GsCfgChain *chain)
{
  return chain->cfgs->len;
}

config_t *
gs_cfg_chain_nth (const GsCfgChain *chain, guint i)
{
  g_return_val_if_fail (i < chain->cfgs->len, NULL);
  return chain->cfgs->pdata[i];
}

char *
gs_cfg_where (const config_setting_t *s)
{
  const char *f = config_setting_source_file (s);
  return g_strdup_printf ("%s:%d", f ? f : "<input>",
                          config_setting_source_line (s));
}

gboolean
gs_cfg_fail (const config_setting_t *s, GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_autofree char *w = gs_cfg_where (s);
  g_set_error (error, GS_ERROR, GS_ERROR_INPUT, "%s: %s", w, msg);
  return FALSE;
}

double
gs_cfg_number (const config_setting_t *s)
{
  switch (config_setting_type (s))
    {
    case CONFIG_TYPE_INT: return config_setting_get_int (s);
    case CONFIG_TYPE_INT64: return (double) config_setting_get_int64 (s);
    case CONFIG_TYPE_FLOAT: return config_setting_get_float (s);
    default: return NAN;
    }
}

/* ------------------------------------------------------------------ fields */

#define FIELD(target, p, T) ((T *) ((char *) (target) + (p)->offset))

void
gs_params_init (const GsParam *table, guint n, void *target)
{
  for (guint i = 0; i < n; i++)
    {
      const GsParam *p = &table[i];
      switch (p->type)
        {
        case GS_PARAM_INT:
          *FIELD (target, p, int) = isnan (p->def) ? 0 : (int) p->def;
          break;
        case GS_PARAM_DOUBLE:
          *FIELD (target, p, double) = isnan (p->def) ? 0.0 : p->def;
          break;
        case GS_PARAM_BOOL:
          *FIELD (target, p, gboolean) = p->def != 0.0 && !isnan (p->def);
          break;
        case GS_PARAM_STRING:
          g_free (*FIELD (target, p, char *));
          *FIELD (target, p, char *) = g_strdup (p->def_str);
          break;
        case GS_PARAM_INT_LIST:
          memset (FIELD (target, p, GsIntList), 0, sizeof (GsIntList));
          break;
        }
    }
}

void
gs_params_clear (const GsParam *table, guint n, void *target)
{
  for (guint i = 0; i < n; i++)
    if (table[i].type == GS_PARAM_STRING)
      g_clear_pointer (FIELD (target, &table[i], char *), g_free);
}

void
gs_params_copy_strings (const GsParam *table, guint n, void *dst)
{
  for (guint i = 0; i < n; i++)
    if (table[i].type == GS_PARAM_STRING)
      {
        char **f = FIELD (dst, &table[i], char *);
        *f = g_strdup (*f);
      }
}

const GsParam *
gs_params_find (const GsParam *table, guint n, const char *key)
{
  for (guint i = 0; i < n; i++)
    if (strcmp (table[i].key, key) == 0)
      return &table[i];
  return NULL;
}

static const char *
type_name (const GsParam *p)
{
  switch (p->type)
    {
    case GS_PARAM_INT:
      return p->flags & GS_PARAM_ALL ? "an integer or \"all\"" : "an integer";
    case GS_PARAM_DOUBLE: return "a number";
    case GS_PARAM_STRING: return "a string";
    case GS_PARAM_BOOL: return "true or false";
    case GS_PARAM_INT_LIST: return "a list of integers, like [1, 2]";
    }
  return "?";
}

static const char *
setting_type_name (const config_setting_t *s)
{
  switch (config_setting_type (s))
    {
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: return "an integer";
    case CONFIG_TYPE_FLOAT: return "a number";
    case CONFIG_TYPE_STRING: return "a string";
    case CONFIG_TYPE_BOOL: return "a boolean";
    case CONFIG_TYPE_ARRAY: return "an array";
    case CONFIG_TYPE_LIST: return "a list";
    case CONFIG_TYPE_GROUP: return "a group";
    default: return "something else";
    }
}

static gboolean
check_range (const GsParam *p, double v, const char *where, GError **error)
{
  if (!isfinite (v))
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: %s must be a finite number", where, p->key);
      return FALSE;
    }
  if (v < p->min || v > p->max)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                   "%s: %s = %.15g is out of range [%.15g, %.15g]%s%s", where, p->key,
                   v, p->min, p->max, p->unit && *p->unit ? " " : "",
                   p->unit ? p->unit : "");
      return FALSE;
    }
  return TRUE;
}

static gboolean
setting_number (const config_setting_t *s, double *out)
{
  switch (config_setting_type (s))
    {
    case CONFIG_TYPE_INT:
      *out = config_setting_get_int (s);
      return TRUE;
    case CONFIG_TYPE_INT64:
      *out = (double) config_setting_get_int64 (s);
      return TRUE;
    case CONFIG_TYPE_FLOAT:
      *out = config_setting_get_float (s);
      return TRUE;
    default:
      return FALSE;
    }
}

static gboolean
load_one (const GsParam *p, void *target, const config_setting_t *s,
          GError **error)
{
  g_autofree char *where = gs_cfg_where (s);
  double v;

  switch (p->type)
    {
    case GS_PARAM_INT:
      if ((p->flags & GS_PARAM_ALL)
          && config_setting_type (s) == CONFIG_TYPE_STRING
          && strcmp (config_setting_get_string (s), "all") == 0)
        {
          *FIELD (target, p, int) = 0;
          return TRUE;
        }
      if (config_setting_type (s) == CONFIG_TYPE_FLOAT)
        {
          double f = config_setting_get_float (s);
          if (f == floor (f) && fabs (f) < 1e15)
            g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                         "%s: %s: expected an integer, written without a "
                         "fraction or exponent (as %.0f)", where, p->key, f);
          else
            g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                         "%s: %s: expected an integer, got %g", where, p->key,
                         f);
          return FALSE;
        }
      if (!setting_number (s, &v))
        goto type_error;
      if (!check_range (p, v, where, error))
        return FALSE;
      *FIELD (target, p, int) = (int) v;
      return TRUE;
    case GS_PARAM_DOUBLE:
      if (!setting_number (s, &v))
        goto type_error;
      if (!check_range (p, v, where, error))
        return FALSE;
      *FIELD (target, p, double) = v;
      return TRUE;
    case GS_PARAM_BOOL:
      if (config_setting_type (s) != CONFIG_TYPE_BOOL)
        goto type_error;
      *FIELD (target, p, gboolean) = config_setting_get_bool (s) != 0;
      return TRUE;
    case GS_PARAM_STRING:
      if (config_setting_type (s) != CONFIG_TYPE_STRING)
        goto type_error;
      {
        char **f = FIELD (target, p, char *);
        g_free (*f);
        *f = g_strdup (config_setting_get_string (s));
      }
      return TRUE;
    case GS_PARAM_INT_LIST:
      {
        if (config_setting_type (s) != CONFIG_TYPE_ARRAY
            && config_setting_type (s) != CONFIG_TYPE_LIST)
          goto type_error;
        int len = config_setting_length (s);
        if (len > GS_INT_LIST_MAX)
          {
            g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                         "%s: %s: at most %d items", where, p->key,
                         GS_INT_LIST_MAX);
            return FALSE;
          }
        GsIntList *l = FIELD (target, p, GsIntList);
        l->n = 0;
        for (int i = 0; i < len; i++)
          {
            const config_setting_t *e = config_setting_get_elem (s, i);
            if (config_setting_type (e) != CONFIG_TYPE_INT
                && config_setting_type (e) != CONFIG_TYPE_INT64)
              {
                g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                             "%s: %s: item %d is not an integer", where,
                             p->key, i + 1);
                return FALSE;
              }
            setting_number (e, &v);
            if (!check_range (p, v, where, error))
              return FALSE;
            l->v[l->n++] = (int) v;
          }
      }
      return TRUE;
    }
  g_assert_not_reached ();

type_error:
  g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
               "%s: %s: expected %s, got %s", where, p->key,
               type_name (p), setting_type_name (s));
  return FALSE;
}

gboolean
gs_params_load (const GsParam *table, guint n, void *target,
                const GsCfgChain *chain, const char *prefix, GError **error)
{
  for (guint i = 0; i < n; i++)
    {
      const GsParam *p = &table[i];
      g_autofree char *key = g_strconcat (prefix ? prefix : "", p->key, NULL);
      config_setting_t *s = gs_cfg_chain_lookup (chain, key);
      if (s == NULL)
        {
          if (p->flags & GS_PARAM_REQUIRED)
            {
              g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                           "%s: missing required key '%s' (%s%s%s)",
                           gs_cfg_chain_file (chain), key, p->desc,
                           p->unit && *p->unit ? ", " : "",
                           p->unit ? p->unit : "");
              return FALSE;
            }
          continue;
        }
      if (!load_one (p, target, s, error))
        return FALSE;
      /* Every file is checked as written: a bad value in a base file is an
       * error even where a file based on it sets the key again. */
      gboolean shadowed = FALSE;
      for (guint f = 1; f < gs_cfg_chain_length (chain); f++)
        {
          config_setting_t *b = config_lookup (gs_cfg_chain_nth (chain, f),
                                               key);
          if (b == NULL || b == s)
            continue;
          if (!load_one (p, target, b, error))
            return FALSE;
          shadowed = TRUE;
        }
      if (shadowed && !load_one (p, target, s, NULL))
        g_assert_not_reached ();   /* S loaded above */
    }
  return TRUE;
}

gboolean
gs_params_load_group (const GsParam *table, guint n, void *target,
                      const config_setting_t *group, GError **error)
{
  for (guint i = 0; i < n; i++)
    {
      const GsParam *p = &table[i];
      const config_setting_t *s = config_setting_lookup (
        (config_setting_t *) group, p->key);
      if (s == NULL)
        {
          if (p->flags & GS_PARAM_REQUIRED)
            {
              g_autofree char *where = gs_cfg_where (group);
              g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                           "%s: missing required key '%s' (%s)", where,
                           p->key, p->desc);
              return FALSE;
            }
          continue;
        }
      if (!load_one (p, target, s, error))
        return FALSE;
    }
  return TRUE;
}

/* --------------------------------------------------------- unknown keys */

static guint
edit_distance (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  if (la > 64 || lb > 64)
    return 99;
  guint row[65];
  for (size_t j = 0; j <= lb; j++)
    row[j] = (guint) j;
  for (size_t i = 1; i <= la; i++)
    {
      guint prev = row[0];
      row[0] = (guint) i;
      for (size_t j = 1; j <= lb; j++)
        {
          guint cur = row[j];
          guint sub = prev + (a[i - 1] != b[j - 1]);
          guint best = MIN (row[j] + 1, row[j - 1] + 1);
          row[j] = MIN (best, sub);
          prev = cur;
        }
    }
  return row[lb];
}

static gboolean
is_opaque (const char *key, const char *const *opaque)
{
  for (const char *const *o = opaque; o && *o; o++)
    {
      size_t l = strlen (*o);
      if (strncmp (key, *o, l) == 0 && (key[l] == '\0' || key[l] == '.'))
        return TRUE;
    }
  return FALSE;
}

static gboolean
check_group (const GsParam *table, guint n, const config_setting_t *group,
             const char *path, const char *prefix, const char *const *opaque,
             GError **error)
{
  int len = config_setting_length (group);
  for (int i = 0; i < len; i++)
    {
      const config_setting_t *s = config_setting_get_elem (group, i);
      const char *name = config_setting_name (s);
      if (name == NULL)
        continue;
      g_autofree char *key = *path ? g_strconcat (path, ".", name, NULL)
                                   : g_strdup (name);
      if (is_opaque (key, opaque))
        continue;
      g_autofree char *full = g_strconcat (prefix ? prefix : "", key, NULL);
      if (config_setting_type (s) == CONFIG_TYPE_GROUP
          && gs_params_find (table, n, key) == NULL)
        {
          if (!check_group (table, n, s, key, prefix, opaque, error))
            return FALSE;
          continue;
        }
      if (gs_params_find (table, n, key) != NULL)
        continue;
      /* Unknown: suggest the nearest key. */
      const char *best = NULL;
      guint bestd = 4;
      for (guint j = 0; j < n; j++)
        {
          guint d = edit_distance (key, table[j].key);
          if (d < bestd)
            {
              bestd = d;
              best = table[j].key;
            }
        }
      g_autofree char *where = gs_cfg_where (s);
      if (best != NULL)
        g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                     "%s: unknown key '%s' (did you mean '%s%s'?)", where,
                     full, prefix ? prefix : "", best);
      else
        g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                     "%s: unknown key '%s'", where, full);
      return FALSE;
    }
  return TRUE;
}

gboolean
gs_params_check_unknown (const GsParam *table, guint n,
                         const config_setting_t *group, const char *prefix,
                         const char *const *opaque, GError **error)
{
  return check_group (table, n, group, "", prefix, opaque, error);
}

/* -------------------------------------------------------------- set/get */

gboolean
gs_params_set (const GsParam *table, guint n, void *target, const char *key,
               const char *value, GError **error)
{
  const GsParam *p = gs_params_find (table, n, key);
  if (p == NULL)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_USAGE, "unknown parameter '%s'",
                   key);
      return FALSE;
    }
  char *end = NULL;
  g_autofree char *where = g_strdup_printf ("--set %s=%s", key, value);
  if (p->type == GS_PARAM_INT && (p->flags & GS_PARAM_ALL)
      && strcmp (value, "all") == 0)
    {
      *FIELD (target, p, int) = 0;
      return TRUE;
    }
  switch (p->type)
    {
    case GS_PARAM_INT:
    case GS_PARAM_DOUBLE:
      {
        errno = 0;
        double v = g_ascii_strtod (value, &end);
        if (end == value || *end != '\0' || errno != 0)
          {
            g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                         "%s: expected %s", where, type_name (p));
            return FALSE;
          }
        /* An integer is written as one, as in a file: no fraction or
         * exponent (12.0 and 1e2 are refused there too). */
        if (p->type == GS_PARAM_INT
            && value[strspn (value, "+-0123456789")] != '\0')
          {
            g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                         "%s: expected an integer, without a fraction or "
                         "exponent", where);
            return FALSE;
          }
        if (!check_range (p, v, where, error))
          {
            (*error)->code = GS_ERROR_USAGE;
            return FALSE;
          }
        if (p->type == GS_PARAM_INT)
          *FIELD (target, p, int) = (int) v;
        else
          *FIELD (target, p, double) = v;
        return TRUE;
      }
    case GS_PARAM_BOOL:
      if (g_ascii_strcasecmp (value, "true") == 0
          || strcmp (value, "1") == 0)
        *FIELD (target, p, gboolean) = TRUE;
      else if (g_ascii_strcasecmp (value, "false") == 0
               || strcmp (value, "0") == 0)
        *FIELD (target, p, gboolean) = FALSE;
      else
        {
          g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                       "%s: expected true or false", where);
          return FALSE;
        }
      return TRUE;
    case GS_PARAM_STRING:
      {
        char **f = FIELD (target, p, char *);
        g_free (*f);
        *f = g_strdup (value);
        return TRUE;
      }
    case GS_PARAM_INT_LIST:
      {
        GsIntList l = { 0 };
        g_auto (GStrv) parts = g_strsplit (value, ":", -1);
        for (char **q = parts; *q; q++)
          {
            if (l.n >= GS_INT_LIST_MAX)
              break;
            gint64 v;
            if (!g_ascii_string_to_signed (*q, 10, G_MININT, G_MAXINT, &v,
                                           NULL)
                || v < p->min || v > p->max)
              {
                g_set_error (error, GS_ERROR, GS_ERROR_USAGE,
                             "%s: expected integers separated by ':'", where);
                return FALSE;
              }
            l.v[l.n++] = (int) v;
          }
        *FIELD (target, p, GsIntList) = l;
        return TRUE;
      }
    }
  g_assert_not_reached ();
}

double
gs_param_get_number (const GsParam *p, const void *target)
{
  switch (p->type)
    {
    case GS_PARAM_INT:
      return *FIELD (target, p, const int);
    case GS_PARAM_DOUBLE:
      return *FIELD (target, p, const double);
    case GS_PARAM_BOOL:
      return *FIELD (target, p, const gboolean) ? 1.0 : 0.0;
    default:
      return NAN;
    }
}

char *
gs_param_format (const GsParam *p, const void *target)
{
  switch (p->type)
    {
    case GS_PARAM_INT:
      return g_strdup_printf ("%d", *FIELD (target, p, const int));
    case GS_PARAM_DOUBLE:
      return g_strdup_printf ("%.6g", *FIELD (target, p, const double));
    case GS_PARAM_BOOL:
      return g_strdup (*FIELD (target, p, const gboolean) ? "true" : "false");
    case GS_PARAM_STRING:
      {
        const char *s = *FIELD (target, p, char *const);
        return g_strdup (s ? s : "");
      }
    case GS_PARAM_INT_LIST:
      {
        const GsIntList *l = FIELD (target, p, const GsIntList);
        GString *g = g_string_new ("[");
        for (int i = 0; i < l->n; i++)
          g_string_append_printf (g, "%s%d", i ? ", " : "", l->v[i]);
        g_string_append_c (g, ']');
        return g_string_free (g, FALSE);
      }
    }
  g_assert_not_reached ();
}
