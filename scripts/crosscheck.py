#!/usr/bin/env python
"""Cross-check the TITOP blocks against the seeds' formulations and Pinocchio; write a report.

Every system is built three ways from the same parameters (:mod:`titopfmu.examples.seeds`): with
the seed's own method (Kane, seed 003; DeNOC with seven point masses, seed 001; Riccati transfer
matrices, seed 002), with TITOP blocks in the in-process engine, and with Pinocchio (ABA). For
each system and each pair of the three (TITOP vs the seed's method, the seed's method vs
Pinocchio, TITOP vs Pinocchio) the script measures

* accelerations at the example's own initial states and at random states: the largest
  ``max_i |a_i - b_i| / max(1, |a|_inf, |b|_inf)`` over the states, with a, b the joint
  accelerations (rad/s², m/s²) in the joint coordinates of the TITOP blocks (for DeNOC and
  Riccati the seed's own speeds; Kane's are converted);
* trajectories: each side integrates with its own driver (the seed solver's ``simulate``, scipy
  DOP853 on the engine's and on Pinocchio's right-hand sides, rtol 1e-11, atol 1e-12) from the
  same initial state, and the largest differences over the sampled times of the body poses
  (position of each body's joint point in m, and the entries of its body-to-inertial DCM) and of
  the generalized speeds (rad/s, m/s) are reported; for the seed-002 branch pendulum also with
  the Riccati side run by the seed's own integrator (RK4, Δt = 1 ms).

The acceptance bounds are 1e-9 (relative accelerations) and 1e-6 (trajectories). The report
(``docs/crosscheck.md`` by default) holds the table, the command, the date and machine, and plots
(PNG, next to the report) of the seed examples' trajectories computed the three ways.

Usage: python scripts/crosscheck.py [--quick] [--out docs/crosscheck.md] [--no-plots]
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import scipy
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from titopfmu import InertiaWarning
from titopfmu.examples import seeds as S
from titopfmu.reference.kane import JointSpringDamper6
from titopfmu.spatial.rotations import euler_from_dcm

ACC_BOUND = 1e-9  # acceptance bound: relative accelerations
TRAJ_BOUND = 1e-6  # acceptance bound: trajectories
RTOL, ATOL = 1e-11, 1e-12  # every variable-step integration
Q_ACC = "accelerations (relative)"
Q_POSE = "trajectory: poses (m, DCM entries)"
Q_SPEED = "trajectory: speeds (rad/s, m/s)"
TITOP, PIN = "TITOP", "Pinocchio"
FloatArray = np.ndarray


@dataclass(frozen=True)
class Settings:
    """How much to sample: random systems per family, random states per random system, random
    states per example (besides its own initial states), simulated times (s), the output
    interval of trajectories (s), random trajectories per family, random states of the long
    Fig. 1 chain."""

    random_systems: int
    states_per_system: int
    example_states: int
    t_example: float
    t_random: float
    dt_out: float
    random_trajectories: int
    long_chain_states: int

    def describe(self) -> str:
        return (
            f"{self.random_systems} random systems per family with {self.states_per_system} "
            f"states each, {self.example_states} random states per example, trajectories over "
            f"{self.t_example:g} s (examples) and {self.t_random:g} s "
            f"({self.random_trajectories} random systems per family), sampled every "
            f"{self.dt_out:g} s, {self.long_chain_states} random states of the N = 999 chains"
        )


FULL = Settings(24, 4, 20, 5.0, 2.0, 0.02, 2, 3)
QUICK = Settings(3, 2, 3, 0.5, 0.5, 0.05, 1, 1)


@dataclass
class Row:
    """One line of the table."""

    pair: str
    system: str
    quantity: str
    value: float
    samples: int

    @property
    def bound(self) -> float:
        return ACC_BOUND if self.quantity.startswith("accelerations") else TRAJ_BOUND


@dataclass
class Traj:
    """A trajectory sampled at ``t`` (s): joint coordinates Q (T, nq), speeds V (T, nv), body
    positions P (T, n, 3; m) and DCMs R (T, n, 3, 3)."""

    t: FloatArray
    Q: FloatArray
    V: FloatArray
    P: FloatArray
    R: FloatArray


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    systems: list[tuple[str, str]] = field(default_factory=list)  # (label, description)
    plots: list[tuple[str, str]] = field(default_factory=list)  # (file name, caption)
    runs: dict[str, dict[str, Traj]] = field(default_factory=dict)  # for the plots


def rel_diff(a: FloatArray, b: FloatArray) -> float:
    """``max |a - b| / max(1, |a|_inf, |b|_inf)``."""
    scale = max(1.0, float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    return float(np.max(np.abs(a - b))) / scale


def pairs_of(method: str) -> list[tuple[str, str]]:
    """The three pairs of a seed: TITOP vs the method, the method vs Pinocchio, TITOP vs
    Pinocchio."""
    return [(TITOP, method), (method, PIN), (TITOP, PIN)]


# ----------------------------------------------------------------------------------------------
# accelerations
# ----------------------------------------------------------------------------------------------

Cases = Sequence[tuple[S.SeedSystem, Sequence[tuple[FloatArray, FloatArray]]]]


def acceleration_rows(
    report: Report, label: str, method: str, cases: Cases, pinocchio: bool = True
) -> None:
    """Compare the accelerations of every pair over all (system, states) cases."""
    pairs = pairs_of(method) if pinocchio else [(TITOP, method)]
    worst = dict.fromkeys(pairs, 0.0)
    n = 0
    for system, states in cases:
        for q, v in states:
            acc = {method: system.seed_accelerations(q, v), TITOP: system.titop.accelerations(q, v)}
            if pinocchio:
                acc[PIN] = system.pinocchio.accelerations(q, v)
            for a, b in pairs:
                worst[(a, b)] = max(worst[(a, b)], rel_diff(acc[a], acc[b]))
            n += 1
    for (a, b), w in worst.items():
        report.rows.append(Row(f"{a} vs {b}", label, Q_ACC, w, n))


# ----------------------------------------------------------------------------------------------
# trajectories
# ----------------------------------------------------------------------------------------------


def _poses(
    fn: Callable[..., tuple[FloatArray, FloatArray]], args: Sequence[tuple]
) -> tuple[FloatArray, FloatArray]:
    """Stack the (positions (n, 3), DCMs (n, 3, 3)) of ``fn(*a)`` over the samples ``args``."""
    out = [fn(*a) for a in args]
    return np.array([p for p, _ in out]), np.array([r for _, r in out])


def run_seed(system: S.SeedSystem, q0: FloatArray, v0: FloatArray, t: FloatArray) -> Traj:
    """The reference solver's own integration from (q0, v0), sampled at t (s)."""
    Q, V = system.seed_trajectory(q0, v0, t, RTOL, ATOL)
    P, R = _poses(system.seed_poses, list(zip(Q, V, strict=True)))
    return Traj(t, Q, V, P, R)


