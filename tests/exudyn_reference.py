"""Exudyn (Gerstmayr, https://github.com/jgerstmayr/EXUDYN) models of the flexible-body
benchmarks of issue 34, the independent references of tests/test_flex_exudyn.py and
scripts/bench_flex.py:

* :func:`ffrf_model`: the same reduced beam in Exudyn's reduced-order floating-frame body
  (ObjectFFRFreducedOrder, the nodal-based FFRF of Zwolfer and Gerstmayr, Acta Mechanica 232,
  2021). Exudyn's formulation is nodal: its mass terms are projections of a (3N, 3N) mass matrix
  of nodes with 3 translational dofs (the full second-order terms included: its mPsiTildePsi,
  mPsiTildePsiTilde are our Cr1, J2 of docs/flexible.md eqs. (7)-(8)). Our beam's kinetic energy
  is that of its centroid line with the consistent (cubic Hermite) field (docs/flexible.md eq.
  (1)), so Exudyn's nodes here are the centroid line's Gauss points (5 per element, the beam's
  own quadrature, exact for the kinetic energy of a cubic field) with point masses rho A w l and
  mode shapes N(xi_g) Phi_e, Phi our reduction basis: the same kinetic energy, term by term. Two
  rigid terms are added to Exudyn's rigid-body data: the sections' torsional inertia rho Ip L
  (on the rx dofs of our mass matrix, not on the centroid line; the modes kept must carry no
  torsion, checked) and the hub's mass and inertia. No geometric stiffness on either side
  (Exudyn's FFRF has none: the reduced model is built without load cases).
* :func:`ancf_spin_up`: Kane, Ryan and Banerjee's spin-up beam as Exudyn's geometrically exact
  planar ANCF cable elements (ObjectANCFCable2D), clamped on a hub whose rotation is imposed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import exudyn as exu
import numpy as np
import scipy.sparse
from exudyn import FEM
from exudyn import itemInterface as eii

from titopfmu.flex import Beam, ReducedModel
from titopfmu.flex.beam import _W, _XI, _shape


def full_basis(red: ReducedModel, n_dofs: int) -> np.ndarray:
    """The reduction basis Phi (6N, n) of a reduced model whose ``node_shapes`` hold every node
    (reduced with ``child_nodes`` = all nodes but the root)."""
    Phi = np.zeros((n_dofs, red.n_modes))
    for j, shape in zip(red.node_ids, red.node_shapes, strict=True):
        Phi[6 * j : 6 * j + 6] = shape
    if len(red.node_ids) != n_dofs // 6:
        raise ValueError("full_basis: reduce with child_nodes = all nodes but the root")
    return Phi


def gauss_point_model(beam: Beam, Phi: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The beam's centroid line as point masses at its Gauss points (``beam``'s own 5-point
    rule): positions (P, 3) in R_a (m), masses (P,) (kg) and the mode basis (3P, n) (m per unit
    q), N(xi_g) Phi_e with N the beam's shape functions (docs/flexible.md eq. (1))."""
    if beam.shear_coefficient is not None or beam.rotary_inertia:
        raise ValueError("gauss_point_model: Euler-Bernoulli beam without rotary inertia only")
    l, rho_a = beam.element_length, beam.rho * beam.section.A
    pts, masses, rows = [], [], []
    for e in range(beam.n_elements):
        for xi, w in zip(_XI, _W, strict=True):
            N = _shape(xi, l)[0]
            pts.append([(e + xi) * l, 0.0, 0.0])
            masses.append(rho_a * w * l)
            rows.append(N @ Phi[6 * e : 6 * e + 12])
    return np.array(pts), np.array(masses), np.vstack(rows)


@dataclass
class FFRF:
    """An Exudyn system holding one free-floating ObjectFFRFreducedOrder (rotation-vector node,
    Lie-group explicit integration)."""

    mbs: exu.MainSystem
    sc: exu.SystemContainer
    rigid_node: int
    modal_node: int


