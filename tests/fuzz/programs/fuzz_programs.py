#!/usr/bin/env python3
"""The program fuzzer: random AG_FUNCTIONs through ag-rewrite, tracing and the JIT, against
plain C++ references (docs/reliability.md; scripts/fuzz.sh programs N runs it).

    fuzz_programs.py --count N [--seed S] [--minutes M] [--agc-dir build] [--work DIR] [--per-tu 25] [--no-reduce]

1. Generates N programs (program_generator.py), --per-tu to a translation unit.
2. Builds them, with the harness, as a project that finds agc as a package (CMakeLists.txt here).
   A translation unit that fails to build is split into one program per unit, so the build
   failure is pinned on its program.
3. Runs them (fuzz_harness.cpp): each program directly, under run_functions_eagerly, on the
   interpreter and compiled, on inputs chosen to cover its branches and loop counts.
4. Prints each failing program and reduces it (delta debugging on statements: remove a
   statement, replace a compound statement by its body, while the same failure remains).
The last line is "N passed, M failed"; the exit status is 1 when M > 0.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import program_generator  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def log(msg):
    print(f"==> {msg}", file=sys.stderr, flush=True)


class Project:
    """A build directory of the fuzz project over a directory of generated sources."""

    def __init__(self, work, agc_dir, name):
        self.work = work
        self.sources = os.path.join(work, name, "programs")
        self.build = os.path.join(work, name, "build")
        self.agc_dir = agc_dir
        os.makedirs(self.sources, exist_ok=True)

    def write(self, files):
        """Replaces the generated sources by `files` ({name: text}); unchanged files keep their stamps."""
        for old in os.listdir(self.sources):
            if old not in files:
                os.remove(os.path.join(self.sources, old))
        for name, text in files.items():
            path = os.path.join(self.sources, name)
            if os.path.exists(path) and open(path).read() == text:
                continue
            with open(path, "w") as f:
                f.write(text)

    def configure(self):
        if os.path.exists(os.path.join(self.build, "build.ninja")):
            return
        cmd = ["cmake", "-S", HERE, "-B", self.build, "-G", "Ninja", f"-Dagc_DIR={self.agc_dir}",
               f"-DAGFUZZ_PROGRAM_DIR={self.sources}", f"-DCMAKE_CXX_COMPILER={os.environ.get('CXX', 'clang++-19')}"]
        if shutil.which("ccache"):
            cmd.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"fuzz_programs: configuring {self.build} failed:\n{r.stdout}{r.stderr}")

    def build_all(self, keep_going=False):
        """(ok, output)."""
        self.configure()
        cmd = ["cmake", "--build", self.build, "-j", os.environ.get("AG_JOBS", "2")]
        if keep_going:
            cmd += ["--", "-k", "0"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        return r.returncode == 0, r.stdout + r.stderr

    def run(self, *args, timeout=600):
        """(returncode, stdout, stderr); returncode None on a timeout."""
        env = dict(os.environ, AG_CACHE_DIR="off")
        exe = os.path.join(self.build, "fuzz_programs")
        try:
            r = subprocess.run([exe, *args], capture_output=True, text=True, env=env, timeout=timeout)
            return r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired as e:
            return None, (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or ""), "timeout"


def build_failure_signature(output):
    """The first error of a failed build, without line numbers and generated names."""
    for line in output.splitlines():
        if "error" in line:
            line = re.sub(r"^.*?error:", "error:", line)
            return re.sub(r"\b[pticej]\d+(_\d+)?\b|\d+", "#", line).strip()
    return "build failed"


class Failure:
    def __init__(self, program, kind, detail):
        self.program = program
        self.kind = kind  # "build", "mismatch", "crash"
        self.detail = detail


def run_batch(project, programs):
    """Runs the built batch; returns ({name: Failure or None})."""
    by_name = {p.name: p for p in programs}
    order = sorted(by_name)
    results = {}
    start = None
    while True:
        args = ["--from", start] if start else []
        code, out, err = project.run(*args)
        last_started = None
        for line in out.splitlines():
            if line.startswith("RUN "):
                last_started = line[4:].strip()
            elif line.startswith("PASS "):
                results[line.split()[1]] = None
                last_started = None
            elif line.startswith("FAIL "):
                name = line.split()[1].rstrip(":")
                results[name] = Failure(by_name[name], "mismatch", line[len("FAIL ") + len(name) + 2:])
                last_started = None
        for line in out.splitlines():
            if line.startswith("SUMMARY "):
                m = re.search(r"covered: (\d+) of (\d+)", line)
                if m:
                    covered, total = results.get("SUMMARY_COUNTS", (0, 0))
                    results["SUMMARY_COUNTS"] = (covered + int(m.group(1)), total + int(m.group(2)))
        if "SUMMARY" in out or last_started is None:
            break
        what = "timed out (10 min)" if code is None else f"crashed (exit status {code})"
        results[last_started] = Failure(by_name[last_started], "crash", f"{what}: {err[-2000:]}")
        following = [n for n in order if n > last_started]
        if not following:
            break
        start = following[0]
    return results


def check_programs(project, programs, per_tu, tag):
    """Builds and runs `programs`; returns {name: Failure or None}."""
    units = {}
    for i in range(0, len(programs), per_tu):
        chunk = programs[i:i + per_tu]
        units[f"batch_{i // per_tu:04d}.cpp"] = (chunk, program_generator.translation_unit(chunk, tag))
    project.write({name: text for name, (chunk, text) in units.items()})
    ok, output = project.build_all()
    results = {}
    if not ok:
        # Pin the failure on its programs: each program of a failing unit is built on its own.
        # (A target's objects all wait for all its rewrites, so one failure stops every unit.)
        error_lines = "\n".join(l for l in output.splitlines() if "error" in l or l.startswith("FAILED"))
        failing = set(re.findall(r"(batch_\d{4}\.cpp)", error_lines)) & set(units)
        suspects = [p for name in sorted(failing) for p in units[name][0]] or programs
        log(f"{', '.join(sorted(failing)) or 'a batch'} failed to build; building its {len(suspects)} programs one by one")
        triage = Project(project.work, project.agc_dir, "triage")
        for p in suspects:
            triage.write({f"{p.name}.cpp": program_generator.translation_unit([p], tag)})
            one_ok, one_output = triage.build_all()
            if not one_ok:
                results[p.name] = Failure(p, "build", one_output)
        kept = [p for p in programs if p.name not in results]
        project.write({f"batch_{i // per_tu:04d}.cpp": program_generator.translation_unit(kept[i:i + per_tu], tag)
                       for i in range(0, len(kept), per_tu)})
        ok, output = project.build_all()
        if not ok:
            sys.exit(f"fuzz_programs: the batch does not build without the failing programs:\n{output[-4000:]}")
    results.update(run_batch(project, [p for p in programs if p.name not in results]))
    counts = results.pop("SUMMARY_COUNTS", None)
    if counts:
        results["SUMMARY"] = (f"branch outcomes and loop counts (0, 1, many) covered: {counts[0]} of {counts[1]} "
                              f"({100.0 * counts[0] / max(counts[1], 1):.0f}%)")
    for p in programs:
        results.setdefault(p.name, Failure(p, "crash", "the harness never reported it"))
    return results


def still_fails(project, failure, removed, unwrapped):
    p = failure.program
    project.write({f"{p.name}.cpp": program_generator.translation_unit([p], "reduction", {p.name: (removed, unwrapped)})})
    ok, output = project.build_all()
    if failure.kind == "build":
        return not ok and build_failure_signature(output) == build_failure_signature(failure.detail)
    if not ok:
        return False
    code, out, _ = project.run("--only", p.name, timeout=120)
    if failure.kind == "crash":
        return code is None or (code != 0 and "SUMMARY" not in out)
    return f"FAIL {p.name}" in out


def reduce_failure(project, failure, deadline):
    """Greedy delta debugging over statements; returns (removed, unwrapped)."""
    removed, unwrapped = set(), set()
    changed = True
    while changed and time.time() < deadline:
        changed = False
        for node in failure.program.nodes():
            if time.time() >= deadline:
                break
            if node.id in removed or any(node.id == n for n in unwrapped):
                continue
            if is_inside_removed(failure.program, node, removed):
                continue
            if still_fails(project, failure, frozenset(removed | {node.id}), frozenset(unwrapped)):
                removed.add(node.id)
                changed = True
                continue
            if node.blocks and still_fails(project, failure, frozenset(removed), frozenset(unwrapped | {node.id})):
                unwrapped.add(node.id)
                changed = True
    return frozenset(removed), frozenset(unwrapped)


def is_inside_removed(program, node, removed):
    def contains(n, target):
        return any(c is target or contains(c, target) for b in n.blocks for c in b)

    return any(n.id in removed and contains(n, node) for n in program.nodes())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--agc-dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--work", default=None, help="default: <agc-dir>/fuzz-programs")
    ap.add_argument("--per-tu", type=int, default=25)
    ap.add_argument("--no-reduce", action="store_true")
    ap.add_argument("--reduce-minutes", type=float, default=20)
    ap.add_argument("--minutes", type=float, default=0,
                    help="long mode: batches of --count programs, seeds S, S+1, ..., until this many minutes passed")
    ap.add_argument("--write-sources", metavar="DIR",
                    help="only write the programs, one per file, to DIR (libFuzzer seeds) and stop")
    ap.add_argument("--canary", action="store_true",
                    help="self-test: program 0 gets a statement whose reference is wrong; succeed only if exactly "
                         "it fails and is reduced to that one statement")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else int(time.time()) % 100000
    work = args.work or os.path.join(args.agc_dir, "fuzz-programs")
    if args.write_sources:
        os.makedirs(args.write_sources, exist_ok=True)
        for i in range(args.count):
            p = program_generator.generate(seed, i)
            with open(os.path.join(args.write_sources, f"{p.name}.cpp"), "w") as out:
                out.write(program_generator.translation_unit([p], f"seed {seed}"))
        return 0
    if not os.path.exists(os.path.join(args.agc_dir, "agcConfig.cmake")):
        sys.exit(f"fuzz_programs: no agc build in {args.agc_dir} (run ./test.sh, or scripts/fuzz.sh, first)")

    started = time.time()
    total_passed, all_failures, seeds = 0, [], 0
    while True:
        passed, failures, programs = fuzz_seed(args, seed, work)
        total_passed += passed
        all_failures += failures
        seeds += 1
        if not args.minutes or time.time() - started >= 60 * args.minutes:
            break
        seed += 1
    if seeds > 1:
        log(f"long run: {seeds} seeds ({seed - seeds + 1}..{seed}), {total_passed + len(all_failures)} programs "
            f"in {(time.time() - started) / 60:.1f} min")
    print(f"{total_passed} passed, {len(all_failures)} failed")
    if args.canary:
        caught = [f for f in all_failures if f.program.name == programs[0].name]
        left = [n.kind for n in getattr(caught[0], "left", [])] if caught else []
        ok = len(all_failures) == 1 and caught and caught[0].kind == "mismatch" and left == ["canary"]
        print(f"canary {'caught and reduced to its statement' if ok else 'NOT handled'} "
              f"(failures: {[f.program.name for f in all_failures]}, left after reduction: {left})")
        return 0 if ok else 1
    return 1 if all_failures else 0


def fuzz_seed(args, seed, work):
    """Generates, checks and (on failure) reduces the programs of one seed: (passed, failures, programs)."""
    started = time.time()
    log(f"generating {args.count} programs (seed {seed})")
    programs = [program_generator.generate(seed, i) for i in range(args.count)]
    if args.canary:
        program_generator.with_canary(programs[0])
    project = Project(work, os.path.abspath(args.agc_dir), "batch")
    log(f"building and running them ({(args.count + args.per_tu - 1) // args.per_tu} translation units)")
    results = check_programs(project, programs, args.per_tu, f"seed {seed}")

    coverage = results.pop("SUMMARY", None)
    failures = [f for f in results.values() if f is not None]
    failures.sort(key=lambda f: f.program.name)
    for f in failures:
        report_failure(args, f, seed, work)
    passed = sum(1 for f in results.values() if f is None)
    log(f"seed {seed}: {len(programs)} programs in {time.time() - started:.0f} s, {len(failures)} failed; "
        f"{coverage or 'no coverage figures'}")
    return passed, failures, programs


def report_failure(args, f, seed, work):
    """Prints a failing program, saves it, and reduces it (unless --no-reduce)."""
    failure_dir = os.path.join(work, "failures")
    os.makedirs(failure_dir, exist_ok=True)
    print(f"\nFAILED {f.program.name} ({f.kind}): {f.detail.strip()[:3000]}")
    print("----- program -----")
    print(f.program.render("tensor"), end="")
    with open(os.path.join(failure_dir, f"{f.program.name}.cpp"), "w") as out:
        out.write(program_generator.translation_unit([f.program], f"seed {seed}, failed: {f.kind}"))
    if args.no_reduce:
        return
    log(f"reducing {f.program.name}")
    reducer = Project(work, os.path.abspath(args.agc_dir), "reduce")
    removed, unwrapped = reduce_failure(reducer, f, time.time() + 60 * args.reduce_minutes)
    reduced_path = os.path.join(failure_dir, f"{f.program.name}.reduced.cpp")
    with open(reduced_path, "w") as out:
        out.write(program_generator.translation_unit([f.program], f"seed {seed}, reduced: {f.kind}",
                                                     {f.program.name: (removed, unwrapped)}))
    print("----- reduced -----")
    print(f.program.render("tensor", removed, unwrapped), end="")
    f.left = [n for n in f.program.nodes() if n.id not in removed and n.id not in unwrapped
              and not is_inside_removed(f.program, n, removed)]
    print(f"(with its reference: {reduced_path})")

if __name__ == "__main__":
    sys.exit(main())