def run_titop(system: S.SeedSystem, q0: FloatArray, v0: FloatArray, t: FloatArray) -> Traj:
    """DOP853 on the TITOP engine's state derivative; poses from the engine's kinematics."""
    tt = system.titop
    sol = solve_ivp(
        tt.engine.derivative, (0.0, float(t[-1])), tt.state(q0, v0), method="DOP853",
        t_eval=t, rtol=RTOL, atol=ATOL,
    )  # fmt: skip
    if not sol.success:
        raise RuntimeError(f"TITOP integration failed: {sol.message}")
    qv = [tt.joint_state(x) for x in sol.y.T]
    P, R = _poses(tt.poses, [(x, ti) for x, ti in zip(sol.y.T, sol.t, strict=True)])
    return Traj(t, np.array([a for a, _ in qv]), np.array([b for _, b in qv]), P, R)


def run_pinocchio(system: S.SeedSystem, q0: FloatArray, v0: FloatArray, t: FloatArray) -> Traj:
    """DOP853 on Pinocchio's ABA (joint coordinates); poses from its forward kinematics."""
    pt = system.pinocchio
    sol = solve_ivp(
        pt.rhs, (0.0, float(t[-1])), np.concatenate([q0, v0]), method="DOP853", t_eval=t,
        rtol=RTOL, atol=ATOL,
    )  # fmt: skip
    if not sol.success:
        raise RuntimeError(f"Pinocchio integration failed: {sol.message}")
    Q, V = sol.y[: system.nq].T, sol.y[system.nq :].T
    P, R = _poses(pt.poses, [(q,) for q in Q])
    return Traj(t, Q, V, P, R)


def traj_diff(a: Traj, b: Traj) -> tuple[float, float]:
    """(max pose difference, max speed difference) over the samples."""
    pose = max(float(np.max(np.abs(a.P - b.P))), float(np.max(np.abs(a.R - b.R))))
    return pose, float(np.max(np.abs(a.V - b.V)))


