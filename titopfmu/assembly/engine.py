"""In-process engine: evaluates a checked system and integrates it with scipy.

One right-hand-side evaluation is: (1) the pre-loop pass, parents first: twists and poses of
every body (they do not depend on wrenches), signal blocks, loop closures; (2) the loop maps of
the bodies and one sweep of :class:`~titopfmu.assembly.loop_solver.TreeLoopSolver`; (3) the state
derivatives. Cost is linear in the number of bodies.

Integration uses the solver classes behind ``scipy.integrate.solve_ivp`` (same methods and
tolerances), stepped here so that a failure keeps everything computed before it.
"""

from __future__ import annotations

import csv
import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import integrate

from ..blocks.base import SingularJointError, TitopError
from ..blocks.bodies import BodyBlock, Ground, ImposedMotionBody, JointBody, RigidBody
from ..blocks.closure import LoopClosure
from ..blocks.signals import JointMimic, JointSpringDamper
from ..blocks.standalone import motion_vector
from ..core.model import SINGULAR, UNSETTLED, NativeTree, unsupported
from ..interrupts import signal_name
from ..spatial.algebra import FloatArray
from ..spatial.rotations import euler_from_dcm
from .loop_solver import LoopSolution, LoopSolveError, TreeLoopSolver
from .system import AssemblyError, System, split_port

METHODS = {
    "RK45": integrate.RK45,
    "RK23": integrate.RK23,
    "DOP853": integrate.DOP853,
    "Radau": integrate.Radau,
    "BDF": integrate.BDF,
    "LSODA": integrate.LSODA,
}


_NO_SIGNALS: dict[str, FloatArray] = {}


class _Steps(list):
    """Evaluation steps with their data resolved (:meth:`Engine._compile`)."""


class SimulationError(TitopError):
    """A simulation failed. Carries the time, the block (if known) and the partial result."""

    def __init__(self, message: str, time: float, block: str | None = None, result=None) -> None:
        self.time = time
        self.block = block
        self.result = result
        where = f" in block '{block}'" if block else ""
        super().__init__(f"at t = {time:.9g} s{where}: {message}")


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (SIGINT), or by SIGTERM where the command line turns it into a
    KeyboardInterrupt: still a KeyboardInterrupt (code that catches one still does), carrying
    the time of the last sample ``time`` (s), the samples taken before the signal (``result``,
    every row complete) and the signal's name (``signal``)."""

    def __init__(self, time: float, result=None, signal: str = "SIGINT") -> None:
        self.time = time
        self.result = result
        self.signal = signal
        super().__init__(f"interrupted ({signal}) at t = {time:.9g} s")


def interrupted(exc: KeyboardInterrupt, result, t0: float) -> RunInterrupted:
    """The :class:`RunInterrupted` of a run that ``exc`` stopped: ``result`` (a
    :class:`SimulationResult` or a master's ``CosimResult``) cut to its complete rows, its last
    sample's time (``t0`` without one). ``exc`` itself when it is one already (a nested run)."""
    if isinstance(exc, RunInterrupted):
        return exc
    times = result.time_list if hasattr(result, "time_list") else result.time
    n = min(len(times), len(result.rows))  # a signal between the two appends of a sample
    del times[n:]
    del result.rows[n:]
    return RunInterrupted(float(times[-1]) if n else t0, result, signal_name(exc))


class Evaluation:
    """Run-time data of one evaluation (the engine's 'Data', cf. Pinocchio's Model/Data).

    ``kin_list[i]`` holds the pre-loop kinematics of the i-th tree block (``Engine.tree_blocks``
    order), ``kin`` the same by block name; ``sig`` every signal value, ``closure`` the
    loop-closure wrenches, ``sol`` the loop solution (:class:`LoopSolution`).
    """

    __slots__ = ("t", "x", "kin_list", "_names", "_kin", "sig", "known", "closure", "sol")

    def __init__(self, t: float, x: FloatArray, names: list[str]) -> None:
        self.t = t
        self.x = x
        self._names = names
        self.kin_list: list = [None] * len(names)
        self._kin: dict[str, object] | None = None
        self.sig: dict[tuple[str, str], FloatArray] = {}
        self.known: list[FloatArray | None] = [None] * len(names)
        self.closure: dict[str, tuple[FloatArray, FloatArray]] = {}
        self.sol: LoopSolution | None = None

    @property
    def kin(self) -> dict[str, object]:
        """Block name -> pre-loop kinematics (bodies whose kinematics were computed)."""
        if self._kin is None:
            pairs = zip(self._names, self.kin_list, strict=True)
            self._kin = {n: k for n, k in pairs if k is not None}
        return self._kin


