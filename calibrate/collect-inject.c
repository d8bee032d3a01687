/* gpusim: libgscollect.so's entry points when it is loaded into another
 * program, by LD_PRELOAD or by the CUDA driver through
 * CUDA_INJECTION64_PATH (which calls InitializeInjection during cuInit).
 *
 * GPUSIM_COLLECT_OUT names the CSV to write at exit ("%p" becomes the
 * process id, for programs that fork workers).  A process that ran no
 * kernel writes nothing, so helper processes do not overwrite the file.
 * This is a tool's entry point, like main(): it reports on stderr. */
#include "config.h"
#include "calibrate/collect.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define OUT_ENV "GPUSIM_COLLECT_OUT"

int InitializeInjection (void);

static char *
output_path (void)
{
  const char *out = g_getenv (OUT_ENV);
  if (out == NULL || *out == '\0')
    out = "gpusim-collect-%p.csv";
  g_autofree char *pid = g_strdup_printf ("%ld", (long) getpid ());
  g_auto (GStrv) parts = g_strsplit (out, "%p", -1);
  return g_strjoinv (pid, parts);
}

/* The profiled command line, from /proc (the program's argv is not ours). */
static char *
command_line (void)
{
  char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents ("/proc/self/cmdline", &text, &len, NULL))
    return g_strdup ("");
  for (gsize i = 0; i + 1 < len; i++)
    if (text[i] == '\0')
      text[i] = ' ';
  return text;
}

static void
write_at_exit (void)
{
  g_autofree char *out = output_path ();
  gs_collect_stop ();
  if (!gs_collect_has_kernels ())
    return;
  if (gs_collect_write (out) != 0)
    fprintf (stderr, "gpusim-collect: %s\n", gs_collect_error ());
  else
    fprintf (stderr, "gpusim-collect: wrote %s\n", out);
}

/* Starts once, whichever entry point comes first. */
static void
start (void)
{
  static gsize done;
  if (!g_once_init_enter (&done))
    return;
  if (gs_collect_start () != 0)
    fprintf (stderr, "gpusim-collect: cannot record kernels: %s\n",
             gs_collect_error ());
  else
    {
      g_autofree char *cmd = command_line ();
      gs_collect_provenance ("command", cmd);
      atexit (write_at_exit);
    }
  g_once_init_leave (&done, 1);
}

__attribute__ ((constructor)) static void
on_load (void)
{
  if (g_getenv (OUT_ENV) != NULL)
    start ();
}

/* The CUDA driver's injection hook: returns 1 on success. */
__attribute__ ((visibility ("default"))) int
InitializeInjection (void)
{
  start ();
  return 1;
}