def pose_diff_series(a: Traj, b: Traj) -> FloatArray:
    """Pose difference at each sample (for the plots)."""
    dp = np.max(np.abs(a.P - b.P), axis=(1, 2))
    dr = np.max(np.abs(a.R - b.R), axis=(1, 2, 3))
    return np.maximum(dp, dr)


def trajectory_rows(
    report: Report,
    label: str,
    method: str,
    runs: Sequence[tuple[S.SeedSystem, FloatArray, FloatArray, FloatArray]],
    keep: str | None = None,
) -> list[dict[str, Traj]]:
    """Integrate every run three ways and add the pose and speed rows of every pair."""
    pairs = pairs_of(method)
    worst = {p: [0.0, 0.0] for p in pairs}
    samples = 0
    results = []
    for system, q0, v0, t in runs:
        res = {
            method: run_seed(system, q0, v0, t),
            TITOP: run_titop(system, q0, v0, t),
            PIN: run_pinocchio(system, q0, v0, t),
        }
        for a, b in pairs:
            pose, speed = traj_diff(res[a], res[b])
            worst[(a, b)] = [max(worst[(a, b)][0], pose), max(worst[(a, b)][1], speed)]
        samples += t.size
        results.append(res)
    for (a, b), (pose, speed) in worst.items():
        report.rows.append(Row(f"{a} vs {b}", label, Q_POSE, pose, samples))
        report.rows.append(Row(f"{a} vs {b}", label, Q_SPEED, speed, samples))
    return results


def times(t_final: float, dt: float) -> FloatArray:
    """Sample times 0, dt, ..., t_final (s)."""
    return np.linspace(0.0, t_final, int(round(t_final / dt)) + 1)


# ----------------------------------------------------------------------------------------------
# the seeds
# ----------------------------------------------------------------------------------------------


def seed001(report: Report, cfg: Settings) -> None:
    rng = np.random.default_rng(1)
    method = "DeNOC"
    # the pendulum of sec. V
    label = "seed 001: pendulum (sec. V)"
    pend, q_planar, u_planar = S.seed001_pendulum("planar")
    _, q_spatial, u_spatial = S.seed001_pendulum("spatial")
    _, q_spin, u_spin = S.seed001_pendulum("spatial", [1.0, 1.0, 1.0])
    states = [(q_planar, u_planar), (q_spatial, u_spatial), (q_spin, u_spin)]
    states += [pend.random_state(rng, 3.0) for _ in range(cfg.example_states)]
    acceleration_rows(report, label, method, [(pend, states)])
    t = times(cfg.t_example, cfg.dt_out)
    res = trajectory_rows(
        report, label, method, [(pend, q_planar, u_planar, t), (pend, q_spatial, u_spatial, t)]
    )
    report.runs["pendulum planar"], report.runs["pendulum spatial"] = res
    report.systems.append(
        (
            label,
            "DeNOC `spherical_pendulum()` (m = 2.512 kg, a = 1 m, d = 0.02 m, one spherical "
            "joint) vs TITOP `Ground` + `SphericalBody`. Accelerations at the paper's initial "
            "states (ZYZ 90/90/90 and 90/45/45 deg at rest; 90/45/45 deg with ZYZ rates of "
            f"1 rad/s) and {cfg.example_states} random states (speeds N(0, 3 rad/s)); "
            f"trajectories from the two paper states over {cfg.t_example:g} s, sampled every "
            f"{cfg.dt_out:g} s.",
        )
    )
    # random chains
    label = "seed 001: random chains (revolute, spherical)"
    cases, runs = [], []
    for k in range(cfg.random_systems):
        model = S.random_denoc_chain(1000 + k)
        system = S.DenocSystem(model, efforts=rng.normal(size=model.nv))
        cases.append(
            (system, [system.random_state(rng, 2.0) for _ in range(cfg.states_per_system)])
        )
        if k < cfg.random_trajectories:
            runs.append((system, *system.random_state(rng, 0.5), times(cfg.t_random, cfg.dt_out)))
    acceleration_rows(report, label, method, cases)
    trajectory_rows(report, label, method, runs)
    report.systems.append(
        (
            label,
            f"{cfg.random_systems} random serial chains of 1-6 bodies "
            "(`seeds.random_denoc_chain`: revolute joints about coordinate or oblique axes, "
            "spherical joints, random joint frames, offsets, mass centres, inertias, point masses "
            "on some revolute joints, random gravity) with random constant joint efforts; "
            f"{cfg.states_per_system} random states each (speeds N(0, 2)); trajectories of the "
            f"first {cfg.random_trajectories} over {cfg.t_random:g} s.",
        )
    )


