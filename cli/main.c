/*
 * main.c — the `avo` command line: finds the command in the table
 * (commands.c) and runs its handler.  The engine itself is the core library
 * (archive, pool, backends) and the Lua host; run and eval are implemented
 * in Lua (lua/avo/cli.lua).
 *
 * Exit status: 0 success, 1 failure, 2 usage error, 3 broken environment
 * (infrastructure faults), 128 + N for a run stopped by signal N.
 */
#include <stdio.h>
#include <string.h>

#include "core/avo.h"
#include "avo_config.h"
#include "cli/cli.h"

int main(int argc, char **argv)
{
    avo_self_exe(); /* before anything could change the working directory */
    if (argc < 2) {
        avo_cli_print_usage(stderr);
        return AVO_CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        avo_cli_print_usage(stdout);
        return 0;
    }
    if (!strcmp(name, "--version")) {
        puts("avo " AVO_VERSION);
        return 0;
    }
    const avo_cli_command *cmd = avo_cli_command_find(name);
    if (!cmd) {
        fprintf(stderr, "avo: unknown command '%s'\n\n", name);
        avo_cli_print_usage(stderr);
        return AVO_CLI_EXIT_USAGE;
    }
    return cmd->handler(cmd, argc - 1, argv + 1);
}
