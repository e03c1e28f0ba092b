"""An independent reference of a System's equations of motion for trees of rigid and flexible
bodies, by the projection (TMT, Kane) method: not the articulated-body recursion of the C core.

Generalised coordinates: the joint coordinates (a revolute joint's angle, a prismatic joint's
stroke; a free-floating root's position and attitude; a welded body none) and every flexible
body's elastic coordinates q_b. Generalised speeds nu, in tree order, per body: its joint's
speeds (a root's twist [v_P, omega] in R_a, m/s and rad/s; a 1-dof joint's rate) then its
elastic rates qdot_b. Each body's velocity u_b = [v_P, omega, qdot_b] (R_a components) is linear
in nu, u_b = T_b(q) nu, with T_b from a plain forward kinematic recursion over the tree: a rigid
parent's child port at the point c (v + omega x c, omega), a flexible parent's child port at
node j by docs/flexible.md (N1): position x_j = r_j + Phi_t,j q, attitude exp(theta~) with
theta = Phi_r,j q, twist [v + omega x x_j + Phi_t,j qdot ; omega + J_l(theta) Phi_r,j qdot] in
R_a, turned into the node frame N_j (the child's parent frame).

Jourdain's principle with the body equations M_b(q_b) udot_b + h_b = f_b (docs eqs. (E1),
(E2), a rigid body's with its constant 6 x 6 spatial inertia at P) gives

    M = sum_b T_b^T M_b T_b,     Q = sum_b T_b^T (f_b - h_b - M_b g_b) + joint efforts,

with g_b = Tdot_b nu, computed exactly (no truncation error) by one complex-step directional
derivative of the recursion along (q + i h qdot) (the kinematics below are complex-safe). M_b,
h_b, gravity and the elastic forces (Kee + sum lambda_k KG_k) q + De qdot come from
:mod:`titopfmu.reference.flexible`. The load values lambda_k of (G2) are exact, as the core's
(docs/flexible.md §6, "Load values"): the centrifugal cases omega_i omega_j; ax, ay, az = a_P -
g with a_P = vdot + omega x v; alx, aly, alz = alpha; node<j>.* the wrench (force; moment about
the node; R_a) the subtree hanging at node j applies on the body, minus the sum of its bodies'
rigid rows M_d udot_d + h_d - f_d moved to the node (positions from the forward recursion,
:meth:`FlexTreeReference.poses`). With udot_b = T_b nudot + g_b all are affine in nudot, and so
is Q: Q(nudot) = Q0 - G nudot. Unlike the core (its passes to a fixed point), the reference does
not iterate: it assembles the constant column (nudot = 0) and the nv linear columns (unit
nudot) of the residual in one evaluation and solves the non-symmetric

    (M + G) nudot = Q0  by LU (scipy.linalg.solve)

(:meth:`FlexTreeReference.linear_system`). ``exact_loads=False`` keeps the core's former values
(omega x v - g, alpha and node wrenches zero; G = 0), to show what the exact ones change.

What it models: one root, a Ground (fixed base) or a free-floating RigidBody; RevoluteBody,
PrismaticBody and WeldedBody descendants (forward dynamics), any of them (the root too) with a
flexible part beside its rigid part; joint efforts from Constant or TimeFunction blocks;
armature. Refused, by a :class:`FlexTreeError` naming the block: spherical and free joints,
imposed motion, inverse dynamics, loop closures, mimic joints, joint laws (JointSpringDamper and
other effort sources), external wrenches, a root's spring or damping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike
from scipy.integrate import solve_ivp
from scipy.linalg import solve

from ..assembly.system import System, split_port
from ..blocks.base import TitopError
from ..blocks.bodies import Ground, PrismaticBody, RevoluteBody, RigidBody, WeldedBody
from ..blocks.signals import Constant, TimeFunction
from ..flex.reduce import ReducedModel
from . import flexible as fx

FloatArray = np.ndarray

#: The complex step (the recursion's only perturbation: its imaginary part, divided by it, is
#: the exact time derivative; no subtraction, so no cancellation).
COMPLEX_STEP = 1e-30


class FlexTreeError(TitopError):
    """A system the flexible-tree reference does not model (names the block)."""


def skew(v: ArrayLike) -> np.ndarray:
    """The cross-product matrix v~ (v x w = v~ w), complex-safe."""
    x, y, z = v
    return np.array([[0 * x, -z, y], [z, 0 * x, -x], [-y, x, 0 * x]])


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b of two 3-vectors (np.cross's axis handling costs more than the product)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])  # fmt: skip


def _series(s, coefficients: tuple[float, ...]):
    out = 0 * s
    for c in reversed(coefficients):
        out = out * s + c
    return out


# Taylor coefficients in s = t^2 of sin t / t, (1 - cos t) / t^2, (t - sin t) / t^3
_A = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(7))
_B = tuple((-1) ** k / math.factorial(2 * k + 2) for k in range(7))
_C = tuple((-1) ** k / math.factorial(2 * k + 3) for k in range(7))


def _coefficients(theta: np.ndarray):
    """(sin t / t, (1 - cos t) / t^2, (t - sin t) / t^3) of t = |theta|, complex-safe: t^2 =
    theta . theta without conjugation; the series below t = 0.1 (truncation < 1e-20)."""
    s = theta @ theta
    if abs(s) < 1e-2:
        return _series(s, _A), _series(s, _B), _series(s, _C)
    t = np.sqrt(s + 0j) if np.iscomplexobj(s) else math.sqrt(s)
    return np.sin(t) / t, (1 - np.cos(t)) / s, (t - np.sin(t)) / (s * t)


def rotation(theta: ArrayLike) -> np.ndarray:
    """exp(theta~): the rotation of the rotation vector theta (rad), Rodrigues' formula."""
    theta = np.asarray(theta)
    a, b, _ = _coefficients(theta)
    K = skew(theta)
    return np.eye(3) + a * K + b * (K @ K)