def seed002(report: Report, cfg: Settings) -> None:
    rng = np.random.default_rng(2)
    method = "Riccati"
    # Fig. 2 branch pendulum
    label = "seed 002: Fig. 2 branch pendulum (planar)"
    fig2, q0, v0 = S.seed002_branch_pendulum()
    states = [(q0, v0)] + [fig2.random_state(rng, 3.0) for _ in range(cfg.example_states)]
    acceleration_rows(report, label, method, [(fig2, states)])
    t = times(cfg.t_example, cfg.dt_out)
    (res,) = trajectory_rows(report, label, method, [(fig2, q0, v0, t)])
    # the seed's own integrator on the Riccati side
    every = max(1, int(round(cfg.dt_out / 1e-3)))
    t_rk, Q, V = fig2.seed_rk4(q0, v0, cfg.t_example, 1e-3, every)
    P, R = _poses(fig2.seed_poses, list(zip(Q, V, strict=True)))
    rk4 = Traj(t_rk, Q, V, P, R)
    if t_rk.size != t.size or np.max(np.abs(t_rk - t)) > 1e-9:
        raise RuntimeError("RK4 output times differ from the comparison times")
    res["Riccati RK4"] = rk4
    report.runs["fig2"] = res
    label_rk4 = "seed 002: Fig. 2 branch pendulum, Riccati by RK4 Δt = 1 ms"
    pose, speed = traj_diff(res[TITOP], rk4)
    report.rows.append(Row(f"{TITOP} vs {method}", label_rk4, Q_POSE, pose, t.size))
    report.rows.append(Row(f"{TITOP} vs {method}", label_rk4, Q_SPEED, speed, t.size))
    report.systems.append(
        (
            label,
            "Riccati `branch_pendulum()` (rods m = 1 kg, 2a = 1 m; θ1 = θ3 = θ5 = π/2, θ7 = 0, "
            "at rest; revolute hinges about z) vs TITOP `Ground` + `RevoluteBody`. "
            f"Accelerations at the initial state and {cfg.example_states} random states "
            f"(N(0, 3 rad/s)); trajectory from the initial state over {cfg.t_example:g} s.",
        )
    )
    report.systems.append(
        (
            label_rk4,
            "The same trajectory with the Riccati side integrated as in the seed (classical "
            "RK4, Δt = 1 ms) against TITOP with DOP853.",
        )
    )
    # Fig. 1 branch system, short chains: all pairs
    label = "seed 002: Fig. 1 branch system N = 13 (spatial)"
    fig1, q0, v0 = S.seed002_branch_system(13)
    states = [(q0, v0)] + [fig1.random_state(rng, 2.0) for _ in range(cfg.example_states)]
    acceleration_rows(report, label, method, [(fig1, states)])
    report.systems.append(
        (
            label,
            "Riccati `branch_system(13)` (7 rods, ball hinges, 21 dof, the multi-input body 11) "
            "vs TITOP `SphericalBody` blocks: accelerations at the seed's initial state and "
            f"{cfg.example_states} random states (N(0, 2 rad/s)).",
        )
    )
    # Fig. 1 with long chains: TITOP vs Riccati only
    for planar in (False, True):
        kind = "planar" if planar else "spatial"
        label = f"seed 002: Fig. 1 branch system N = 999 ({kind})"
        big, q0, v0 = S.seed002_branch_system(999, planar)
        states = [(q0, v0)] + [big.random_state(rng, 0.5) for _ in range(cfg.long_chain_states)]
        acceleration_rows(report, label, method, [(big, states)], pinocchio=False)
        why = (
            "Pinocchio is left out: its `Data` for such deep chains grows much faster than the "
            "chain (ball hinges: 2 s and 1.8 GB for 100 bodies, 26 s and 16 GB for 200), and on "
            "long chains of slender rods the mass matrix reaches cond ~1e10, where its ABA "
            "agrees with the two O(n) recursions to ~1e-6 only (see `tests/test_riccati.py::"
            "test_ill_conditioned_fig1_satisfies_inverse_dynamics`)"
            if not planar
            else "Pinocchio left out as above"
        )
        report.systems.append(
            (
                label,
                f"`branch_system(999, planar={planar})`: 500 bodies, {big.nv} dof; TITOP vs "
                f"Riccati at the seed's initial state and {cfg.long_chain_states} random states "
                f"(N(0, 0.5 rad/s)). {why}.",
            )
        )
    # random trees
    for planar in (True, False):
        kind = "planar" if planar else "spatial"
        label = f"seed 002: random {kind} trees"
        cases, runs = [], []
        for k in range(cfg.random_systems):
            system = S.RiccatiSystem(S.random_riccati_model(2000 + k + 100 * planar, planar))
            cases.append(
                (system, [system.random_state(rng, 2.0) for _ in range(cfg.states_per_system)])
            )
            if k < cfg.random_trajectories:
                runs.append(
                    (system, *system.random_state(rng, 0.5), times(cfg.t_random, cfg.dt_out))
                )
        acceleration_rows(report, label, method, cases)
        trajectory_rows(report, label, method, runs)
        hinge = "revolute hinges about z" if planar else "ball hinges"
        report.systems.append(
            (
                label,
                f"{cfg.random_systems} random trees of 2-9 bodies hanging from the ground "
                f"(`seeds.random_riccati_model`, {hinge}, sometimes two roots, random masses, "
                "inertias, mass centres, hinge points and reference rotations, bodies listed in "
                f"shuffled order); {cfg.states_per_system} random states each (N(0, 2 rad/s)); "
                f"trajectories of the first {cfg.random_trajectories} over {cfg.t_random:g} s.",
            )
        )