def ffrf_model(
    beam: Beam,
    red: ReducedModel,
    hub_mass: float,
    hub_inertia: np.ndarray,
    twist0: np.ndarray,
    q0: np.ndarray,
    qd0: np.ndarray,
) -> FFRF:
    """The free-floating beam with a rigid hub at P in Exudyn: floating frame at P, initially
    aligned with the inertial frame, P at the origin; ``twist0`` = (v_P, omega) (m/s, rad/s,
    R_a = inertial at t = 0); elastic coordinates ``q0``, ``qd0`` (our reduction basis, so the
    same coordinates on both sides)."""
    fe = beam.fe_model()
    Phi = full_basis(red, fe.n_dofs)
    torsion = np.abs(Phi[3::6]).max() / np.abs(Phi).max()
    if torsion > 1e-9:
        raise ValueError(f"ffrf_model: the modes carry torsion ({torsion:.1e}), not comparable")
    pts, masses, Psi = gauss_point_model(beam, Phi)
    fem = FEM.FEMinterface()
    fem.nodes = {"Position": pts}
    fem.massMatrix = scipy.sparse.diags(np.repeat(masses, 3)).tocsr()
    fem.stiffnessMatrix = scipy.sparse.csr_matrix((Psi.shape[0], Psi.shape[0]))
    fem.modeBasis = {"matrix": Psi, "type": "NormalModes"}
    cms = FEM.ObjectFFRFreducedOrderInterface(
        fem, rigidBodyNodeType="NodeType.RotationRotationVector", roundMassMatrix=0.0,
        roundStiffnessMatrix=0.0)  # fmt: skip
    # the modal stiffness: ours (the same basis; Exudyn only projects the FE stiffness)
    cms.stiffnessMatrixReduced = np.array(red.Kee)
    # the rigid terms not on the centroid line: torsional inertia rho Ip L, and the hub
    m_beam = cms.totalMass
    cms.inertiaLocal = cms.inertiaLocal + np.asarray(hub_inertia) + np.diag(
        [red.inertia[0, 0] - cms.inertiaLocal[0, 0], 0.0, 0.0])  # fmt: skip
    cms.chiU = cms.chiU * m_beam / (m_beam + hub_mass)
    cms.chiUtilde = FEM.ComputeSkewMatrix(cms.chiU)
    cms.totalMass = m_beam + hub_mass
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    cms.AddObjectFFRFreducedOrder(mbs, initialVelocity=list(twist0[:3]),
                                  initialAngularVelocity=list(twist0[3:]))  # fmt: skip
    mbs.SetNodeParameter(cms.nGenericODE2, "initialCoordinates", list(map(float, q0)))
    mbs.SetNodeParameter(cms.nGenericODE2, "initialCoordinates_t", list(map(float, qd0)))
    mbs.Assemble()
    return FFRF(mbs, sc, cms.nRigidBody, cms.nGenericODE2)


