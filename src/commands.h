/* gpusim: subcommands of the command line.  Each takes argv from its own
 * name on and returns the exit status (0 ok, 1 no prediction, 2 usage,
 * 3 bad input). */
#ifndef GS_COMMANDS_H
#define GS_COMMANDS_H

#include <glib.h>

int gs_cmd_run (int argc, char **argv);
int gs_cmd_arch (int argc, char **argv);
int gs_cmd_predict (int argc, char **argv);
int gs_cmd_validate (int argc, char **argv);
int gs_cmd_calibrate (int argc, char **argv);
int gs_cmd_explain (int argc, char **argv);
int gs_cmd_sweep (int argc, char **argv);
int gs_cmd_import (int argc, char **argv);

/* The value of an integer option that was not given, where 0 is a value
 * the option refuses (or, for some, a value of its own). */
#define GS_CLI_UNSET G_MININT

int gs_print_version (void);
/* Prints "gpusim CMD: message" for ERROR and returns its exit status. */
int gs_cli_fail (const char *cmd, GError *error);
/* Parses the options of CTX; GOption's own errors become usage errors
 * (exit status 2). */
gboolean gs_cli_parse (GOptionContext *ctx, int *argc, char ***argv,
                       GError **error);
/* Sets a usage error (exit status 2) and returns FALSE. */
gboolean gs_cli_usage (GError **error, const char *fmt, ...)
  G_GNUC_PRINTF (2, 3);

/* The WORKLOAD argument of run, sweep and explain: "-" reads standard
 * input whole into *TEXT (for GsWorkloadOptions.text) and returns the
 * name it has in messages, "<stdin>"; any other is a file, returned with
 * *TEXT NULL.  NULL when standard input cannot be read. */
const char *gs_cli_workload_input (const char *workload, GBytes **text,
                                   GError **error);

#endif