def left_jacobian(theta: ArrayLike) -> np.ndarray:
    """J_l(theta) = I + (1 - cos t)/t^2 theta~ + (t - sin t)/t^3 theta~^2 (docs (N1)): the
    angular velocity of exp(theta~) in the fixed frame is J_l(theta) theta_dot."""
    theta = np.asarray(theta)
    _, b, c = _coefficients(theta)
    K = skew(theta)
    return np.eye(3) + b * K + c * (K @ K)


def axis_rotation(axis: np.ndarray, angle) -> np.ndarray:
    """exp(angle axis~) for a unit axis (complex-safe in angle)."""
    K = skew(axis)
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * (K @ K)


def dcm_from_quaternion(quat: ArrayLike) -> np.ndarray:
    """P_{b/i} of a quaternion [w, x, y, z] (normalised first)."""
    w, x, y, z = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ])  # fmt: skip


def rigid_inertia(mass: float, com: ArrayLike, inertia: ArrayLike) -> np.ndarray:
    """The 6 x 6 spatial inertia at P of a rigid part (mass kg, centre of mass com from P and
    central inertia, R_a), for u = [v_P, omega]: [[m I, -(m c)~], [(m c)~, I_c - m c~ c~]]."""
    c = np.asarray(com, dtype=float)
    C = skew(c)
    M = np.zeros((6, 6))
    M[:3, :3] = mass * np.eye(3)
    M[:3, 3:] = -mass * C
    M[3:, :3] = mass * C
    M[3:, 3:] = np.asarray(inertia, dtype=float) - mass * C @ C
    return M


def rigid_quadratic(M: np.ndarray, u: np.ndarray) -> np.ndarray:
    """h of a rigid body (docs (E2) with a constant M): [omega x p_v; omega x p_w + v x p_v]."""
    p = M @ u
    v, w = u[:3], u[3:6]
    return np.concatenate([cross(w, p[:3]), cross(w, p[3:]) + cross(v, p[:3])])


@dataclass
class _Body:
    name: str
    kind: str  # ground, root, revolute, prismatic, welded
    parent: int  # index in the tree (-1: none)
    port: int  # the parent's child port index
    state: slice
    red: ReducedModel | None
    M_rigid: np.ndarray
    mass: float
    com: np.ndarray
    gravity: np.ndarray
    axis: np.ndarray = field(default_factory=lambda: np.zeros(3))
    R: np.ndarray = field(default_factory=lambda: np.eye(3))  # P_a0b or P_ab (Ground: P_{O/i})
    armature: float = 0.0
    ports: list = field(default_factory=list)  # child port points (R_a), rigid parents
    joint_nv: int = 0
    iv: int = 0  # first generalised speed of its joint
    ie: int = 0  # first elastic rate
    n: int = 0  # elastic coordinates
    tau: object = None  # the joint effort: a float or a function of t


