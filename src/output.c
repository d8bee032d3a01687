/* gpusim: atomic output files (see output.h). */
#include "config.h"
#include "src/output.h"
#include "sim/error.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

struct GsOutput {
  FILE *fp;
  char *path;
  char *tmp;       /* NULL for stdout */
};

GsOutput *
gs_output_open (const char *path, GError **error)
{
  GsOutput *o = g_new0 (GsOutput, 1);
  if (strcmp (path, "-") == 0)
    {
      o->fp = stdout;
      return o;
    }
  o->path = g_strdup (path);
  o->tmp = g_strconcat (path, ".XXXXXX", NULL);
  int fd = g_mkstemp (o->tmp);
  if (fd < 0)
    {
      int e = errno;
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot create: %s",
                   path, g_strerror (e));
      g_free (o->path);
      g_free (o->tmp);
      g_free (o);
      return NULL;
    }
  o->fp = fdopen (fd, "w");
  return o;
}

FILE *
gs_output_file (GsOutput *o)
{
  return o->fp;
}

gboolean
gs_output_commit (GsOutput *o, GError **error)
{
  gboolean ok = TRUE;
  if (o->tmp == NULL)
    {
      ok = fflush (o->fp) == 0;
      if (!ok)
        g_set_error (error, GS_ERROR, GS_ERROR_IO,
                     "cannot write standard output: %s", g_strerror (errno));
      g_free (o);
      return ok;
    }
  if (fflush (o->fp) != 0 || ferror (o->fp) || fsync (fileno (o->fp)) != 0)
    ok = FALSE;
  int e = errno;
  if (fclose (o->fp) != 0)
    ok = FALSE;
  if (ok && g_rename (o->tmp, o->path) != 0)
    {
      e = errno;
      ok = FALSE;
    }
  if (!ok)
    {
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot write: %s",
                   o->path, g_strerror (e));
      g_unlink (o->tmp);
    }
  g_free (o->path);
  g_free (o->tmp);
  g_free (o);
  return ok;
}

void
gs_output_abort (GsOutput *o)
{
  if (o == NULL)
    return;
  if (o->tmp != NULL)
    {
      fclose (o->fp);
      g_unlink (o->tmp);
    }
  g_free (o->path);
  g_free (o->tmp);
  g_free (o);
}
