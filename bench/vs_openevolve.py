#!/usr/bin/env python3
"""avo's llm_mutate against OpenEvolve 0.4.1 on engine throughput.

    vs_openevolve.py AVO BASE_URL [--counts 1000,10000] [--rounds 2] [--jobs 1]

Both evolve a trivial program whose evaluation is instant, every variation
answered by the same loopback fake LLM server (tests/llm/fake_server.py,
model "mutate-bench": the parent rewritten whole with a fresh comment), so
what is timed is each engine's own cost per candidate: prompt building,
the LLM call path, bookkeeping, the archive or database.  Runs alternate
(OpenEvolve, avo, OpenEvolve, avo, ...) so that load on a shared machine
falls on both alike; prints each run's evaluations per wall second and the
median ratio avo / OpenEvolve per count.  bench/vs_openevolve.sh starts the
server and picks the Python that has OpenEvolve.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

PROGRAM = """# EVOLVE-BLOCK-START
def copy(x):
    return list(x)
# EVOLVE-BLOCK-END
"""
# Scores a program by a hash of its text: instant, and edits score apart.
EVALUATOR = """import zlib
def evaluate(program_path):
    with open(program_path) as f:
        text = f.read()
    return {"combined_score": 1 + (zlib.crc32(text.encode()) % 1000) / 1000}
"""


def openevolve_run(base_url, count, jobs, tmp):
    """Wall seconds of one OpenEvolve run of `count` iterations."""
    from openevolve import run_evolution
    from openevolve.config import Config, LLMModelConfig
    config = Config()
    config.llm.models = [LLMModelConfig(name="mutate-bench", weight=1.0)]
    config.llm.update_model_params({"api_key": os.environ["FAKE_LLM_KEY"], "api_base": base_url,
                                    "temperature": 0.0, "timeout": 60, "retries": 0})
    config.diff_based_evolution = False  # the fake server rewrites whole programs
    config.evaluator.cascade_evaluation = False
    config.evaluator.parallel_evaluations = jobs
    config.evaluator.timeout = 60
    config.checkpoint_interval = max(count, 100)
    prog = os.path.join(tmp, "program.py")
    ev = os.path.join(tmp, "evaluator.py")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    with open(ev, "w") as f:
        f.write(EVALUATOR)
    start = time.time()
    run_evolution(prog, ev, config=config, iterations=count, cleanup=True)
    return time.time() - start


def avo_run(avo, base_url, count, jobs, tmp, root):
    db = os.path.join(tmp, f"avo_{count}_{time.time_ns()}.db")
    start = time.time()
    subprocess.run([avo, "run", "bench/throughput.lua", "--db", db, "--max-evals", str(count),
                    "--jobs", str(jobs), "--retime", "0", "op=llm_mutate", f"base_url={base_url}"],
                   cwd=root, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=dict(os.environ, AVO_LLM_CONCURRENCY=os.environ.get("AVO_LLM_CONCURRENCY", "8")))
    return time.time() - start


def quiet():
    import logging
    logging.disable(logging.INFO)  # OpenEvolve logs every iteration


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("avo")
    ap.add_argument("base_url")
    ap.add_argument("--counts", default="1000,10000")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    import openevolve
    quiet()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    print(f"avo llm_mutate vs OpenEvolve {openevolve.__version__}, jobs {args.jobs}, "
          f"fake LLM server, instant evaluation")
    for count in [int(c) for c in args.counts.split(",")]:
        ratios = []
        for r in range(1, args.rounds + 1):
            with tempfile.TemporaryDirectory() as tmp:
                oe = openevolve_run(args.base_url, count, args.jobs, tmp)
                av = avo_run(os.path.abspath(args.avo), args.base_url, count, args.jobs, tmp, root)
            ratios.append(oe / av)
            print(f"  {count} candidates, round {r}: OpenEvolve {count / oe:.1f}/s, "
                  f"avo {count / av:.1f}/s, ratio {oe / av:.2f}")
            sys.stdout.flush()
        print(f"{count} candidates: median ratio avo / OpenEvolve {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