class Engine:
    """Evaluate and simulate a :class:`System` in process."""

    def __init__(self, system: System) -> None:
        self.system = system
        self.plan = system.check()
        blocks = system.blocks
        src = system._source
        self.tree_index = {n: i for i, n in enumerate(self.plan.tree)}
        self.tree_blocks = [blocks[n] for n in self.plan.tree]
        self._names = list(self.plan.tree)
        self.solver = TreeLoopSolver(self.plan.nodes)
        # input resolution: block -> [(port, source key)]
        self.inputs: dict[str, list[tuple[str, tuple[str, str]]]] = {
            b.name: [
                (p.name, src[(b.name, p.name)]) for p in b.ports.values() if p.kind == "signal_in"
            ]
            for b in blocks.values()
        }
        self.kin_inputs = {
            n: [(p, s) for p, s in lst if p in getattr(blocks[n], "kinematic_inputs", ())]
            for n, lst in self.inputs.items()
        }
        # parent port kinematics lookup: block -> (parent block, child slot)
        self.parent_slot: dict[str, tuple[str, int]] = {}
        for n in self.plan.tree:
            b = blocks[n]
            if b.has_parent:
                pb, pp = src[(n, "P")]
                self.parent_slot[n] = (pb, blocks[pb].child_names.index(pp))
        self.closure_sides: dict[str, list[tuple[str, int]]] = {}
        for b in blocks.values():
            if isinstance(b, LoopClosure):
                sides = []
                for s in ("left", "right"):
                    ob, op = src[(b.name, s)]
                    if not isinstance(blocks[ob], (BodyBlock, Ground)):
                        raise AssemblyError(f"'{b.name}.{s}' must connect to a body's child port")
                    sides.append((ob, blocks[ob].child_names.index(op)))
                self.closure_sides[b.name] = sides
        self.steps = [(kind, blocks[name]) for kind, name in self.plan.pre_loop]
        # signal blocks whose outputs never change are evaluated here, once; every evaluation
        # starts from their values (a Constant per joint effort is common: a chain of 1000
        # bodies then skips 1000 block calls per evaluation)
        self._constant_signals: dict[tuple[str, str], FloatArray] = {}
        for kind, b in self.steps:
            if kind == "sig" and b.constant:
                for p, v in b.evaluate(0.0, {}).items():
                    self._constant_signals[(b.name, p)] = v
        self._varying = [(k, b) for k, b in self.steps if not (k == "sig" and b.constant)]
        # forward joints whose motion output feeds a signal block before the loop
        self.joint_outputs = {
            s[0] for lst in self.inputs.values() for _, s in lst if s[1] == "joint.m"
        } & {
            n for n in self.plan.tree if isinstance(blocks[n], JointBody) and not blocks[n].inverse
        }
        self._nans = {k: np.full(k, np.nan) for k in range(7)}
        # per body: (block, name, its signal inputs, or their values when every one comes from a
        # constant signal block: then the same dict serves every evaluation)
        self._map_steps = [
            (b, b.name, self._constant_inputs(self.inputs[b.name]) or self.inputs[b.name])
            for b in self.tree_blocks
        ]
        # per body, what its kinematics step needs: (block, tree index, parent's tree index and
        # child slot or None, state slice, kinematic inputs, whether it outputs joint.m early)
        self._kin_data = {
            b.name: (
                b,
                self.tree_index[b.name],
                (self.tree_index[self.parent_slot[b.name][0]], self.parent_slot[b.name][1])
                if b.name in self.parent_slot
                else None,
                self.plan.state_slices[b.name],
                self.kin_inputs[b.name],
                b.name in self.joint_outputs,
            )
            for b in self.tree_blocks
        }
        # loop closures: (block, (tree index, slot) of the left and right sides)
        self._loop_data = {
            name: (self.system.blocks[name], [(self.tree_index[ob], j) for ob, j in sides])
            for name, sides in self.closure_sides.items()
        }
        # the pre-loop steps with each body's loop map built as soon as its kinematics and signal
        # inputs are known (its data is then still in the cache: cost per body stays flat)
        position = {(kind, b.name): j for j, (kind, b) in enumerate(self.steps)}
        ready: dict[int, list[int]] = {}
        for i, (_b, name, _inputs) in enumerate(self._map_steps):
            last = position.get(("kin", name), -1)
            for _, (sb, _sp) in self.inputs[name]:
                for node in (("sig", sb), ("kin", sb)):
                    last = max(last, position.get(node, -1))
            ready.setdefault(last, []).append(i)
        self._full_steps: list = [(kind, b) for kind, b in self.steps]
        for j in sorted(ready, reverse=True):
            self._full_steps[j + 1 : j + 1] = [("map", i) for i in ready[j]]
        self._full_steps = [(k, b) for k, b in self._full_steps if not (k == "sig" and b.constant)]
        # for derivative(): the same steps, each body's kinematics dropped after its last reader
        # (its loop map, its children's kinematics, loop closures; the state derivative if it
        # reads them). Its memory is then reused by the next bodies instead of new memory per
        # body: on long chains that keeps the evaluation's data in the processor's caches.
        last: dict[str, int] = {}
        for j, (kind, b) in enumerate(self._full_steps):
            if kind == "map":
                last[self._map_steps[b][1]] = j
            elif kind == "kin" and b.name in self.parent_slot:
                last[self.parent_slot[b.name][0]] = j
            elif kind == "loop":
                for ob, _ in self.closure_sides[b.name]:
                    last[ob] = j
        for b in self.tree_blocks:
            if b.n_states and getattr(b, "derivative_uses_kinematics", True):
                last.pop(b.name, None)
        drops: dict[int, list[int]] = {}
        for name, j in last.items():
            drops.setdefault(j, []).append(self.tree_index[name])
        derivative_steps: list = []
        for j, step in enumerate(self._full_steps):
            derivative_steps.append(step)
            if j in drops:
                derivative_steps.append(("drop", tuple(drops[j])))
        # the step lists evaluate() runs, with each step's data resolved here
        self._derivative_steps = self._compile(derivative_steps)
        self._full_steps = self._compile(self._full_steps)
        self._varying_steps = self._compile(self._varying)
        self.stateful = [
            (self.tree_index[b.name], b, self.plan.state_slices[b.name])
            for b in self.tree_blocks
            if b.n_states
        ]
        self.n_states = self.plan.n_states
        self.n_evaluations = 0
        self._setup_native()

    def _setup_native(self) -> None:
        """The core's evaluation (:mod:`titopfmu.core`) when every block is a built-in one:
        ``self.native`` is then a :class:`~titopfmu.core.model.NativeTree`, else None and
        ``self.native_reason`` says why (a user's block subclass runs the object path)."""
        self.native: NativeTree | None = None
        closures = [lc for lc, _ in self._loop_data.values()]
        self.native_reason = unsupported(self.tree_blocks, closures)
        mimics = [b for b in self.system.blocks.values() if isinstance(b, JointMimic)]
        if mimics and self.native_reason is not None:
            raise AssemblyError(
                f"mimic joint '{mimics[0].name}' needs the core, which cannot run this system: "
                f"{self.native_reason}"
            )
        #: the bodies with a flexible part (evaluated in the core only, titop_flex)
        self.flexible = [b for b in self.tree_blocks if getattr(b, "flexible", None) is not None]
        if self.flexible and self.native_reason is not None:
            raise AssemblyError(
                f"flexible body '{self.flexible[0].name}' needs the core, which cannot run this "
                f"system: {self.native_reason}"
            )
        sprung = [(b.name, a) for b in self.tree_blocks for a in ("damping", "stiffness")
                  if getattr(b, a, 0.0)]  # fmt: skip
        if sprung and self.native_reason is not None:  # titop_body's, the core's only
            raise AssemblyError(
                f"block '{sprung[0][0]}': its joint {sprung[0][1]} needs the core, which cannot "
                f"run this system: {self.native_reason}"
            )
        if self.native_reason is not None or not self.tree_blocks:
            return
        parents = [
            (self.tree_index[self.parent_slot[b.name][0]], self.parent_slot[b.name][1])
            if b.name in self.parent_slot
            else None
            for b in self.tree_blocks
        ]
        offsets = [self.plan.state_slices[b.name].start for b in self.tree_blocks]
        closures = [(lc, left, right) for lc, (left, right) in self._loop_data.values()]
        nt = self.native = NativeTree(
            self.tree_blocks, parents, offsets, closures, self._native_laws(), self.plan.n_states,
            mimics=self._native_mimics(),
        )
        self._native_data = nt.new_data()
        self._native_eval = nt.model.eval
        src = self.system._source
        names = [b.name for b in self.tree_blocks]
        self._input_src = [(src[(names[i], port)], off, w) for i, port, w, off in nt.inputs]
        self._input_src += [(src[(names[i], e)], off, 6) for i, e, off in nt.externals]
        # the pre-loop signal pass without kinematics, restricted to the signal blocks the
        # inputs need: a forward joint's motion [NaN, u, p] comes from its states
        need = self._signal_blocks_needed([s for s, _, _ in self._input_src])
        self._signal_steps = [
            ("jm", b, self.plan.state_slices[b.name]) if kind == "kin" else (kind, b, None)
            for kind, b in self._varying
            if (kind == "sig" and b.name in need)
            or (kind == "kin" and b.name in self.joint_outputs and b.name in need)
        ]
        self._fixed_inputs = None
        if all(s in self._constant_signals for s, _, _ in self._input_src):
            self._fixed_inputs = self._gather(self._constant_signals)
        self._check_articulated_inertia(parents)

    def _check_articulated_inertia(self, parents: list) -> None:
        """One evaluation in the core at the initial state and t = 0: a joint whose
        articulated inertia S^T Ia S + armature (eq. 20, the subtree its joint moves) is singular
        is refused here, naming its block, rather than at the first evaluation. A massless body
        is valid when the bodies it carries have inertia about its joint (the sweep's LDL^T
        pivots judge it, ``titop.h``); a leaf with none was refused by its block already."""
        nt = self.native
        x0 = self.initial_state()
        try:
            inputs = self._native_inputs(0.0, x0)
        except (ValueError, TypeError, KeyError, ArithmeticError):  # told when it runs
            inputs = np.zeros(nt.nin)
        r = nt.derivative(0.0, x0, inputs, np.empty(self.n_states), nt.new_data())
        if not r or r[0] != SINGULAR or not 0 <= r[1] < len(self.tree_blocks):
            return
        i = r[1]
        below = [j for j in range(i + 1, len(parents)) if self._descends(parents, j, i)]
        b = self.tree_blocks[i]
        carried = ", ".join(f"'{self.tree_blocks[j].name}'" for j in below[:8])
        carried += ", ..." if len(below) > 8 else ""
        moved = (f"this body and the {len(below)} below it: {carried}" if below else
                 "this body")  # fmt: skip
        raise SingularJointError(
            b.name,
            "the articulated inertia S^T Ia S seen from its joint (eq. 20, with the armature) is "
            f"singular at the initial state: the subtree the joint moves ({moved}) has no "
            "inertia about the joint, so the joint's acceleration is undefined; give one of "
            "them a mass or inertia the joint can move, or the joint an armature",
        )  # fmt: skip

    @staticmethod
    def _descends(parents: list, j: int, i: int) -> bool:
        """Whether tree body j is below tree body i (``parents``: (index, slot) or None)."""
        while parents[j] is not None:
            j = parents[j][0]
            if j == i:
                return True
        return False

    def _native_laws(self) -> list:
        """Joint spring-damper laws the core evaluates itself: a JointSpringDamper block
        reading the motion of a 1-dof joint body and feeding the effort of a forward 1-dof
        joint body, as (law block, source index, destination index)."""
        blocks, src = self.system.blocks, self.system._source
        laws = []
        for i, b in enumerate(self.tree_blocks):
            if not (isinstance(b, JointBody) and not b.inverse and b.joint.dof == 1):
                continue
            law = blocks[src[(b.name, "joint.tau")][0]]
            if type(law) is not JointSpringDamper:
                continue
            sb, sp = src[(law.name, "m")]
            s = blocks[sb]
            if sp == "joint.m" and isinstance(s, JointBody) and s.joint.dof == 1:
                laws.append((law, self.tree_index[sb], i))
        return laws

    def _native_mimics(self) -> list:
        """The mimic joints (titop.h, ``titop_mimic``): a JointMimic reading the motion of a
        forward 1-dof joint body (the leader) and feeding the effort of another (the follower),
        as (mimic block, follower index, leader index); any other connection of a JointMimic is
        refused, naming it."""
        blocks, src = self.system.blocks, self.system._source
        out = []
        for b in blocks.values():
            if not isinstance(b, JointMimic):
                continue
            lead, lp = src[(b.name, "m")]
            dst = [k for k, v in src.items() if v == (b.name, "tau")]
            ok = (lp == "joint.m" and len(dst) == 1 and dst[0][1] == "joint.tau"
                  and lead in self.tree_index and dst[0][0] in self.tree_index)  # fmt: skip
            if ok:
                f, leader = blocks[dst[0][0]], blocks[lead]
                ok = all(isinstance(j, JointBody) and not j.inverse and j.joint.dof == 1
                         for j in (f, leader))  # fmt: skip
            if not ok:
                raise AssemblyError(
                    f"mimic joint '{b.name}': connect its 'm' to the leader's joint.m and its "
                    "'tau' to the follower's joint.tau (and to nothing else), both forward "
                    "1-dof joint bodies"
                )
            out.append((b, self.tree_index[dst[0][0]], self.tree_index[lead]))
        return out

    def _signal_blocks_needed(self, sources: list) -> set[str]:
        """Names of the blocks whose pre-loop outputs the signals ``sources`` depend on."""
        need: set[str] = set()
        stack = [s[0] for s in sources]
        while stack:
            name = stack.pop()
            if name in need:
                continue
            need.add(name)
            stack += [s[0] for _, s in self.inputs.get(name, [])]
        return need

    def _gather(self, sig: dict) -> FloatArray:
        """The core's input vector from signal values."""
        inp = np.empty(self.native.nin)
        for s, off, w in self._input_src:
            inp[off : off + w] = sig[s]
        return inp

    def _native_inputs(self, t: float, x: FloatArray) -> FloatArray:
        if self._fixed_inputs is not None:
            return self._fixed_inputs
        sig = self._constant_signals.copy()
        for kind, b, sl in self._signal_steps:
            if kind == "jm":
                sig[(b.name, "joint.m")] = b.joint_motion(x[sl], self._nans[b.joint.dof])
                continue
            self._run_signal_block(b, t, sig)
        return self._gather(sig)

    def _run_signal_block(self, b, t: float, sig: dict) -> None:
        """Evaluate signal block ``b`` at time t from the values in ``sig``; add its outputs."""
        name = b.name
        try:
            out = b.evaluate(t, {p: sig[s] for p, s in self.inputs[name]})
        except (ValueError, TypeError, KeyError, ArithmeticError) as exc:
            raise SimulationError(f"{type(exc).__name__}: {exc}", t, name) from exc
        for p, v in out.items():
            sig[(name, p)] = v

    def _compile(self, steps: list) -> list:
        """``[(kind, block)]`` steps with what evaluate() needs resolved: a kinematics step
        carries its ``_kin_data`` record, a loop-closure step its ``_loop_data`` record."""
        out = _Steps()
        for kind, b in steps:
            if kind == "kin":
                out.append((kind, self._kin_data[b.name]))
            elif kind == "loop":
                out.append((kind, self._loop_data[b.name]))
            else:
                out.append((kind, b))
        return out

    def _constant_inputs(self, inputs: list) -> dict[str, FloatArray] | None:
        """The values of ``inputs`` ([(port, source)]) if every source is a constant signal."""
        if inputs and all(src in self._constant_signals for _, src in inputs):
            return {p: self._constant_signals[src] for p, src in inputs}
        return None

    # -- evaluation ---------------------------------------------------------------------------

    def initial_state(self) -> FloatArray:
        """The blocks' initial states; with mimic joints, each follower's q and q̇ set from its
        leader's (:meth:`consistent`)."""
        x = np.zeros(self.n_states)
        for b in self.system.blocks.values():
            x[self.plan.state_slices[b.name]] = b.initial_state()
        return self.consistent(x)

    def consistent(self, x: FloatArray) -> FloatArray:
        """``x`` made consistent with the mimic joints (the core's ``titop_mimic_project``;
        ``x`` itself without any): what a state set from outside goes through."""
        nt = getattr(self, "native", None)
        return x if nt is None else nt.project(x)

    def evaluate(self, t: float, x: FloatArray, solve: bool = True, steps=None) -> Evaluation:
        """Evaluate every block at time t (s) and state x; the algebraic loop is solved exactly.

        With ``solve=False`` only the pre-loop pass runs (``ev.sol`` is None): enough for the
        signals :meth:`is_pre_loop` accepts; ``steps`` (a list from :meth:`pre_loop_steps`)
        then restricts it to the steps some signals need. :meth:`derivative` passes steps that
        drop kinematics it no longer needs (``ev.kin`` is then partial, ``ev.sol`` holds only
        the extra outputs). Constant signal blocks are not in any pass: their outputs, computed
        when the engine is built, are in ``ev.sig`` from the start.
        """
        self.n_evaluations += 1
        ev = Evaluation(t, x, self._names)
        kin = ev.kin_list
        sig = ev.sig = self._constant_signals.copy()
        maps: list = [None] * len(self._map_steps)
        if steps is None:
            steps = self._full_steps if solve else self._varying_steps
        elif type(steps) is not _Steps:
            steps = self._compile(steps)
        for kind, b in steps:
            if kind == "map":
                tb, _name, inputs = self._map_steps[b]
                if type(inputs) is list:
                    inputs = {p: sig[s] for p, s in inputs} if inputs else _NO_SIGNALS
                maps[b] = tb.loop_map(kin[b], inputs)
            elif kind == "kin":
                tb, i, ps, sl, kin_inputs, joint_out = b
                parent = kin[ps[0]].children[ps[1]] if ps else None
                xs = x[sl]
                kin[i] = tb.kinematics(
                    xs, parent, {p: sig[s] for p, s in kin_inputs} if kin_inputs else _NO_SIGNALS
                )
                if joint_out:  # pre-loop joint motion [NaN (u̇), u, p]
                    sig[(tb.name, "joint.m")] = tb.joint_motion(xs, self._nans[tb.joint.dof])
            elif kind == "drop":
                for i in b:
                    kin[i] = None
            elif kind == "sig":
                self._run_signal_block(b, t, sig)
            else:  # loop closure
                lc, ((li, ls), (ri, rs)) = b
                wl, wr = lc.wrenches(kin[li].children[ls], kin[ri].children[rs])
                ev.closure[lc.name] = (wl, wr)
                for (j, oi), w in (((li, ls), wl), ((ri, rs), wr)):
                    if ev.known[j] is None:
                        ev.known[j] = np.zeros(6 * self.tree_blocks[j].n_children)
                    ev.known[j][6 * oi : 6 * oi + 6] = w
        if not solve:
            return ev
        try:
            ev.sol = self.solver.solve(maps, ev.known, steps is self._derivative_steps)
        except LoopSolveError as exc:
            raise SimulationError(str(exc), t, self.tree_blocks[exc.node].name) from None
        return ev

    def derivative(self, t: float, x: FloatArray) -> FloatArray:
        """State derivative dx/dt at (t, x).

        Runs in the C core (:attr:`native`) when the system allows it; the object path gives the
        same values to rounding and is taken on any failure, to name the block at fault.
        """
        if self.native is not None:
            inputs = self._fixed_inputs
            if inputs is None:
                inputs = self._native_inputs(t, x)
            dx = np.empty(self.n_states)
            self.n_evaluations += 1
            r = self._native_eval(self._native_data, t, x, inputs, False, dx)
            if not r:
                return dx
            if self.native.mimics or self.flexible:  # not on the object path: the core's word
                i = r[1]
                block = self.tree_blocks[i].name if 0 <= i < len(self.tree_blocks) else None
                why = " (with the mimic joints' constraints)" if self.native.mimics else ""
                if r[0] == UNSETTLED:  # titop_eval's passes (docs/flexible.md §6)
                    raise SimulationError(
                        "the load values of the flexible body's geometric stiffness did not "
                        "settle (no fixed point of the passes: the body near buckling?)", t, block
                    )  # fmt: skip
                raise SimulationError(
                    f"the joints' accelerations are singular{why}" if r[0] == SINGULAR
                    else "a non-finite value", t, block
                )  # fmt: skip
        return self.object_derivative(t, x)

    def jacobian(self, t: float, x: FloatArray) -> FloatArray:
        """Exact ∂(dx/dt)/∂x at (t, x) (complex step in the core), with the inputs held at
        their values at (t, x). Needs a system the core runs (:attr:`native`)."""
        if self.native is None:
            raise TitopError(f"no exact derivatives for this system: {self.native_reason}")
        jx, _ = self.native.jacobian(t, np.asarray(x, dtype=float), self._native_inputs(t, x))
        return jx

    def object_derivative(self, t: float, x: FloatArray) -> FloatArray:
        """dx/dt at (t, x) by the object blocks and :class:`TreeLoopSolver` (any system)."""
        ev = self.evaluate(t, x, steps=self._derivative_steps)
        dx = np.empty(self.n_states)
        extra = ev.sol.extra
        kin = ev.kin_list
        for i, b, sl in self.stateful:
            dx[sl] = b.derivative(x[sl], kin[i], extra[i])
        total = dx.dot(dx)  # NaN or inf if a component is (or on overflow: then checked in full)
        if total - total != 0.0 and not np.all(np.isfinite(dx)):
            self._diagnose(self.evaluate(t, x), dx)  # a full evaluation, to name the block
        return dx

    def check_finite(self, ev: Evaluation) -> None:
        """Raise a SimulationError if any signal or loop value of ``ev`` is not finite."""
        sol = ev.sol
        ok = all(np.all(np.isfinite(v)) for v in sol.extra) and all(
            np.all(np.isfinite(v)) for v in sol.w_c
        )
        if not ok or not all(np.all(np.isfinite(v)) for v in ev.sig.values()):
            self._diagnose(ev, None)

    def _diagnose(self, ev: Evaluation, dx: FloatArray | None) -> None:
        """Raise a SimulationError naming the first block whose values are not finite."""
        for b in self.system.blocks.values():
            if not np.all(np.isfinite(ev.x[self.plan.state_slices[b.name]])):
                raise SimulationError("state is not finite (the integrator diverged)", ev.t, b.name)
        for kind, b in self.steps:
            if kind == "sig":
                for p in b.ports.values():
                    v = ev.sig.get((b.name, p.name))
                    if v is not None and p.kind == "signal_out" and not np.all(np.isfinite(v)):
                        raise SimulationError(
                            f"signal '{p.name}' is not finite ({v.tolist()}); a signal block may "
                            "only use positions and rates (accelerations are not known before "
                            "the loop is solved)",
                            ev.t,
                            b.name,
                        )
        sol = ev.sol
        for i, b in enumerate(self.tree_blocks):
            vals = [sol.w_c[i], sol.extra[i]] + ([sol.acc_p[i]] if sol.acc_p[i] is not None else [])
            if not all(np.all(np.isfinite(v)) for v in vals):
                raise SimulationError("non-finite loop inputs or outputs", ev.t, b.name)
        if dx is None:
            raise SimulationError("non-finite value", ev.t)
        for _, b, sl in self.stateful:
            if not np.all(np.isfinite(dx[sl])):
                raise SimulationError("non-finite state derivative", ev.t, b.name)
        raise SimulationError("non-finite state derivative", ev.t)

    # -- signals ------------------------------------------------------------------------------

    def signal_names(self) -> list[str]:
        """Every recordable signal, as ``block.signal``."""
        names = []
        for b in self.system.blocks.values():
            names += [f"{b.name}.{p.name}" for p in b.ports.values() if p.kind.startswith("signal")]
            if isinstance(b, (BodyBlock, Ground)):
                names += [f"{b.name}.{c}.{s}" for c in b.child_names for s in ("m", "W")]
                if b.has_parent:
                    names += [f"{b.name}.P.m", f"{b.name}.P.W"]
                names += [f"{b.name}.{s}" for s in ("m", "position", "euler", "twist", "acc")]
            if isinstance(b, BodyBlock):
                names += [
                    f"{b.name}.{s}"
                    for s in ("kinetic_energy", "potential_energy", "com", "momentum")
                ]
            if isinstance(b, LoopClosure):
                names += [f"{b.name}.{s}" for s in ("left.W", "right.W", "potential_energy")]
            names += [f"{b.name}.state.{s}" for s in b.state_names]
        return names

    def is_pre_loop(self, name: str, index: int | None = None) -> bool:
        """Whether signal ``name`` (component ``index``, 0-based, or all of them) is known after
        the pre-loop pass, i.e. does not depend on accelerations or loop wrenches."""
        bname, rest = split_port(name)
        b = self.system.blocks.get(bname)
        if b is None:
            return False
        port = b.ports.get(rest)
        if port is not None and port.kind == "signal_in":
            src = self.system._source[(bname, rest)]
            return self.is_pre_loop(f"{src[0]}.{src[1]}", index)
        if port is not None and port.kind == "signal_out":
            if isinstance(b, JointBody) and rest == "joint.m" and not b.inverse:
                return index is not None and index >= b.joint.dof  # [u̇ | u, p]
            return not isinstance(b, (BodyBlock, Ground))  # signal blocks run before the loop
        if rest.startswith("state.") or rest in ("position", "euler", "twist"):
            return True
        if isinstance(b, BodyBlock):
            return rest in ("kinetic_energy", "potential_energy", "com", "momentum")
        return isinstance(b, LoopClosure)

    def pre_loop_steps(self, names: Sequence[str]) -> list:
        """The pre-loop steps (in order) that the pre-loop signals ``names`` need: a body's own
        kinematics needs its ancestors' and its kinematic inputs, a signal block its inputs; a
        joint's motion [u, p] and the states need none."""
        blocks = self.system.blocks
        src = self.system._source
        need: set[tuple[str, str]] = set()

        def add_signal(name: str, read: bool = True) -> None:
            # read: the value is read by signal(); otherwise a step takes it from ev.sig, where
            # a forward joint's motion is put by its kinematics step
            bname, rest = split_port(name)
            b = blocks[bname]
            port = b.ports.get(rest)
            if port is not None and port.kind == "signal_in":
                add_signal("{}.{}".format(*src[(bname, rest)]), read)
            elif isinstance(b, JointBody) and rest == "joint.m" and not b.inverse:
                if not read:
                    add_kin(bname)
            elif rest.startswith("state."):
                return
            elif isinstance(b, LoopClosure):
                need.add(("loop", bname))
                for ob, _ in self.closure_sides[bname]:
                    add_kin(ob)
            elif isinstance(b, (BodyBlock, Ground)):
                add_kin(bname)
            elif ("sig", bname) not in need:
                need.add(("sig", bname))
                for _, s in self.inputs[bname]:
                    add_signal("{}.{}".format(*s), read=False)

        def add_kin(bname: str) -> None:
            if ("kin", bname) in need:
                return
            need.add(("kin", bname))
            if bname in self.parent_slot:
                add_kin(self.parent_slot[bname][0])
            for _, s in self.kin_inputs[bname]:
                add_signal("{}.{}".format(*s), read=False)

        for name in names:
            add_signal(name)
        return [(kind, b) for kind, b in self._varying if (kind, b.name) in need]

    def _acc_at_p(self, ev: Evaluation, b) -> FloatArray:
        """ẋ'_P of a body at the loop solution. A root or a forward joint body takes it from
        the solution's internal accelerations α (ẋ'_P itself, or ``ẋ'_A = G ẋ'_B + e + S u̇``):
        recomputing them from the wrenches on the body (``respond``) would divide large wrenches
        by a light body's inertia. Other bodies (imposed motion) use their ``respond``."""
        i = self.tree_index[b.name]
        sol = ev.sol
        alpha = sol.alpha[i] if sol.alpha is not None else None
        if alpha is not None and isinstance(b, RigidBody):
            return alpha
        if alpha is not None and isinstance(b, JointBody) and not b.inverse and b.joint.dof:
            return b.acceleration(ev.kin[b.name], sol.acc_p[i], alpha)
        sig = {p: self._input(ev, b.name, p) for p, _ in self.inputs[b.name]}
        n = b.n_children
        return b.respond(ev.kin[b.name], sig, sol.acc_p[i], sol.w_c[i] if n else None).acc

    def signal(self, ev: Evaluation, name: str) -> FloatArray:
        """Value of a named signal in an evaluation (see :meth:`signal_names`)."""
        bname, rest = split_port(name)
        if bname not in self.system.blocks:
            raise KeyError(f"no block '{bname}' for signal '{name}'")
        b = self.system.blocks[bname]
        if rest in b.ports and b.ports[rest].kind == "signal_in":
            return self._input(ev, bname, rest)
        if rest in b.ports and b.ports[rest].kind == "signal_out":
            return self._post_loop_signal(ev, b, rest)
        if rest.startswith("state."):
            sn = rest[6:]
            if sn in b.state_names:
                return np.array([ev.x[self.plan.state_slices[bname]][b.state_names.index(sn)]])
        if isinstance(b, LoopClosure):
            if rest == "left.W":
                return ev.closure[bname][0]
            if rest == "right.W":
                return ev.closure[bname][1]
            if rest == "potential_energy":
                (lb, li), (rb, ri) = self.closure_sides[bname]
                return np.array(
                    [b.potential_energy(ev.kin[lb].children[li], ev.kin[rb].children[ri])]
                )
        if isinstance(b, (BodyBlock, Ground)):
            i = self.tree_index[bname]
            kin = ev.kin[bname]
            sol = ev.sol
            if "." in rest:
                port, what = rest.rsplit(".", 1)
                if port in b.child_names and what in ("m", "W"):
                    j = b.child_names.index(port)
                    if what == "W":
                        return sol.w_c[i][6 * j : 6 * j + 6]
                    pk = kin.children[j]
                    acc = sol.acc_c[i][6 * j : 6 * j + 6]
                    return motion_vector(acc, pk)
                if port == "P" and b.has_parent and what in ("m", "W"):
                    if what == "W":
                        return sol.wrench_to_parent(i)
                    pb, pj = self.parent_slot[bname]
                    pk = ev.kin[pb].children[pj]
                    return motion_vector(sol.acc_p[i], pk)
            if rest == "m":
                return motion_vector(self._acc_at_p(ev, b), kin)
            if rest == "acc":
                return self._acc_at_p(ev, b)
            if rest == "position":
                return kin.R @ kin.ip
            if rest == "euler":
                return euler_from_dcm(kin.R)
            if rest == "twist":
                return kin.twist
            if isinstance(b, BodyBlock):
                if rest == "kinetic_energy":
                    return np.array([b.kinetic_energy(kin)])
                if rest == "potential_energy":
                    return np.array([b.potential_energy(kin)])
                if rest == "com":
                    return b.com_position(kin)
                if rest == "momentum":
                    return b.momentum(kin)
        raise KeyError(f"block '{bname}' has no signal '{rest}'")

    def _input(self, ev: Evaluation, block: str, port: str) -> FloatArray:
        src = self.system._source[(block, port)]
        return self._post_loop_signal(ev, self.system.blocks[src[0]], src[1])

    def _post_loop_signal(self, ev: Evaluation, b, port: str) -> FloatArray:
        i = self.tree_index.get(b.name)
        if isinstance(b, JointBody) and port == "joint.m" and not b.inverse:
            acc = ev.sol.extra[i] if ev.sol is not None else self._nans[b.joint.dof]
            return b.joint_motion(ev.x[self.plan.state_slices[b.name]], acc)
        if isinstance(b, JointBody) and port == "joint.tau" and b.inverse:
            return ev.sol.extra[i]
        if isinstance(b, (ImposedMotionBody, Ground)) and port == "W":
            return ev.sol.extra[i]
        return ev.sig[(b.name, port)]

    # -- simulation ---------------------------------------------------------------------------

    def _native_readers(self, names: Sequence[str]) -> dict | None:
        """For output sampling from a full evaluation in the core (into ``_sample_data``):
        signal name -> function of x giving its value, when the core computes every one of
        ``names`` (states, poses, twists and accelerations of bodies, joint motions and efforts,
        the wrenches of fixed and imposed-motion bodies); else None (the object path samples
        them)."""
        nt = self.native
        if nt is None or not self.n_states:
            return None
        if not hasattr(self, "_sample_data"):
            self._sample_data = nt.new_data()
        readers = {}
        for name in names:
            r = self._native_reader(name)
            if r is None:
                return None
            readers[name] = r
        return readers

    def _native_reader(self, name: str):
        """Signal ``name`` as a function of x read from ``_sample_data`` (the core's mapping,
        :meth:`~titopfmu.core.model.NativeTree.reader`), or None."""
        nt = self.native
        bname, rest = split_port(name)
        b = self.system.blocks.get(bname)
        if b is None:
            return None
        state = None
        if rest.startswith("state.") and rest[6:] in b.state_names:
            state = self.plan.state_slices[bname].start + b.state_names.index(rest[6:])
        i = self.tree_index.get(bname)
        if i is None and state is None:
            return None
        r = nt.reader(-1 if i is None else i, rest, state)
        if r is None:
            return None
        data = self._sample_data
        return lambda x: r(data, x)

    def simulate(
        self,
        t_final: float,
        *,
        t0: float = 0.0,
        output_interval: float | None = None,
        record: Sequence[str] | Mapping[str, str] = (),
        method: str = "DOP853",
        rtol: float = 1e-8,
        atol: float = 1e-10,
        max_step: float = math.inf,
        x0: FloatArray | None = None,
        progress: bool = False,
        timeout: float | None = None,
    ) -> SimulationResult:
        """Integrate from ``t0`` to ``t_final`` (s) and sample ``record`` every ``output_interval``.

        ``record`` lists signal names (``"block.signal"`` for every component, ``"block.signal[i]"``
        for one, 1-based) or maps column names to them. On failure a :class:`SimulationError` is
        raised whose ``result`` holds every sample computed before the failure; ``timeout`` (s of
        wall-clock time, checked after every integrator step) is such a failure. A Ctrl-C raises
        a :class:`RunInterrupted` (a KeyboardInterrupt) whose ``result`` holds the samples so far.
        """
        if method not in METHODS:
            raise TitopError(
                f"unknown integration method {method!r}; choose from {sorted(METHODS)}"
            )
        if not (math.isfinite(t_final) and t_final > t0):
            raise TitopError(f"t_final ({t_final}) must be finite and greater than t0 ({t0})")
        if output_interval is None:
            output_interval = (t_final - t0) / 100.0
        if not (output_interval > 0 and math.isfinite(output_interval)):
            raise TitopError(f"output_interval must be positive, got {output_interval}")
        if rtol <= 0 or atol <= 0:
            raise TitopError(f"tolerances must be positive (rtol={rtol}, atol={atol})")
        limit = wall_limit(timeout, TitopError)
        x = self.initial_state() if x0 is None else np.array(x0, dtype=float)
        if x.shape != (self.n_states,):
            raise TitopError(f"x0 must have {self.n_states} components, got {x.shape}")
        x = self.consistent(x)
        columns = _columns(self, record, t0, x)
        n_out = int(math.floor((t_final - t0) / output_interval + 1e-9)) + 1
        grid = t0 + output_interval * np.arange(n_out)
        if grid[-1] < t_final - 1e-12 * max(1.0, abs(t_final)):
            grid = np.append(grid, t_final)
        result = SimulationResult([c for c, _, _ in columns])
        k = 0

        # samples of pre-loop signals only (positions, angles, rates...) need no loop solution
        solve = self.n_states == 0 or not all(self.is_pre_loop(s, i) for _, s, i in columns)
        steps = None if solve else self._compile(self.pre_loop_steps([s for _, s, _ in columns]))

        readers = self._native_readers([s for _, s, _ in columns])
        if readers is None and self.native is not None and self.native.mimics:
            raise TitopError(
                f"with mimic joints ('{self.native.mimics[0][0].name}'), only signals the core "
                "computes can be recorded (states, poses, twists, accelerations, joint motions, "
                "the wrenches of fixed bodies): not "
                + ", ".join(repr(s) for _, s, _ in columns if self._native_reader(s) is None)
            )

        def sample(t: float, xs: FloatArray) -> None:
            if readers is not None:  # one full evaluation in the core
                data = self._sample_data
                inputs = self._native_inputs(t, xs)
                self.n_evaluations += 1
                if not self._native_eval(data, t, xs, inputs, True, None):
                    values = {}
                    row = []
                    for _, sname, idx in columns:
                        v = values.get(sname)
                        if v is None:
                            v = values[sname] = readers[sname](xs)
                        row.append(v[idx])
                    result.append(t, row)
                    return
            ev = self.evaluate(t, xs, solve, steps)
            if not self.n_states:
                self.check_finite(ev)  # no derivative check catches it otherwise
            values: dict[str, FloatArray] = {}
            row = []
            for _, sname, idx in columns:
                v = values.get(sname)
                if v is None:
                    v = values[sname] = self.signal(ev, sname)
                row.append(v[idx])
            result.append(t, row)

        bar = _progress_bar(progress, t0, t_final)
        try:
            if self.n_states == 0:
                for t in grid:
                    sample(float(t), x)
                return result
            solver = METHODS[method](
                self.derivative, t0, x, t_final, rtol=rtol, atol=atol, max_step=max_step
            )
            sample(float(grid[0]), x)
            k = 1
            while k < len(grid):
                if solver.status != "running":
                    break
                t_old = solver.t
                msg = solver.step()
                if solver.status == "failed":
                    raise SimulationError(f"integrator {method} failed: {msg}", solver.t)
                dense = None
                while k < len(grid) and grid[k] <= solver.t + 1e-12 * max(1.0, abs(solver.t)):
                    if dense is None:
                        dense = solver.dense_output()
                    tk = float(grid[k])
                    sample(tk, solver.y if tk == solver.t else dense(tk))
                    k += 1
                if bar is not None:
                    bar.update(solver.t - t_old)
                if limit is not None and time.perf_counter() > limit:
                    raise SimulationError(timeout_message(timeout), solver.t)
        except SimulationError as exc:
            exc.result = result
            result.error = str(exc)
            raise
        except KeyboardInterrupt as exc:  # Ctrl-C: the samples so far go with it
            stop = interrupted(exc, result, t0)
            result.error = str(stop)
            result.n_evaluations = self.n_evaluations
            raise stop from None
        finally:
            if bar is not None:
                bar.close()
        result.n_evaluations = self.n_evaluations
        return result


