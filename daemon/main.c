/* main.c - parqd command line: dispatches to the daemon, convert, check
 * and version subcommands (DESIGN.md "Command line"). */
#include <stdio.h>
#include <string.h>

static int cmd_version(void)
{
    printf("parqd version %s\n", PARQD_VERSION);
    return 0;
}

static void usage(FILE *to)
{
    fputs("usage: parqd [--config FILE]\n"
          "       parqd convert [--config FILE] [--schema FILE] [-o OUT] [INPUT...|-]\n"
          "       parqd check [--config FILE] [--schema FILE]\n"
          "       parqd version\n", to);
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "version") == 0)
        return cmd_version();
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "parqd: this build implements only 'version' so far\n");
    usage(stderr);
    return 1;
}
