#!/usr/bin/env python3
"""What compiling one crate costs rustc, in figures the machine's load does not change: the
instructions rustc executes (valgrind's callgrind, its "Collected" total, every thread
counted) and its peak resident memory (`/usr/bin/time -v`). Wall and CPU seconds of the same
run are printed beside them; on a loaded machine they are noise.

usage: rustc_cost.py TARGET_DIR CRATE_NAME [cargo build arguments...]

Builds with `cargo build -vv` into TARGET_DIR (created fresh; `CARGO_INCREMENTAL=0`, so the
crate's rustc has no incremental cache to reuse or write), takes the rustc invocation cargo
printed for CRATE_NAME (the last one: dependencies are built first and not measured), and runs
exactly that invocation twice more, with the environment cargo gave it: once under
`/usr/bin/time -v`, once under `valgrind --tool=callgrind`. Prints one line:

    instructions=N rss_kib=N wall_s=F cpu_s=F

Set VALGRIND=0 to skip the callgrind run (instructions=0): about 50 times faster. The
profile is kept as TARGET_DIR.valgrind.out (`callgrind_annotate --inclusive=yes` reads it).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def invocation(target, crate, cargo_args):
    """Builds, and returns (env, argv) of the last rustc invocation of `crate`."""
    shutil.rmtree(target, ignore_errors=True)
    env = dict(os.environ, CARGO_TARGET_DIR=target, CARGO_INCREMENTAL="0")
    # `-vv`: cargo prints each invocation with the environment it gives rustc.
    r = subprocess.run(["cargo", "build", "-vv", *cargo_args], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"cargo build failed:\n{r.stderr[-4000:]}")
    found = None
    for line in r.stderr.splitlines():
        m = re.search(r"Running `(.*)`$", line.strip())
        if m and f"--crate-name {crate} " in m.group(1):
            found = m.group(1)
    if found is None:
        sys.exit(f"no rustc invocation of {crate} in cargo's output (was it already built?)")
    words = shlex.split(found)
    run_env = dict(os.environ)
    while words and ENV_WORD.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        run_env[name] = value
    # Through rustup's proxy the program is `rustc`: measure the compiler itself, not the proxy.
    if os.path.basename(words[0]) == "rustc" and "/toolchains/" not in words[0]:
        sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True,
                                 check=True, cwd=run_env.get("CARGO_MANIFEST_DIR")).stdout.strip()
        words[0] = os.path.join(sysroot, "bin", "rustc")
    # Cargo runs rustc in the workspace's root, and names the crate's source relative to it:
    # the current directory for a workspace member, the package's own for a package that is
    # its own workspace (`--manifest-path` to a generated crate).
    source = next(w for w in words if w.endswith(".rs"))
    cwd = next((d for d in (os.getcwd(), run_env.get("CARGO_MANIFEST_DIR", ""))
                if os.path.exists(os.path.join(d, source))), os.getcwd())
    return run_env, words, cwd


def timed(env, argv, cwd):
    """Peak RSS (KiB), wall and CPU seconds of one run, from GNU time's report."""
    r = subprocess.run(["/usr/bin/time", "-v", *argv], env=env, cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"rustc failed when run again:\n{r.stderr[-4000:]}")
    report = dict(line.strip().rsplit(": ", 1) for line in r.stderr.splitlines()
                  if ": " in line and line.startswith("\t"))
    wall = 0.0
    for part in report["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":"):
        wall = wall * 60 + float(part)
    cpu = float(report["User time (seconds)"]) + float(report["System time (seconds)"])
    return int(report["Maximum resident set size (kbytes)"]), wall, cpu


def instructions(env, argv, cwd, out):
    """Instructions executed by every thread of the run: callgrind's "Collected" total, or
    cachegrind's "I refs" (without its cache simulation) with VALGRIND_TOOL=cachegrind. The
    two agree within 0.2 % and cost about the same (2026-12-08: 1.637 and 1.640 G for the
    architectural PMU, 41 s of CPU each)."""
    if os.environ.get("VALGRIND_TOOL") == "cachegrind":
        tool = ["--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}"]
        pattern = r"I\s+refs:\s+([\d,]+)"
    else:
        tool, pattern = ["--tool=callgrind", f"--callgrind-out-file={out}"], r"Collected : (\d+)"
    r = subprocess.run(["valgrind", *tool, *argv], env=env, cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    m = re.search(pattern, r.stderr)
    if r.returncode != 0 or m is None:
        sys.exit(f"rustc under valgrind failed:\n{r.stderr[-4000:]}")
    return int(m.group(1).replace(",", ""))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    target, crate, cargo_args = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    env, argv, cwd = invocation(target, crate, cargo_args)
    rss, wall, cpu = timed(env, argv, cwd)
    count = 0
    if os.environ.get("VALGRIND", "1") != "0":
        out = os.path.join(target, "valgrind.out")
        count = instructions(env, argv, cwd, out)
        # Kept beside the target directory (which the caller removes): the profile says where
        # the instructions went (`callgrind_annotate --inclusive=yes FILE`).
        shutil.copy(out, target.rstrip("/") + ".valgrind.out")
    print(f"instructions={count} rss_kib={rss} wall_s={wall:.2f} cpu_s={cpu:.2f}")


if __name__ == "__main__":
    main()
