/*
 * main.c — the `avo` command line: argument parsing and printing.  The
 * engine itself is the core library (archive, pool, backends) and the Lua
 * host; run and eval are implemented in Lua (lua/avo/cli.lua).
 *
 * Exit status: 0 success, 1 failure, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "archive.h"
#include "avo.h"
#include "avo_config.h"
#include "cli.h"
#include "cuda.h"
#include "host.h"
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
    "  resume             continue a run that was killed or stopped\n"
    "  replay             re-execute a recorded run and check it is identical\n"
    "  rebench            re-time the top candidates and the seed, interleaved\n"
    "  kb                 knowledge base: add notes, search, read, list\n"
    "\n"
    "`avo COMMAND --help` describes each command.  avo " AVO_VERSION "\n";

static const char usage_run[] =
    "usage: avo run SCRIPT.lua [--db FILE] [--seed N] [--jobs N] [--max-evals N]\n"
    "               [--max-time SECONDS] [--max-usd X] [--max-tokens N]\n"
    "               [--llm-replay OLD.db] [KEY=VALUE ...]\n"
    "\n"
    "Run an evolution script.  Every candidate, its parents, sources and per-config\n"
    "scores are committed to the archive as they finish.\n"
    "\n"
    "  --db FILE          archive (SQLite; default avo.db); one file holds many runs\n"
    "  --seed N           run seed; every random stream derives from it (default 1)\n"
    "  --jobs N           evaluations in flight at once (default: number of cores)\n"
    "  --max-evals N      stop starting evaluations after N\n"
    "  --max-time S       stop starting evaluations after S seconds\n"
    "  --max-usd X        stop making LLM calls once they cost X US dollars\n"
    "  --max-tokens N     stop making LLM calls after N tokens (in + out)\n"
    "  --llm-replay FILE  answer LLM calls from the archive of an earlier run\n"
    "                     (by request hash, offline; also AVO_LLM_REPLAY)\n"
    "  KEY=VALUE          passed to the script as its argument table\n";

static const char usage_eval[] =
    "usage: avo eval KERNEL --evaluator NAME|FILE [--param NAME=VALUE ...] [--json]\n"
    "                [--compile-only] [--arch sm_XX]\n"
    "\n"
    "Compile, verify and time one kernel on every config of an evaluator and print\n"
    "its score vector.  Exit status 1 when the kernel fails.\n"
    "\n"
    "  --evaluator E      evaluator name (cpu/sgemm) or path\n"
    "  --param NAME=VAL   set a knob (repeatable); others keep their first value\n"
    "  --seed N           seed for the input data (default 1)\n"
    "  --json             print the result as JSON\n"
    "  --compile-only     CUDA: compile only and print registers, spills, shared\n"
    "                     memory and the NVRTC log (no GPU needed)\n"
    "  --arch sm_XX       CUDA: target architecture (default: the GPU's), e.g. sm_90a\n";

static const char usage_best[] =
    "usage: avo best [--db FILE] [--run ID] [--json]\n"
    "\n"
    "Print the best verified candidate of a run (default: the latest run).\n";

static const char usage_show[] =
    "usage: avo show ID [--db FILE] [--source] [--json]\n"
    "\n"
    "Print a candidate: status, score, knobs, parents, per-config results.\n"
    "  --source           also print its kernel source\n";

static const char usage_lineage[] =
    "usage: avo lineage ID [--db FILE] [--json]\n"
    "\n"
    "Print the ancestry of a candidate as a tree, back to the seed.\n";

static const char usage_resume[] =
    "usage: avo resume --db FILE [--run ID] [--jobs N]\n"
    "\n"
    "Continue a run that was killed (even with kill -9) or stopped, default the\n"
    "latest run of the archive.  The recorded script is re-executed with the same\n"
    "seed; finished evaluations are answered from the archive (never repeated),\n"
    "so every random stream and decision is restored and the strategy goes on\n"
    "where it stopped.  Evaluations that were in flight are run again.\n";

static const char usage_replay[] =
    "usage: avo replay --db FILE --out NEW [--run ID]\n"
    "\n"
    "Re-execute a recorded run into a new archive, answering every evaluation\n"
    "(and LLM request) from the recording, and report whether the new lineage is\n"
    "identical (candidates, parents, sources, decisions) or where it first\n"
    "diverges, and why.  Exit 0 when identical, 1 when not.\n";

static const char usage_rebench[] =
    "usage: avo rebench --db FILE [--run ID] [--top K] [--rounds N]\n"
    "\n"
    "Re-time the top K verified candidates of a run (default 5) and its seed,\n"
    "interleaved in N rounds (default 5) on one worker, each round in a fresh\n"
    "order, and report mean +- std and paired speedups over the seed.  The\n"
    "measurements are stored in the archive as a new evaluation set.\n";

/* Parse a non-negative integer option; -1 on error. */
static long long parse_count(const char *s)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < 0)
        return -1;
    return v;
}

