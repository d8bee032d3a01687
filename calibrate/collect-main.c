/* gpusim-collect: runs a program with the CUPTI kernel collector injected
 * and writes every kernel it launches to a measurement CSV.
 *
 *   gpusim-collect [-o FILE] [--preload] [--lib PATH] -- COMMAND [ARG...]
 *
 * The collector library (libgscollect.so) is found through --lib,
 * $GPUSIM_COLLECT_LIB, next to this program (a build tree), or in the
 * installed library directory.  It is injected with CUDA_INJECTION64_PATH
 * (or LD_PRELOAD with --preload); see gpusim-measurements(5). */
#include "config.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LIB_NAME "libgscollect.so"

static char *
find_library (const char *given)
{
  if (given)
    return g_canonicalize_filename (given, NULL);
  const char *env = g_getenv ("GPUSIM_COLLECT_LIB");
  if (env && *env)
    return g_canonicalize_filename (env, NULL);
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  if (self)
    {
      g_autofree char *dir = g_path_get_dirname (self);
      char *here = g_build_filename (dir, LIB_NAME, NULL);
      if (g_file_test (here, G_FILE_TEST_IS_REGULAR))
        return here;
      g_free (here);
    }
  return g_build_filename (GS_PKGLIBDIR, LIB_NAME, NULL);
}

static void
add_preload (const char *lib)
{
  const char *old = g_getenv ("LD_PRELOAD");
  g_autofree char *v = old && *old ? g_strconcat (lib, ":", old, NULL) : g_strdup (lib);
  g_setenv ("LD_PRELOAD", v, TRUE);
}

int
main (int argc, char **argv)
{
  g_autofree char *out = NULL, *lib = NULL;
  gboolean preload = FALSE;
  GOptionEntry entries[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out,
      "measurement CSV to write (default collect.csv; %p: process id)", "FILE" },
    { "preload", 0, 0, G_OPTION_ARG_NONE, &preload,
      "inject with LD_PRELOAD instead of CUDA_INJECTION64_PATH", NULL },
    { "lib", 0, 0, G_OPTION_ARG_FILENAME, &lib,
      "the collector library (" LIB_NAME ")", "PATH" },
    { NULL }
  };
  g_autoptr (GOptionContext) ctx = g_option_context_new ("-- COMMAND [ARG...]");
  g_option_context_set_summary (ctx, "Record every CUDA kernel COMMAND launches "
                                "(CUPTI) into a gpusim measurement CSV.");
  g_option_context_add_main_entries (ctx, entries, NULL);
  GError *error = NULL;
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "gpusim-collect: %s (see --help)\n", error->message);
      g_error_free (error);
      return 2;
    }
  int first = argc > 1 && strcmp (argv[1], "--") == 0 ? 2 : 1;
  if (first >= argc)
    {
      fprintf (stderr, "gpusim-collect: no command to run: "
               "gpusim-collect [-o FILE] -- COMMAND [ARG...]\n");
      return 2;
    }
  g_autofree char *path = find_library (lib);
  if (!g_file_test (path, G_FILE_TEST_IS_REGULAR))
    {
      fprintf (stderr, "gpusim-collect: %s: no such collector library "
               "(give --lib PATH)\n", path);
      return 2;
    }
  g_autofree char *abs_out = g_canonicalize_filename (out ? out : "collect.csv", NULL);
  g_setenv ("GPUSIM_COLLECT_OUT", abs_out, TRUE);
  if (preload)
    add_preload (path);
  else
    g_setenv ("CUDA_INJECTION64_PATH", path, TRUE);
  execvp (argv[first], argv + first);
  fprintf (stderr, "gpusim-collect: cannot run %s: %s\n", argv[first],
           g_strerror (errno));
  return 127;
}
