/* gpusim: a progress line on standard error (see progress.h). */
#include "config.h"
#include "src/progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SHOW_AFTER_US 1000000     /* a terminal: nothing before a second */
#define REDRAW_US 100000          /* at most ten redraws a second */

void
gs_cli_progress_init (GsCliProgress *p, const char *cmd, gboolean forced)
{
  memset (p, 0, sizeof *p);
  p->cmd = cmd;
  p->tty = isatty (fileno (stderr));
  p->forced = forced;
  p->t0 = g_get_monotonic_time ();
  p->tenth = -1;
}

void
gs_cli_progress_update (void *data, const char *what, guint done,
                        guint total)
{
  GsCliProgress *p = data;
  if (!p->tty && !p->forced)
    return;
  int pct = total ? (int) (100.0 * done / total) : 100;
  gboolean new_stage = p->what == NULL || strcmp (p->what, what) != 0;
  if (new_stage)
    {
      g_free (p->what);
      p->what = g_strdup (what);
      p->tenth = -1;
    }
  if (!p->tty)
    {
      /* A log: one line per tenth reached. */
      if (pct / 10 == p->tenth)
        return;
      p->tenth = pct / 10;
      fprintf (stderr, "%s: %s: %u of %u (%d%%)\n", p->cmd, what, done, total,
               pct);
      fflush (stderr);
      return;
    }
  gint64 now = g_get_monotonic_time ();
  if (!p->forced && now - p->t0 < SHOW_AFTER_US)
    return;
  if (p->drawn && !new_stage && done < total && now - p->last < REDRAW_US)
    return;
  fprintf (stderr, "\r\033[K%s: %s: %u of %u (%d%%)", p->cmd, what, done,
           total, pct);
  fflush (stderr);
  p->drawn = TRUE;
  p->last = now;
}

void
gs_cli_progress_end (GsCliProgress *p)
{
  if (p->drawn)
    {
      fputs ("\r\033[K", stderr);
      fflush (stderr);
    }
  p->drawn = FALSE;
  g_clear_pointer (&p->what, g_free);
}
