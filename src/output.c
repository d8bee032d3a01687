/* gpusim: atomic output files (see output.h). */
#include "config.h"
#include "src/output.h"
#include "sim/error.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct GsOutput {
  FILE *fp;
  char *path;      /* NULL for stdout */
  char *tmp;       /* NULL when written in place */
};

/* Devices and pipes (/dev/null, /dev/stdout, a FIFO) are written in place:
 * a file renamed over them would replace them. */
static gboolean
is_special (const char *path)
{
  GStatBuf st;
  return g_stat (path, &st) == 0 && !S_ISREG (st.st_mode);
}

gboolean
gs_output_same (const char *a, const char *b)
{
  if (strcmp (a, "-") == 0 || strcmp (b, "-") == 0)
    return strcmp (a, b) == 0;
  if (is_special (a) || is_special (b))
    return FALSE;
  g_autofree char *ca = g_canonicalize_filename (a, NULL);
  g_autofree char *cb = g_canonicalize_filename (b, NULL);
  if (strcmp (ca, cb) == 0)
    return TRUE;
  GStatBuf sa, sb;
  return g_stat (a, &sa) == 0 && g_stat (b, &sb) == 0
         && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

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
  if (is_special (path))
    {
      o->fp = g_fopen (path, "w");
      if (o->fp != NULL)
        return o;
      g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s: cannot open: %s",
                   path, g_strerror (errno));
      g_free (o->path);
      g_free (o);
      return NULL;
    }
  o->tmp = g_strconcat (path, ".XXXXXX", NULL);
  /* Mode 0666 less the umask, as a file the shell creates would have
   * (g_mkstemp's 0600 would outlive the rename). */
  int fd = g_mkstemp_full (o->tmp, O_RDWR, 0666);
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
      ok = fflush (o->fp) == 0 && !ferror (o->fp);
      int e = errno;
      if (o->path != NULL && fclose (o->fp) != 0 && ok)
        {
          ok = FALSE;
          e = errno;
        }
      if (!ok)
        g_set_error (error, GS_ERROR, GS_ERROR_IO, "%s%s: %s",
                     o->path ? o->path : "cannot write standard output",
                     o->path ? ": cannot write" : "", g_strerror (e));
      g_free (o->path);
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
  else if (o->path != NULL)
    fclose (o->fp);          /* a device or pipe: nothing to take back */
  g_free (o->path);
  g_free (o->tmp);
  g_free (o);
}

char *
gs_json_text (JsonBuilder *b)
{
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  return json_generator_to_data (gen, NULL);
}
