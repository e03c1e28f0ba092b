"""Cross-checks of a model: the in-process engine against Pinocchio, built from the same System by
:func:`titopfmu.reference.to_pinocchio`, and against the model's FMUs co-simulated by titopfmu's
master (:meth:`~titopfmu.master.CoSimulation.from_system`) (``titopfmu crosscheck MODEL``).

Comparisons: accelerations at random states (``Engine.derivative`` vs ``pin.aba``, relative
to the largest acceleration) and a trajectory (``Engine.simulate`` vs Pinocchio integrated by
scipy, same tolerances); the FMUs' loop solution at the initial state (every body's acceleration,
relative to the largest) and their co-simulated trajectory (communication step ``cosim_step``;
the coupling error is fourth order in it by default) against the engine's. A Markdown report
with a table and a PNG plot is written to a folder.

A model with a flexible body (Pinocchio has rigid bodies only) is compared with
:class:`~titopfmu.reference.flexible_tree.FlexTreeReference` instead, the projection (TMT)
method over the joint and elastic coordinates (the pair "in process vs TMT reference"; the
elastic coordinates join the accelerations and the trajectory's columns); its FMU leg runs
one FMU per block in the master's model-exchange mode (the elastic modes are stiff for the
explicit coupling of co-simulation, docs/cosim.md).

A failed comparison is diagnosed (:class:`Diagnosis`, the report's "Why it failed" section): the
signals that parted most, when their gap first exceeded the tolerance and how it grew, the
extremes the joints reached (a prismatic joint travelling far beyond the model's size: no joint
limits), and a sensitivity run (the in-process leg again from initial speeds changed by
:data:`PERTURBATION`). When the accelerations agree but that tiny change grows by
:data:`SENSITIVE` or more, the motion is chaotic: the verdict is ``DIVERGED`` (still not
passed: the trajectories were not confirmed) rather than ``FAIL`` (the dynamics disagree, or a
gap nothing explains), with what to try.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from .assembly.engine import Engine, SimulationResult
from .assembly.system import System
from .blocks.bodies import FreeBody, PrismaticBody, RevoluteBody, RigidBody, SphericalBody

#: Default pass thresholds (those of the issue: 1e-9 relative accelerations, 1e-6 trajectories).
ACC_TOL = 1e-9
TRAJ_TOL = 1e-6
#: FMU leg: loop solution at the initial state (relative) and the trajectory gap at the default
#: step 1e-3 s (the master's coupling error: fourth order in the step by default, second with
#: a loop closure).
COSIM_ACC_TOL = 1e-8
COSIM_TRAJ_TOL = 1e-4
COSIM_NOTE = "not run (--no-cosim)"
#: Diagnosis of a failed trajectory comparison: the sensitivity run changes every initial speed
#: (rad/s, m/s) by this much (random signs) ...
PERTURBATION = 1e-9
#: ... and calls the motion chaotic when that change grows this many times within the run
#: (a regular motion drifts apart slowly: tens of times over many periods).
SENSITIVE = 1e4
#: A joint travelling further than FAR times the model's size (its bodies end to end) is
#: implausible; a joint turning faster than FAST times a pendulum of that size (sqrt(g/L)),
#: plus its initial speed, is flagged too.
FAR = 10.0
FAST = 20.0
#: A trajectory gap that starts (at the first sample) less than CLOSE times below its
#: tolerance is the leg's own error (a coarse step), not a tiny difference grown by chaos.
CLOSE = 1e3
#: Gaps at or below this are rounding (no growth is fitted through them).
_ROUNDING = 1e-15

PAIR_REF = "in process vs Pinocchio"
#: the reference leg of a model with a flexible body (Pinocchio has rigid bodies only):
#: :class:`~titopfmu.reference.flexible_tree.FlexTreeReference`, the projection (TMT) method
REF_TMT = "TMT reference"
PAIR_TMT = f"in process vs {REF_TMT}"
PAIR_FMU = "FMUs + master vs in process"


@dataclass
class Divergence:
    """Where and how one pair of trajectories parted (a failed trajectory comparison).

    Times in s; gaps in the signals' units (rad or m; angles compared modulo 2π)."""

    pair: str
    tolerance: float
    max_gap: float
    #: the signals that parted most: (name, largest gap, time of it, unit), largest first
    worst: list[tuple[str, float, float, str]]
    #: the first sample at which the gap exceeded the tolerance, and the signal that did
    first_over: float
    first_signal: str
    #: the gap (every signal) at the first sample after t = 0
    start_gap: float
    start_time: float
    #: "exponential" (from a small start, tenfold every ``tenfold`` s), "from the start"
    #: (over the tolerance at the first sample) or "steady"
    growth: str
    tenfold: float | None
    #: the accelerations of that pair agreed (in process vs Pinocchio at the random states;
    #: for the FMUs also their loop solution at t = 0)
    dynamics_agree: bool
    #: the model's sensitivity explains the gap: it grew no faster than a tiny change of the
    #: initial speeds does (None: not judged)
    chaos_explains: bool | None = None
    #: the growth window (s), and the decades the gap and the sensitivity run grew over it
    window: tuple[float, float] | None = None
    gap_decades: float | None = None
    model_decades: float | None = None
    #: why the model's sensitivity does not explain the gap ("" when it does)
    reason: str = ""
    #: (time, largest gap) series
    series: tuple = field(default=(), repr=False)

    @property
    def rate(self) -> float:
        """How fast the gap grew, in decades per second (0: it did not)."""
        if self.tenfold:
            return 1.0 / self.tenfold
        span = self.worst[0][2] - self.start_time
        if self.start_gap > 0 and span > 0 and self.max_gap > self.start_gap:
            return math.log10(self.max_gap / self.start_gap) / span
        return 0.0

    def sentence(self) -> str:
        name, gap, at, unit = self.worst[0]
        text = (
            f"the gap first exceeded the tolerance {self.tolerance:g} at {self.first_over:.3g} s "
            f"(`{self.first_signal}`); "
        )
        if self.growth == "exponential":
            text += (
                f"it started at {self.start_gap:.2g} ({self.start_time:.3g} s) and grew "
                f"exponentially, tenfold every {self.tenfold:.2g} s, "
            )
        elif self.growth == "from the start":
            text += (
                f"it was already {self.start_gap:.2g} at the first sample ({self.start_time:.3g} "
                "s): not a slow divergence, "
            )
        else:
            text += f"it started at {self.start_gap:.2g} ({self.start_time:.3g} s) and grew "
        return text + f"up to {gap:.3g} {unit} on `{name}` at {at:.3g} s"

    def comparison(self) -> str:
        """Whether the model's sensitivity explains the gap, in words."""
        if self.chaos_explains is None:
            return ""
        if not self.chaos_explains:
            return f"; not chaos alone: {self.reason}"
        a, b = self.window
        return (
            f"; from {a:.3g} to {b:.3g} s it grew {self.gap_decades:.2g} decades, no faster "
            f"than the model amplifies a tiny change ({self.model_decades:.2g} decades then)"
        )

    def to_json(self) -> dict:
        return {
            "pair": self.pair, "tolerance": self.tolerance, "max_gap": self.max_gap,
            "worst": [{"signal": n, "max_gap": g, "time": t, "unit": u}
                      for n, g, t, u in self.worst],
            "first_over": {"time": self.first_over, "signal": self.first_signal},
            "start_gap": self.start_gap, "start_time": self.start_time, "growth": self.growth,
            "tenfold_time": self.tenfold, "decades_per_s": self.rate,
            "dynamics_agree": self.dynamics_agree, "chaos_explains": self.chaos_explains,
            "growth_window": self.window, "gap_decades": self.gap_decades,
            "sensitivity_decades": self.model_decades, "not_chaos_because": self.reason or None,
        }  # fmt: skip


