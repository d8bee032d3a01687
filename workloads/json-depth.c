/* gpusim: JSON nesting guard and key lines (see json-depth.h). */
#include "config.h"
#include "workloads/json-depth.h"
#include "sim/error.h"

#include <string.h>

gboolean
gs_json_check_depth (const char *data, gsize len, const char *name,
                     GError **error)
{
  guint depth = 0, line = 1;
  gsize line_start = 0;
  gboolean in_string = FALSE;
  for (gsize i = 0; i < len; i++)
    {
      char c = data[i];
      if (c == '\n')
        {
          line++;
          line_start = i + 1;
        }
      else if (in_string)
        {
          if (c == '\\')
            i++;                   /* the escaped character */
          else if (c == '"')
            in_string = FALSE;
        }
      else if (c == '"')
        in_string = TRUE;
      else if ((c == '[' || c == '{') && ++depth > GS_JSON_MAX_DEPTH)
        {
          g_set_error (error, GS_ERROR, GS_ERROR_INPUT,
                       "%s:%u:%" G_GSIZE_FORMAT ": arrays and objects nest "
                       "more than %d deep", name, line, i - line_start + 1,
                       GS_JSON_MAX_DEPTH);
          return FALSE;
        }
      else if ((c == ']' || c == '}') && depth > 0)
        depth--;
    }
  return TRUE;
}

/* The lines of the keys of the top-level object (MEMBER NULL) or of the
 * object the top-level key MEMBER holds. */
static GHashTable *
key_lines (const char *data, gsize len, const char *member)
{
  GHashTable *lines = g_hash_table_new_full (g_str_hash, g_str_equal,
                                             g_free, NULL);
  guint depth = 0, line = 1;
  guint want = member ? 2 : 1;    /* the depth of the keys looked for */
  gboolean next_member = FALSE;   /* the next value is MEMBER's */
  gboolean inside = member == NULL;
  for (gsize i = 0; i < len; i++)
    {
      char c = data[i];
      if (c == '\n')
        line++;
      else if (c == '[' || c == '{')
        {
          depth++;
          if (member && depth == 2)
            inside = c == '{' && next_member;
          next_member = FALSE;
        }
      else if ((c == ']' || c == '}') && depth > 0)
        depth--;
      else if (c == '"')
        {
          gsize start = i + 1;
          guint at = line;
          for (i = start; i < len && data[i] != '"'; i++)
            if (data[i] == '\\')
              i++;                 /* the escaped character */
            else if (data[i] == '\n')
              line++;              /* not valid JSON; the parser says so */
          if (i >= len)
            break;
          gsize end = i;
          if (depth != want && depth != 1)
            continue;
          gsize j = end + 1;     /* the scan goes on from END */
          while (j < len && g_ascii_isspace (data[j]))
            j++;
          if (j >= len || data[j] != ':')
            continue;
          if (member && depth == 1)
            next_member = end - start == strlen (member)
                          && strncmp (data + start, member, end - start) == 0;
          else if (depth == want && inside)
            g_hash_table_insert (lines, g_strndup (data + start, end - start),
                                 GUINT_TO_POINTER (at));
        }
    }
  return lines;
}

GHashTable *
gs_json_key_lines (const char *data, gsize len)
{
  return key_lines (data, len, NULL);
}

GHashTable *
gs_json_member_key_lines (const char *data, gsize len, const char *member)
{
  return key_lines (data, len, member);
}