def ffrf_solve(model: FFRF, t_end: float, tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Integrate from 0 to ``t_end`` (s) with Exudyn's DOPRI5 (absolute and relative tolerance
    ``tol``, Lie-group update of the rotation vector); the final (P's position (3, m), rotation
    matrix R_a -> inertial (3, 3), elastic coordinates (n))."""
    s = exu.SimulationSettings()
    ti = s.timeIntegration
    ti.endTime, ti.numberOfSteps, ti.automaticStepSize = t_end, 100, True
    ti.absoluteTolerance = ti.relativeTolerance = tol
    ti.minimumStepSize = 1e-12
    ti.explicit.useLieGroupIntegration = True
    ti.verboseMode = 0
    s.solution.file.write = False
    s.show.statistics = False
    model.mbs.SolveDynamic(s, solverType=exu.DynamicSolverType.DOPRI5)
    out = model.mbs.GetNodeOutput
    return (np.array(out(model.rigid_node, exu.OutputVariableType.Position)),
            np.array(out(model.rigid_node, exu.OutputVariableType.RotationMatrix)).reshape(3, 3),
            np.array(out(model.modal_node, exu.OutputVariableType.Coordinates)))  # fmt: skip


def spin_profile(t: float, omega_s: float = 6.0, T: float = 15.0) -> tuple[float, float, float]:
    """Kane, Ryan and Banerjee's spin-up: (theta (rad), Omega (rad/s), Omega_dot (rad/s^2)),
    Omega = (Ws / T) (t - T / (2 pi) sin(2 pi t / T)) for t < T, then Ws."""
    if t < T:
        c = 2.0 * np.pi / T
        theta = omega_s / T * (t**2 / 2.0 + (np.cos(c * t) - 1.0) / c**2)
        return (theta, omega_s / T * (t - np.sin(c * t) / c),
                omega_s / T * (1.0 - np.cos(c * t)))  # fmt: skip
    return omega_s * T / 2.0 + omega_s * (t - T), omega_s, 0.0


def ancf_spin_up(
    length: float,
    EA: float,
    EI: float,
    rho_a: float,
    n_elements: int,
    t_end: float,
    step: float,
    profile: Callable[[float], tuple[float, float, float]] = spin_profile,
) -> tuple[np.ndarray, np.ndarray]:
    """The beam (m, N, N m^2, kg/m) as ``n_elements`` planar ANCF cable elements, its root node
    clamped on a hub at the origin whose angle theta(t) is imposed (root position fixed, root
    slope = (cos theta, sin theta)), integrated by generalized-alpha (spectral radius 0.8,
    damping the axial modes near 760 rad/s) with a fixed ``step`` (s); Newton's absolute
    tolerance 1e-6 N (the default 1e-10 is below the roundoff of forces of the scale of EA and
    makes the adaptive step collapse). Returns the sample times (s) and the tip's
    deflection in the hub's rotating frame (its component normal to the hub's x axis, m)."""
    sc = exu.SystemContainer()
    mbs = sc.AddSystem()
    l = length / n_elements
    nodes = [mbs.AddNode(eii.NodePoint2DSlope1(referenceCoordinates=[k * l, 0.0, 1.0, 0.0]))
             for k in range(n_elements + 1)]  # fmt: skip
    for k in range(n_elements):
        mbs.AddObject(eii.ObjectANCFCable2D(
            nodeNumbers=[nodes[k], nodes[k + 1]], length=l, massPerLength=rho_a,
            bendingStiffness=EI, axialStiffness=EA))  # fmt: skip
    ground = mbs.AddNode(eii.NodePointGround(referenceCoordinates=[0.0, 0.0, 0.0]))
    m_ground = mbs.AddMarker(eii.MarkerNodeCoordinate(nodeNumber=ground, coordinate=0))

    def slope(k: int) -> Callable:
        def offset(mbs_, t, item, value):  # the root's slope: (cos, sin)(theta - theta(0))
            theta = profile(t)[0]
            return float(np.cos(theta) - 1.0) if k == 0 else float(np.sin(theta))

        return offset

    for c in range(4):
        m = mbs.AddMarker(eii.MarkerNodeCoordinate(nodeNumber=nodes[0], coordinate=c))
        kw = {"offsetUserFunction": slope(c - 2)} if c >= 2 else {}
        mbs.AddObject(eii.CoordinateConstraint(markerNumbers=[m_ground, m], **kw))
    sensor = mbs.AddSensor(eii.SensorNode(nodeNumber=nodes[-1], storeInternal=True,
                                          outputVariableType=exu.OutputVariableType.Position))
    mbs.Assemble()
    s = exu.SimulationSettings()
    ti = s.timeIntegration
    ti.endTime, ti.numberOfSteps = t_end, int(round(t_end / step))
    ti.generalizedAlpha.spectralRadius = 0.8
    ti.adaptiveStep = False
    ti.newton.absoluteTolerance = 1e-6  # N: the residual's scale is EA = 2.8e7 N
    ti.newton.relativeTolerance = 1e-10
    ti.verboseMode = 0
    s.solution.file.write = False
    s.solution.sensors.writePeriod = 0.02
    s.linearSolver.solverType = exu.LinearSolverType.EigenSparse
    s.show.statistics = False
    mbs.SolveDynamic(s)
    data = mbs.GetSensorStoredData(sensor)
    t, x, y = data[:, 0], data[:, 1], data[:, 2]
    theta = np.array([profile(tk)[0] for tk in t])
    return t, -np.sin(theta) * x + np.cos(theta) * y