@dataclass
class Sensitivity:
    """The in-process leg run again from every initial speed changed by ``perturbation``: how
    far it departs from the unperturbed run (the largest gap over the recorded coordinates)."""

    perturbation: float
    max_gap: float
    at: float
    #: time for a tenfold growth of the gap (None: no growth fitted)
    tenfold: float | None
    #: first time the gap exceeded ``tolerance`` (None: never)
    over: float | None
    tolerance: float
    #: (time, largest gap) series (the joint coordinates and speeds)
    series: tuple = field(default=(), repr=False)

    @property
    def amplification(self) -> float:
        return self.max_gap / self.perturbation

    @property
    def chaotic(self) -> bool:
        return self.amplification >= SENSITIVE

    @property
    def rate(self) -> float:
        """How fast the change grew, in decades per second."""
        if self.tenfold:
            return 1.0 / self.tenfold
        if self.at > 0 and self.amplification > 1:
            return math.log10(self.amplification) / self.at
        return 0.0

    def to_json(self) -> dict:
        return {
            "perturbation": self.perturbation, "max_gap": self.max_gap, "time": self.at,
            "amplification": self.amplification, "tenfold_time": self.tenfold,
            "decades_per_s": self.rate,
            "over_tolerance_at": self.over, "tolerance": self.tolerance, "chaotic": self.chaotic,
        }  # fmt: skip


@dataclass
class Extreme:
    """A joint coordinate or speed that went implausibly far or fast (no joint limits)."""

    signal: str
    kind: str  # "travel" or "speed"
    low: float
    high: float
    unit: str
    limit: float

    @property
    def value(self) -> float:
        return max(abs(self.low), abs(self.high))

    @property
    def signed(self) -> float:
        """The extreme with its sign."""
        return self.low if abs(self.low) > abs(self.high) else self.high

    def to_json(self) -> dict:
        return {"signal": self.signal, "kind": self.kind, "min": self.low, "max": self.high,
                "unit": self.unit, "limit": self.limit}  # fmt: skip


@dataclass
class Diagnosis:
    """Why a cross-check failed: the report's "Why it failed" section, the JSON's
    ``diagnosis`` and the hint of :meth:`CrosscheckReport.summary`."""

    #: "DIVERGED" (the dynamics agree, the motion is chaotic) or "FAIL"
    verdict: str
    #: one line for the summary
    headline: str
    #: the paragraph under the section title
    explanation: str
    #: failed acceleration checks, one sentence each
    dynamics: list[str] = field(default_factory=list)
    divergences: list[Divergence] = field(default_factory=list)
    sensitivity: Sensitivity | None = None
    extremes: list[Extreme] = field(default_factory=list)
    #: the model's bodies end to end (m): the scale of the travel check
    size: float = 0.0
    #: joints travelling implausibly far (no joint limits), joints turning fast: in words
    unphysical: str = ""
    fast: str = ""
    hints: list[str] = field(default_factory=list)

    def markdown(self) -> list[str]:
        lines = ["## Why it failed", "", self.explanation, ""]
        lines += [f"* **Accelerations**: {d}" for d in self.dynamics]
        for d in self.divergences:
            lines.append(
                f"* **{d.pair[0].upper() + d.pair[1:]}**, trajectories: {d.sentence()}"
                + d.comparison()
                + "."
            )
            lines.append(
                "  Largest gaps: "
                + ", ".join(f"`{n}` {g:.3g} {u} at {t:.3g} s" for n, g, t, u in d.worst)
                + "."
            )
        if self.sensitivity is not None:
            s = self.sensitivity
            lines.append(
                f"* **Sensitivity**: the in-process run with every initial joint speed changed "
                f"by {s.perturbation:g} departs from the unperturbed run by up to "
                f"{s.max_gap:.3g} (a joint coordinate or speed, at {s.at:.3g} s), "
                f"{s.amplification:.2g} times the change"
                + (f", growing tenfold every {s.tenfold:.2g} s" if s.tenfold else "")
                + (f"; past {s.tolerance:g} at {s.over:.3g} s" if s.over is not None else "")
                + (": the motion is chaotic." if s.chaotic else ": the motion is not chaotic.")
            )
        if self.unphysical:
            lines.append(f"* **Unphysical motion**: {self.unphysical}")
        if self.fast:
            lines.append(f"* **Fast motion**: {self.fast}")
        if self.hints:
            lines += ["", "What to try:", ""]
            lines += [f"* {h}" for h in self.hints]
        return lines + [""]

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict, "headline": self.headline, "explanation": self.explanation,
            "dynamics": self.dynamics,
            "divergences": [d.to_json() for d in self.divergences],
            "sensitivity": None if self.sensitivity is None else self.sensitivity.to_json(),
            "extremes": [e.to_json() for e in self.extremes], "model_size": self.size,
            "unphysical": self.unphysical or None, "fast": self.fast or None,
            "hints": self.hints,
        }  # fmt: skip


@dataclass
class CrosscheckReport:
    model: str
    out: Path
    n_states: int
    acc_error: float
    traj_error: float
    t_final: float
    acc_tol: float = ACC_TOL
    traj_tol: float = TRAJ_TOL
    columns: list[str] = field(default_factory=list)
    cosim: str = COSIM_NOTE
    #: FMU leg (None: not run): loop solution at t0 vs the engine, trajectory vs the engine
    cosim_acc_error: float | None = None
    cosim_traj_error: float | None = None
    cosim_step: float | None = None
    cosim_acc_tol: float = COSIM_ACC_TOL
    cosim_traj_tol: float = COSIM_TRAJ_TOL
    #: the FMU leg: one FMU per block and the master ("FMUs + master"), or the whole-model FMU
    #: ("model FMU": its state derivative at t0 in place of the loop solution)
    cosim_label: str = "FMUs + master"
    #: why it failed (None when it passed)
    diagnosis: Diagnosis | None = None
    #: the reference leg: "Pinocchio", or REF_TMT for a model with a flexible body
    reference: str = "Pinocchio"

    @property
    def pair_ref(self) -> str:
        """The reference pair's label: ``in process vs <reference>``."""
        return f"in process vs {self.reference}"

    @property
    def passed(self) -> bool:
        ok = self.acc_error <= self.acc_tol and self.traj_error <= self.traj_tol
        if self.cosim_acc_error is not None:
            ok = ok and self.cosim_acc_error <= self.cosim_acc_tol
            ok = ok and self.cosim_traj_error <= self.cosim_traj_tol
        return ok

    @property
    def verdict(self) -> str:
        """``PASS``; ``DIVERGED``: the dynamics agree but the trajectories part because the
        motion is chaotic (not passed: the trajectories are not confirmed); ``FAIL``."""
        if self.passed:
            return "PASS"
        return self.diagnosis.verdict if self.diagnosis is not None else "FAIL"

    @property
    def _acc_what(self) -> str:
        return "loop solution" if self.cosim_label == "FMUs + master" else "state derivative"

    def summary(self) -> str:
        why = f"why: {self.diagnosis.headline}; " if self.diagnosis is not None else ""
        return (
            f"{self.model}: {self.verdict}; accelerations at {self.n_states} random states: max "
            f"relative error {self.acc_error:.3g} (tol {self.acc_tol:g}); {self.t_final:g} s "
            f"trajectory: max gap {self.traj_error:.3g} (tol {self.traj_tol:g}); "
            + (
                f"{self.cosim_label}: {self._acc_what} {self.cosim_acc_error:.3g} (tol "
                f"{self.cosim_acc_tol:g}), trajectory max gap {self.cosim_traj_error:.3g} (tol "
                f"{self.cosim_traj_tol:g}, step {self.cosim_step:g} s); "
                if self.cosim_acc_error is not None
                else "FMUs + master: not run; "
                if self.cosim == COSIM_NOTE
                else f"FMUs + master: {self.cosim}; "
            )
            + why
            + f"report: {self.out / 'report.md'}"
        )


