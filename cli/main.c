/*
 * main.c — the `avo` command line: argument parsing and printing.  The
 * engine itself is the core library (archive, pool, backends) and the Lua
 * host; run and eval are implemented in Lua (lua/avo/cli.lua).
 *
 * Exit status: 0 success, 1 failure, 2 usage error, 3 broken environment
 * (infrastructure faults), 128 + N for a run stopped by signal N.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "avo.h"
#include "avo_config.h"
#include "cli.h"
#include "host.h"
#include "nvrtc_child.h"
#include "worker.h"

static const char usage_main[] =
    "usage: avo COMMAND [OPTIONS]\n"
    "\n"
    "Evolve compute kernels with scripted strategies and operators.\n"
    "\n"
    "commands:\n"
    "  run SCRIPT.lua     run an evolution script (a strategy, or a script using one)\n"
    "  eval KERNEL        evaluate one kernel against an evaluator\n"
    "  best               print the best candidate of a run\n"
    "  show ID            print one candidate: scores, knobs, parents, source\n"
    "  lineage ID         print the ancestry of a candidate as a tree\n"
    "  doctor             report CUDA toolkit, driver, GPUs and compiler found\n"
    "  runs               list the runs in an archive\n"
    "  diff A B           compare two candidates: source, knobs, scores\n"
    "  export             write candidates as CSV, JSON or a git repository\n"
    "  report             write an HTML report of a run\n"
    "  serve              a live view of runs in the browser (--db FILE ..., --listen)\n"
    "  resume             continue a run that was killed or stopped\n"
    "  replay             re-execute a recorded run and check it is identical\n"
    "  rebench            re-time the top candidates and the seed, interleaved\n"
    "  worker             serve a run's evaluations from this machine (--connect to\n"
    "                     an `avo run --listen`)\n"
    "  kb                 knowledge base: add notes, search, read, list\n"
    "  experiment         run a grid of runs a Lua file declares; report, replay\n"
    "\n"
    "`avo COMMAND --help` describes each command.  avo " AVO_VERSION "\n";

static const char usage_run[] =
    "usage: avo run SCRIPT.lua [--db FILE] [--seed N] [--jobs N] [--max-evals N]\n"
    "               [--max-time SECONDS] [--max-usd X] [--max-tokens N]\n"
    "               [--llm-replay OLD.db] [--devices LIST] [--listen HOST:PORT]\n"
    "               [--slurm 'SRUN OPTIONS'] [--retime K] [--retime-rounds N]\n"
    "               [--debug] [KEY=VALUE ...]\n"
    "\n"
    "Run an evolution script.  Every candidate, its parents, sources and per-config\n"
    "scores are committed to the archive as they finish.\n"
    "\n"
    "  --db FILE          archive (SQLite; default avo.db); one file holds many runs\n"
    "  --seed N           run seed; every random stream derives from it (default 1)\n"
    "  --jobs N           evaluations in flight at once (default: number of cores);\n"
    "                     0 with --listen: remote workers only\n"
    "  --max-evals N      stop starting evaluations after N\n"
    "  --max-time S       stop starting evaluations after S seconds\n"
    "  --max-usd X        stop making LLM calls once they cost X US dollars\n"
    "  --max-tokens N     stop making LLM calls after N tokens (in + out)\n"
    "  --llm-replay FILE  answer LLM calls from the archive of an earlier run,\n"
    "                     offline, by each call's place in the run (its\n"
    "                     stream and index), checked against the request hash;\n"
    "                     differing settings diverge (also AVO_LLM_REPLAY)\n"
    "  --devices LIST     CUDA: one timing worker per listed GPU (0,2,5; 'none');\n"
    "                     default one per visible GPU.  --jobs then counts the\n"
    "                     CPU workers (CPU jobs, CUDA compiles)\n"
    "  --listen H:P       also accept remote workers (`avo worker --connect`) on\n"
    "                     this address; port 0 picks one\n"
    "  --slurm 'OPTS'     start the workers as a Slurm job step: srun OPTS with\n"
    "                     --jobs tasks (default 2), each `avo worker --connect`\n"
    "  --debug            print the Lua traceback with a script error\n"
    "  --retime K         at the end, re-time the top K of the best's evaluator in\n"
    "                     fresh processes, interleaved (default 5; 0: off)\n"
    "  --retime-rounds N  rounds of that re-timing (default 3)\n"
    "  KEY=VALUE          passed to the script as its argument table (each KEY once)\n"
    "\n"
    "Exit status: 0 done, 1 failed, 2 usage error, 3 the environment broke (see\n"
    "README), 128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).\n";

static const char usage_eval[] =
    "usage: avo eval KERNEL --evaluator NAME|FILE [--param NAME=VALUE ...]\n"
    "                [--config NAME ...] [--seed N] [--json] [--compile-only]\n"
    "                [--arch sm_XX]\n"
    "\n"
    "Compile, verify and time one kernel on every config of an evaluator and print\n"
    "its score vector.  The evaluator's baselines (its `baselines` field) are\n"
    "measured beside it and printed as a row each (score and the kernel's ratio,\n"
    "or status and reason) with a per-config table.  Exit status 1 when the\n"
    "kernel fails.\n"
    "\n"
    "  --evaluator E      evaluator name (cpu/sgemm) or path\n"
    "  --param NAME=VAL   set a knob (repeatable); others keep their first value\n"
    "  --config NAME      only this config of the evaluator (repeatable)\n"
    "  --seed N           seed for the input data (default 1)\n"
    "  --json             print the result as JSON\n"
    "  --compile-only     CUDA: compile only and print registers, spills, shared\n"
    "                     memory and the NVRTC log (no GPU needed)\n"
    "  --arch sm_XX       CUDA: target architecture (default: the GPU's), e.g. sm_90a\n";

static const char usage_resume[] =
    "usage: avo resume --db FILE [--run ID] [--jobs N] [--devices LIST]\n"
    "                  [--listen HOST:PORT] [--slurm 'SRUN OPTIONS'] [--takeover] [--debug]\n"
    "\n"
    "Continue a run that was killed (even with kill -9) or stopped, default the\n"
    "latest unfinished run of the archive.  The recorded script is re-executed\n"
    "with the same seed; finished evaluations are answered from the archive (never\n"
    "repeated), so every random stream and decision is restored and the strategy\n"
    "goes on where it stopped.  Evaluations that were in flight, and those an\n"
    "infrastructure fault left unfinished, are run again.\n"
    "\n"
    "A run is driven by one process at a time: resuming a run that another live\n"
    "process drives is refused.\n"
    "  --jobs, --devices, --listen, --slurm   where the workers come from, as for\n"
    "                     `avo run` (a cluster run resumes on remote workers again)\n"
    "  --takeover         resume a run still marked running by a process on another\n"
    "                     host (which this machine cannot check): only when it is gone\n";

static const char usage_replay[] =
    "usage: avo replay --db FILE --out NEW [--run ID]\n"
    "\n"
    "Re-execute a recorded run into a new archive, answering every evaluation\n"
    "(and LLM request) from the recording, and report whether the new lineage is\n"
    "identical (candidates, parents, sources, decisions) or where it first\n"
    "diverges, and why.  Exit 0 when identical, 1 when not.\n";

static const char usage_rebench[] =
    "usage: avo rebench --db FILE [--run ID] [--top K] [--rounds N] [--devices LIST]\n"
    "\n"
    "Re-time the top K verified candidates of a run (default 5) and its seed,\n"
    "interleaved in N rounds (default 5) on one worker, each round in a fresh\n"
    "order, and report mean +- std and paired speedups over the seed.  The\n"
    "measurements are stored in the archive as a new evaluation set.  CUDA with\n"
    "several GPUs: every candidate is timed on each GPU (or each of --devices\n"
    "0,2) and a per-device table compares them.\n";

static const char usage_experiment[] =
    "usage: avo experiment FILE.lua [--db FILE] [--jobs N] [--new] [--retry-failed]\n"
    "       avo experiment report [--db FILE] [--experiment ID] [--out PREFIX]\n"
    "       avo experiment replay [--db FILE] [--experiment ID] [--out DIR]\n"
    "\n"
    "Run the grid of runs FILE.lua declares (arms x workloads x budgets x seeds;\n"
    "docs/experiments.md), each cell an ordinary run of the archive, several at\n"
    "once.  The file, its hash, the planned cells and the machine are stored.\n"
    "Running the same file again resumes: finished cells are kept, interrupted\n"
    "ones resumed, missing ones started.  A changed file is refused unless --new.\n"
    "\n"
    "  --db FILE          archive (default avo.db)\n"
    "  --jobs N           cells at once (default: the file's `jobs`, else cores\n"
    "                     divided by each run's jobs)\n"
    "  --new              start a new experiment although the file changed\n"
    "  --retry-failed     run the failed cells again (a new run each; the report\n"
    "                     uses a cell's latest run)\n"
    "  --experiment ID    report/replay: this experiment (default the latest)\n"
    "  --out PREFIX       report: write PREFIX.html, PREFIX.csv and PREFIX.json\n"
    "                     (default experiment-report); replay: folder of the\n"
    "                     replayed archives (default a temporary folder)\n"
    "\n"
    "report: per workload and budget each arm's median, IQR and bootstrap 95%\n"
    "CI of the best score, pairwise Mann-Whitney U tests with Vargha-Delaney A\n"
    "and Holm's correction, learning curves and a methods paragraph.  replay:\n"
    "re-executes every finished cell from its recording (avo replay) and says\n"
    "which reproduce.  Exit status 1 when a cell failed or does not reproduce.\n";

static const avo_cli_option experiment_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 0, NULL},
    {"jobs", AVO_OPT_INT, "jobs", 1, 1024, 0, NULL},
    {"new", AVO_OPT_FLAG, "new", 0, 0, 0, NULL},
    {"retry-failed", AVO_OPT_FLAG, "retry_failed", 0, 0, 0, NULL},
    {"experiment", AVO_OPT_INT, "experiment", 1, AVO_OPT_UNBOUNDED, 0, "an experiment id"},
    {"out", AVO_OPT_STRING, "out", 0, 0, 0, NULL},
    {"debug", AVO_OPT_FLAG, "debug", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static const avo_cli_option run_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 0, NULL},
    {"seed", AVO_OPT_INT, "seed", 0, AVO_OPT_UNBOUNDED, 0, NULL},
    {"jobs", AVO_OPT_INT, "jobs", 0, 1024, 0, NULL},
    {"max-evals", AVO_OPT_INT, "max_evals", 1, AVO_OPT_UNBOUNDED, 0, NULL},
    {"max-time", AVO_OPT_NUMBER, "max_time", 0, 0, 0, NULL},
    {"max-usd", AVO_OPT_NUMBER, "max_usd", 0, 0, 0, NULL},
    {"max-tokens", AVO_OPT_INT, "max_tokens", 1, AVO_OPT_UNBOUNDED, 0, NULL},
    {"llm-replay", AVO_OPT_STRING, "llm_replay", 0, 0, 0, NULL},
    {"devices", AVO_OPT_STRING, "devices", 0, 0, 0, NULL},
    {"listen", AVO_OPT_STRING, "listen", 0, 0, 0, NULL},
    {"slurm", AVO_OPT_STRING, "slurm", 0, 0, 0, NULL},
    {"debug", AVO_OPT_FLAG, "debug", 0, 0, 0, NULL},
    {"retime", AVO_OPT_INT, "retime", 0, 1000, 0, NULL},
    {"retime-rounds", AVO_OPT_INT, "retime_rounds", 1, 1000, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static const avo_cli_option eval_options[] = {
    {"evaluator", AVO_OPT_STRING, "evaluator", 0, 0, 0, NULL},
    {"param", AVO_OPT_LIST, "params", 0, 0, 0, NULL},
    {"config", AVO_OPT_LIST, "configs", 0, 0, 0, NULL},
    {"seed", AVO_OPT_INT, "seed", 0, AVO_OPT_UNBOUNDED, 0, NULL},
    {"json", AVO_OPT_FLAG, "json", 0, 0, 0, NULL},
    {"compile-only", AVO_OPT_FLAG, "compile_only", 0, 0, 0, NULL},
    {"arch", AVO_OPT_STRING, "arch", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static const avo_cli_option resume_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 0, NULL},
    {"run", AVO_OPT_INT, "run", 1, AVO_OPT_UNBOUNDED, 0, "a run id"},
    {"jobs", AVO_OPT_INT, "jobs", 0, 1024, 0, NULL},
    {"devices", AVO_OPT_STRING, "devices", 0, 0, 0, NULL},
    {"listen", AVO_OPT_STRING, "listen", 0, 0, 0, NULL},
    {"slurm", AVO_OPT_STRING, "slurm", 0, 0, 0, NULL},
    {"takeover", AVO_OPT_FLAG, "takeover", 0, 0, 0, NULL},
    {"debug", AVO_OPT_FLAG, "debug", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static const avo_cli_option replay_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 0, NULL},
    {"out", AVO_OPT_STRING, "out", 0, 0, 0, NULL},
    {"run", AVO_OPT_INT, "run", 1, AVO_OPT_UNBOUNDED, 0, "a run id"},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

static const avo_cli_option rebench_options[] = {
    {"db", AVO_OPT_STRING, "db", 0, 0, 0, NULL},
    {"run", AVO_OPT_INT, "run", 1, AVO_OPT_UNBOUNDED, 0, "a run id"},
    {"top", AVO_OPT_INT, "top", 1, 1000, 0, NULL},
    {"rounds", AVO_OPT_INT, "rounds", 1, 1000, 0, NULL},
    {"devices", AVO_OPT_STRING, "devices", 0, 0, 0, NULL},
    {NULL, 0, NULL, 0, 0, 0, NULL},
};

/* avo run SCRIPT [KEY=VALUE ...] */
static int cmd_run(int argc, char **argv)
{
    json_t *opts = json_object();
    json_t *args = json_object();
    json_object_set_new(opts, "args", args);
    int first;
    int rc = avo_cli_parse_options(argc, argv, run_options, usage_run, opts, &first);
    if (rc >= 0)
        goto out;
    if (first >= argc) {
        rc = avo_cli_usage_error(usage_run, "%s", "run needs a script");
        goto out;
    }
    rc = avo_cli_not_utf8("the script path", argv[first]);
    if (rc)
        goto out;
    json_object_set_new(opts, "script", json_string(argv[first]));
    for (int i = first + 1; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        if (!eq || eq == argv[i]) {
            rc = avo_cli_usage_error(usage_run, "expected KEY=VALUE after the script, got '%s'",
                                     argv[i]);
            goto out;
        }
        rc = avo_cli_not_utf8("an argument", argv[i]);
        if (rc)
            goto out;
        char *key = strndup(argv[i], (size_t)(eq - argv[i]));
        if (!key) {
            rc = 1;
            goto out;
        }
        if (json_object_get(args, key)) {
            rc = avo_cli_usage_error(usage_run, "argument '%s' is given twice", key);
            free(key);
            goto out;
        }
        json_object_set_new(args, key, json_string(eq + 1));
        free(key);
    }
    rc = avo_host_command("run", opts);
out:
    json_decref(opts);
    return rc;
}

