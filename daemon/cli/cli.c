/* cli.c - command-line helpers shared by the parqd subcommands. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

int cli_take_opt(int argc, char **argv, int *i, const char *opt, const char **val)
{
    size_t n = strlen(opt);
    if (strncmp(argv[*i], opt, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *val = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != '\0')
        return 0;
    *val = *i + 1 < argc ? argv[++*i] : NULL;
    return 1;
}

int cli_store_opt(const char *cmd, const char *unknown, const char **dst, const char *val,
                  const char *arg)
{
    if (dst == NULL || val == NULL || val[0] == '\0' || *dst != NULL) {
        fprintf(stderr, "parqd %s: %s '%s'\n", cmd,
                dst == NULL ? unknown : *dst ? "repeated option" : "missing value for", arg);
        return -1;
    }
    *dst = val;
    return 0;
}