def random_state(engine: Engine, rng: np.random.Generator) -> np.ndarray:
    """A random state: uniform attitudes, positions and strokes in ±0.5, angles in ±π, rates in
    ±1 (blocks without states keep none); a mimic follower's then set from its leader's
    (``Engine.consistent``)."""
    x = engine.initial_state()
    for b in engine.tree_blocks:
        sl = engine.plan.state_slices[b.name]
        red = getattr(b, "flexible", None)
        if red is not None:  # the elastic coordinates and rates after the joint's states
            n = red.n_modes
            q, qd = _elastic_scale(red)
            x[sl.stop - 2 * n : sl.stop] = rng.uniform(-1, 1, 2 * n) * np.concatenate([q, qd])
            sl = slice(sl.start, sl.stop - 2 * n)
        if sl.stop == sl.start:
            continue

        def quat():
            qx, qy, qz, qw = Rotation.random(random_state=rng).as_quat()
            return [qw, qx, qy, qz]

        if isinstance(b, RigidBody):
            x[sl] = np.concatenate([rng.uniform(-1, 1, 3), quat(), rng.uniform(-1, 1, 6)])
        elif isinstance(b, FreeBody):
            x[sl] = np.concatenate([rng.uniform(-0.5, 0.5, 3), quat(), rng.uniform(-1, 1, 6)])
        elif isinstance(b, SphericalBody):
            x[sl] = np.concatenate([quat(), rng.uniform(-1, 1, 3)])
        elif isinstance(b, RevoluteBody):
            x[sl] = [rng.uniform(-np.pi, np.pi), rng.uniform(-1, 1)]
        elif isinstance(b, PrismaticBody):
            x[sl] = [rng.uniform(-0.5, 0.5), rng.uniform(-1, 1)]
    return engine.consistent(x)


def _elastic_scale(red) -> tuple[np.ndarray, np.ndarray]:
    """Per elastic coordinate of a reduced model, the amplitudes of :func:`random_state`: q_k
    moving its nodes of interest by at most 1 % of the body's size (its farthest node, at least
    0.1 m; 1e-3 without nodes beyond P), qdot_k ten times that per second."""
    pos = np.asarray(red.node_positions, dtype=float)
    size = max(0.1, float(np.max(np.linalg.norm(pos, axis=1)))) if len(pos) else 0.1
    shapes = np.asarray(red.node_shapes, dtype=float)[1:, :3]  # (k - 1, 3, n): translations
    if shapes.size:
        reach = np.max(np.linalg.norm(shapes, axis=1), axis=0)  # (n,) largest node motion
        q = np.where(reach > 0, 0.01 * size / np.where(reach > 0, reach, 1.0), 1e-3)
    else:
        q = np.full(red.n_modes, 1e-3)
    return q, 10.0 * q


def _n_elastic(block) -> int:
    red = getattr(block, "flexible", None)
    return 0 if red is None else int(red.n_modes)


def engine_accelerations(engine: Engine, ref, dx: np.ndarray) -> np.ndarray:
    """The engine's derivative in the order of ``ref.accelerations`` (root, then ref.joints,
    then the elastic accelerations of the bodies of ``ref.elastic`` when the reference has
    them: the flexible-tree reference)."""
    sl = engine.plan.state_slices
    blocks = engine.system.blocks
    out = [dx[sl[ref.root]][7:13]] if ref.floating else []
    for name in ref.joints:
        d = dx[sl[name]]
        k = ref.bodies[name].nv
        e = 2 * _n_elastic(blocks[name])
        out.append(d[len(d) - e - k : len(d) - e])
    for name in getattr(ref, "elastic", {}):
        d = dx[sl[name]]
        out.append(d[len(d) - _n_elastic(blocks[name]) :])
    return np.concatenate(out)


def acceleration_names(ref) -> list[str]:
    """Names of the entries of ``ref.accelerations`` (root, then ref.joints): the block name,
    with the index of the speed for blocks with several."""
    names = [f"{ref.root} (twist rate {i})" for i in range(1, 7)] if ref.floating else []
    for name in ref.joints:
        k = ref.bodies[name].nv
        names += [name] if k == 1 else [f"{name} (speed {i})" for i in range(1, k + 1)]
    for name, coords in getattr(ref, "elastic", {}).items():
        names += [f"{name} (elastic {c})" for c in coords]
    return names


