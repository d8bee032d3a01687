/* gpusim: helpers shared by the subcommands. */
#include "config.h"
#include "src/commands.h"
#include "sim/error.h"
#include "calibrate/csv.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int
gs_cli_fail (const char *cmd, GError *error)
{
  int status = gs_error_exit_status (error);
  fprintf (stderr, "gpusim %s: %s\n", cmd, error ? error->message : "failed");
  g_clear_error (&error);
  return status ? status : 1;
}

gboolean
gs_cli_parse (GOptionContext *ctx, int *argc, char ***argv, GError **error)
{
  if (g_option_context_parse (ctx, argc, argv, error))
    return TRUE;
  (*error)->domain = GS_ERROR;
  (*error)->code = GS_ERROR_USAGE;
  return FALSE;
}

gboolean
gs_cli_usage (GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  g_autofree char *msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_set_error_literal (error, GS_ERROR, GS_ERROR_USAGE, msg);
  return FALSE;
}

const char *
gs_cli_workload_input (const char *workload, GBytes **text, GError **error)
{
  *text = NULL;
  if (strcmp (workload, "-") != 0)
    return workload;
  *text = gs_csv_read_stdin (error);
  return *text ? GS_CSV_STDIN : NULL;
}
