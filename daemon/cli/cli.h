/* cli.h - command-line helpers shared by the parqd subcommands. */
#ifndef PQ_CLI_H
#define PQ_CLI_H

/* Accepts "--opt VALUE" and "--opt=VALUE" at argv[*i]. Returns 1 if it was
 * opt (advancing *i past a separate value; *val NULL when the value is
 * missing), else 0. */
int cli_take_opt(int argc, char **argv, int *i, const char *opt, const char **val);

/* Stores an option's value taken by cli_take_opt in *dst. dst NULL (arg
 * was no option cmd knows, which `unknown` names), a missing or empty
 * value, or an option given twice: prints "parqd CMD: WHY 'ARG'" to
 * stderr and returns -1; else 0. */
int cli_store_opt(const char *cmd, const char *unknown, const char **dst, const char *val,
                  const char *arg);

#endif