/* avo eval KERNEL --evaluator E ... */
static int cmd_eval(int argc, char **argv)
{
    json_t *opts = json_object();
    json_object_set_new(opts, "params", json_array());
    int first;
    int rc = avo_cli_parse_options(argc, argv, eval_options, usage_eval, opts, &first);
    if (rc >= 0)
        goto out;
    if (first != argc - 1) {
        rc = avo_cli_usage_error(usage_eval, "%s", "eval needs exactly one kernel file");
        goto out;
    }
    if (!json_object_get(opts, "evaluator")) {
        rc = avo_cli_usage_error(usage_eval, "%s", "eval needs --evaluator");
        goto out;
    }
    rc = avo_cli_not_utf8("the kernel path", argv[first]);
    if (rc)
        goto out;
    json_object_set_new(opts, "kernel", json_string(argv[first]));
    rc = avo_host_command("eval", opts);
out:
    json_decref(opts);
    return rc;
}

/* avo resume / replay / rebench: commands on an existing archive, in Lua. */
static int cmd_recorded(int argc, char **argv, const char *command, const avo_cli_option *table,
                        const char *usage)
{
    json_t *opts = json_object();
    int first;
    int rc = avo_cli_parse_options(argc, argv, table, usage, opts, &first);
    if (rc >= 0)
        goto out;
    if (first != argc) {
        rc = avo_cli_usage_error(usage, "unexpected argument '%s'", argv[first]);
        goto out;
    }
    const char *db = json_string_value(json_object_get(opts, "db"));
    if (!db) {
        rc = avo_cli_usage_error(usage, "%s needs --db", command);
        goto out;
    }
    if (!strcmp(command, "replay") && !json_object_get(opts, "out")) {
        rc = avo_cli_usage_error(usage, "%s", "replay needs --out NEW");
        goto out;
    }
    if (access(db, R_OK) != 0) {
        fprintf(stderr, "avo: cannot open archive %s: %s\n", db, strerror(errno));
        rc = 1;
        goto out;
    }
    rc = avo_host_command(command, opts);
out:
    json_decref(opts);
    return rc;
}

