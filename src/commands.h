/* gpusim: subcommands of the command line.  Each returns the exit status. */
#ifndef GS_COMMANDS_H
#define GS_COMMANDS_H

int gs_cmd_run (int argc, char **argv);
int gs_cmd_arch (int argc, char **argv);

#endif
