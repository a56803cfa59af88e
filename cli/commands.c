/*
 * commands.c — the commands of `avo`: one table that dispatch (main.c),
 * `avo --help` and `avo NAME --help` all read.  Each entry holds the
 * command's name, its line in `avo --help`, its usage (printed by --help
 * and after every usage error of the command, by the handler through
 * cmd->usage) and the handler that runs it.  A new command is one entry
 * here and one handler in a cli_<name>.c.
 */
#include <stdio.h>
#include <string.h>

#include "avo_config.h"
#include "cli/cli.h"
#include "eval/cuda/nvrtc_child.h"
#include "cli/serve.h"

/* avo nvrtc-compile (hidden): the CUDA backend's compile process, started
 * by the worker; it reads its job on stdin whatever the arguments. */
static int nvrtc_compile(const avo_cli_command *cmd, int argc, char **argv)
{
    (void)cmd;
    (void)argc;
    (void)argv;
    return avo_cuda_compile_main(0, 1);
}

const avo_cli_command avo_cli_commands[] = {
    {
        .name = "run",
        .synopsis = "run SCRIPT.lua",
        .summary = "run an evolution script (a strategy, or a script using one)",
        .handler = avo_cli_run,
        .usage =
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
            "README), 128+N stopped by signal N (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP).\n",
    },
    {
        .name = "eval",
        .synopsis = "eval KERNEL",
        .summary = "evaluate one kernel against an evaluator",
        .handler = avo_cli_eval,
        .usage =
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
            "  --arch sm_XX       CUDA: target architecture (default: the GPU's), e.g. sm_90a\n",
    },
    {
        .name = "best",
        .synopsis = "best",
        .summary = "print the best candidate of a run",
        .handler = avo_cli_best,
        .usage =
            "usage: avo best [--db FILE] [--run ID] [--json]\n"
            "\n"
            "Print the best verified candidate of a run (default: the latest run).\n",
    },
    {
        .name = "show",
        .synopsis = "show ID",
        .summary = "print one candidate: scores, knobs, parents, source",
        .handler = avo_cli_show,
        .usage =
            "usage: avo show ID [--db FILE] [--source] [--json]\n"
            "\n"
            "Print a candidate: status, score, knobs, parents, per-config results.\n"
            "  --source           also print its kernel source\n",
    },
    {
        .name = "lineage",
        .synopsis = "lineage ID",
        .summary = "print the ancestry of a candidate as a tree",
        .handler = avo_cli_lineage,
        .usage =
            "usage: avo lineage ID [--db FILE] [--json]\n"
            "\n"
            "Print the ancestry of a candidate as a tree, back to the seed.\n",
    },
    {
        .name = "doctor",
        .synopsis = "doctor",
        .summary = "report CUDA toolkit, driver, GPUs and compiler found",
        .handler = avo_cli_doctor,
        .usage =
            "usage: avo doctor\n"
            "\n"
            "Report the CUDA toolkit (NVRTC), the NVIDIA driver and GPUs, and the host C\n"
            "compiler that avo can use, and what to install for anything missing.\n"
            "The sandbox line names the mechanism kernels run under (namespaces, landlock,\n"
            "or unisolated; $AVO_SANDBOX forces one) and, for each stronger one missing,\n"
            "why and how to enable it.\n"
            "CPU kernels need only the C compiler; `avo eval --compile-only` needs NVRTC;\n"
            "running CUDA kernels needs the driver and a GPU.  Each vendor baseline an\n"
            "evaluator may name (`baselines = {...}`) is listed with its library's version\n"
            "and path, or why it is unavailable ($AVO_CUBLASLT and $AVO_CUDNN name the\n"
            "library files to use instead of the toolkit's).\n"
            "\n"
            "NVRTC is $AVO_NVRTC (a library file) when set, else the first found in a CUDA\n"
            "toolkit (the loader's path, $CUDA_HOME/lib64, $CUDA_PATH/lib64,\n"
            "/usr/local/cuda/lib64), else in NVIDIA's pip wheels ($AVO_CUDA_WHEELS, default\n"
            "/opt/avo/cuda-wheels, where `tools/install-deps --tests` puts them).\n",
    },
    {
        .name = "runs",
        .synopsis = "runs",
        .summary = "list the runs in an archive",
        .handler = avo_cli_runs,
        .usage =
            "usage: avo runs [--db FILE] [--json]\n"
            "\n"
            "List the runs in an archive: script, seed, status, start and end, candidates\n"
            "(ok/failed), the best candidate and its score (with its unit when the run\n"
            "recorded one), the budgets and, for runs with an agent, its attempts:\n"
            "directions explored / versions committed, and the best against the strongest\n"
            "baseline measured in the run (\"0.41x cublas\"; a baseline that did not\n"
            "measure shows its status, e.g. \"cublas unavailable\"; - without baselines).\n"
            "Candidates not evaluated yet (left pending by lost workers or infrastructure\n"
            "faults) are named below the table; `avo resume` evaluates them.\n"
            "  --db FILE          archive (default avo.db)\n"
            "  --json             print the runs as JSON\n",
    },
    {
        .name = "diff",
        .synopsis = "diff A B",
        .summary = "compare two candidates: source, knobs, scores",
        .handler = avo_cli_diff,
        .usage =
            "usage: avo diff A B [--db FILE] [--json]\n"
            "\n"
            "Compare candidate B with candidate A: knob changes (NAME: old -> new), score\n"
            "and per-config throughput deltas (B - A, ratio B/A), median times, and a\n"
            "unified diff of the sources.\n"
            "  --db FILE          archive (default avo.db)\n"
            "  --json             print the comparison as JSON\n",
    },
    {
        .name = "export",
        .synopsis = "export",
        .summary = "write candidates as CSV, JSON or a git repository",
        .handler = avo_cli_export,
        .usage =
            "usage: avo export [--db FILE] [--run ID] (--csv FILE [--what WHAT] | --json FILE |\n"
            "                  --git DIR)\n"
            "\n"
            "Export candidates (default: of every run).  FILE may be - for stdout; a\n"
            "regular file is replaced atomically, anything else (a device, a FIFO, a\n"
            "symlink) is written through.\n"
            "  --csv FILE         one row per candidate and config (RFC 4180)\n"
            "  --what WHAT        with --csv: candidates (default) or baselines (one row per\n"
            "                     baseline, device and config: the evaluator's baselines)\n"
            "  --json FILE        {\"runs\": [...], \"candidates\": [...], \"baselines\": [...]}\n"
            "                     with sources\n"
            "  --git DIR          a new git repository: one commit per candidate, crossovers\n"
            "                     as merge commits, tags c<ID>, branches main and best\n"
            "  --run ID           only this run\n"
            "  --db FILE          archive (default avo.db)\n",
    },
    {
        .name = "report",
        .synopsis = "report",
        .summary = "write an HTML report of a run",
        .handler = avo_cli_report,
        .usage =
            "usage: avo report [--db FILE] [--run ID] -o FILE.html\n"
            "\n"
            "Write one self-contained HTML page about a run (default: the latest): score\n"
            "trajectory (with the baselines measured in the run as reference lines), the\n"
            "baselines against the best per config, scores per generation, the best\n"
            "candidate's lineage, the top versions with sources and diffs, run metadata\n"
            "and LLM spend.\n"
            "  -o, --output FILE  where to write the page (required; - for stdout; a regular\n"
            "                     file is replaced atomically, anything else (a device, a\n"
            "                     FIFO, a symlink) is written through)\n"
            "  --run ID           the run to report on\n"
            "  --db FILE          archive (default avo.db)\n",
    },
    {
        .name = "serve",
        .synopsis = "serve",
        .summary = "a live view of runs in the browser (--db FILE ..., --listen)",
        .handler = avo_cli_serve,
        .usage =
            "usage: avo serve [--db FILE ...] [--listen HOST:PORT] [--refresh SECONDS]\n"
            "\n"
            "Serve a live view of archives to a browser while runs write them: an index of\n"
            "each archive's runs and experiments; per run the report's sections (trajectory,\n"
            "scores per generation, baselines, lineage, top versions, LLM spend) updated as\n"
            "candidates arrive, with the candidates in flight, workers, spend against the\n"
            "run's budgets, the agent's latest steps and tool calls, recent failures and log\n"
            "lines; per candidate its source, diff to each parent, per-config results and\n"
            "log.  Archives are only read (a read-only copy works).  Prints the URL to open\n"
            "and serves until interrupted (Ctrl-C, SIGTERM).\n"
            "  --db FILE          an archive to serve; repeat for several (default avo.db)\n"
            "  --listen HOST:PORT where to listen (default " AVO_SERVE_DEFAULT_LISTEN "; port 0: any\n"
            "                     free port).  On an address other than loopback every\n"
            "                     request needs the access token in the printed URL (then a\n"
            "                     cookie): anyone who can reach the port sees kernels and logs\n"
            "  --refresh SECONDS  how often a page refreshes itself without JavaScript\n"
            "                     (default 5; with JavaScript the server pushes changes)\n",
    },
    {
        .name = "resume",
        .synopsis = "resume",
        .summary = "continue a run that was killed or stopped",
        .handler = avo_cli_resume,
        .usage =
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
            "                     host (which this machine cannot check): only when it is gone\n",
    },
    {
        .name = "replay",
        .synopsis = "replay",
        .summary = "re-execute a recorded run and check it is identical",
        .handler = avo_cli_replay,
        .usage =
            "usage: avo replay --db FILE --out NEW [--run ID]\n"
            "\n"
            "Re-execute a recorded run into a new archive, answering every evaluation\n"
            "(and LLM request) from the recording, and report whether the new lineage is\n"
            "identical (candidates, parents, sources, decisions) or where it first\n"
            "diverges, and why.  Exit 0 when identical, 1 when not.\n",
    },
    {
        .name = "rebench",
        .synopsis = "rebench",
        .summary = "re-time the top candidates and the seed, interleaved",
        .handler = avo_cli_rebench,
        .usage =
            "usage: avo rebench --db FILE [--run ID] [--top K] [--rounds N] [--devices LIST]\n"
            "                   [--json]\n"
            "\n"
            "Re-time the top K verified candidates of a run (default 5; and its re-timed\n"
            "best), its seed and the evaluator's baselines, interleaved in N rounds\n"
            "(default 5) on one worker, each round in a fresh order, and report each\n"
            "median with its interval and the paired ratios to the seed and to each\n"
            "baseline (per round, median and 95% interval).  The measurements are\n"
            "stored in the archive as a new evaluation set and a \"rebenched\" event\n"
            "(--json prints that event's data).  CUDA with several GPUs: every\n"
            "candidate is timed on each GPU (or each of --devices 0,2) and a per-device\n"
            "table compares them.\n",
    },
    {
        .name = "worker",
        .synopsis = "worker",
        .summary = "serve a run's evaluations from this machine (--connect to\n"
                   "an `avo run --listen`)",
        .handler = avo_cli_worker,
        .usage =
            "usage: avo worker [--connect HOST:PORT [--run ID] [--fingerprint FP] [--retry S]]\n"
            "\n"
            "Serve evaluation jobs.  Without --connect, on stdin/stdout (the engine starts\n"
            "workers this way itself).  With --connect, dial an engine started with\n"
            "`avo run --listen` (or --slurm) and serve its jobs over TCP.\n"
            "\n"
            "  --connect H:P      the engine's address\n"
            "  --run ID           serve only this run (the engine prints its id); default any\n"
            "  --fingerprint FP   serve only jobs of this evaluator fingerprint; default any\n"
            "  --retry S          keep trying to reach the engine for S seconds (default 30)\n"
            "\n"
            "The run's secret comes from AVO_WORKER_SECRET or AVO_WORKER_SECRET_FILE (a\n"
            "file of mode 0600).  Under Slurm with GPUs, without AVO_CUDA_DEVICE, the worker\n"
            "uses GPU number SLURM_LOCALID among CUDA_VISIBLE_DEVICES.  Exit status: 0 when\n"
            "the engine ended the run, 1 when it cannot be reached, 2 without a usable\n"
            "secret, 3 when it refused us.\n",
    },
    {
        .name = "kb",
        .synopsis = "kb",
        .summary = "knowledge base: add notes, search, read, list",
        .handler = avo_cli_kb,
        .usage =
            "usage: avo kb add PATH... [--kb FILE]\n"
            "       avo kb search QUERY... [--kb FILE] [--limit N] [--json]\n"
            "       avo kb read DOC [--kb FILE] [--json]\n"
            "       avo kb list [--kb FILE] [--json]\n"
            "\n"
            "The knowledge base: notes, text and source files indexed for ranked full-text\n"
            "search, which agents consult while they optimise a kernel.\n"
            "\n"
            "  add PATH...        index directories recursively (.md .txt .c .h .cu .cuh\n"
            "                     .lua .py; hidden entries skipped) or single files; adding\n"
            "                     a directory again updates changed files and drops deleted ones\n"
            "  search QUERY...    sections ranked by relevance (bm25) to any of the words,\n"
            "                     more words matched ranking higher; the query is plain\n"
            "                     words, never search syntax (a trailing * matches a prefix)\n"
            "  read DOC           print a document: its path, a unique path suffix\n"
            "                     (softmax.md) or its id\n"
            "  list               the indexed documents\n"
            "\n"
            "  --kb FILE          SQLite file holding the knowledge base (default avo.db, the\n"
            "                     default archive; `add` creates it)\n"
            "  --limit N          results of a search (default 10)\n"
            "  --json             print JSON\n",
    },
    {
        .name = "experiment",
        .synopsis = "experiment",
        .summary = "run a grid of runs a Lua file declares; report, replay",
        .handler = avo_cli_experiment,
        .usage =
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
            "which reproduce.  Exit status 1 when a cell failed or does not reproduce.\n",
    },

    {.name = "nvrtc-compile", .handler = nvrtc_compile},
    {.name = NULL},
};

const avo_cli_command *avo_cli_command_find(const char *name)
{
    for (const avo_cli_command *c = avo_cli_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

/* The commands column is 18 characters wide; a summary's continuation
 * lines are indented to its start. */
void avo_cli_print_usage(FILE *out)
{
    fputs("usage: avo COMMAND [OPTIONS]\n"
          "\n"
          "Evolve compute kernels with scripted strategies and operators.\n"
          "\n"
          "commands:\n",
          out);
    for (const avo_cli_command *c = avo_cli_commands; c->name; c++) {
        if (!c->synopsis)
            continue;
        fprintf(out, "  %-18s ", c->synopsis);
        for (const char *s = c->summary; *s; s++) {
            fputc(*s, out);
            if (*s == '\n')
                fprintf(out, "%21s", "");
        }
        fputc('\n', out);
    }
    fputs("\n`avo COMMAND --help` describes each command.  avo " AVO_VERSION "\n", out);
}