def wall_limit(timeout: float | None, error: type[Exception]) -> float | None:
    """The ``time.perf_counter()`` value after which a run given ``timeout`` (s of wall-clock
    time, None: no limit) stops; a timeout that is not positive raises ``error``."""
    if timeout is None:
        return None
    if not (isinstance(timeout, (int, float)) and timeout > 0):
        raise error(f"the timeout must be a positive number of seconds, got {timeout!r}")
    return time.perf_counter() + float(timeout)


def timeout_message(timeout: float) -> str:
    """What a run stopped by its ``timeout`` says (the time reached is added by the error)."""
    return f"the run exceeded its timeout of {timeout:g} s (wall clock); results so far kept"


def _progress_bar(enabled: bool, t0: float, t_final: float):
    """A bar over simulated time on stderr, shown once the run has lasted a second (short runs
    stay quiet), or None."""
    if not enabled:
        return None
    import sys

    from tqdm import tqdm

    from ..progress import BAR_DELAY

    return tqdm(total=t_final - t0, unit="s(sim)", delay=BAR_DELAY, file=sys.stderr,
                bar_format="{l_bar}{bar}| {n:.3f}/{total:.3f} s")  # fmt: skip


_INDEX = re.compile(r"^(.*)\[(\d+)\]$")


def _columns(engine: Engine, record, t0: float, x0: FloatArray) -> list[tuple[str, str, int]]:
    """Resolve recording requests into (column name, signal name, index) triples."""
    items = list(record.items()) if isinstance(record, Mapping) else [(r, r) for r in record]
    if not items:
        raise TitopError("nothing to record: give signal names (see Engine.signal_names())")
    if getattr(engine, "flexible", None):  # evaluated in the core only: what it computes
        engine._native_readers([])  # (makes engine._sample_data)
        data = engine._sample_data
        engine.native.derivative(t0, x0, engine._native_inputs(t0, x0), None, data, full=True)

        def value_of(base: str) -> FloatArray:
            r = engine._native_reader(base)
            if r is None:
                raise AssemblyError(
                    f"with a flexible body ('{engine.flexible[0].name}'), the signals the core "
                    "computes can be recorded (states, position, euler, twist, acc, joint.m, the "
                    "W of fixed and imposed-motion bodies), not this one")  # fmt: skip
            return np.asarray(r(x0))
    else:
        ev = engine.evaluate(t0, x0)

        def value_of(base: str) -> FloatArray:
            return engine.signal(ev, base)

    cols = []
    for alias, name in items:
        m = _INDEX.match(name)
        base = m.group(1) if m else name
        try:
            value = value_of(base)
        except (KeyError, AssemblyError) as exc:
            raise TitopError(f"cannot record {name!r}: {exc}") from None
        if m:
            i = int(m.group(2))
            if not 1 <= i <= value.size:
                raise TitopError(f"cannot record {name!r}: index out of 1..{value.size}")
            cols.append((alias, base, i - 1))
        elif value.size == 1:
            cols.append((alias, base, 0))
        else:
            cols += [(f"{alias}[{j + 1}]", base, j) for j in range(value.size)]
    return cols


