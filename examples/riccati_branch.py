#!/usr/bin/env python
"""The examples of seed 002 run with the Riccati transfer-matrix reference solver.

``fig2``: the planar branch pendulum of Fig. 2 (rods m = 1 kg, 2a = 1 m, θ1 = θ3 = θ5 = π/2,
θ7 = 0, at rest), fourth-order Runge-Kutta with Δt = 1 ms as in the seed; the absolute angles
θ1, θ3, θ5, θ7 (rad) against time are the curves of its Fig. 3.

``fig1``: the spatial branch system of Fig. 1 with ball hinges (N = 999: 500 bodies, 1500 dof),
same integrator; the rotations about z of bodies 1, 11 and N (rad) are the curves of its Fig. 4.

Usage (``fig2`` is the default):
  python examples/riccati_branch.py [fig2] [--t-final 5] [--out results/riccati_fig2.csv] [--plot P]
  python examples/riccati_branch.py fig1 [--N 999] [--t-final 0.5] [--out results/riccati_fig1.csv]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from titopfmu.reference.riccati import branch_pendulum, branch_system


def _write(path: str, header: list[str], t: np.ndarray, cols: np.ndarray) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(path, np.column_stack([t, cols]), delimiter=",", header=",".join(header),
               comments="", fmt="%.10g")  # fmt: skip
    print(f"wrote {path}")


def _plot(path: str, t: np.ndarray, cols: np.ndarray, labels: list[str], title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for k, lab in enumerate(labels):
        ax.plot(t, cols[:, k], label=lab)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("angle (rad)")
    ax.set_title(title)
    ax.grid(True)
    ax.legend()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    print(f"wrote {path}")


def run_fig2(args: argparse.Namespace) -> None:
    ex = branch_pendulum()
    model = ex.model
    t0 = time.perf_counter()
    t, Y = model.rk4(ex.y0, args.t_final, args.dt, every=max(1, round(0.01 / args.dt)))
    wall = time.perf_counter() - t0
    theta = np.array([model.absolute_angles(y) for y in Y])
    E = np.array([sum(model.energy(y)) for y in Y])
    print(f"Fig. 2 branch pendulum, RK4 dt = {args.dt:g} s, {args.t_final:g} s in {wall:.2f} s")
    print(f"energy drift max |E - E0| = {np.max(np.abs(E - E[0])):.2e} J")
    print(f"{'t (s)':>6} " + " ".join(f"{n:>9}" for n in ("θ1", "θ3", "θ5", "θ7")))
    for k in range(0, len(t), max(1, len(t) // 10)):
        print(f"{t[k]:6.2f} " + " ".join(f"{v:9.4f}" for v in theta[k]))
    labels = ["theta1", "theta3", "theta5", "theta7"]
    if args.out:
        _write(args.out, ["time", *labels], t, theta)
    if args.plot:
        _plot(args.plot, t, theta, labels, "seed 002, Fig. 2 branch pendulum (Riccati TMM, RK4)")


def run_fig1(args: argparse.Namespace) -> None:
    ex = branch_system(args.N)
    model = ex.model
    names = [f"body{k}" for k in (1, 11, args.N)]
    idx = [model.names.index(n) for n in names]
    t0 = time.perf_counter()
    t, Y = model.rk4(ex.y0, args.t_final, args.dt, every=max(1, round(0.01 / args.dt)))
    wall = time.perf_counter() - t0
    rot = []
    for y in Y:
        _, A = model.poses(y)
        rot.append(np.arctan2(A[idx, 1, 0], A[idx, 0, 0]))
    rot = np.unwrap(np.array(rot), axis=0)
    steps = round(args.t_final / args.dt)
    print(
        f"Fig. 1 branch system N = {args.N}: {model.n_bodies} bodies, {model.dof} dof; RK4 "
        f"{steps} steps of {args.dt:g} s in {wall:.1f} s ({wall / (4 * steps) * 1e3:.2f} ms per "
        "right-hand side)"
    )
    print(f"{'t (s)':>6} " + " ".join(f"{n:>10}" for n in names))
    for k in range(0, len(t), max(1, len(t) // 10)):
        print(f"{t[k]:6.2f} " + " ".join(f"{v:10.5f}" for v in rot[k]))
    if args.out:
        _write(args.out, ["time", *[f"rz_{n}" for n in names]], t, rot)
    if args.plot:
        _plot(args.plot, t, rot, names, f"seed 002, Fig. 1 branch system N = {args.N}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="example", required=True)
    p2 = sub.add_parser("fig2", help="planar branch pendulum of Fig. 2")
    p2.add_argument("--t-final", type=float, default=5.0)
    p2.add_argument("--dt", type=float, default=1e-3)
    p2.add_argument("--out")
    p2.add_argument("--plot")
    p1 = sub.add_parser("fig1", help="spatial branch system of Fig. 1")
    p1.add_argument("--N", type=int, default=999)
    p1.add_argument("--t-final", type=float, default=0.5)
    p1.add_argument("--dt", type=float, default=1e-3)
    p1.add_argument("--out")
    p1.add_argument("--plot")
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in ("fig1", "fig2", "-h", "--help"):
        argv = ["fig2", *argv]  # the planar branch pendulum unless fig1 is asked for
    args = ap.parse_args(argv)
    (run_fig2 if args.example == "fig2" else run_fig1)(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
