/* main.c - parqd command line: a thin dispatcher to the subcommands of
 * DESIGN.md "Command line" (daemon, convert, check, version).
 *
 * Each subcommand lives in its own daemon/cmd_<name>.c as
 * `int cmd_<name>(int argc, char **argv)` (argv[0] is the subcommand, or
 * "parqd" for the daemon) and returns the process exit status: 0 ok,
 * 1 configuration/usage error, 2 some records rejected, 3 I/O or internal
 * failure. Adding one means pointing its table entry below at it. */
#include <stdio.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

int cmd_check(int argc, char **argv);
int cmd_convert(int argc, char **argv);   /* daemon/cli/cmd_convert.c */
int cmd_run(int argc, char **argv);       /* daemon/cli/cmd_run.c */

static void usage(FILE *to)
{
    fputs("usage: parqd [--config FILE]            run the daemon\n"
          "       parqd convert [--config FILE] [--schema FILE] [-o OUT] [INPUT...|-]\n"
          "       parqd check [--config FILE] [--schema FILE]\n"
          "       parqd version\n", to);
}

static int cmd_version(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        usage(stderr);
        return 1;
    }
    printf("parqd version %s\n", PARQD_VERSION);
    return 0;
}

static const struct command {
    const char *name;
    int (*run)(int argc, char **argv);
} commands[] = {
    {"check", cmd_check},
    {"convert", cmd_convert},
    {"version", cmd_version},
};

/* The daemon takes no subcommand word: `parqd` or `parqd --config FILE`. */
static int (*const run_daemon)(int, char **) = cmd_run;

/* glibc raises its mmap threshold (to 32 MiB) after the first large free,
 * after which a pipeline's page, segment and batch buffers (a few hundred
 * KiB to a few MiB, allocated and freed by different threads) come from
 * per-thread heaps that fragment and do not shrink: 15-20 MiB more peak
 * RSS on a 200 MB convert. A fixed threshold keeps them mmapped, so what
 * is freed goes back to the system. */
static void malloc_setup(void)
{
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 128 << 10);
#endif
}

int main(int argc, char **argv)
{
    malloc_setup();
    if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
                      strcmp(argv[1], "help") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc < 2 || argv[1][0] == '-') {
        argv[0] = "parqd";
        return run_daemon(argc, argv);
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "parqd: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 1;
}