def seed003(report: Report, cfg: Settings) -> None:
    rng = np.random.default_rng(3)
    method = "Kane"
    label = "seed 003: eight-body system"
    eight, q0, v0 = S.seed003_eight_body()
    states = [(q0, v0)] + [eight.random_state(rng, 1.0) for _ in range(cfg.example_states)]
    acceleration_rows(report, label, method, [(eight, states)])
    t = times(cfg.t_example, cfg.dt_out)
    (report.runs["eight"],) = trajectory_rows(report, label, method, [(eight, q0, v0, t)])
    report.systems.append(
        (
            label,
            "Kane `eight_body_example()`, L = (0, 1, 2, 1, 2, 1, 1, 7): every body free (6 dof) "
            "relative to its lower body, held by the undamped 6-dof springs "
            "`EIGHT_BODY_SPRINGS` (200 N/m, 2 N m/rad), no gravity; TITOP `Ground` + `FreeBody` "
            "blocks with the springs as `Function` blocks on `joint.m` -> `joint.tau`; Pinocchio "
            "free-flyer joints. Accelerations at `eight_body_initial_state()` and "
            f"{cfg.example_states} random states (translations ±0.3 m, speeds N(0, 1)); "
            f"trajectory from the documented initial state over {cfg.t_example:g} s.",
        )
    )
    label = "seed 003: random free-body trees"
    springs = JointSpringDamper6(30.0, 0.5, 3.0, 0.1, ground=True)
    cases, runs = [], []
    for k in range(cfg.random_systems):
        loads = springs if k % 2 else None
        system = S.KaneSystem(S.random_kane_model(3000 + k, loads=loads))
        cases.append(
            (system, [system.random_state(rng, 2.0) for _ in range(cfg.states_per_system)])
        )
    for k in range(cfg.random_trajectories):
        system = S.KaneSystem(S.random_kane_model(3500 + k, n=5, loads=springs))
        x0 = system.random_state(rng, 0.5, max_angle=1.0)
        runs.append((system, *x0, times(cfg.t_random, cfg.dt_out)))
    acceleration_rows(report, label, method, cases)
    trajectory_rows(report, label, method, runs)
    report.systems.append(
        (
            label,
            f"{cfg.random_systems} random trees of 2-10 free bodies (`seeds.random_kane_model`: "
            "random body-connection arrays, sometimes a second body with L(K) = 0, random "
            "gravity direction), every other one with damped 6-dof springs tied to the lower "
            f"body or the ground; {cfg.states_per_system} random states each (speeds N(0, 2)); "
            f"trajectories of {cfg.random_trajectories} five-body trees with springs over "
            f"{cfg.t_random:g} s from random states with joint rotations below 1 rad (the spring "
            "torque -k φ jumps where the rotation angle |φ| crosses π; integrators that step "
            "across the jump differently then part by ~1e-7).",
        )
    )


