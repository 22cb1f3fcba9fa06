/* cli.h - command-line helpers shared by the parqd subcommands. */
#ifndef PQ_CLI_H
#define PQ_CLI_H

/* Accepts "--opt VALUE" and "--opt=VALUE" at argv[*i]. Returns 1 if it was
 * opt (advancing *i past a separate value; *val NULL when the value is
 * missing), else 0. */
int cli_take_opt(int argc, char **argv, int *i, const char *opt, const char **val);

#endif