@dataclass
class SimulationResult:
    """Sampled signals: ``time`` (s) and one column per recorded component."""

    columns: list[str]
    time_list: list[float] = field(default_factory=list)
    rows: list[list[float]] = field(default_factory=list)
    error: str | None = None
    n_evaluations: int = 0

    def append(self, t: float, row: list[float]) -> None:
        self.time_list.append(t)
        self.rows.append([float(v) for v in row])

    @property
    def time(self) -> FloatArray:
        return np.array(self.time_list)

    @property
    def values(self) -> FloatArray:
        return np.array(self.rows).reshape(len(self.rows), len(self.columns))

    def __getitem__(self, column: str) -> FloatArray:
        if column == "time":
            return self.time
        try:
            j = self.columns.index(column)
        except ValueError:
            raise KeyError(f"no column {column!r}; columns: {self.columns}") from None
        return self.values[:, j]

    def to_csv(self, path: str | os.PathLike) -> None:
        """Write ``time`` and every column (SI units) to a CSV file."""
        d = os.path.dirname(os.fspath(path))
        if d:
            os.makedirs(d, exist_ok=True)
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["time", *self.columns])
            for t, row in zip(self.time_list, self.rows, strict=True):
                w.writerow([repr(t), *(repr(v) for v in row)])


def simulate(system: System, t_final: float, **kwargs) -> SimulationResult:
    """Shortcut for ``Engine(system).simulate(t_final, **kwargs)``."""
    return Engine(system).simulate(t_final, **kwargs)


__all__ = [
    "Engine", "Evaluation", "RunInterrupted", "SimulationError", "SimulationResult", "simulate",
]  # fmt: skip