# ----------------------------------------------------------------------------------------------
# plots
# ----------------------------------------------------------------------------------------------

STYLE = {
    "seed": dict(lw=1.6),
    TITOP: dict(ls="none", marker="o", ms=3.5, mfc="none"),
    PIN: dict(ls="--", lw=1.0, color="k"),
}


def _diff_axis(ax: Any, series: dict[str, tuple[FloatArray, FloatArray]]) -> None:
    """Semilog curves of differences against time, with the trajectory bound."""
    for name, (t, d) in series.items():
        ax.semilogy(t, np.maximum(d, 1e-17), label=name)
    ax.axhline(TRAJ_BOUND, color="r", lw=0.8, ls=":", label="bound 1e-6")
    ax.set_ylim(1e-17, 1e-4)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("pose difference")
    ax.grid(True, which="major", alpha=0.4)
    ax.legend(fontsize=7, ncol=2)


def _pair_series(res: dict[str, Traj], method: str) -> dict[str, tuple[FloatArray, FloatArray]]:
    return {
        f"{a} vs {b}": (res[a].t, pose_diff_series(res[a], res[b])) for a, b in pairs_of(method)
    }


def _three(
    ax: Any,
    res: dict[str, Traj],
    f: Callable[[Traj], FloatArray],
    method: str,
    labels: Sequence[str],
) -> None:
    """Curves of f(trajectory) (T, k): the seed method lines, TITOP markers, Pinocchio dashed."""
    colors = [f"C{i}" for i in range(len(labels))]
    every = max(1, res[method].t.size // 25)
    for name in (method, TITOP, PIN):
        y = f(res[name])
        tr = res[name].t
        for k, lab in enumerate(labels):
            if name == method:
                ax.plot(tr, y[:, k], color=colors[k], label=f"{lab} ({method})", **STYLE["seed"])
            elif name == TITOP:
                ax.plot(tr[::every], y[::every, k], color=colors[k], **STYLE[TITOP],
                        label=TITOP if k == 0 else None)  # fmt: skip
            else:
                ax.plot(tr, y[:, k], **STYLE[PIN], label=PIN if k == 0 else None)
    ax.grid(True, alpha=0.4)
    ax.legend(fontsize=7, ncol=2)


def make_plots(report: Report, out_dir: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def zyz(tr: Traj) -> FloatArray:
        return np.degrees(np.unwrap(Rotation.from_matrix(tr.R[:, 0]).as_euler("ZYZ"), axis=0))

    # seed 001
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True)
    for col, case in enumerate(("planar", "spatial")):
        res = report.runs[f"pendulum {case}"]
        _three(axes[0, col], res, zyz, "DeNOC", ["φ", "θ", "ψ"])
        start = "90/90/90" if case == "planar" else "90/45/45"
        axes[0, col].set_title(f"ZYZ {start} deg at rest")
        axes[0, col].set_ylabel("ZYZ angles (deg)")
        _diff_axis(axes[1, col], _pair_series(res, "DeNOC"))
    fig.suptitle("seed 001 pendulum: DeNOC (lines), TITOP SphericalBody (o), Pinocchio (--)")
    fig.tight_layout()
    name = "crosscheck_seed001_pendulum.png"
    fig.savefig(out_dir / name, dpi=90)
    plt.close(fig)
    report.plots.append(
        (name, "Seed 001: ZYZ angles of the pendulum from the paper's two initial states "
               "(its Figs. 4-5), and the pose differences of the three pairs.")
    )  # fmt: skip

    # seed 002
    res = report.runs["fig2"]

    def angles(tr: Traj) -> FloatArray:
        return np.unwrap(np.arctan2(tr.R[:, :, 1, 0], tr.R[:, :, 0, 0]), axis=0)

    fig, axes = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    shown = dict(res)
    shown["Riccati"] = res["Riccati RK4"]  # the seed's own run drawn as the line
    _three(axes[0], shown, angles, "Riccati", ["θ1", "θ3", "θ5", "θ7"])
    axes[0].set_ylabel("absolute angle (rad)")
    axes[0].set_title("Fig. 2 branch pendulum (Riccati line: RK4, Δt = 1 ms, as in the seed)")
    series = _pair_series(res, "Riccati")
    series["TITOP vs Riccati RK4"] = (
        res[TITOP].t,
        pose_diff_series(res[TITOP], res["Riccati RK4"]),
    )
    _diff_axis(axes[1], series)
    fig.suptitle("seed 002: Riccati TMM (lines), TITOP RevoluteBody (o), Pinocchio (--)")
    fig.tight_layout()
    name = "crosscheck_seed002_branch_pendulum.png"
    fig.savefig(out_dir / name, dpi=90)
    plt.close(fig)
    report.plots.append(
        (name, "Seed 002: absolute angles θ1, θ3, θ5, θ7 of the Fig. 2 branch pendulum (its "
               "Fig. 3), and the pose differences (TITOP and Pinocchio with DOP853; Riccati with "
               "DOP853 and with the seed's RK4).")
    )  # fmt: skip

    # seed 003
    res = report.runs["eight"]

    def hub(tr: Traj) -> FloatArray:
        return np.unwrap(np.array([euler_from_dcm(r) for r in tr.R[:, 0]]), axis=0)

    def stretch(tr: Traj) -> FloatArray:
        n = tr.Q.shape[1] // 7
        r = tr.Q.reshape(tr.Q.shape[0], n, 7)[:, 1:, 0:3]
        return 1e3 * np.linalg.norm(r, axis=2)

    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True)
    _three(axes[0, 0], res, hub, "Kane", ["φ", "θ", "ψ"])
    axes[0, 0].set_ylabel("hub 3-2-1 Euler angles (rad)")
    _three(axes[0, 1], res, stretch, "Kane", [f"|s_{k}|" for k in range(2, 9)])
    axes[0, 1].set_ylabel("spring stretch |s_K| (mm)")
    _diff_axis(axes[1, 0], _pair_series(res, "Kane"))
    ax = axes[1, 1]
    for a, b in pairs_of("Kane"):
        d = np.max(np.abs(res[a].V - res[b].V), axis=1)
        ax.semilogy(res[a].t, np.maximum(d, 1e-17), label=f"{a} vs {b}")
    ax.axhline(TRAJ_BOUND, color="r", lw=0.8, ls=":", label="bound 1e-6")
    ax.set_ylim(1e-17, 1e-4)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("speed difference (rad/s, m/s)")
    ax.grid(True, which="major", alpha=0.4)
    ax.legend(fontsize=7, ncol=2)
    fig.suptitle("seed 003 eight-body system: Kane (lines), TITOP FreeBody (o), Pinocchio (--)")
    fig.tight_layout()
    name = "crosscheck_seed003_eight_body.png"
    fig.savefig(out_dir / name, dpi=90)
    plt.close(fig)
    report.plots.append(
        (name, "Seed 003: hub attitude and relative translations of bodies 2-8 of the eight-body "
               "system, and the pose and speed differences of the three pairs.")
    )  # fmt: skip