static int parse_seconds(const char *s, double *ret)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v > 0))
        return -1;
    *ret = v;
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'},       {"seed", required_argument, NULL, 's'},
        {"jobs", required_argument, NULL, 'j'},     {"max-evals", required_argument, NULL, 'e'},
        {"max-time", required_argument, NULL, 't'}, {"help", no_argument, NULL, 'h'},
        {"max-usd", required_argument, NULL, 'U'},  {"max-tokens", required_argument, NULL, 'T'},
        {"llm-replay", required_argument, NULL, 'R'},
        {NULL, 0, NULL, 0},
    };
    json_t *opts = json_object();
    json_t *args = json_object();
    json_object_set_new(opts, "args", args);
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hd:s:j:", longopts, NULL)) != -1) {
        long long n;
        double secs;
        switch (c) {
        case 'd':
            json_object_set_new(opts, "db", json_string(optarg));
            break;
        case 's':
            if ((n = parse_count(optarg)) < 0) {
                rc = avo_cli_usage_error(usage_run, "--seed needs a non-negative integer, got '%s'", optarg);
                goto out;
            }
            json_object_set_new(opts, "seed", json_integer(n));
            break;
        case 'j':
            if ((n = parse_count(optarg)) < 1 || n > 1024) {
                rc = avo_cli_usage_error(usage_run, "--jobs needs an integer from 1 to 1024, got '%s'", optarg);
                goto out;
            }
            json_object_set_new(opts, "jobs", json_integer(n));
            break;
        case 'e':
            if ((n = parse_count(optarg)) < 1) {
                rc = avo_cli_usage_error(usage_run, "--max-evals needs a positive integer, got '%s'", optarg);
                goto out;
            }
            json_object_set_new(opts, "max_evals", json_integer(n));
            break;
        case 't':
            if (parse_seconds(optarg, &secs) < 0) {
                rc = avo_cli_usage_error(usage_run, "--max-time needs a positive number of seconds, got '%s'",
                                 optarg);
                goto out;
            }
            json_object_set_new(opts, "max_time", json_real(secs));
            break;
        case 'U':
            if (parse_seconds(optarg, &secs) < 0) {
                rc = avo_cli_usage_error(usage_run, "--max-usd needs a positive number of dollars, got '%s'",
                                 optarg);
                goto out;
            }
            json_object_set_new(opts, "max_usd", json_real(secs));
            break;
        case 'T':
            if ((n = parse_count(optarg)) < 1) {
                rc = avo_cli_usage_error(usage_run, "--max-tokens needs a positive integer, got '%s'", optarg);
                goto out;
            }
            json_object_set_new(opts, "max_tokens", json_integer(n));
            break;
        case 'R':
            json_object_set_new(opts, "llm_replay", json_string(optarg));
            break;
        case 'h':
            fputs(usage_run, stdout);
            rc = 0;
            goto out;
        default:
            rc = avo_cli_usage_error(usage_run, "%s", "unrecognised option");
            goto out;
        }
    }
    if (optind >= argc) {
        rc = avo_cli_usage_error(usage_run, "%s", "run needs a script");
        goto out;
    }
    json_object_set_new(opts, "script", json_string(argv[optind++]));
    for (; optind < argc; optind++) {
        char *eq = strchr(argv[optind], '=');
        if (!eq || eq == argv[optind]) {
            rc = avo_cli_usage_error(usage_run, "expected KEY=VALUE after the script, got '%s'", argv[optind]);
            goto out;
        }
        *eq = '\0';
        json_object_set_new(args, argv[optind], json_string(eq + 1));
        *eq = '=';
    }
    rc = avo_host_command("run", opts);
