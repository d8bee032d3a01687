/* gpusim: helpers shared by the subcommands. */
#include "config.h"
#include "src/commands.h"
#include "sim/error.h"

#include <stdio.h>

int
gs_cli_fail (const char *cmd, GError *error)
{
  int status = gs_error_exit_status (error);
  fprintf (stderr, "gpusim %s: %s\n", cmd, error ? error->message : "failed");
  g_clear_error (&error);
  return status ? status : 1;
}
