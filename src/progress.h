/* gpusim: a progress line on standard error for long runs.
 *
 * Shown on a terminal once a run has taken a second (a short run prints
 * nothing), redrawn in place at most ten times a second and erased at
 * the end, so that it never mixes with the report.  Forced (--progress),
 * it shows from the start and, where standard error is not a terminal,
 * prints one line per tenth of each stage instead of redrawing.
 */
#ifndef GS_CLI_PROGRESS_H
#define GS_CLI_PROGRESS_H

#include <glib.h>

typedef struct {
  const char *cmd;         /* "gpusim run" */
  gboolean tty, forced;
  gint64 t0, last;         /* monotonic us: started, last drawn */
  gboolean drawn;          /* a line is on the terminal */
  char *what;              /* the stage of the last call */
  int tenth;               /* the last tenth printed (not a terminal) */
} GsCliProgress;

void gs_cli_progress_init (GsCliProgress *p, const char *cmd,
                           gboolean forced);
/* A GsProgressFunc; DATA is a GsCliProgress. */
void gs_cli_progress_update (void *data, const char *what, guint done,
                             guint total);
/* Erases the line (a terminal); call before anything else is printed. */
void gs_cli_progress_end (GsCliProgress *p);

#endif