# ----------------------------------------------------------------------------------------------
# report
# ----------------------------------------------------------------------------------------------


def machine_summary() -> str:
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        import pinocchio

        pin_version = pinocchio.__version__
    except ImportError:  # pragma: no cover - Pinocchio is required to run the script
        pin_version = "missing"
    return (
        f"{platform.system()} {platform.release()} {platform.machine()}, {cpu or 'unknown CPU'}, "
        f"{os.cpu_count()} logical CPUs; Python {platform.python_version()}, numpy "
        f"{np.__version__}, scipy {scipy.__version__}, Pinocchio {pin_version}"
    )


def fmt(x: float) -> str:
    return "0" if x == 0.0 else f"{x:.1e}"


def write_markdown(report: Report, path: Path, command: str, cfg: Settings, wall: float) -> None:
    acc = max(r.value for r in report.rows if r.bound == ACC_BOUND)
    traj = max(r.value for r in report.rows if r.bound == TRAJ_BOUND)
    ok = all(r.value <= r.bound for r in report.rows)
    date = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Cross-check: TITOP blocks, the seeds' formulations and Pinocchio",
        "",
        f"Generated by `{command}` on {date}, in {wall:.0f} s wall time, on: {machine_summary()}."
        " Do not edit by hand: rerun the command (`tests/test_crosscheck.py` checks that this "
        "file lists every comparison the script makes, within the bounds).",
        "",
        "Each system is built three ways from the same parameters "
        "(`titopfmu/examples/seeds.py`): with the seed's own method (DeNOC with seven point "
        "masses, seed 001; Riccati transfer matrices, seed 002; Kane's method, seed 003; "
        "`titopfmu/reference/`), with TITOP blocks in the in-process engine, and with Pinocchio "
        "(ABA). The papers: seed 001, Gupta, Chaudhary and Saha, *Dynamics of a Spatial "
        "Multibody System using Equimomental System of Point-masses*; seed 002, Rui, Bestle, "
        "Wang et al., *A new version of the Riccati transfer matrix method for multibody systems "
        "consisting of chain and branch bodies*, Multibody Syst. Dyn. 49, 337-354 (2020); seed "
        "003, Kamman's notes on Kane's method for unconstrained multibody systems; the TITOP "
        "blocks follow Alazard, Sanfedino and Kassarian, *Non-linear dynamics of multibody "
        "systems: a system-based approach*, arXiv 2505.03248. Every pair is compared:",
        "",
        "* **accelerations** at the example's own initial states and at random states: the "
        "largest `max_i |a_i - b_i| / max(1, |a|_inf, |b|_inf)` over the states, a and b the "
        "joint accelerations (rad/s², m/s²) in the TITOP blocks' joint coordinates (the seed's "
        "own speeds for DeNOC and Riccati; Kane's converted);",
        "* **trajectories**: each side integrates with its own driver (the seed solver's "
        f"`simulate`, scipy DOP853 on the engine's and on Pinocchio's equations; rtol {RTOL:g}, "
        f"atol {ATOL:g}) from the same initial state; reported are the largest differences over "
        "the sampled times of the body poses (position of each body's joint point, m, and the "
        "entries of its body-to-inertial DCM) and of the generalized speeds (rad/s, m/s).",
        "",
        f"Bounds: {ACC_BOUND:g} for relative accelerations, {TRAJ_BOUND:g} for "
        f"trajectories. **Worst acceleration difference {fmt(acc)}, worst trajectory difference "
        f"{fmt(traj)}: {'all within the bounds' if ok else 'SOME ABOVE THE BOUNDS'}.**",
        "",
        "| pair | system | quantity | max difference | samples | bound |",
        "|---|---|---|---|---|---|",
    ]
    for r in report.rows:
        flag = "" if r.value <= r.bound else " **over**"
        lines.append(
            f"| {r.pair} | {r.system} | {r.quantity} | {fmt(r.value)}{flag} | {r.samples} | "
            f"{r.bound:g} |"
        )
    lines += [
        "",
        "Samples: states for accelerations, compared time instants for trajectories.",
        "",
        "## Systems",
        "",
    ]
    lines += [f"* **{label}**: {text}" for label, text in report.systems]
    if report.plots:
        lines += ["", "## Plots", ""]
        for name, caption in report.plots:
            lines += [f"![{caption}]({name})", "", caption, ""]
    lines += [
        "",
        "## Reproduce",
        "",
        "```",
        command,
        "```",
        "",
        "`--quick` runs fewer states and shorter trajectories (the test suite's smoke run); "
        "`--out PATH` writes the report (and the plots, next to it) elsewhere; `--no-plots` "
        f"skips the plots. This run: {cfg.describe()}.",
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer states, shorter trajectories")
    ap.add_argument("--out", default="docs/crosscheck.md", help="report path (markdown)")
    ap.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    args = ap.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    command = " ".join(["python", "scripts/crosscheck.py", *map(shlex.quote, argv)])

    t0 = time.perf_counter()
    report = Report()
    with warnings.catch_warnings():
        warnings.simplefilter("error", InertiaWarning)  # every generated body must be physical
        for section in (seed001, seed002, seed003):
            t1 = time.perf_counter()
            section(report, cfg)
            print(f"{section.__name__}: {time.perf_counter() - t1:.1f} s", flush=True)
    if not args.no_plots:
        make_plots(report, out.parent)
    wall = time.perf_counter() - t0
    write_markdown(report, out, command, cfg, wall)

    width = max(len(r.pair) for r in report.rows)
    for r in report.rows:
        mark = "ok" if r.value <= r.bound else "OVER"
        print(f"{r.pair:<{width}}  {fmt(r.value):>8}  {mark:4}  {r.system}: {r.quantity}")
    print(f"wrote {out} ({wall:.1f} s)")
    return 0 if all(r.value <= r.bound for r in report.rows) else 1


if __name__ == "__main__":
    sys.exit(main())
