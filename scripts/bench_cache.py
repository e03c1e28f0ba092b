#!/usr/bin/env python
"""Work and cache misses per body of one engine evaluation, counted (not timed) by cachegrind.

The chain target of issue 2 (``scripts/bench_engine.py``: cost per body at 1000 bodies within
20 % of that at 10) is judged on wall time, which on a shared host moves with the other tenants'
use of the last-level cache. This script counts instead, with valgrind's cachegrind on the chains
of ``bench_engine.py`` (``Engine.derivative``, garbage collector off as there), per body and
evaluation:

* ``instr``: instructions executed (the work: flat means the algorithm is linear);
* ``data refs``: memory reads and writes;
* ``D1 miss``: misses of a simulated first-level data cache (default: this machine's);
* ``LL miss``: misses of a simulated cache the size of this machine's *second-level* cache (per
  core; cachegrind simulates two levels, and the outer one is set to the L2 here because the
  last level is shared with other tenants): the memory traffic that has to come from the shared
  L3 or from DRAM, which is what makes the per-body time grow with the number of bodies. What
  a miss costs in time depends on whether the processor can overlap it with others: the
  ``objects`` stand-in misses more than the engine (356 against 253 lines per body at 1000
  bodies, one run) yet its time per body grows less (``bench_layout.py``), its misses being
  fresh arrays met in allocation order rather than chains of pointers.

Each count is the difference of two runs of the same process (with and without the timed
evaluations) divided by the number of body-evaluations, so imports and set-up cancel. The counts
do not depend on the machine's load: two runs give the same figures to a fraction of a percent
(hash seed fixed). They do depend on the Python, numpy and BLAS builds.

Needs valgrind (``apt-get install valgrind``). About 1.5 minutes per case and size on two cores.

Usage: python scripts/bench_cache.py [--sizes N ...] [--cases engine objects tuples stacks]
       [--body-evaluations N] [--gc]
       [--l1 BYTES,WAYS] [--ll BYTES,WAYS]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent

CHILD = r"""
import gc, sys
sys.path.insert(0, sys.argv[1])
from bench_layout import cases
n, calls, keep_gc, case = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5]
fn = cases(n)[case]
for _ in range(3):
    fn()
gc.collect()
if not keep_gc:
    gc.disable()
for _ in range(calls):
    fn()
"""

EVENTS = {"instr": "Ir", "data refs": ("Dr", "Dw"), "D1 miss": ("D1mr", "D1mw"),
          "LL miss": ("DLmr", "DLmw")}  # fmt: skip


def machine_cache(index: int, default: tuple[int, int]) -> tuple[int, int]:
    """(size in bytes, ways) of cpu0's cache ``index`` from sysfs (Linux), else ``default``."""
    base = Path(f"/sys/devices/system/cpu/cpu0/cache/index{index}")
    try:
        size = (base / "size").read_text().strip()
        ways = int((base / "ways_of_associativity").read_text())
        m = re.fullmatch(r"(\d+)([KM]?)", size)
        if m is None or ways <= 0:
            return default
        return int(m.group(1)) * {"": 1, "K": 1024, "M": 1024**2}[m.group(2)], ways
    except (OSError, ValueError):
        return default


def _cache_arg(text: str) -> tuple[int, int]:
    size, ways = (int(v) for v in text.split(","))
    return size, ways


def count(case: str, n: int, calls: int, keep_gc: bool, l1, ll, workdir: str) -> dict[str, int]:
    """Cachegrind's totals for ``case`` on a chain of n bodies and ``calls`` evaluations."""
    out = os.path.join(workdir, f"cg.{case}.{n}.{calls}.out")
    cmd = [
        "valgrind", "--tool=cachegrind", "--cache-sim=yes",
        f"--D1={l1[0]},{l1[1]},64", f"--LL={ll[0]},{ll[1]},64",
        f"--cachegrind-out-file={out}",
        sys.executable, "-c", CHILD, str(SCRIPTS), str(n), str(calls), "1" if keep_gc else "0",
        case,
    ]  # fmt: skip
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode:
        raise SystemExit(f"valgrind failed for {case}, n={n}:\n{proc.stderr[-2000:]}")
    names: list[str] = []
    totals: list[int] = []
    for line in Path(out).read_text().splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        elif line.startswith("summary:"):
            totals = [int(v) for v in line.split()[1:]]
    return dict(zip(names, totals, strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 1000], help="chain lengths")
    ap.add_argument(
        "--cases",
        nargs="+",
        default=["engine"],
        choices=["engine", "objects", "tuples", "stacks"],
        help="what to count: the engine and/or the stand-in layouts of bench_layout.py",
    )
    ap.add_argument(
        "--body-evaluations",
        type=int,
        default=5000,
        help="bodies x evaluations counted per size (default 5000: 500 evaluations at 10 bodies)",
    )
    ap.add_argument("--gc", action="store_true", help="keep the garbage collector on")
    ap.add_argument("--l1", type=_cache_arg, help="simulated D1 as BYTES,WAYS (default: cpu0's)")
    ap.add_argument("--ll", type=_cache_arg, help="simulated LL as BYTES,WAYS (default: cpu0's L2)")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("this benchmark needs valgrind (apt-get install valgrind)")
    if min(args.sizes) < 2:
        ap.error("--sizes: every chain needs at least 2 bodies")
    l1 = args.l1 or machine_cache(0, (32 * 1024, 8))
    ll = args.ll or machine_cache(2, (1024**2, 16))
    calls = {n: max(1, args.body_evaluations // n) for n in args.sizes}
    jobs = [(c, n, k) for c in args.cases for n in args.sizes for k in (0, calls[n])]
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        counts = pool.map(lambda j: count(*j, args.gc, l1, ll, tmp), jobs)
        results = dict(zip(jobs, counts, strict=True))
    print(
        f"cachegrind on {sys.executable} (Python {sys.version.split()[0]}): D1 {l1[0] // 1024} KiB "
        f"{l1[1]}-way, LL {ll[0] // 1024} KiB {ll[1]}-way; garbage collector "
        f"{'on' if args.gc else 'off'}; per body and evaluation:"
    )
    print(f"{'case':<9}{'bodies':>7}" + "".join(f"{k:>12}" for k in EVENTS))
    lo, hi = min(args.sizes), max(args.sizes)
    for case in args.cases:
        per: dict[int, dict[str, float]] = {}
        for n in args.sizes:
            a, b = results[(case, n, 0)], results[(case, n, calls[n])]
            per[n] = {
                k: sum(b[e] - a[e] for e in ((ev,) if isinstance(ev, str) else ev)) / (n * calls[n])
                for k, ev in EVENTS.items()
            }
            print(f"{case:<9}{n:>7}" + "".join(f"{v:>12,.1f}" for v in per[n].values()))
        if lo != hi:
            print(
                f"{case:<9}{hi} / {lo} bodies: instructions x"
                f"{per[hi]['instr'] / per[lo]['instr']:.3f}, data refs x"
                f"{per[hi]['data refs'] / per[lo]['data refs']:.3f}; LL misses "
                f"{per[lo]['LL miss']:.1f} -> {per[hi]['LL miss']:.1f} per body"
            )
    print("(an LL miss is a 64-byte line that had to come from beyond this core's L2)")


if __name__ == "__main__":
    main()
