#include "config.h"
#include "sim/error.h"

#include <string.h>

G_DEFINE_QUARK (gs-error-quark, gs_error)

int
gs_error_exit_status (const GError *error)
{
  if (error == NULL)
    return 0;
  if (error->domain != GS_ERROR)
    return 3;                   /* file, JSON and parse errors are bad input */
  switch ((GsErrorCode) error->code)
    {
    case GS_ERROR_PREDICT:
      return 1;
    case GS_ERROR_USAGE:
      return 2;
    case GS_ERROR_INPUT:
    case GS_ERROR_IO:
    default:
      return 3;
    }
}

const char *
gs_plural (double n, const char *one, const char *many)
{
  return n >= 0.5 && n < 1.5 ? one : many;
}

static gint
cmp_str (gconstpointer a, gconstpointer b)
{
  return strcmp (*(const char *const *) a, *(const char *const *) b);
}

GPtrArray *
gs_sorted_keys (GHashTable *table)
{
  GPtrArray *keys = g_ptr_array_new ();
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init (&it, table);
  while (g_hash_table_iter_next (&it, &k, NULL))
    g_ptr_array_add (keys, k);
  g_ptr_array_sort (keys, cmp_str);
  return keys;
}