out:
    json_decref(opts);
    return rc;
}

static int cmd_eval(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"evaluator", required_argument, NULL, 'E'}, {"param", required_argument, NULL, 'p'},
        {"seed", required_argument, NULL, 's'},      {"json", no_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},            {"compile-only", no_argument, NULL, 'C'},
        {"arch", required_argument, NULL, 'A'},      {NULL, 0, NULL, 0},
    };
    json_t *opts = json_object();
    json_t *params = json_array();
    json_object_set_new(opts, "params", params);
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hE:p:s:", longopts, NULL)) != -1) {
        long long n;
        switch (c) {
        case 'E':
            json_object_set_new(opts, "evaluator", json_string(optarg));
            break;
        case 'p':
            json_array_append_new(params, json_string(optarg));
            break;
        case 's':
            if ((n = parse_count(optarg)) < 0) {
                rc = avo_cli_usage_error(usage_eval, "--seed needs a non-negative integer, got '%s'", optarg);
                goto out;
            }
            json_object_set_new(opts, "seed", json_integer(n));
            break;
        case 'J':
            json_object_set_new(opts, "json", json_true());
            break;
        case 'C':
            json_object_set_new(opts, "compile_only", json_true());
            break;
        case 'A':
            json_object_set_new(opts, "arch", json_string(optarg));
            break;
        case 'h':
            fputs(usage_eval, stdout);
            rc = 0;
            goto out;
        default:
            rc = avo_cli_usage_error(usage_eval, "%s", "unrecognised option");
            goto out;
        }
    }
    if (optind != argc - 1) {
        rc = avo_cli_usage_error(usage_eval, "%s", "eval needs exactly one kernel file");
        goto out;
    }
    if (!json_object_get(opts, "evaluator")) {
        rc = avo_cli_usage_error(usage_eval, "%s", "eval needs --evaluator");
        goto out;
    }
    json_object_set_new(opts, "kernel", json_string(argv[optind]));
    rc = avo_host_command("eval", opts);
out:
    json_decref(opts);
    return rc;
}

