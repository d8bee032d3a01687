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

int gs_print_version (void);
/* Prints "gpusim CMD: message" for ERROR and returns its exit status. */
int gs_cli_fail (const char *cmd, GError *error);

#endif