@dataclass
class BodyInfo:
    """What crosscheck reads of a joint body: its number of joint speeds."""

    name: str
    nv: int


class FlexTreeReference:
    """The TMT reference of a System (see the module docstring). It works on the engine's state
    layout (``Engine(system).initial_state()``): :meth:`derivative` is the whole state's time
    derivative, :meth:`generalized_accelerations` nudot; :meth:`accelerations`,
    :meth:`simulate`, :attr:`root`, :attr:`floating`, :attr:`joints`, :attr:`bodies`,
    :attr:`elastic`, :meth:`joint_coordinates` and :meth:`elastic_coordinates` are the interface
    ``titopfmu crosscheck`` reads (as :class:`~titopfmu.reference.PinocchioReference`'s).
    """

    #: crosscheck's name of this reference leg
    label = "TMT reference"

    def __init__(self, system: System, exact_loads: bool = True) -> None:
        #: the exact load values (docs/flexible.md §6); False: the core's former approximation
        #: (omega x v - g, alpha and the node wrenches zero), kept to show what they change
        self.exact_loads = bool(exact_loads)
        self.system = system
        plan = system.check()
        self.state_slices = dict(plan.state_slices)
        self.n_states = int(plan.n_states)
        #: the ODE state is the engine's state vector: crosscheck reads sol.y[:nq]
        self.nq = self.n_states
        blocks = system.blocks
        tree_names = list(plan.tree)
        for b in blocks.values():
            if b.name in tree_names or type(b) in (Constant, TimeFunction):
                continue
            raise FlexTreeError(f"block '{b.name}' ({type(b).__name__}) is not modelled by the "
                                "flexible-tree reference: only Constant and TimeFunction signal "
                                "blocks feed its bodies")  # fmt: skip
        self._bodies: list[_Body] = []
        index: dict[str, int] = {}
        nv = 0
        for name in tree_names:
            b = blocks[name]
            body = self._body(b, index)
            body.iv = nv
            nv += body.joint_nv
            body.ie = nv
            nv += body.n
            index[name] = len(self._bodies)
            self._bodies.append(body)
        roots = [b for b in self._bodies if b.parent < 0]
        if len(roots) != 1:
            raise FlexTreeError(f"the flexible-tree reference needs one root; roots: "
                                f"{[b.name for b in roots]}")  # fmt: skip
        self.nv = nv
        self.root = roots[0].name
        self.floating = roots[0].kind == "root"
        self.joints = [b.name for b in self._bodies if b.kind in ("revolute", "prismatic")]
        self.bodies = {name: BodyInfo(name, 1) for name in self.joints}
        self.elastic = {b.name: list(b.red.coordinates) for b in self._bodies if b.n}
        order = list(range(roots[0].iv, roots[0].iv + 6)) if self.floating else []
        order += [self._bodies[index[n]].iv for n in self.joints]
        for b in self._bodies:
            order += list(range(b.ie, b.ie + b.n))
        self._acc_order = np.array(order, dtype=int)

    # -- the model ----------------------------------------------------------------------------

    def _body(self, b, index: dict[str, int]) -> _Body:
        sys = self.system
        if isinstance(b, Ground):
            body = _Body(b.name, "ground", -1, -1, self.state_slices[b.name], None,
                         np.zeros((6, 6)), 0.0, np.zeros(3), np.zeros(3), R=np.array(b.R))
            body.ports = [np.array(c, dtype=float) for c in b.child_points]
            return body
        kinds = {RigidBody: "root", RevoluteBody: "revolute", PrismaticBody: "prismatic",
                 WeldedBody: "welded"}  # fmt: skip
        kind = kinds.get(type(b))
        if kind is None:
            raise FlexTreeError(
                f"block '{b.name}' ({type(b).__name__}) is not modelled by the flexible-tree "
                "reference: a Ground or free-floating RigidBody root with RevoluteBody, "
                "PrismaticBody and WeldedBody descendants (forward dynamics) only"
            )
        if b.external:
            raise FlexTreeError(f"block '{b.name}': external wrenches are not modelled by the "
                                "flexible-tree reference")  # fmt: skip
        if kind == "root" and (float(getattr(b, "damping", 0.0)) != 0.0
                               or float(getattr(b, "stiffness", 0.0)) != 0.0):  # fmt: skip
            raise FlexTreeError(f"block '{b.name}': the root's spring and damping are not "
                                "modelled by the flexible-tree reference")  # fmt: skip
        red = getattr(b, "flexible", None)
        n = 0 if red is None else red.n_modes
        body = _Body(b.name, kind, -1, -1, self.state_slices[b.name], red,
                     rigid_inertia(b.mass, b.com, b.inertia), float(b.mass),
                     np.array(b.com, dtype=float), np.array(b.gravity, dtype=float),
                     n=n)  # fmt: skip
        body.ports = [np.array(c, dtype=float) for c in b.child_points]
        if red is not None:
            for k, c in enumerate(body.ports):
                if k + 1 >= len(red.node_positions) or not np.allclose(
                        c, red.node_positions[k + 1], rtol=0.0, atol=1e-9):  # fmt: skip
                    raise FlexTreeError(f"block '{b.name}': child port {k + 1} is not at node "
                                        f"{k + 1} of its reduced model")  # fmt: skip
        if kind == "root":
            body.joint_nv = 6
            return body
        pname, pport = split_port(sys.source(f"{b.name}.P"))
        parent = sys.blocks[pname]
        body.parent = index[pname]
        body.port = list(parent.child_names).index(pport)
        if kind == "welded":
            body.R = np.array(b.joint.R_ab, dtype=float)
            return body
        body.joint_nv = 1
        body.axis = np.asarray(b.joint.axis, dtype=float) / np.linalg.norm(b.joint.axis)
        body.R = np.array(b.joint.R_a0b if kind == "revolute" else b.joint.R_ab, dtype=float)
        body.armature = float(np.asarray(getattr(b, "armature", 0.0)).reshape(-1)[0]) \
            if np.size(getattr(b, "armature", 0.0)) else 0.0  # fmt: skip
        src = sys.source(f"{b.name}.joint.tau")
        if src is None:
            body.tau = 0.0
        else:
            s = sys.blocks[split_port(src)[0]]
            if type(s) is Constant:
                body.tau = float(np.asarray(s.value).reshape(-1)[0])
            elif type(s) is TimeFunction:
                body.tau = s.f
            else:  # pragma: no cover - refused above (only Constant and TimeFunction blocks)
                raise FlexTreeError(f"block '{b.name}': its joint effort comes from "
                                    f"'{s.name}', not modelled by the flexible-tree reference")
        return body

    # -- kinematics ---------------------------------------------------------------------------

    def _configuration(self, x: np.ndarray, b: _Body) -> tuple:
        """(joint coordinate, joint rate, q, qdot) of a body at the engine state x."""
        xs = x[b.state]
        nj = {"root": 13, "revolute": 2, "prismatic": 2}.get(b.kind, 0)
        qj, qdj = (xs[0], xs[1]) if nj == 2 else (0.0, 0.0)
        return qj, qdj, xs[nj : nj + b.n], xs[nj + b.n : nj + 2 * b.n]

    def _speeds(self, x: np.ndarray) -> np.ndarray:
        nu = np.zeros(self.nv)
        for b in self._bodies:
            xs = x[b.state]
            if b.kind == "root":
                nu[b.iv : b.iv + 6] = xs[7:13]
            elif b.joint_nv:
                nu[b.iv] = xs[1]
            _, _, _, qd = self._configuration(x, b)
            nu[b.ie : b.ie + b.n] = qd
        return nu

    def partial_velocities(self, x: ArrayLike, direction: float = 0.0) -> list[np.ndarray]:
        """T_b ((6 + n_b) x nv) of every body (tree order; a Ground's is empty) at the
        configuration of the engine state x moved by i ``direction`` (its rates): complex
        matrices when ``direction`` is not zero, whose imaginary part over ``direction`` is
        dT_b/dt (the configuration's rates read from x)."""
        x = np.asarray(x, dtype=float)
        dt = complex if direction else float
        T: list[np.ndarray] = []
        ports: list[list[np.ndarray]] = []  # per body: its child ports' twists (6 x nv, port frame)
        for b in self._bodies:
            qj, qdj, q, qd = self._configuration(x, b)
            qj = qj + 1j * direction * qdj if direction else qj
            q = q + 1j * direction * qd if direction else q
            if b.kind == "ground":
                T.append(np.zeros((0, self.nv)))
                ports.append([np.zeros((6, self.nv)) for _ in b.ports])
                continue
            Tb = np.zeros((6 + b.n, self.nv), dtype=dt)
            if b.kind == "root":
                Tb[:6, b.iv : b.iv + 6] = np.eye(6)
            else:
                Y = ports[b.parent][b.port]
                if b.kind == "revolute":
                    E = b.R @ axis_rotation(b.axis, qj)
                    Tb[:3] = E.T @ Y[:3]
                    Tb[3:6] = E.T @ Y[3:]
                    Tb[3:6, b.iv] += b.axis
                elif b.kind == "prismatic":
                    E = b.R
                    Tb[3:6] = E.T @ Y[3:]
                    Tb[:3] = E.T @ Y[:3] - skew(b.axis * qj) @ Tb[3:6]
                    Tb[:3, b.iv] += b.axis
                else:
                    Tb[:3] = b.R.T @ Y[:3]
                    Tb[3:6] = b.R.T @ Y[3:]
            Tb[6:, b.ie : b.ie + b.n] = np.eye(b.n)
            T.append(Tb)
            mine = []
            for k, c in enumerate(b.ports):
                Y = np.zeros((6, self.nv), dtype=dt)
                if b.red is None:
                    Y[:3] = Tb[:3] - skew(c) @ Tb[3:6]
                    Y[3:] = Tb[3:6]
                else:  # docs/flexible.md (N1), node k + 1
                    shape = b.red.node_shapes[k + 1]
                    xj = b.red.node_positions[k + 1] + shape[:3] @ q
                    theta = shape[3:] @ q
                    Rt = rotation(theta)
                    yv = Tb[:3] - skew(xj) @ Tb[3:6] + shape[:3] @ Tb[6:]
                    yw = Tb[3:6] + left_jacobian(theta) @ shape[3:] @ Tb[6:]
                    Y[:3] = Rt.T @ yv
                    Y[3:] = Rt.T @ yw
                mine.append(Y)
            ports.append(mine)
        return T

    def attitudes(self, x: ArrayLike) -> list[np.ndarray]:
        """P_{a/i} of every body (tree order; a Ground's P_{O/i})."""
        x = np.asarray(x, dtype=float)
        out: list[np.ndarray] = []
        ports: list[list[np.ndarray]] = []
        for b in self._bodies:
            qj, _, q, _ = self._configuration(x, b)
            if b.kind == "ground":
                R = b.R
            elif b.kind == "root":
                R = dcm_from_quaternion(x[b.state][3:7])
            else:
                E = b.R @ axis_rotation(b.axis, qj) if b.kind == "revolute" else b.R
                R = ports[b.parent][b.port] @ E
            out.append(R)
            if b.red is None:
                ports.append([R for _ in b.ports])
            else:
                ports.append([R @ rotation(b.red.node_shapes[k + 1][3:] @ q)
                              for k in range(len(b.ports))])  # fmt: skip
        return out

    # -- dynamics -----------------------------------------------------------------------------

    def _body_terms(self, b: _Body, u: np.ndarray, q: np.ndarray, g_a: np.ndarray,
                    geometric: bool = True):  # fmt: skip
        """(M_b, h_b - f_b) of a body at its velocity u (R_a) and elastic q; the elastic forces
        Kee q + De qdot, plus sum lambda_k KG_k q with the velocity-only load values (omega_i
        omega_j, omega x v - g) when ``geometric`` (the energy's M_b does not depend on it)."""
        M = np.zeros((6 + b.n, 6 + b.n))
        M[:6, :6] = b.M_rigid
        rhs = np.zeros(6 + b.n)
        rhs[:6] = rigid_quadratic(b.M_rigid, u[:6])
        mc = b.mass * b.com
        rhs[:6] -= np.concatenate([b.mass * g_a, cross(mc, g_a)])
        if b.red is not None:
            red = b.red
            M += red.mass_matrix(q)
            rhs += fx.quadratic_forces(red, q, u)
            rhs -= fx.gravity_forces(red, q, g_a)
            v, w = u[:3], u[3:6]
            loads = fx.load_values(red, w, a_P=cross(w, v), gravity=g_a) if geometric else {}
            rhs[6:] += fx.elastic_forces(red, q, u[6:], loads)
        return M, rhs

    def poses(self, x: ArrayLike) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """(P_{a/i}, p) of every body (tree order): its attitude (:meth:`attitudes`) and the
        position (m, R_i) of its point P relative to the root's (a Ground's origin or a floating
        root's P), by the forward recursion: a child's P at its parent's port point (a rigid
        parent's c, a flexible parent's node x_j(q) = r_j + Phi_t,j q, docs (N1)), a prismatic
        child's moved by its stroke along its axis (R_b components)."""
        x = np.asarray(x, dtype=float)
        R = self.attitudes(x)
        pos: list[np.ndarray] = []
        for b, Rb in zip(self._bodies, R, strict=True):
            if b.parent < 0:
                pos.append(np.zeros(3))
                continue
            pb = self._bodies[b.parent]
            pos.append(self._port_point(x, pb, R[b.parent], pos[b.parent], b.port))
            if b.kind == "prismatic":
                qj, _, _, _ = self._configuration(x, b)
                pos[-1] = pos[-1] + Rb @ (b.axis * qj)
        return R, pos

    def _port_point(self, x: np.ndarray, b: _Body, Rb: np.ndarray, pb: np.ndarray,
                    k: int) -> np.ndarray:  # fmt: skip
        """The position (m, R_i) of body b's child port k (P at pb, attitude Rb)."""
        if b.red is None:
            return pb + Rb @ b.ports[k]
        _, _, q, _ = self._configuration(x, b)
        shape = b.red.node_shapes[k + 1]
        return pb + Rb @ (b.red.node_positions[k + 1] + shape[:3] @ q)

    def linear_system(self, t: float, x: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(M, G, Q0) at time t (s) and the engine state x: (M + G) nudot = Q0.

        M = sum_b T_b^T M_b T_b (nv x nv, symmetric) and Q0 the generalised forces at nudot = 0
        (its load values: omega_i omega_j, omega x v - g + Tdot_b nu's part, the node wrenches'
        velocity and gravity parts); G (non-symmetric) the geometric stiffness' dependence on
        the accelerations: the elastic forces sum_c lambda_c KG_c q_b are linear in nudot
        through the load values of docs/flexible.md §6 (ax..az = a_P - g with a_P = vdot +
        omega x v, alx..alz = alpha, from udot_b = T_b nudot + g_b; node<j>.* the wrench the
        subtree hanging at node j applies on the body: minus the sum of its bodies' rigid rows
        M_d udot_d + h_d - f_d, each moved to the node; an armature acts in its joint only).
        Affine in nudot, the residual is assembled exactly in one pass: its constant column
        (nudot = 0) and its nv linear columns (unit nudot, constants dropped), no iteration.
        """
        x = np.asarray(x, dtype=float)
        nu = self._speeds(x)
        h = COMPLEX_STEP
        Tc = self.partial_velocities(x, h)
        R, pos = self.poses(x)
        nv = self.nv
        # per body: U = udot columns [g_b | T_b] (6 + n, 1 + nv); its M_b, rhs (h_b - f_b with
        # Kee q + De qdot, no geometric stiffness)
        terms = []
        for b, Tb, Rb in zip(self._bodies, Tc, R, strict=True):
            if b.kind == "ground":
                terms.append(None)
                continue
            T = Tb.real
            g = Tb.imag @ nu / h  # Tdot_b nu, exact
            _, _, q, _ = self._configuration(x, b)
            u = T @ nu
            Mb, rhs = self._body_terms(b, u, q, Rb.T @ b.gravity, geometric=False)
            U = np.concatenate([g[:, None], T], axis=1)
            F = Mb @ U
            F[:, 0] += rhs  # column 0 the constant part, the others linear in nudot
            terms.append((T, u, q, Mb, U, F))
        # the wrench (force, moment about P_d; R_i) each subtree needs on its top body, moved
        # up the tree: node wrenches of flexible parents
        need = [np.zeros((6, 1 + nv)) for _ in self._bodies]
        for i in range(len(self._bodies) - 1, -1, -1):
            b = self._bodies[i]
            if terms[i] is None:
                continue
            F = terms[i][5]
            need[i][:3] += R[i] @ F[:3]
            need[i][3:] += R[i] @ F[3:6]
            if b.parent >= 0 and self._bodies[b.parent].kind != "ground":
                pb = self._bodies[b.parent]
                node = self._port_point(x, pb, R[b.parent], pos[b.parent], b.port)
                W = need[i].copy()
                W[3:] += skew(pos[i] - node) @ W[:3]  # moment about the port point
                need[b.parent][:3] += W[:3]
                need[b.parent][3:] += W[3:] + skew(node - pos[b.parent]) @ W[:3]
                need[i] = W  # now about the port point (the node's wrench below)
        M = np.zeros((nv, nv))
        residual = np.zeros((nv, 1 + nv))
        for i, b in enumerate(self._bodies):
            if terms[i] is None:
                continue
            T, u, q, Mb, U, F = terms[i]
            M += T.T @ Mb @ T
            if b.red is not None:
                red = b.red
                v, w = u[:3], u[3:6]
                if self.exact_loads:
                    nodes = {}
                    for j, c in enumerate(self._bodies):
                        if c.parent == i:
                            W = -need[j]  # on the body, by the subtree at node port c.port + 1
                            Wa = np.concatenate([R[i].T @ W[:3], R[i].T @ W[3:]])
                            key = red.node_ids[c.port + 1]
                            nodes[key] = nodes.get(key, 0.0) + Wa
                    lam = fx.load_value_columns(
                        red, np.concatenate([w[:, None], np.zeros((3, nv))], axis=1),
                        U[:3] + np.concatenate([cross(w, v)[:, None], np.zeros((3, nv))], 1),
                        U[3:6], np.concatenate([(R[i].T @ b.gravity)[:, None],
                                                np.zeros((3, nv))], axis=1), nodes)  # fmt: skip
                else:  # the core's former values: omega x v - g, no alpha, no node wrenches
                    lam = np.zeros((len(red.load_cases), 1 + nv))
                    lam[:, 0] = fx.load_value_columns(red, w, cross(w, v), np.zeros(3),
                                                      R[i].T @ b.gravity)[:, 0]  # fmt: skip
                F = F.copy()
                F[6:] += fx.geometric_columns(red, q) @ lam
            residual += T.T @ F
            if b.joint_nv == 1:
                M[b.iv, b.iv] += b.armature
                tau = b.tau(t) if callable(b.tau) else b.tau
                residual[b.iv, 0] -= float(np.asarray(tau, dtype=float).reshape(-1)[0])
        A = residual[:, 1:]
        for b in self._bodies:
            if b.joint_nv == 1:
                A[b.iv, b.iv] += b.armature
        return M, A - M, -residual[:, 0]

    def mass_matrix_and_forces(self, t: float, x: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """(M + G (nv x nv), Q0 (nv)) at time t (s) and the engine state x: (M + G) nudot = Q0
        (:meth:`linear_system`)."""
        M, G, Q0 = self.linear_system(t, x)
        return M + G, Q0

    def generalized_accelerations(self, t: float, x: ArrayLike) -> np.ndarray:
        """nudot (nv, the generalised speeds' order) at time t (s) and the engine state x: the
        LU solve (scipy.linalg.solve) of the non-symmetric (M + G) nudot = Q0."""
        A, Q0 = self.mass_matrix_and_forces(t, x)
        return solve(A, Q0)

    def accelerations(self, x: ArrayLike, t: float = 0.0) -> np.ndarray:
        """crosscheck's order: a floating root's twist rates (R_a components), the joints'
        accelerations (:attr:`joints` order), then every flexible body's qddot (tree order)."""
        return self.generalized_accelerations(t, x)[self._acc_order]

    def derivative(self, t: float, x: ArrayLike) -> np.ndarray:
        """dx/dt of the engine's state vector x: the root's position rate P_{b/i} v and
        quaternion rate 1/2 q (x) [0, omega] (plus a norm-restoring term), the coordinates'
        rates, the speeds' rates nudot."""
        x = np.asarray(x, dtype=float)
        nud = self.generalized_accelerations(t, x)
        dx = np.zeros(self.n_states)
        for b in self._bodies:
            if b.kind == "ground":
                continue
            s = b.state.start
            if b.kind == "root":
                quat = x[s + 3 : s + 7]
                v, w = x[s + 7 : s + 10], x[s + 10 : s + 13]
                dx[s : s + 3] = dcm_from_quaternion(quat) @ v
                q0, qv = quat[0], quat[1:]
                rate = 0.5 * np.concatenate([[-qv @ w], q0 * w + cross(qv, w)])
                dx[s + 3 : s + 7] = rate + (1.0 - quat @ quat) * quat
                dx[s + 7 : s + 13] = nud[b.iv : b.iv + 6]
                nj = 13
            elif b.joint_nv == 1:
                dx[s] = x[s + 1]
                dx[s + 1] = nud[b.iv]
                nj = 2
            else:
                nj = 0
            dx[s + nj : s + nj + b.n] = x[s + nj + b.n : s + nj + 2 * b.n]
            dx[s + nj + b.n : s + nj + 2 * b.n] = nud[b.ie : b.ie + b.n]
        return dx

    def energy(self, x: ArrayLike) -> float:
        """Kinetic energy 1/2 nu^T M nu plus the elastic energy 1/2 q^T Kee q of every flexible
        body (J); no gravity potential (for the conservation check without gravity)."""
        x = np.asarray(x, dtype=float)
        nu = self._speeds(x)
        T = self.partial_velocities(x)
        e = 0.0
        for b, Tb in zip(self._bodies, T, strict=True):
            if b.kind == "ground":
                continue
            _, _, q, _ = self._configuration(x, b)
            Mb, _ = self._body_terms(b, Tb @ nu, q, np.zeros(3))
            u = Tb @ nu
            e += 0.5 * u @ Mb @ u
            if b.red is not None:
                e += 0.5 * q @ b.red.Kee @ q
        return float(e)

    def simulate(self, t_final: float, t_eval: ArrayLike | None = None, *, x0=None,
                 method: str = "DOP853", rtol: float = 1e-8, atol: float = 1e-10,
                 **kwargs):  # fmt: skip
        """``scipy.integrate.solve_ivp`` of :meth:`derivative` from the blocks' initial state
        (or ``x0``); ``sol.y`` is the engine's state layout."""
        from ..assembly.engine import Engine

        x0 = Engine(self.system).initial_state() if x0 is None else np.asarray(x0, dtype=float)
        return solve_ivp(self.derivative, (0.0, t_final), x0, method=method, rtol=rtol,
                         atol=atol, t_eval=t_eval, **kwargs)  # fmt: skip

    # -- outputs (crosscheck) -----------------------------------------------------------------

    def root_position(self, y: ArrayLike) -> np.ndarray:
        """A floating root's inertial position rows (3, or 3 x T) of states y."""
        s = self.state_slices[self.root].start
        return np.asarray(y)[s : s + 3]

    def joint_coordinates(self, y: ArrayLike) -> np.ndarray:
        """The joints' coordinates (rad or m; :attr:`joints` order) of states y (or columns)."""
        y = np.asarray(y)
        return np.array([y[self.state_slices[n].start] for n in self.joints])

    def elastic_coordinates(self, y: ArrayLike) -> np.ndarray:
        """Every flexible body's q (tree order) of states y (or columns)."""
        y = np.asarray(y)
        rows = []
        for b in self._bodies:
            if b.n:
                nj = {"root": 13, "revolute": 2, "prismatic": 2}.get(b.kind, 0)
                rows += [y[b.state.start + nj + k] for k in range(b.n)]
        return np.array(rows)


def flexible_tree_reference(system: System) -> FlexTreeReference:
    """The TMT reference of a System of rigid and flexible bodies (module docstring)."""
    return FlexTreeReference(system)


__all__ = ["COMPLEX_STEP", "FlexTreeError", "FlexTreeReference", "axis_rotation",
           "dcm_from_quaternion", "flexible_tree_reference", "left_jacobian", "rigid_inertia",
           "rigid_quadratic", "rotation", "skew"]  # fmt: skip