/* avo resume / avo replay: options for the Lua side. */
static int cmd_recorded(int argc, char **argv, const char *command, const char *usage)
{
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'},   {"out", required_argument, NULL, 'o'},
        {"run", required_argument, NULL, 'r'},  {"jobs", required_argument, NULL, 'j'},
        {"top", required_argument, NULL, 'k'},  {"rounds", required_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0},
    };
    int replay = strcmp(command, "replay") == 0;
    int rebench = strcmp(command, "rebench") == 0;
    json_t *opts = json_object();
    int c, rc;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hd:o:r:j:k:n:", longopts, NULL)) != -1) {
        long long n;
        switch (c) {
        case 'd':
            json_object_set_new(opts, "db", json_string(optarg));
            break;
        case 'o':
            if (!replay) {
                rc = avo_cli_usage_error(usage, "%s", "--out is an option of replay");
                goto out;
            }
            json_object_set_new(opts, "out", json_string(optarg));
            break;
        case 'r':
            if ((n = parse_count(optarg)) < 1) {
                rc = avo_cli_usage_error(usage, "--run needs a run id, got '%s'", optarg);
                goto out;
            }
            json_object_set_new(opts, "run", json_integer(n));
            break;
        case 'j':
            if ((n = parse_count(optarg)) < 1 || n > 1024) {
                rc = avo_cli_usage_error(usage, "--jobs needs an integer from 1 to 1024, got '%s'", optarg);
                goto out;
            }
            json_object_set_new(opts, "jobs", json_integer(n));
            break;
        case 'k':
        case 'n':
            if (!rebench) {
                rc = avo_cli_usage_error(usage, "%s", "--top and --rounds are options of rebench");
                goto out;
            }
            if ((n = parse_count(optarg)) < 1 || n > 1000) {
                rc = avo_cli_usage_error(usage, "expected an integer from 1 to 1000, got '%s'", optarg);
                goto out;
            }
            json_object_set_new(opts, c == 'k' ? "top" : "rounds", json_integer(n));
            break;
        case 'h':
            fputs(usage, stdout);
            rc = 0;
            goto out;
        default:
            rc = avo_cli_usage_error(usage, "%s", "unrecognised option");
            goto out;
        }
    }
    if (optind != argc) {
        rc = avo_cli_usage_error(usage, "unexpected argument '%s'", argv[optind]);
        goto out;
    }
    const char *db = json_string_value(json_object_get(opts, "db"));
    if (!db) {
        rc = avo_cli_usage_error(usage, "%s needs --db", command);
        goto out;
    }
    if (replay && !json_object_get(opts, "out")) {
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

/* ------------------------------------------------------------- queries */

typedef struct query_opts {
    const char *db;
    long long id;
    long long run;
    int json;
    int source;
} query_opts;

/* Parse the options shared by best/show/lineage.  Returns -1 to continue,
 * or an exit status. */
static int parse_query(int argc, char **argv, const char *usage, int need_id, query_opts *q)
{
    static const struct option longopts[] = {
        {"db", required_argument, NULL, 'd'}, {"run", required_argument, NULL, 'r'},
        {"json", no_argument, NULL, 'J'},     {"source", no_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},     {NULL, 0, NULL, 0},
    };
    int c;
    optind = 1;
    *q = (query_opts){.db = "avo.db"};
    while ((c = getopt_long(argc, argv, "hd:r:", longopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            q->db = optarg;
            break;
        case 'r':
            if ((q->run = parse_count(optarg)) < 1)
                return avo_cli_usage_error(usage, "--run needs a run id, got '%s'", optarg);
            break;
        case 'J':
            q->json = 1;
            break;
        case 'S':
            q->source = 1;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            return avo_cli_usage_error(usage, "%s", "unrecognised option");
        }
    }
    if (need_id) {
        if (optind != argc - 1)
            return avo_cli_usage_error(usage, "%s", "expected one candidate id");
        const char *arg = argv[optind];
        if (*arg == '#')
            arg++;
        if ((q->id = parse_count(arg)) < 1)
            return avo_cli_usage_error(usage, "candidate id must be a positive integer, got '%s'", argv[optind]);
    } else if (optind != argc) {
        return avo_cli_usage_error(usage, "unexpected argument '%s'", argv[optind]);
    }
    return -1;
}

static double num(const json_t *obj, const char *key)
{
    return json_number_value(json_object_get(obj, key));
}

static const char *str(const json_t *obj, const char *key)
{
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

static void print_json(const json_t *value)
{
    char *text = json_dumps(value, JSON_INDENT(2) | JSON_SORT_KEYS);
    if (text) {
        puts(text);
        free(text);
    }
}

static void print_knobs(const json_t *knobs)
{
    const char *key;
    json_t *value;
    int first = 1;
    json_object_foreach((json_t *)knobs, key, value)
    {
        char *text = json_dumps(value, JSON_ENCODE_ANY);
        const char *shown = json_is_string(value) ? json_string_value(value) : text;
        printf("%s%s=%s", first ? "" : " ", key, shown ? shown : "?");
        free(text);
        first = 0;
    }
    if (first)
        printf("(none)");
}

static void print_candidate(const json_t *c, int with_source)
{
    printf("candidate #%lld  run %lld  generation %lld  operator %s\n",
           (long long)json_integer_value(json_object_get(c, "id")),
           (long long)json_integer_value(json_object_get(c, "run_id")),
           (long long)json_integer_value(json_object_get(c, "generation")), str(c, "operator"));
    printf("status   %s", str(c, "status"));
    if (*str(c, "reason"))
        printf(" — %s", str(c, "reason"));
    printf("\nscore    %.6g\n", num(c, "score"));
    printf("knobs    ");
    print_knobs(json_object_get(c, "knobs"));
    printf("\nsource   %s\n", str(c, "source_hash"));
    size_t i;
    json_t *item;
    printf("parents ");
    json_array_foreach(json_object_get(c, "parents"), i, item)
        printf(" #%lld (%s)", (long long)json_integer_value(json_object_get(item, "id")),
               str(item, "role"));
    if (json_array_size(json_object_get(c, "parents")) == 0)
        printf(" (none)");
    printf("\n");
    if (*str(c, "note"))
        printf("note     %s\n", str(c, "note"));
    json_t *configs = json_object_get(c, "configs");
    if (json_array_size(configs) > 0) {
        printf("\n%-16s %7s %10s %10s %12s %7s %8s %10s\n", "config", "correct", "GFLOP/s", "GB/s",
               "median", "spread", "samples", "max error");
        json_array_foreach(configs, i, item)
        {
            printf("%-16s %7s %10.3f %10.3f %10.4gms %6.1f%% %8lld %10.3g\n", str(item, "name"),
                   json_is_true(json_object_get(item, "correct")) ? "yes" : "NO", num(item, "gflops"),
                   num(item, "gbs"), num(item, "median_s") * 1e3, num(item, "spread") * 100,
                   (long long)json_integer_value(json_object_get(item, "samples")),
                   num(item, "max_error"));
            if (*str(item, "reason"))
                printf("  %s\n", str(item, "reason"));
        }
    }
    if (*str(c, "log") && strcmp(str(c, "status"), "ok") != 0)
        printf("\nlog:\n%s\n", str(c, "log"));
    if (with_source)
        printf("\n%s", str(c, "source"));
}

static int cmd_best(int argc, char **argv)
{
    query_opts q;
    int rc = parse_query(argc, argv, usage_best, 0, &q);
    if (rc >= 0)
        return rc;
    avo_archive *ar = avo_cli_open_archive(q.db);
    if (!ar)
        return 1;
    json_t *best = NULL;
    char err[AVO_ERRLEN];
    rc = avo_archive_best(ar, q.run, &best, err, sizeof err);
    if (rc == AVO_ENOTFOUND) {
        fprintf(stderr, "avo: no verified candidate in %s\n", q.db);
        rc = 1;
    } else if (rc < 0) {
        fprintf(stderr, "avo: %s\n", err);
        rc = 1;
    } else {
        if (q.json)
            print_json(best);
        else
            print_candidate(best, 0);
        rc = 0;
    }
    json_decref(best);
    avo_archive_free(ar);
    return rc;
}

static int cmd_show(int argc, char **argv)
{
    query_opts q;
    int rc = parse_query(argc, argv, usage_show, 1, &q);
    if (rc >= 0)
        return rc;
    avo_archive *ar = avo_cli_open_archive(q.db);
    if (!ar)
        return 1;
    json_t *c = NULL;
    char err[AVO_ERRLEN];
    rc = avo_archive_candidate_get(ar, q.id, q.source || q.json, &c, err, sizeof err);
    if (rc == AVO_ENOTFOUND) {
        fprintf(stderr, "avo: no candidate #%lld in %s\n", q.id, q.db);
        rc = 1;
    } else if (rc < 0) {
        fprintf(stderr, "avo: %s\n", err);
        rc = 1;
    } else {
        if (q.json)
            print_json(c);
        else
            print_candidate(c, q.source);
        rc = 0;
    }
    json_decref(c);
    avo_archive_free(ar);
    return rc;
}

static const json_t *find_node(const json_t *nodes, long long id)
{
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) if (json_integer_value(json_object_get(n, "id")) == id) return n;
    return NULL;
}

/* Print node `id` and its ancestors below it; a node reached twice (a DAG
 * through crossover) is printed once and referred to afterwards. */
static void print_tree(const json_t *nodes, long long id, const char *role, char *prefix,
                       size_t prefix_len, int last, int depth, json_t *seen)
{
    const json_t *n = find_node(nodes, id);
    char key[32];
    snprintf(key, sizeof key, "%lld", id);
    if (depth > 0)
        printf("%s%s", prefix, last ? "└─ " : "├─ ");
    if (!n) {
        printf("#%lld (missing)\n", id);
        return;
    }
    printf("#%lld %s gen %lld %s score %.4g", id, str(n, "operator"),
           (long long)json_integer_value(json_object_get(n, "generation")), str(n, "status"),
           num(n, "score"));
    if (role && strcmp(role, "parent") != 0)
        printf(" [%s]", role);
    if (json_object_get(seen, key)) {
        printf(" (shown above)\n");
        return;
    }
    printf("\n");
    json_object_set_new(seen, key, json_true());
    const json_t *parents = json_object_get(n, "parents");
    size_t count = json_array_size(parents);
    size_t len = strlen(prefix);
    if (depth > 0 && len + 8 < prefix_len)
        strcat(prefix, last ? "   " : "│  ");
    for (size_t i = 0; i < count; i++) {
        const json_t *p = json_array_get(parents, i);
        print_tree(nodes, json_integer_value(json_object_get(p, "id")), str(p, "role"), prefix,
                   prefix_len, i + 1 == count, depth + 1, seen);
    }
    prefix[len] = '\0';
}

static int cmd_lineage(int argc, char **argv)
{
    query_opts q;
    int rc = parse_query(argc, argv, usage_lineage, 1, &q);
    if (rc >= 0)
        return rc;
    avo_archive *ar = avo_cli_open_archive(q.db);
    if (!ar)
        return 1;
    json_t *nodes = NULL;
    char err[AVO_ERRLEN];
    rc = avo_archive_lineage(ar, q.id, &nodes, err, sizeof err);
    if (rc == AVO_ENOTFOUND || (rc == 0 && json_array_size(nodes) == 0)) {
        fprintf(stderr, "avo: no candidate #%lld in %s\n", q.id, q.db);
        rc = 1;
    } else if (rc < 0) {
        fprintf(stderr, "avo: %s\n", err);
        rc = 1;
    } else if (q.json) {
        print_json(nodes);
        rc = 0;
    } else {
        char prefix[512] = "";
        json_t *seen = json_object();
        print_tree(nodes, q.id, NULL, prefix, sizeof prefix, 1, 0, seen);
        json_decref(seen);
        rc = 0;
    }
    json_decref(nodes);
    avo_archive_free(ar);
    return rc;
}

int main(int argc, char **argv)
{
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
        return avo_worker_main(0, 1);
    if (!strcmp(cmd, "nvrtc-compile")) /* hidden: the CUDA backend's compile process */
        return avo_cuda_compile_main(0, 1);
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "eval"))
        return cmd_eval(argc - 1, argv + 1);
    if (!strcmp(cmd, "best"))
        return cmd_best(argc - 1, argv + 1);
    if (!strcmp(cmd, "show"))
        return cmd_show(argc - 1, argv + 1);
    if (!strcmp(cmd, "lineage"))
        return cmd_lineage(argc - 1, argv + 1);
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
    if (!strcmp(cmd, "kb"))
        return avo_cli_kb(argc - 1, argv + 1);
    if (!strcmp(cmd, "resume"))
        return cmd_recorded(argc - 1, argv + 1, "resume", usage_resume);
    if (!strcmp(cmd, "replay"))
        return cmd_recorded(argc - 1, argv + 1, "replay", usage_replay);
    if (!strcmp(cmd, "rebench"))
        return cmd_recorded(argc - 1, argv + 1, "rebench", usage_rebench);
    fprintf(stderr, "avo: unknown command '%s'\n\n%s", cmd, usage_main);
    return AVO_CLI_EXIT_USAGE;
}
