#!/usr/bin/python3
"""Whole-process figures: the compile tool and the demo's spawn as fresh processes.

  bazel run -c opt //tools:process_benchmark -- [--entities=1000000] [--with_10m]
      [--runs=3] [--json=PATH] [--workdir=DIR] [--keep]

For each size it generates a level of N root entities, each named ("entity_<k>") with
one transform (//engine:generate_level), then measures, each run a fresh process:
  - //engine:compile LEVEL.json OUT.entities (one thread, the tool's default): wall
    time, process CPU time (user + system) and peak RSS, from wait4() on the child;
  - //engine:demo --level=OUT.entities --frames=0: the spawn time the demo reports
    (its level.spawn_ms), and the process's wall, CPU and peak RSS;
and beside them, in process, on the same files:
  - BM_Compile/level_file (//engine:compile_benchmark) compiles the same JSON, and
    BM_Floor/simdjson_ondemand_level_file parses it with simdjson's On-Demand API,
    visiting every number and string (the one-thread compile's floor),
  - BM_Spawn/FirstLevelFile (//engine:world_benchmark) spawns the same blob into a new
    World, as the demo does,
  - BM_Spawn/FirstTransforms/1000000, the package benchmark's unnamed 1M level.
It prints the ratios (goals in brackets):
  compile tool wall / BM_Compile/level_file real time      [<= 1.2]
  BM_Compile/level_file / its On-Demand floor (thread CPU)  [<= 3]
  compile tool peak RSS / (input + output)                  [<= 3]
  compile tool peak RSS / (3 x input + output)              [<= 1, compile_benchmark's budget]
  demo spawn (fresh process) / BM_Spawn/FirstLevelFile      [<= 1.3]
  demo spawn / BM_Spawn/FirstTransforms/1000000             (the issue's reference row)
Medians over --runs; peaks are the largest. The load average is printed at the start
and the end: on a shared machine the figures are only as good as that.
The 10M level (about 1 GB of JSON and 1 GB of blob on disk, minutes of work) only runs
with --with_10m.
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

# The binaries, relative to the runfiles' workspace directory (bazel run and bazel test
# start there).
BINARIES = {
    "generate_level": "engine/generate_level",
    "compile": "engine/compile",
    "demo": "engine/demo",
    "compile_benchmark": "engine/compile_benchmark",
    "world_benchmark": "engine/world_benchmark",
}


class Failure(Exception):
    pass


def run_process(argv, log_path, env=None):
    """Runs argv with stdout+stderr to log_path; returns wall s, CPU s, peak RSS bytes."""
    with open(log_path, "wb") as log:
        start = time.monotonic()
        pid = os.posix_spawn(argv[0], argv, env if env is not None else os.environ,
                             file_actions=[(os.POSIX_SPAWN_DUP2, log.fileno(), 1),
                                           (os.POSIX_SPAWN_DUP2, log.fileno(), 2)])
        _, status, usage = os.wait4(pid, 0)
        wall = time.monotonic() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        with open(log_path, "r", errors="replace") as f:
            tail = f.read()[-2000:]
        raise Failure("%s exited with %d:\n%s" % (" ".join(argv), code, tail))
    # ru_maxrss is in KiB on Linux.
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def benchmark_rows(binary, name_filter, env, json_path, log_path, repetitions):
    """Runs a Google Benchmark binary; returns {name: {"real_ms", "cpu_ms"}} (medians)."""
    argv = [binary, "--benchmark_filter=" + name_filter, "--benchmark_out=" + json_path,
            "--benchmark_out_format=json"]
    if repetitions > 1:
        argv += ["--benchmark_repetitions=%d" % repetitions,
                 "--benchmark_report_aggregates_only=true"]
    run_process(argv, log_path, env)
    with open(json_path) as f:
        report = json.load(f)
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
    rows = {}
    for b in report.get("benchmarks", []):
        if "error_message" in b:
            raise Failure("%s: %s" % (b["name"], b["error_message"]))
        if repetitions > 1 and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        unit = scale[b.get("time_unit", "ns")]
        rows[name] = {"real_ms": b["real_time"] * unit, "cpu_ms": b["cpu_time"] * unit}
    return rows


def find_row(rows, prefix):
    for name, row in rows.items():
        if name.startswith(prefix):
            return row
    raise Failure("no benchmark row %s in %s" % (prefix, sorted(rows)))


def measure_size(n, args, workdir, bins):
    level = os.path.join(workdir, "level_%d.json" % n)
    blob = os.path.join(workdir, "level_%d.entities" % n)
    log = os.path.join(workdir, "log_%d.txt" % n)
    run_process([bins["generate_level"], "--entities=%d" % n, "--names", level], log)
    compile_runs, demo_runs, spawn_ms = [], [], []
    for _ in range(args.runs):
        compile_runs.append(run_process([bins["compile"], level, blob], log))
    for k in range(args.runs):
        report = os.path.join(workdir, "report_%d_%d.json" % (n, k))
        demo_runs.append(run_process([bins["demo"], "--level=" + blob, "--frames=0",
                                      "--progress_every=0", "--report_json=" + report], log))
        with open(report) as f:
            spawn_ms.append(json.load(f)["level"]["spawn_ms"])
    env = dict(os.environ, STRATA_BENCHMARK_LEVEL_JSON=level, STRATA_BENCHMARK_LEVEL_BLOB=blob)
    compile_rows = benchmark_rows(bins["compile_benchmark"],
                                  "^(BM_Compile/level_file|BM_Floor/simdjson_ondemand_level_file)$", env,
                                  os.path.join(workdir, "compile_%d.json" % n), log, args.runs)
    spawn_rows = benchmark_rows(bins["world_benchmark"], "^BM_Spawn/FirstLevelFile(/|$)", env,
                                os.path.join(workdir, "spawn_%d.json" % n), log, args.runs)
    json_bytes = os.path.getsize(level)
    blob_bytes = os.path.getsize(blob)
    in_compile = find_row(compile_rows, "BM_Compile/level_file")
    floor = find_row(compile_rows, "BM_Floor/simdjson_ondemand_level_file")
    in_spawn = find_row(spawn_rows, "BM_Spawn/FirstLevelFile")
    wall = lambda runs: statistics.median(r[0] for r in runs)
    cpu = lambda runs: statistics.median(r[1] for r in runs)
    peak = lambda runs: max(r[2] for r in runs)
    result = {
        "entities": n,
        "json_bytes": json_bytes,
        "blob_bytes": blob_bytes,
        "compile_tool": {"wall_ms": wall(compile_runs) * 1e3, "cpu_ms": cpu(compile_runs) * 1e3,
                         "peak_rss_bytes": peak(compile_runs)},
        "compile_in_process": in_compile,
        "ondemand_floor": floor,
        "demo_process": {"wall_ms": wall(demo_runs) * 1e3, "cpu_ms": cpu(demo_runs) * 1e3,
                         "peak_rss_bytes": peak(demo_runs),
                         "spawn_ms": statistics.median(spawn_ms)},
        "spawn_in_process": in_spawn,
    }
    result["ratios"] = {
        "compile_tool_wall/in_process_real": result["compile_tool"]["wall_ms"] / in_compile["real_ms"],
        "compile_tool_cpu/in_process_cpu": result["compile_tool"]["cpu_ms"] / in_compile["cpu_ms"],
        # Both one thread: their threads' CPU times, which another process's load
        # disturbs least.
        "compile_in_process_cpu/ondemand_floor_cpu": in_compile["cpu_ms"] / floor["cpu_ms"],
        "compile_peak_rss/(input+output)": result["compile_tool"]["peak_rss_bytes"] / (json_bytes + blob_bytes),
        # compile_benchmark's budget (BM_CompilePeakMemory's rss/budget).
        "compile_peak_rss/(3*input+output)":
            result["compile_tool"]["peak_rss_bytes"] / (3 * json_bytes + blob_bytes),
        "demo_spawn/in_process_first_spawn": result["demo_process"]["spawn_ms"] / in_spawn["real_ms"],
    }
    if not args.keep:
        for path in (level, blob):
            os.remove(path)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entities", type=int, default=1000000,
                        help="entities of the level (default 1,000,000)")
    parser.add_argument("--with_10m", action="store_true",
                        help="also a 10,000,000-entity level (disk: ~2 GB; minutes)")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per figure")
    parser.add_argument("--json", default="", help="also write the figures as JSON here")
    parser.add_argument("--workdir", default="",
                        help="where the levels go (default: a new directory in $TMPDIR)")
    parser.add_argument("--keep", action="store_true", help="keep the levels and logs")
    args = parser.parse_args()
    if args.entities < 1 or args.entities > 100000000:
        sys.exit("process_benchmark: --entities must be in [1, 100000000], got %d" % args.entities)
    if args.runs < 1 or args.runs > 100:
        sys.exit("process_benchmark: --runs must be in [1, 100], got %d" % args.runs)
    bins = {}
    for key, path in BINARIES.items():
        if not os.access(path, os.X_OK):
            sys.exit("process_benchmark: %s not found in %s: run it with bazel run "
                     "//tools:process_benchmark" % (path, os.getcwd()))
        bins[key] = os.path.abspath(path)
    sizes = [args.entities] + ([10000000] if args.with_10m and args.entities != 10000000 else [])
    workdir = args.workdir or tempfile.mkdtemp(prefix="strata_process_benchmark_")
    os.makedirs(workdir, exist_ok=True)
    load_start = os.getloadavg()
    results = []
    try:
        reference = benchmark_rows(bins["world_benchmark"], "^BM_Spawn/FirstTransforms/1000000(/|$)",
                                   dict(os.environ), os.path.join(workdir, "first_transforms.json"),
                                   os.path.join(workdir, "log_reference.txt"), args.runs)
        first_transforms = find_row(reference, "BM_Spawn/FirstTransforms/1000000")
        for n in sizes:
            result = measure_size(n, args, workdir, bins)
            # FirstTransforms spawns 1M entities: scale it to this level's size.
            per_entity = first_transforms["real_ms"] / 1e6
            result["ratios"]["demo_spawn/first_transforms_per_entity"] = (
                result["demo_process"]["spawn_ms"] / (per_entity * n))
            results.append(result)
    except Failure as e:
        sys.exit("process_benchmark: %s" % e)
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    load_end = os.getloadavg()

    print("process_benchmark: %d cores; load average %.2f at the start, %.2f at the end; "
          "medians of %d runs" % (os.cpu_count(), load_start[0], load_end[0], args.runs))
    print("BM_Spawn/FirstTransforms/1000000 (in process, unnamed): %.1f ms" % first_transforms["real_ms"])
    goals = {"compile_tool_wall/in_process_real": "<= 1.2",
             "compile_in_process_cpu/ondemand_floor_cpu": "<= 3",
             "compile_peak_rss/(input+output)": "<= 3",
             "compile_peak_rss/(3*input+output)": "<= 1 (compile_benchmark's budget)",
             "demo_spawn/in_process_first_spawn": "<= 1.3",
             "demo_spawn/first_transforms_per_entity": "<= 1.3 (reference)"}
    for r in results:
        mb = 1e6
        print("\nlevel: %d named entities, %.1f MB JSON, %.1f MB blob" %
              (r["entities"], r["json_bytes"] / mb, r["blob_bytes"] / mb))
        print("  %-44s %10s %10s %12s" % ("", "wall ms", "CPU ms", "peak RSS MB"))
        print("  %-44s %10.1f %10.1f %12.1f" % ("compile tool (fresh process)",
              r["compile_tool"]["wall_ms"], r["compile_tool"]["cpu_ms"],
              r["compile_tool"]["peak_rss_bytes"] / mb))
        print("  %-44s %10.1f %10.1f %12s" % ("BM_Compile/level_file (in process)",
              r["compile_in_process"]["real_ms"], r["compile_in_process"]["cpu_ms"], ""))
        print("  %-44s %10.1f %10.1f %12s" % ("its floor: simdjson On-Demand (in process)",
              r["ondemand_floor"]["real_ms"], r["ondemand_floor"]["cpu_ms"], ""))
        print("  %-44s %10.1f %10.1f %12.1f" % ("demo --frames=0 (fresh process)",
              r["demo_process"]["wall_ms"], r["demo_process"]["cpu_ms"],
              r["demo_process"]["peak_rss_bytes"] / mb))
        print("  %-44s %10.1f %10s %12s" % ("  its reported spawn", r["demo_process"]["spawn_ms"], "", ""))
        print("  %-44s %10.1f %10.1f %12s" % ("BM_Spawn/FirstLevelFile (in process)",
              r["spawn_in_process"]["real_ms"], r["spawn_in_process"]["cpu_ms"], ""))
        for name, value in r["ratios"].items():
            print("  %-44s %10.3f   goal %s" % (name, value, goals.get(name, "(none)")))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cores": os.cpu_count(), "load_average_start": load_start[0],
                       "load_average_end": load_end[0], "runs": args.runs,
                       "first_transforms_1m": first_transforms, "levels": results}, f, indent=1)


if __name__ == "__main__":
    main()
