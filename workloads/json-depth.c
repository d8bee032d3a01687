/* gpusim: JSON nesting guard (see json-depth.h). */
#include "config.h"
#include "workloads/json-depth.h"
#include "sim/error.h"

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