/* avo experiment FILE.lua | report | replay (lua/avo/experiment.lua) */
static int cmd_experiment(int argc, char **argv)
{
    json_t *opts = json_object();
    int first;
    int rc = avo_cli_parse_options(argc, argv, experiment_options, usage_experiment, opts, &first);
    if (rc >= 0)
        goto out;
    if (first != argc - 1) {
        rc = avo_cli_usage_error(usage_experiment, "%s",
                                 first >= argc ? "experiment needs FILE.lua, report or replay"
                                               : "experiment takes one FILE.lua, report or replay");
        goto out;
    }
    rc = avo_cli_not_utf8("the experiment file", argv[first]);
    if (rc)
        goto out;
    const char *what = argv[first];
    int sub = !strcmp(what, "report") || !strcmp(what, "replay");
    json_object_set_new(opts, sub ? "command" : "file", json_string(what));
    if (!sub && json_object_get(opts, "experiment")) {
        rc = avo_cli_usage_error(usage_experiment, "%s", "--experiment is for report and replay");
        goto out;
    }
    if (sub && (json_object_get(opts, "new") || json_object_get(opts, "jobs") ||
                json_object_get(opts, "retry_failed"))) {
        rc = avo_cli_usage_error(usage_experiment,
                                 "--new, --jobs and --retry-failed are not options of %s", what);
        goto out;
    }
    rc = avo_host_command("experiment", opts);
out:
    json_decref(opts);
    return rc;
}

