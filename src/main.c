#include "config.h"
#include "src/commands.h"
#include <glib.h>
#include <stdio.h>
#include <string.h>
int main (int argc, char **argv) { (void) argc; (void) argv; return 0; }
