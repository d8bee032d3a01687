/* gpusim fuzz harnesses: scratch files (see fuzz.h). */
#include "config.h"
#include "tests/fuzz/fuzz.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *
gs_fuzz_srcfile (const char *relative)
{
  const char *src = g_getenv ("GS_SRCDIR");
  return g_build_filename (src ? src : GS_FUZZ_SRCDIR, relative, NULL);
}

GsArch *
gs_fuzz_arch (const char *relative)
{
  static GsArch *arch;
  static const char *loaded;
  if (arch == NULL)
    {
      g_autofree char *file = gs_fuzz_srcfile (relative);
      GError *e = NULL;
      arch = gs_arch_load_file (file, &e);
      if (arch == NULL)
        g_error ("%s", e->message);
      loaded = relative;
    }
  g_assert (strcmp (loaded, relative) == 0);
  return arch;
}

static char *scratch;      /* the scratch directory, once created */

static void
remove_scratch (void)
{
  GDir *d = g_dir_open (scratch, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *p = g_build_filename (scratch, name, NULL);
      g_unlink (p);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (scratch);
}

/* Relative names inputs may use: workloads name configs/..., tests name
 * models/... and arch files name their base files. */
static void
link_sources (const char *dir)
{
  static const char *const links[][2] = {
    { "configs", "examples/configs" },
    { "models", "tests/data/models" },
    { "arch", "arch" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (links); i++)
    {
      g_autofree char *target = gs_fuzz_srcfile (links[i][1]);
      g_autofree char *link = g_build_filename (dir, links[i][0], NULL);
      if (symlink (target, link) != 0)
        g_error ("cannot link %s: %s", link, g_strerror (errno));
    }
}

const char *
gs_fuzz_dir (void)
{
  if (scratch == NULL)
    {
      GError *e = NULL;
      /* In memory where possible: harnesses write a file per input, and
       * the writers under test fsync. */
      if (g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR)
          && access ("/dev/shm", W_OK) == 0)
        {
          scratch = g_strdup ("/dev/shm/gpusim-fuzz-XXXXXX");
          if (g_mkdtemp (scratch) == NULL)
            g_clear_pointer (&scratch, g_free);
        }
      if (scratch == NULL)
        scratch = g_dir_make_tmp ("gpusim-fuzz-XXXXXX", &e);
      if (scratch == NULL)
        g_error ("cannot make a scratch directory: %s", e->message);
      link_sources (scratch);
      atexit (remove_scratch);
    }
  return scratch;
}

char *
gs_fuzz_write (const char *name, const uint8_t *data, size_t size)
{
  char *path = g_build_filename (gs_fuzz_dir (), name, NULL);
  FILE *f = fopen (path, "wb");
  if (f == NULL || fwrite (data, 1, size, f) != size || fclose (f) != 0)
    g_error ("cannot write %s: %s", path, g_strerror (errno));
  return path;
}