int main(int argc, char **argv)
{
    avo_self_exe(); /* before anything could change the working directory */
    if (argc < 2) {
        fputs(usage_main, stderr);
        return AVO_CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        puts("avo " AVO_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "worker"))
        return avo_cli_worker(argc - 1, argv + 1);
    if (!strcmp(cmd, "nvrtc-compile")) /* hidden: the CUDA backend's compile process */
        return avo_cuda_compile_main(0, 1);
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "eval"))
        return cmd_eval(argc - 1, argv + 1);
    if (!strcmp(cmd, "best"))
        return avo_cli_best(argc - 1, argv + 1);
    if (!strcmp(cmd, "show"))
        return avo_cli_show(argc - 1, argv + 1);
    if (!strcmp(cmd, "lineage"))
        return avo_cli_lineage(argc - 1, argv + 1);
    if (!strcmp(cmd, "runs"))
        return avo_cli_runs(argc - 1, argv + 1);
    if (!strcmp(cmd, "doctor"))
        return avo_cli_doctor(argc - 1, argv + 1);
    if (!strcmp(cmd, "diff"))
        return avo_cli_diff(argc - 1, argv + 1);
    if (!strcmp(cmd, "export"))
        return avo_cli_export(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return avo_cli_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "serve"))
        return avo_cli_serve(argc - 1, argv + 1);
    if (!strcmp(cmd, "kb"))
        return avo_cli_kb(argc - 1, argv + 1);
    if (!strcmp(cmd, "experiment"))
        return cmd_experiment(argc - 1, argv + 1);
    if (!strcmp(cmd, "resume"))
        return cmd_recorded(argc - 1, argv + 1, "resume", resume_options, usage_resume);
    if (!strcmp(cmd, "replay"))
        return cmd_recorded(argc - 1, argv + 1, "replay", replay_options, usage_replay);
    if (!strcmp(cmd, "rebench"))
        return cmd_recorded(argc - 1, argv + 1, "rebench", rebench_options, usage_rebench);
    fprintf(stderr, "avo: unknown command '%s'\n\n%s", cmd, usage_main);
    return AVO_CLI_EXIT_USAGE;
}