def crosscheck(
    system: System,
    out: str | Path,
    *,
    t_final: float = 2.0,
    n_states: int = 20,
    seed: int = 0,
    rtol: float = 1e-10,
    atol: float = 1e-12,
    n_samples: int = 201,
    cosim: bool = True,
    cosim_step: float = 1e-3,
    fmus=None,
    notice: Callable[[str], None] | None = None,
    reference=None,
) -> CrosscheckReport:
    """Compare ``system`` in process, in Pinocchio and (``cosim``) as FMUs co-simulated by the
    master at the communication step ``cosim_step`` (s; FMUs from the folder ``fmus``, or built
    into the per-user cache, ``notice`` told before a build, as by
    :meth:`~titopfmu.master.CoSimulation.from_system`); write ``report.md``,
    ``trajectory.png`` and ``results.json`` to ``out``. The trajectory compares the joint
    coordinates, and the root's inertial position for a floating base (a Ground root: the
    joint coordinates are the whole configuration). A failed comparison is diagnosed
    (``report.diagnosis``, :class:`Diagnosis`; one more in-process run, the sensitivity run,
    when a trajectory comparison failed). Raises
    :class:`~titopfmu.reference.UnsupportedBlockError` (a TitopError) for systems the
    Pinocchio reference cannot build (e.g. inverse-dynamics blocks, loop closures, several
    roots).

    A model with a flexible body is compared with the projection (TMT) reference of
    :mod:`titopfmu.reference.flexible_tree` instead (Pinocchio has rigid bodies only; the
    elastic coordinates join the trajectory's columns). ``reference``: a reference object
    with the same interface to use instead of the one built from ``system`` (a check that the
    comparison fails against a different model)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    flexible = any(getattr(b, "flexible", None) is not None for b in system.blocks.values())
    if reference is not None:
        ref, reference = reference, getattr(reference, "label", "the given reference")
    elif flexible:
        # Pinocchio has rigid bodies only: the projection (TMT) reference of rigid and
        # flexible trees, with the same interface (titopfmu/reference/flexible_tree.py)
        from .reference.flexible_tree import FlexTreeReference

        ref, reference = FlexTreeReference(system), REF_TMT
    else:
        from .reference.pinocchio_model import to_pinocchio

        ref, reference = to_pinocchio(system), "Pinocchio"
    engine = Engine(system)
    rng = np.random.default_rng(seed)
    acc_err, acc_worst = 0.0, ""
    acc_names = acceleration_names(ref)
    for k in range(n_states):
        x = random_state(engine, rng)
        t = float(k) * t_final / max(n_states, 1)
        a_ref = ref.accelerations(x, t)
        a_eng = engine_accelerations(engine, ref, engine.derivative(t, x))
        err = np.abs(a_eng - a_ref) / max(1.0, np.max(np.abs(a_ref)))
        j = int(np.argmax(err))
        if float(err[j]) > acc_err or k == 0:
            acc_err, acc_worst = float(err[j]), acc_names[j]
    # trajectory: the floating root's position and the joint coordinates
    t_eval = np.linspace(0.0, t_final, n_samples)
    sol = ref.simulate(t_final, t_eval, rtol=rtol, atol=atol)
    if not sol.success:  # pragma: no cover - depends on the model
        raise RuntimeError(f"{reference} integration failed: {sol.message}")
    nq = ref.nq
    n_pos = 3 if ref.floating else 0
    if n_pos and hasattr(ref, "root_position"):
        theirs = list(ref.root_position(sol.y))
    else:
        theirs = [sol.y[i] for i in range(n_pos)]
    if ref.joints:
        theirs += list(np.atleast_2d(ref.joint_coordinates(sol.y[:nq])))
    columns = [f"{ref.root}.position[{i}]" for i in (1, 2, 3)][:n_pos]
    angular = [False] * n_pos
    units = ["m"] * n_pos
    speeds: list[str] = []  # the joint speeds, for the diagnosis
    for name in ref.joints:
        b = system.blocks[name]
        n = b.ports["joint.m"].size
        for i in range(2 * n // 3, n):
            columns.append(f"{name}.joint.m[{i + 1}]")
            euler = isinstance(b, SphericalBody) or (isinstance(b, FreeBody) and i >= n - 3)
            angular.append(euler)
            units.append("rad" if euler or isinstance(b, RevoluteBody) else "m")
            speeds.append(f"{name}.joint.m[{i - n // 3 + 1}]")
    elastic = getattr(ref, "elastic", {})
    if elastic:  # the flexible bodies' elastic coordinates (units of their reduced models)
        theirs += list(np.atleast_2d(ref.elastic_coordinates(sol.y)))
        for name, coords in elastic.items():
            columns += [f"{name}.state.q.{c}" for c in coords]
            angular += [False] * len(coords)
            units += ["q"] * len(coords)
    interval = t_final / (n_samples - 1)
    res = engine.simulate(
        t_final, output_interval=interval, record=columns + speeds, rtol=rtol, atol=atol
    )
    ours = np.column_stack([res[c] for c in columns])
    theirs = np.column_stack(theirs)
    m = min(len(ours), len(theirs))
    diff = _gap(ours[:m], theirs[:m], angular)
    traj_err = float(np.max(np.abs(diff)))
    report = CrosscheckReport(
        system.name, out, n_states, acc_err, traj_err, t_final, columns=columns,
        reference=reference,
    )
    fmu_diff = fmu_res = fmu_time = None
    whole = None  # why the FMU leg runs the whole-model FMU, or None: one FMU per block
    if cosim:
        # one FMU per block refuses some models (mimic joints, massless links: from_system):
        # the FMU leg runs the model as one FMU instead (titopfmu export --fmu), the report
        # says why; a model that FMU refuses too is reported as not run, with both reasons
        from .fmi.model import ModelFmuError
        from .master.from_system import FromSystemError, system_mapping

        try:
            system_mapping(system)
        except FromSystemError as exc:
            whole = str(exc)
    if cosim:
        if whole is None:
            # a flexible body's elastic modes are stiff for the explicit coupling of
            # co-simulation (docs/cosim.md): its FMUs run in the master's model-exchange mode,
            # which solves the loop at every derivative evaluation (no coupling error)
            mode = "me" if flexible else "cs"
            fmu_acc, fmu_res = cosim_leg(system, engine, t_final, interval, cosim_step,
                                         columns + speeds, fmus, notice=notice, mode=mode,
                                         rtol=rtol, atol=atol)  # fmt: skip
        else:
            if notice is not None:
                notice(f"building the model FMU of '{system.name}' (one FMU per block cannot "
                       f"run it: {whole})")  # fmt: skip
            try:
                fmu_acc, fmu_res = model_leg(system, engine, t_final, interval, cosim_step,
                                             columns + speeds, out)  # fmt: skip
            except ModelFmuError as exc:
                report.cosim = f"not run: {whole}; the model FMU: {exc}"
                cosim = False
    if cosim:
        base = res
        k = min(len(res.time), len(fmu_res.time))
        if not np.allclose(fmu_res.time[:k], res.time[:k], rtol=0.0, atol=1e-9 * t_final):
            # the FMU leg samples at multiples of its step: the in-process leg again, there
            every = fmu_res.time[1] - fmu_res.time[0] if len(fmu_res.time) > 1 else t_final
            base = engine.simulate(
                fmu_res.time[-1],
                output_interval=every,
                record=columns + speeds,
                rtol=rtol,
                atol=atol,
            )
            k = min(len(base.time), len(fmu_res.time))
        fmu_time = fmu_res.time[:k]
        fmu_diff = _gap(
            np.column_stack([fmu_res[c][:k] for c in columns]),
            np.column_stack([base[c][:k] for c in columns]),
            angular,
        )
        report.cosim_acc_error = fmu_acc
        report.cosim_traj_error = float(np.max(np.abs(fmu_diff)))
        report.cosim_step = cosim_step
        report.cosim = ("run" if whole is None and not flexible else
                        "run in the master's model-exchange mode (flexible bodies: stiff "
                        "elastic modes)" if whole is None else
                        f"run as one model FMU ({whole})")  # fmt: skip
        if whole is not None:
            report.cosim_label = "model FMU"
    if not report.passed:
        runs = [res] + ([fmu_res] if fmu_res is not None else [])
        report.diagnosis = _diagnose(
            report,
            system,
            engine,
            ref,
            res,
            diff,
            fmu_time,
            fmu_diff,
            runs,
            columns,
            units,
            speeds,
            angular,
            n_pos,
            acc_worst,
            dict(t_final=t_final, interval=interval, rtol=rtol, atol=atol, seed=seed),
        )
    _plot(
        out / "trajectory.png",
        res.time[:m],
        ours[:m],
        theirs[:m],
        columns,
        fmu_time,
        fmu_diff,
        report,
    )
    _write(report, out, diff, fmu_diff)
    return report


def _gap(a: np.ndarray, b: np.ndarray, angular: list[bool]) -> np.ndarray:
    """a - b, Euler angles modulo 2π."""
    d = a - b
    for j, ang in enumerate(angular):
        if ang:
            d[:, j] = np.angle(np.exp(1j * d[:, j]))
    return d


def cosim_leg(system: System, engine: Engine, t_final: float, interval: float, step: float,
              columns: list[str], fmus=None, *, notice=None, mode: str = "cs",
              rtol: float = 1e-10, atol: float = 1e-12):  # fmt: skip
    """The FMU leg: ``(loop error, result)``. The loop error is the largest difference between
    the FMUs' body motion vectors' accelerations after the loop solve at the initial state and
    the engine's (relative to the largest); the result records ``columns`` every ``interval``
    (rounded to a multiple of ``step``) up to ``t_final``, co-simulated (``mode="cs"``,
    communication step ``step``) or in the master's model-exchange mode (``"me"``, tolerances
    ``rtol``, ``atol``). ``notice`` goes to :meth:`~titopfmu.master.CoSimulation.from_system`
    (told before FMUs are built)."""
    from .master import CoSimulation
    from .master.from_system import simulate_system

    cs = CoSimulation.from_system(system, fmus, notice=notice)
    try:
        cs._plan()
        cs.initialize(0.0)
        cs.solve_loop()
        x0 = engine.initial_state()
        if getattr(engine, "flexible", None):  # evaluated in the core only: its readers
            engine._native_readers([])  # (makes engine._sample_data)
            engine.native.derivative(0.0, x0, engine._native_inputs(0.0, x0), None,
                                     engine._sample_data, full=True)  # fmt: skip

            def acceleration(name: str) -> np.ndarray:
                return np.asarray(engine._native_reader(f"{name}.acc")(x0))
        else:
            ev = engine.evaluate(0.0, x0)

            def acceleration(name: str) -> np.ndarray:
                return engine.signal(ev, f"{name}.m")[:6]

        ours, theirs = [], []
        for name in cs.system_mapping.variants:
            c = cs.components[name]
            if "body.m[1]" not in c.vr or name not in system.blocks:
                continue  # (a component carrying a further external wrench: not a block)
            ours.append(np.array(c.slave.getReal([c.vr[f"body.m[{i}]"] for i in range(1, 7)])))
            theirs.append(acceleration(name))
        a, b = np.concatenate(ours), np.concatenate(theirs)
        loop_err = float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))
    finally:
        cs.free()
    cs = CoSimulation.from_system(system, fmus, notice=notice)
    n = max(1, int(round(t_final / step)))
    every = max(1, int(round(interval / step)))
    options = {} if mode == "cs" else dict(mode=mode, rtol=rtol, atol=atol)
    res = simulate_system(cs, n * step, step, record=columns, output_interval=every * step,
                          **options)  # fmt: skip
    return loop_err, res


def model_leg(system: System, engine: Engine, t_final: float, interval: float, step: float,
              columns: list[str], out: Path):  # fmt: skip
    """The FMU leg of a model that one FMU per block cannot co-simulate (mimic joints): its
    whole-model FMU (:func:`titopfmu.export_fmu`, written to ``out``), run by fmpy.
    ``(derivative error, result)``: the largest difference between the FMU's state derivative
    (model exchange) at the initial state and the engine's, relative to the largest; the result
    of its co-simulation interface at the communication step ``step`` (s), ``columns`` recorded
    every ``interval`` (rounded to a multiple of ``step``) up to ``t_final``."""
    import ctypes
    import shutil

    from fmpy import extract, read_model_description, simulate_fmu
    from fmpy.fmi2 import FMU2Model

    from .fmi.model import build_model_fmu

    # outputs named apart from the parameters (a root's 'position' is both a parameter, its
    # initial value, and the signal compared)
    names = {c: f"crosscheck.{c}" for c in columns}
    path = build_model_fmu(system, out / f"{system.name}.fmu",
                           outputs={names[c]: c for c in columns})  # fmt: skip
    md = read_model_description(str(path))
    unzipped = extract(str(path))
    try:
        fmu = FMU2Model(guid=md.guid, unzipDirectory=unzipped,
                        modelIdentifier=md.modelExchange.modelIdentifier,
                        instanceName="crosscheck")  # fmt: skip
        fmu.instantiate()
        try:
            fmu.setupExperiment(startTime=0.0)
            fmu.enterInitializationMode()
            fmu.exitInitializationMode()
            nx = md.numberOfContinuousStates
            x, dx = np.zeros(nx), np.zeros(nx)
            ptr = ctypes.POINTER(ctypes.c_double)
            fmu.getContinuousStates(x.ctypes.data_as(ptr), nx)
            fmu.getDerivatives(dx.ctypes.data_as(ptr), nx)
        finally:
            fmu.terminate()
            fmu.freeInstance()
    finally:
        shutil.rmtree(unzipped, ignore_errors=True)
    x0 = engine.initial_state()
    if x.shape != x0.shape or not np.allclose(x, x0, rtol=1e-12, atol=0.0):
        raise RuntimeError(f"the model FMU of '{system.name}' starts from another state than the "
                           "engine")  # fmt: skip
    theirs = engine.derivative(0.0, x0)
    err = float(np.max(np.abs(dx - theirs)) / max(1.0, float(np.max(np.abs(theirs)))))
    n = max(1, int(round(t_final / step)))
    every = max(1, int(round(interval / step)))
    r = simulate_fmu(str(path), fmi_type="CoSimulation", stop_time=n * step, step_size=step,
                     output_interval=every * step, output=[names[c] for c in columns])  # fmt: skip
    res = SimulationResult(list(columns))
    for row in r:
        res.append(float(row["time"]), [float(row[names[c]]) for c in columns])
    return err, res


# -- diagnosis of a failed cross-check -----------------------------------------------------------


def model_size(system: System) -> float:
    """The model's bodies end to end (m): the sum, over the bodies and the fixed base, of the
    farthest of their child ports and centre of mass from their reference point."""
    total = 0.0
    for b in system.blocks.values():
        pts = [float(np.linalg.norm(p)) for p in getattr(b, "child_points", [])]
        com = getattr(b, "com", None)
        if com is not None:
            pts.append(float(np.linalg.norm(com)))
        total += max(pts, default=0.0)
    return total


def _growth_fit(t: np.ndarray, e: np.ndarray) -> tuple[float | None, tuple[float, float] | None]:
    """How the gap ``e(t)`` grew: ``(tenfold time, window)``. The window runs from its last
    value near its early level (ten times the median of its first tenth) to the start of its
    saturation (10 % of its largest value), when it grew a hundredfold or more there (else
    None); the tenfold time (s) is that of a straight line fitted to log10(e) over the window
    (None: no window, no growth, or not along a line: not exponential)."""
    top = float(np.max(e)) if len(e) else 0.0
    if top <= _ROUNDING or len(e) < 4:
        return None, None
    early = e[1 : 1 + max(1, len(e) // 10)]
    early = early[early > _ROUNDING]
    floor = float(np.median(early)) if len(early) else _ROUNDING
    k_sat = int(np.argmax(e >= 0.1 * top))
    below = np.nonzero(e[:k_sat] <= 10.0 * floor)[0]
    if len(below) == 0 or e[k_sat] < 100.0 * max(float(e[below[-1]]), _ROUNDING):
        return None, None
    window = (float(t[below[-1]]), float(t[k_sat]))
    tt, ee = t[below[-1] : k_sat + 1], e[below[-1] : k_sat + 1]
    keep = ee > _ROUNDING
    if keep.sum() < 3:
        return None, window
    x, y = tt[keep], np.log10(ee[keep])
    slope, icpt = np.polyfit(x, y, 1)
    ss = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum((y - (slope * x + icpt)) ** 2)) / ss if ss > 0 else 0.0
    return (1.0 / slope if slope > 0 and r2 >= 0.8 else None), window


def _decades(t: np.ndarray, e: np.ndarray, a: float, b: float) -> float:
    """By how many decades ``e`` grew over [a, b] (s): a straight line fitted to log10(e)."""
    sel = (t >= a - 1e-12) & (t <= b + 1e-12) & (e > _ROUNDING)
    if sel.sum() < 2 or b <= a:
        return 0.0
    return float(np.polyfit(t[sel], np.log10(e[sel]), 1)[0]) * (b - a)


def _divergence(pair, t, d, tol, columns, units, dynamics_agree) -> Divergence:
    a = np.abs(d)
    e = a.max(axis=1)
    per = a.max(axis=0)
    order = [j for j in np.argsort(-per, kind="stable") if per[j] > tol][:3] or [
        int(np.argmax(per))
    ]
    worst = [
        (columns[j], float(per[j]), float(t[int(np.argmax(a[:, j]))]), units[j]) for j in order
    ]
    over = np.nonzero(e > tol)[0]
    k_over = int(over[0]) if len(over) else len(e) - 1
    k1 = 1 if len(e) > 1 else 0
    start = float(e[k1])
    tenfold, window = _growth_fit(t, e)
    if start > tol:
        growth = "from the start"
    elif tenfold is not None and start <= 1e-2 * tol:
        growth = "exponential"
    else:
        growth = "steady"
    div = Divergence(
        pair,
        tol,
        float(e.max()),
        worst,
        float(t[k_over]),
        columns[int(np.argmax(a[k_over]))],
        start,
        float(t[k1]),
        growth,
        tenfold,
        dynamics_agree,
    )
    div.window = window or (float(t[k1]), float(t[k_over]))
    div.series = (np.asarray(t[: len(e)]), e)
    return div


def _explained(d: Divergence, s: Sensitivity | None) -> bool | None:
    """Whether the model's sensitivity explains the gap of ``d`` (and ``d.reason`` when it
    does not): the gap started at least CLOSE times below the tolerance and, over its growth
    window, grew by no more than twice as many decades as the sensitivity run did, plus one."""
    if s is None:
        return None
    if d.growth == "from the start":
        d.reason = (
            f"the gap is {d.start_gap:.2g} already at the first sample "
            f"({d.start_time:.3g} s), over the tolerance"
        )
        return False
    if not s.chaotic:
        d.reason = (
            f"the motion is not chaotic: a change of {s.perturbation:g} in the initial "
            f"speeds grows only {s.amplification:.2g} times"
        )
        return False
    if d.start_gap * CLOSE > d.tolerance:
        d.reason = (
            f"the gap starts at {d.start_gap:.2g} ({d.start_time:.3g} s), less than "
            f"{CLOSE:g} times below the tolerance: mostly this leg's own error, "
            "not a tiny difference grown by chaos"
        )
        return False
    a, b = d.window
    mine = _decades(*d.series, a, b)
    model = max(_decades(*s.series, a, b), 0.0)
    d.model_decades, d.gap_decades = model, mine
    if mine > 2.0 * model + 1.0:
        d.reason = (
            f"from {a:.3g} to {b:.3g} s the gap grows {mine:.2g} decades where the model "
            f"amplifies a tiny change by {model:.2g}: this leg's own error piles up"
        )
        return False
    return True


def _sensitivity(
    engine, ref, record, angular, base, tol, n_pos, *, t_final, interval, rtol, atol, seed
) -> Sensitivity | None:
    """The in-process leg again from every initial speed changed by PERTURBATION (random
    signs) against ``base`` (the unperturbed run's ``record``: the coordinates, their first
    ``len(angular)``, then the speeds)."""
    from .blocks.base import TitopError

    x0 = np.array(engine.initial_state(), dtype=float)
    sl = engine.plan.state_slices
    idx: list[int] = []
    if ref.floating:
        idx += range(sl[ref.root].start + 7, sl[ref.root].start + 13)
    blocks = engine.system.blocks
    for name in ref.joints:
        e = 2 * _n_elastic(blocks[name])
        idx += range(sl[name].stop - e - ref.bodies[name].nv, sl[name].stop - e)
    for name in getattr(ref, "elastic", {}):  # the elastic rates
        idx += range(sl[name].stop - _n_elastic(blocks[name]), sl[name].stop)
    if not idx:
        return None
    rng = np.random.default_rng(seed + 1)
    x0[idx] += PERTURBATION * rng.choice([-1.0, 1.0], len(idx))
    try:
        res = engine.simulate(
            t_final, output_interval=interval, record=record, rtol=rtol, atol=atol, x0=x0
        )
    except TitopError:  # pragma: no cover - the unperturbed run succeeded
        return None
    vals = np.column_stack([res[c] for c in record])
    m = min(len(vals), len(base))
    gap = np.abs(_gap(vals[:m], base[:m], angular + [False] * (len(record) - len(angular))))
    # the coordinates (the root's position aside: a floating base drifts with its speed) and
    # the speeds: the speeds start at the perturbation, the coordinates from zero
    e = gap[:, n_pos:].max(axis=1) if gap.shape[1] > n_pos else gap.max(axis=1)
    e_pos = gap[:, : len(angular)].max(axis=1)
    t = res.time[:m]
    over = np.nonzero(e_pos > tol)[0]
    k = int(np.argmax(e))
    tenfold, _ = _growth_fit(t, e)
    out = Sensitivity(
        PERTURBATION,
        float(e[k]),
        float(t[k]),
        tenfold,
        float(t[over[0]]) if len(over) else None,
        tol,
    )
    out.series = (np.asarray(t), e)
    return out


def _extremes(system, runs, columns, units, speeds, n_pos) -> tuple[list[Extreme], float, float]:
    """Joint coordinates that travelled beyond FAR × the model's size, joint speeds beyond
    FAST × (a pendulum of that size + the initial speed); also (size, gravity)."""
    size = model_size(system)
    g = max(
        (
            float(np.linalg.norm(b.gravity))
            for b in system.blocks.values()
            if getattr(b, "gravity", None) is not None
        ),
        default=0.0,
    )
    found = []
    nj = n_pos + len(speeds)  # (the elastic coordinates after the joints': no extremes)
    joints = list(zip(columns[n_pos:nj], units[n_pos:nj], speeds, strict=True))
    for pos, unit, _ in joints:
        if unit == "m" and size > 0:
            v = np.concatenate([r[pos] for r in runs])
            if np.max(np.abs(v)) > FAR * size:
                found.append(
                    Extreme(pos, "travel", float(v.min()), float(v.max()), "m", FAR * size)
                )
    for _, unit, spd in joints:
        v = np.concatenate([r[spd] for r in runs])
        v0 = abs(float(runs[0][spd][0]))
        if size <= 0 or (g == 0 and v0 == 0):
            continue
        pendulum = math.sqrt(g / size) if unit == "rad" else math.sqrt(g * size)
        limit = FAST * (pendulum + v0)
        if np.max(np.abs(v)) > limit:
            found.append(Extreme(spd, "speed", float(v.min()), float(v.max()), unit + "/s", limit))
    return found, size, g


def _nice_below(x: float) -> float | None:
    """The largest of 1, 2, 5 times a power of ten at or below ``x``."""
    if not x > 0:
        return None
    p = 10.0 ** math.floor(math.log10(x))
    return max(c * p for c in (1, 2, 5) if c * p <= x * (1 + 1e-12))


def _quote(names: list[str]) -> str:
    q = [f"`{n}`" for n in names]
    return q[0] if len(q) == 1 else ", ".join(q[:-1]) + " and " + q[-1]


def _diagnose(
    r: CrosscheckReport,
    system,
    engine,
    ref,
    res,
    diff,
    fmu_time,
    fmu_diff,
    runs,
    columns,
    units,
    speeds,
    angular,
    n_pos,
    acc_worst,
    sim,
) -> Diagnosis:
    """Why ``r`` failed (see :class:`Diagnosis`). ``res``: the in-process run (``columns``
    then ``speeds``), ``diff`` its gap to Pinocchio; ``fmu_diff`` the FMU leg's gap to the
    in-process leg at ``fmu_time``; ``runs``: the in-process and FMU runs."""
    time = res.time
    ref_acc_ok = r.acc_error <= r.acc_tol
    fmu_acc_ok = r.cosim_acc_error is None or r.cosim_acc_error <= r.cosim_acc_tol
    dynamics = []
    if not ref_acc_ok:
        dynamics.append(
            f"{r.pair_ref} differ by {r.acc_error:.3g} (relative; tolerance "
            f"{r.acc_tol:g}) at the random states, worst on `{acc_worst}`: the two compute "
            "different dynamics."
        )
    if not fmu_acc_ok:
        dynamics.append(
            f"the FMUs' loop solution at t = 0 differs from the engine's by "
            f"{r.cosim_acc_error:.3g} (relative; tolerance {r.cosim_acc_tol:g}): the FMUs "
            "compute different dynamics."
        )
    divs = []
    if r.traj_error > r.traj_tol:
        divs.append(_divergence(r.pair_ref, time, diff, r.traj_tol, columns, units, ref_acc_ok))
    if fmu_diff is not None and r.cosim_traj_error > r.cosim_traj_tol:
        divs.append(
            _divergence(
                PAIR_FMU,
                fmu_time,
                fmu_diff,
                r.cosim_traj_tol,
                columns,
                units,
                ref_acc_ok and fmu_acc_ok,
            )
        )
    sens = None
    if divs:
        record = columns + speeds
        base = np.column_stack([res[c] for c in record])
        sens = _sensitivity(
            engine, ref, record, angular, base, min(d.tolerance for d in divs), n_pos, **sim
        )
        for d in divs:
            d.chaos_explains = _explained(d, sens)
    extremes, size, g = _extremes(system, runs, columns, units, speeds, n_pos)
    chaotic = not dynamics and bool(divs) and all(d.chaos_explains for d in divs)

    # unphysical motion (no joint limits), fast motion
    travel = [e for e in extremes if e.kind == "travel"]
    unphysical = fast_text = ""
    if travel:
        unphysical = (
            ", ".join(f"`{e.signal}` reached {e.signed:.3g} m" for e in travel)
            + f", in a model whose bodies measure {size:.3g} m end to end. titopfmu does not "
            "model joint limits (a URDF's `<limit>` elements are ignored on import): nothing "
            "stops these joints, so this motion is unphysical."
        )
    fastest: dict[str, Extreme] = {}
    for e in sorted(extremes, key=lambda e: -e.value):
        if e.kind == "speed":
            fastest.setdefault(e.unit, e)
    if fastest:
        scale = (
            f"a pendulum of {size:.3g} m swings at about {math.sqrt(g / size):.2g} rad/s"
            if g > 0
            else f"more than {FAST:g} times the initial speeds"
        )
        fast_text = (
            "joint speeds reached "
            + " and ".join(f"{e.value:.3g} {e.unit} (`{e.signal}`)" for e in fastest.values())
            + f", fast for a model of that size ({scale}): the faster the motion, the larger "
            "the legs' numerical errors."
        )

    # what to try
    hints = []
    t_ok = min((d.first_over for d in divs), default=None)
    k1_time = float(time[1]) if len(time) > 1 else 0.0
    fmu_div = next((d for d in divs if d.pair == PAIR_FMU), None)
    ref_div = next((d for d in divs if d.pair == r.pair_ref), None)
    short = None
    if divs and all(d.growth != "from the start" for d in divs) and t_ok > k1_time:
        short = _nice_below(0.9 * t_ok)
        if short is not None:
            hints.append(
                f"A shorter run, `--t-final {short:g}`: the trajectories agree within the "
                f"tolerances up to {t_ok:.3g} s."
            )
    step = r.cosim_step
    if fmu_div is not None and fmu_div.chaos_explains:
        gain = (
            f" A chaotic gap grows back, though: each tenfold smaller start delays the "
            f"crossing by only one tenfold time, about {fmu_div.tenfold:.2g} s here."
            if fmu_div.tenfold
            else ""
        )
        hints.append(
            f"A smaller communication step for the FMU leg, `--step {step / 10:g}` (now "
            f"{step:g} s; 10 times the run time): its gap starts from the master's coupling "
            "error, fourth order in the step (so up to 10^4 times smaller, down to the "
            f"in-process leg's own integration error).{gain}"
        )
    elif fmu_div is not None:
        hints.append(
            f"A smaller communication step for the FMU leg, `--step {step / 10:g}` (now "
            f"{step:g} s; 10 times the run time): if its gap shrinks about 10^4 times (the "
            "master's coupling error is fourth order in the step), the step was too coarse "
            "for this motion; if it does not, the FMUs compute other dynamics than the "
            "engine."
        )
    if ref_div is not None:
        gain = (
            f" Each tenfold smaller start delays the crossing by only one tenfold time, "
            f"about {ref_div.tenfold:.2g} s here."
            if ref_div.tenfold and ref_div.chaos_explains
            else ""
        )
        rtol, atol = sim["rtol"], sim["atol"]
        hints.append(
            f"Tighter integration, `--rtol {rtol / 100:g} --atol {atol / 100:g}` (now "
            f"{rtol:g}, {atol:g}): the in-process and {r.reference} runs part from their "
            f"integration errors.{gain}"
        )
    if travel:
        hints.append(
            f"Hold the joints that fly away ({_quote([e.signal.split('.')[0] for e in travel])})"
            ": make them `fixed` in a copy of the URDF; in a model file, feed their "
            "`joint.tau` from a `JointSpringDamper` (a spring holding them) or make their "
            "bodies `WeldedBody` blocks. The motion is then physical, and usually less "
            "chaotic."
        )
    if dynamics:
        hints.append(
            "The accelerations differ, so no run length, step or tolerance will make the "
            f"trajectories agree: this is a defect of titopfmu (its engine, FMUs or {r.reference} "
            "leg) for this model, not a property of the model; please report it with "
            "the model file."
        )
    elif divs and not chaotic:
        hints.append(
            f"If a smaller step or tighter tolerances do not shrink the gap, the dynamics may "
            f"differ at states the {r.n_states} random states missed: rerun with more "
            "`--states`."
        )

    # the verdict, its explanation and the summary's line
    agree = [
        f"accelerations at {r.n_states} random states to {r.acc_error:.2g} ({r.pair_ref})"
    ]
    if r.cosim_acc_error is not None:
        agree.append(f"the FMUs' loop solution at t = 0 to {r.cosim_acc_error:.2g}")
    agree = " and ".join(agree)
    main = min(divs, key=lambda d: d.first_over) if divs else None
    unexplained = [d for d in divs if not d.chaos_explains]
    if dynamics:
        verdict = "FAIL"
        explanation = "**The dynamics disagree.** " + " ".join(
            d[0].upper() + d[1:] for d in dynamics
        )
        headline = "the dynamics disagree: " + dynamics[0].split(":")[0]
    elif chaotic:
        verdict = "DIVERGED"
        explanation = (
            f"**Chaotic divergence, not a modelling error.** The dynamics agree: {agree}. But "
            f"the motion is chaotic: the in-process run with its initial joint speeds changed "
            f"by {sens.perturbation:g} departs from the unperturbed run by {sens.max_gap:.2g} "
            f"within the {r.t_final:g} s, and the trajectories below part no faster than that. "
            "Any two correct simulations of such a motion part once their tiny numerical "
            "differences (integration tolerances, the FMU leg's coupling error) have grown "
            "that much, so the trajectory comparison says nothing more about the model after "
            "that. The verdict is DIVERGED rather than PASS: the trajectories were not "
            "confirmed."
        )
        headline = (
            f"chaotic divergence: the dynamics agree ({r.acc_error:.2g}) but a "
            f"{sens.perturbation:g} change of the initial speeds grows to {sens.max_gap:.2g}; "
            f"{main.pair} gap over {main.tolerance:g} at {main.first_over:.3g} s on "
            f"{main.first_signal}"
            + (f", tenfold every {main.tenfold:.2g} s" if main.tenfold else "")
        )
    else:
        verdict = "FAIL"
        d = min(unexplained, key=lambda d: d.first_over)
        explanation = (
            f"**The trajectories part, though the dynamics agree** ({agree}), and chaos does "
            f"not explain it: for {d.pair}, {d.reason or 'no sensitivity run'}. The gap comes "
            "from a leg's own error (the FMU leg's communication step, the integration "
            "tolerances), or from dynamics that differ at states the random sample missed."
        )
        fix = f"--step {step / 10:g}" if d.pair == PAIR_FMU else f"--rtol {sim['rtol'] / 100:g}"
        headline = (
            f"{'not chaos alone' if sens is not None and sens.chaotic else 'not chaos'}: "
            f"{d.pair} gap over {d.tolerance:g} at {d.first_over:.3g} s on "
            f"{d.first_signal}, starting at {d.start_gap:.2g}"
        )
    if travel:
        explanation += " The motion is also unphysical: joints without limits fly away (below)."
        headline += f"; {travel[0].signal} reaches {travel[0].value:.3g} m (no joint limits)"
    if short is not None and chaotic:
        headline += f"; try --t-final {short:g}"
    elif not chaotic and not dynamics:
        headline += f"; try {fix}"
    return Diagnosis(
        verdict,
        headline,
        explanation,
        dynamics,
        divs,
        sens,
        extremes,
        size,
        unphysical,
        fast_text,
        hints,
    )


# -- report ---------------------------------------------------------------------------------------


def _plot(path: Path, t, ours, theirs, columns, fmu_t=None, fmu_diff=None, r=None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = min(len(columns), 9)
    fig, axes = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    for j in range(n):
        (line,) = axes[0].plot(t, ours[:, j], label=columns[j])
        axes[0].plot(t, theirs[:, j], "k:", lw=1)
        axes[1].semilogy(
            t, np.abs(ours[:, j] - theirs[:, j]) + 1e-18, color=line.get_color(), label=columns[j]
        )
        if fmu_diff is not None:
            axes[1].semilogy(
                fmu_t, np.abs(fmu_diff[:, j]) + 1e-18, "--", lw=1, color=line.get_color()
            )
    if r is not None:
        axes[1].axhline(r.traj_tol, color="0.5", lw=0.8)
        if fmu_diff is not None:
            axes[1].axhline(r.cosim_traj_tol, color="0.5", lw=0.8, ls="--")
    name = "Pinocchio" if r is None else r.reference
    axes[0].set_ylabel(f"titopfmu (solid), {name} (dotted)")
    axes[1].set_ylabel(
        f"|titopfmu - {name}|"
        + (" (solid),\n|FMUs - in process| (dashed)" if fmu_diff is not None else "")
    )
    axes[1].set_xlabel("time (s)")
    axes[0].legend(fontsize=6, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _write(r: CrosscheckReport, out: Path, diff: np.ndarray, fmu_diff=None) -> None:
    rows = [
        (f"{r.pair_ref}: accelerations (max relative error)",
         f"{r.acc_error:.3g}", f"{r.acc_tol:g}", r.acc_error <= r.acc_tol),
        (f"{r.pair_ref}: {r.t_final:g} s trajectory (max gap)",
         f"{r.traj_error:.3g}", f"{r.traj_tol:g}", r.traj_error <= r.traj_tol),
    ]  # fmt: skip
    per_col = np.max(np.abs(diff), axis=0)
    per_fmu = [None] * len(per_col) if fmu_diff is None else np.max(np.abs(fmu_diff), axis=0)
    lines = [
        f"# Cross-check of `{r.model}`",
        "",
        f"**Verdict: {r.verdict}.**",
        "",
        (f"Accelerations at {r.n_states} random states (`Engine.derivative` vs `pin.aba`, error "
         "relative to the largest acceleration) and a trajectory from the model's initial state "
         "(`Engine.simulate` vs Pinocchio integrated by scipy, same tolerances). The Pinocchio "
         "model is built from the same System by `titopfmu.reference.to_pinocchio`; the FMUs and "
         if r.reference == "Pinocchio" else
         f"Accelerations at {r.n_states} random states (`Engine.derivative`, the core's "
         "articulated-body recursion, vs the projection (TMT) method of "
         "`titopfmu.reference.flexible_tree` over the joint and elastic coordinates, error "
         "relative to the largest acceleration) and a trajectory from the model's initial state "
         "(`Engine.simulate` vs the TMT reference integrated by scipy, same tolerances; the "
         "elastic coordinates compared too). The model has a flexible body: Pinocchio, rigid "
         "bodies only, cannot run it. The FMUs and "  # fmt: skip
        )
        +
        "their wiring by `CoSimulation.from_system` (the loop solution at t = 0: every body's "
        "acceleration, relative to the largest; the trajectory at the communication step "
        "given, whose coupling error is fourth order in it by default).",
        "",
        "| comparison | value | tolerance | result |",
        "|---|---|---|---|",
        *[f"| {a} | {b} | {c} | {'pass' if d else 'FAIL'} |" for a, b, c, d in rows],
        *(
            [
                f"| {r.cosim_label} vs in process: {r._acc_what} at t = 0 (max relative error) | "
                f"{r.cosim_acc_error:.3g} | {r.cosim_acc_tol:g} | "
                f"{'pass' if r.cosim_acc_error <= r.cosim_acc_tol else 'FAIL'} |",
                f"| {r.cosim_label} vs in process: {r.t_final:g} s trajectory, step "
                f"{r.cosim_step:g} s (max gap) | {r.cosim_traj_error:.3g} | "
                f"{r.cosim_traj_tol:g} | "
                f"{'pass' if r.cosim_traj_error <= r.cosim_traj_tol else 'FAIL'} |",
            ]
            if r.cosim_acc_error is not None
            else ["| in process vs FMUs + master | - | - | " + r.cosim + " |"]
        ),
        "",
        *(r.diagnosis.markdown() if r.diagnosis is not None else []),
        "Largest trajectory gap per recorded coordinate:",
        "",
        f"| signal | {r.pair_ref} | {r.cosim_label} vs in process |",
        "|---|---|---|",
        *[
            f"| `{c}` | {g:.3g} | {'-' if fg is None else f'{fg:.3g}'} |"
            for c, g, fg in zip(r.columns, per_col, per_fmu, strict=True)
        ],  # fmt: skip
        "",
        "![trajectory](trajectory.png)",
        "",
    ]
    (out / "report.md").write_text("\n".join(lines), encoding="utf-8")
    data = {
        "model": r.model, "reference": r.reference, "passed": r.passed, "verdict": r.verdict,
        "acc_error": r.acc_error,
        "traj_error": r.traj_error, "t_final": r.t_final, "n_states": r.n_states,
        "cosim": r.cosim, "cosim_leg": r.cosim_label, "cosim_acc_error": r.cosim_acc_error,
        "cosim_traj_error": r.cosim_traj_error, "cosim_step": r.cosim_step,
        "per_signal": dict(zip(r.columns, per_col.tolist(), strict=True)),
        "cosim_per_signal": None if fmu_diff is None
        else dict(zip(r.columns, np.asarray(per_fmu).tolist(), strict=True)),
        "diagnosis": None if r.diagnosis is None else r.diagnosis.to_json(),
    }  # fmt: skip
    (out / "results.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


__all__ = [
    "CrosscheckReport", "Diagnosis", "Divergence", "Extreme", "Sensitivity",
    "acceleration_names", "cosim_leg", "crosscheck", "engine_accelerations", "model_leg",
    "model_size", "random_state",
]  # fmt: skip
