"""One block evaluated on its own, from the values on its ports.

This is what an FMU computes (a native FMU with the C core; this module, with the object blocks,
is the reference the FMU tests compare with): the block's inputs are given — the parent's
motion vector, the children's wrenches, the signals — and its outputs follow from its own
equations, with no algebraic loop to solve (the loop is between blocks). The
equations are the block's ``kinematics`` and ``loop_map`` (:mod:`titopfmu.blocks.bodies`); this
module only wires port values to them.

Channels (port values, SI units, frames as in :mod:`titopfmu.blocks.base`):

* body with a parent: in ``P.m`` (18, parent frame R_b), out ``P.W`` (6, R_b);
* each child port ``c``: out ``c.m`` (18, body frame R_a), in ``c.W`` (6, R_a);
* the block's signal ports (``joint.tau``, ``joint.m``, external wrenches, ``m``, ``W``, ...);
* every body but the imposed-motion one (whose input it is): out ``body.m`` (18), its own
  motion vector at its reference point P, in R_a: [ẋ'_P, x'_P, [IP]_{R_a}, Θ];
* loop closure: in ``left.m``, ``right.m`` (18 each), out ``left.W``, ``right.W`` (6 each).

A motion vector is [v̇_P (3), ω̇ (3), v_P (3), ω (3), IP (3), Θ = [φ, θ, ψ] (3)] (DEVELOPERS.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..spatial.algebra import FloatArray
from ..spatial.rotations import dcm_from_euler, euler_from_dcm
from .base import Block
from .bodies import BodyBlock, Ground, ImposedMotionBody, JointBody, PortKinematics
from .closure import LoopClosure
from .signals import SignalBlock


@dataclass(frozen=True)
class Channel:
    """One port value of a standalone block: name, size, direction and description."""

    name: str
    size: int
    direction: str  # "in" or "out"
    description: str


def motion_vector(acc: FloatArray, pk, theta: FloatArray | None = None) -> FloatArray:
    """The 18-component motion vector [ẋ', x', IP, Θ] of a port, from its acceleration and its
    :class:`~titopfmu.blocks.bodies.PortKinematics` (twist, position, DCM); ``theta`` = the
    Euler angles of ``pk.R`` when already known."""
    return np.concatenate((acc, pk.twist, pk.ip, euler_from_dcm(pk.R) if theta is None else theta))


def port_kinematics(m: FloatArray) -> PortKinematics:
    """Twist, position and attitude carried by a motion vector (the pre-loop part)."""
    return PortKinematics(m[6:12], m[12:15], dcm_from_euler(m[15:18]))


class StandaloneBlock:
    """A block evaluated from its port values: outputs and state derivative.

    ``inputs`` and ``outputs`` list the :class:`Channel` s in a fixed order (parent port first,
    then child ports, then signals). :meth:`evaluate` takes and returns dicts of arrays keyed by
    channel name.
    """

    def __init__(self, block: Block) -> None:
        self.block = block
        ins: list[Channel] = []
        outs: list[Channel] = []
        b = block
        self.is_body = isinstance(b, (BodyBlock, Ground))
        if isinstance(b, LoopClosure):
            for side in ("left", "right"):
                ins.append(Channel(f"{side}.m", 18, "in", f"motion vector of the {side} side"))
                outs.append(Channel(f"{side}.W", 6, "out", f"wrench on the {side} side"))
        elif self.is_body:
            if b.has_parent:
                ins.append(Channel("P.m", 18, "in", "motion vector of the parent at P"))
                outs.append(Channel("P.W", 6, "out", f"wrench applied by {b.name} on its parent"))
            for c in b.child_names:
                outs.append(Channel(f"{c}.m", 18, "out", f"motion vector at child port {c}"))
                ins.append(Channel(f"{c}.W", 6, "in", f"wrench of child port {c} on {b.name}"))
        elif not isinstance(b, SignalBlock):
            raise TypeError(f"{type(b).__name__} cannot be evaluated on its own")
        for p in b.ports.values():
            if p.kind == "signal_in":
                ins.append(Channel(p.name, p.size, "in", p.description))
            elif p.kind == "signal_out":
                outs.append(Channel(p.name, p.size, "out", p.description))
        # a body's own motion at P (an imposed-motion body has it as its input already)
        self.own_motion = self.is_body and not isinstance(b, ImposedMotionBody)
        if self.own_motion:
            outs.append(Channel("body.m", 18, "out", f"motion vector of {b.name} at P"))
        self.inputs: tuple[Channel, ...] = tuple(ins)
        self.outputs: tuple[Channel, ...] = tuple(outs)
        self.signal_inputs = tuple(p.name for p in b.ports.values() if p.kind == "signal_in")
        self.n_states = b.n_states
        self._child_w = tuple(f"{c}.W" for c in getattr(b, "child_names", ()))

    def initial_state(self) -> FloatArray:
        return np.asarray(self.block.initial_state(), dtype=float)

    def prepare(self, u: dict[str, FloatArray]) -> Prepared:
        """The parts of the inputs ``u`` that the block's equations take: signals, the parent's
        acceleration and port kinematics, the stacked child wrenches. Inputs held over a step
        are prepared once (:meth:`state_derivative`)."""
        b = self.block
        sig = {p: u[p] for p in self.signal_inputs}
        if not self.is_body:
            return Prepared(sig, None, None, None)
        acc_p = parent = None
        if b.has_parent:
            m = u["P.m"]
            parent = port_kinematics(m)
            acc_p = m[0:6]
        n = b.n_children
        w_c = None
        if n:
            w_c = u[self._child_w[0]] if n == 1 else np.concatenate([u[c] for c in self._child_w])
        return Prepared(sig, acc_p, parent, w_c)

    def evaluate(
        self,
        t: float,
        x: FloatArray,
        u: dict[str, FloatArray],
        *,
        derivative: bool = True,
        prepared: Prepared | None = None,
    ) -> tuple[dict[str, FloatArray], FloatArray | None]:
        """Outputs (dict by channel) and, if ``derivative`` and the block has states, dx/dt at
        (t, x, u); :meth:`derivative` alone is cheaper. ``prepared`` = :meth:`prepare` (u) when
        the caller holds it already."""
        b = self.block
        if isinstance(b, SignalBlock):
            return dict(b.evaluate(t, {p: u[p] for p in self.signal_inputs})), None
        if isinstance(b, LoopClosure):
            wl, wr = b.wrenches(port_kinematics(u["left.m"]), port_kinematics(u["right.m"]))
            return {"left.W": wl, "right.W": wr}, None
        pr = self.prepare(u) if prepared is None else prepared
        sig = pr.signals
        kin = b.kinematics(x, pr.parent, sig)
        r = b.respond(kin, sig, pr.acc_p, pr.w_c)
        dx = b.derivative(x, kin, r.extra) if derivative and self.n_states else None
        out: dict[str, FloatArray] = {}
        if pr.acc_p is not None:
            out["P.W"] = r.w_p
        theta = euler_from_dcm(kin.R)  # Θ of the body frame: its child ports' and body.m's
        for j, c in enumerate(b.child_names):
            pk = kin.children[j]
            out[f"{c}.m"] = motion_vector(r.acc_c[6 * j : 6 * j + 6], pk,
                                          theta if pk.R is kin.R else None)  # fmt: skip
        # signal outputs of body blocks
        if isinstance(b, JointBody) and b.joint.dof:
            if b.inverse:
                out["joint.tau"] = r.extra
            else:
                out["joint.m"] = b.joint_motion(x, r.extra)
        elif isinstance(b, (ImposedMotionBody, Ground)):
            out["W"] = r.extra
        if self.own_motion:
            out["body.m"] = motion_vector(r.acc, kin, theta)
        return out, dx

    def state_derivative(self, t: float, x: FloatArray, pr: Prepared) -> FloatArray | None:
        """dx/dt at (t, x) with the prepared inputs ``pr`` (None for a block without states):
        the body's kinematics without its child ports and its response up to q̈."""
        if not self.n_states:
            return None
        b = self.block
        kin = b.kinematics(x, pr.parent, pr.signals, children=False)
        r = b.respond(kin, pr.signals, pr.acc_p, pr.w_c, full=False)
        return b.derivative(x, kin, r.extra)

    def derivative(self, t: float, x: FloatArray, u: dict[str, FloatArray]) -> FloatArray:
        """dx/dt with the inputs ``u`` held."""
        return self.state_derivative(t, x, self.prepare(u))


@dataclass(slots=True)
class Prepared:
    """Inputs of a standalone block in the form its equations take (:meth:`StandaloneBlock.
    prepare`): ``signals`` (by port), the parent's spatial acceleration
    ``acc_p`` (6, R_b) and :class:`PortKinematics` ``parent``, the child wrenches ``w_c``
    (6 per child port, R_a); None where the block has no such port."""

    signals: dict
    acc_p: FloatArray | None
    parent: object
    w_c: FloatArray | None
