"""Scale-invariant parameter checks, and refusals that name the parameter (issue 33, point 6).

The core's checks (``titop_check_inertia``, ``titop_check_apparent_inertia``,
``titop_check_dynamic_model``, ``titop_check_axis``) judge a body relative to its own scale: its
inertia's largest entry, its mass and m |com|² (eq. 4's D_P, eq. 20's J). A body scaled in mass
and length passes or fails as the original does, in the Python blocks and in the FMUs (one check
in the core, the callers word the message); the only absolute limits are those of the
floating-point range, and a value beyond them is refused by its own name (mass, com, inertia),
not as a singular inertia. The scale test: the balloon (seed 004, section 4) scaled by 1e-6 and
by 1e6 in mass and length simulates with the dimensionless results of the original, in process
(to 1e-9), FMU by FMU (to rounding), and co-simulated by the master (to 1e-9: its loop solve is
relative to the scale of each loop equation).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from fmpy.fmi1 import FMICallException
from fmu_helpers import fmi_scalars, load

from titopfmu import Engine, InertiaWarning, ParameterError, System
from titopfmu.blocks import (
    FreeBody,
    PrismaticBody,
    PrismaticBodyInverse,
    RevoluteBody,
    RevoluteBodyInverse,
    RigidBody,
    SphericalBody,
    WeldedBody,
)
from titopfmu.core import _titop
from titopfmu.examples.balloon import (
    COLUMNS,
    COSIM_RECORD,
    BalloonParameters,
    balloon_columns_from_cosim,
    build_balloon,
)
from titopfmu.fmi.build import build_fmus

SCALES = [1e-150, 1e-18, 1e-6, 3.7e-3, 1.0, 1e6, 1e18, 1e150]
LENGTHS = ("x", "y", "z", "p")  # the balloon's columns in metres; the others are angles


# ----------------------------------------------------------------------------------------------
# the core's checks, scaled
# ----------------------------------------------------------------------------------------------


def _inertias():
    """Inertias of every verdict: definite, a rod (semi-definite), a point mass, a triangle
    violation (the paper's balloon), not semi-definite, not symmetric."""
    rng = np.random.default_rng(7)
    out = []
    for moments in ([1.0, 2.0, 2.5], [0.0, 1.0, 1.0], [0.0, 0.0, 0.0], [3.0, 5.0, 17.0],
                    [-1e-3, 1.0, 1.0]):  # fmt: skip
        q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        i = q @ np.diag(moments) @ q.T
        out.append(0.5 * (i + i.T))
    out.append(np.array([[1.0, 0.2, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    return out


@pytest.mark.parametrize("definite", [False, True])
def test_inertia_check_is_scale_invariant(definite):
    """Same verdict for s I as for I, whatever s (1e-150 to 1e150), principal moments s times
    the original's; a valid small body's inertia (1e-13 kg m², issue 33 row 11) is definite."""
    codes = set()
    for inertia in _inertias():
        ref = np.zeros(3)
        code = _titop.check_inertia(inertia.reshape(9), definite, ref)
        codes.add(code)
        for s in SCALES:
            got = np.zeros(3)
            assert _titop.check_inertia((s * inertia).reshape(9), definite, got) == code, s
            if code != _titop.CHECK_NOT_SYMMETRIC:
                np.testing.assert_allclose(got, s * ref, rtol=1e-13, atol=1e-15 * s)
    assert len(codes) >= 4
    small = np.zeros(3)
    assert _titop.check_inertia(np.diag([1e-13] * 3).reshape(9), True, small) == _titop.CHECK_OK


def _motion_subspaces():
    r = np.array([0.3, -0.4, 0.866])
    r /= np.linalg.norm(r)
    rev = np.zeros((6, 1))
    rev[3:, 0] = r
    pri = np.zeros((6, 1))
    pri[:3, 0] = r
    sph = np.zeros((6, 3))
    sph[3:, :] = np.eye(3)
    return {"revolute": rev, "prismatic": pri, "spherical": sph, "free": np.eye(6)}


def test_apparent_inertia_check_is_scale_invariant():
    """J = S^T D_P S (eq. 20) judged against the body's own inertia along each dof: the same
    verdict for a body scaled by M in mass and L in length (D_P's blocks by M, M L, M L²), for
    the joints of every kind; a point mass on the axis is singular at every scale, one just off
    it (1e-3 rad) is not."""
    r = np.array([0.3, -0.4, 0.866])
    r /= np.linalg.norm(r)
    bodies = [
        (2.0, np.diag([0.1, 0.2, 0.25]), [0.1, -0.5, 0.2]),
        (1.0, np.zeros((3, 3)), 1.5 * r),  # a point mass on the revolute axis
        (1.0, np.zeros((3, 3)), 1.5 * (r + np.array([1e-3, 0.0, 0.0]))),  # just off it
        (1.0, np.zeros((3, 3)), [0.0, 0.0, 0.0]),  # a point mass at the joint
        (3.0, np.diag([0.0, 1.0, 1.0]), [0.0, 0.0, 0.0]),  # a thin rod along x
    ]
    verdicts = set()
    for name, S in _motion_subspaces().items():
        k = S.shape[1]
        for mass, inertia, com in bodies:
            D = np.zeros(36)
            assert _titop.check_dynamic_model(mass, inertia.reshape(9), np.asarray(com, float),
                                              D) == _titop.CHECK_OK  # fmt: skip
            J = np.zeros(k * k)
            code = _titop.check_apparent_inertia(S.reshape(6 * k), D, k, J)
            verdicts.add((name, code))
            for M, L in [(1e-6, 1e-6), (1e6, 1e6), (1e-30, 1e10), (1e20, 1e-9), (7.0, 0.3)]:
                Ds = np.zeros(36)
                _titop.check_dynamic_model(M * mass, (M * L * L * inertia).reshape(9),
                                           L * np.asarray(com, float), Ds)  # fmt: skip
                # S is dimensionless (unit axes): the same at every scale
                assert _titop.check_apparent_inertia(S.reshape(6 * k), Ds, k, J) == code, (
                    name, mass, com, M, L)  # fmt: skip
    assert ("revolute", _titop.CHECK_SINGULAR) in verdicts
    assert ("revolute", _titop.CHECK_OK) in verdicts
    assert ("spherical", _titop.CHECK_SINGULAR) in verdicts  # the point masses
    assert ("free", _titop.CHECK_OK) in verdicts


def test_axis_and_rotation_checks_have_no_overflow():
    """A joint axis is a direction: normalised without overflow or underflow (1e200 and 1e-200
    give the same unit vector as 1); only zero and non-finite axes are refused. A matrix with a
    non-finite or overflowing entry is no rotation (error +inf)."""
    unit = np.zeros(3)
    for s in (1e-300, 1e-200, 1.0, 1e200, 1e300):
        assert _titop.check_axis(np.array([s, 0.0, 0.0]), unit) == _titop.CHECK_OK
        np.testing.assert_array_equal(unit, [1.0, 0.0, 0.0])
        assert _titop.check_axis(np.array([0.0, 3.0 * s, -4.0 * s]), unit) == _titop.CHECK_OK
        np.testing.assert_allclose(unit, [0.0, 0.6, -0.8], rtol=1e-15)
    for bad in ([0.0, 0.0, 0.0], [math.nan, 1.0, 0.0], [math.inf, 0.0, 0.0]):
        assert _titop.check_axis(np.array(bad), unit) == _titop.CHECK_AXIS
    for bad in (np.eye(3) * 1e200, np.diag([1.0, 1.0, math.nan]), np.diag([1.0, math.inf, 1.0])):
        assert _titop.rotation_error(np.ascontiguousarray(bad).reshape(9)) == math.inf
    assert _titop.rotation_error(np.eye(3).reshape(9)) == 0.0


# ----------------------------------------------------------------------------------------------
# the blocks: small bodies accepted, huge values refused by name (issue 33 rows 11 and 12)
# ----------------------------------------------------------------------------------------------


def test_a_small_body_is_accepted_and_simulates():
    """1e-6 kg, 1e-13 kg m² (issue 33 row 11): accepted as a root, and so is a root whose
    rotational inertia is tiny beside its mass (1 kg, 1e-15 kg m²): the solver's pivots are
    judged each in its own unit too (kg, kg m²), so the check and the solver agree."""
    RigidBody("small", 1e-6, np.diag([1e-13] * 3))
    for mass, scale in ((1e-6, 1e-13), (1.0, 1e-15)):
        body = RigidBody("b", mass, scale * np.diag([1.0, 2.0, 2.5]), gravity=[0.0, -9.81, 0.0],
                         twist=[0.0, 0.0, 0.0, 0.3, 0.2, 0.1])  # fmt: skip
        s = System()
        s.add(body)
        res = Engine(s).simulate(0.5, output_interval=0.1, record={"w": "b.twist[4]"})
        assert np.all(np.isfinite(res["w"])) and res["w"][0] == 0.3


JOINT_BODIES = [RevoluteBody, RevoluteBodyInverse, PrismaticBody, PrismaticBodyInverse,
                SphericalBody, FreeBody, WeldedBody]  # fmt: skip

# (parameters, the parameter refused or None) on a body of mass 1, inertia 0.1 (the FMUs' start)
HUGE = [
    ({"mass": 1e155}, None),  # issue 33 row 12: a heavy body, accepted
    ({"mass": 1e301}, "mass"),
    ({"mass": 1e-310}, "mass"),
    ({"com": [0.0, 1e155, 0.0]}, "com"),  # issue 33 row 12
    ({"mass": 1e200, "com": [0.0, 1e60, 0.0]}, "mass"),  # m |com|^2 overflows: the larger
    ({"mass": 100.0, "com": [1e150, 0.0, 0.0]}, "com"),
    ({"inertia": np.eye(3) * 1e301}, "inertia"),
    ({"mass": 1e-200, "inertia": np.eye(3) * 1e-200, "com": [1e-100, 0.0, 0.0]}, None),
]


def _make(cls, values):
    kw = {"mass": 1.0, "inertia": 0.1 * np.eye(3), **values}
    return cls("b", kw.pop("mass"), kw.pop("inertia"), **kw)


@pytest.mark.parametrize("cls", JOINT_BODIES + [RigidBody])
@pytest.mark.parametrize("values, refused", HUGE, ids=[str(i) for i in range(len(HUGE))])
def test_values_out_of_range_are_refused_by_their_own_name(cls, values, refused):
    """A value beyond the floating-point range of the equations is refused naming that
    parameter (before: 'inertia', the apparent inertia having overflowed); values within it are
    accepted however large or small."""
    if refused is None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow in numpy either
            _make(cls, values)
        return
    with pytest.raises(ParameterError) as info:
        _make(cls, values)
    assert info.value.parameter == refused, str(info.value)
    assert "range" in str(info.value)


@pytest.mark.parametrize("cls", [RevoluteBody, RevoluteBodyInverse, PrismaticBody])
def test_a_long_axis_is_a_direction(cls):
    """Axis (1e200, 0, 0) (issue 33 row 12) is the x axis: the same block as with (1, 0, 0)."""
    a = cls("j", 1.0, 0.1 * np.eye(3), com=[0.0, 0.5, 0.0], axis=[1e200, 0.0, 0.0])
    b = cls("j", 1.0, 0.1 * np.eye(3), com=[0.0, 0.5, 0.0], axis=[1.0, 0.0, 0.0])
    np.testing.assert_array_equal(a.axis, b.axis)
    np.testing.assert_array_equal(a.joint.S, b.joint.S)


def test_the_triangle_warning_prints_a_small_body_s_moments():
    """Moments to 6 significant digits, not 6 decimals: a small body's read as themselves."""
    with pytest.warns(InertiaWarning, match=r"\[3e-18, 5e-18, 1\.7e-17\]"):
        RigidBody("tiny", 1e-5, np.array(BalloonParameters().J_balloon) * 1e-18)
    with pytest.warns(InertiaWarning, match=r"\[3\.0, 5\.0, 17\.0\]"):
        RigidBody("paper", 10.0, BalloonParameters().J_balloon)


# ----------------------------------------------------------------------------------------------
# the FMUs: the same verdicts, the same words
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    out = tmp_path_factory.mktemp("fmus_scale")
    paths = build_fmus(out, types=["rigid_body", "revolute_body", "prismatic_body",
                                   "joint_spring_damper"], max_children=1)  # fmt: skip
    return out, {p.stem: p for p in paths}


#: every instance's callbacks, alive to the end: fmpy's logger proxy keeps the last logger
#: installed in a global and calls it for later instances too (a freed one would crash)
_KEEP: list = []


class Log:
    def __init__(self):
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def __call__(self, env, instance, status, category, message):
        if int(status) >= 3:
            self.errors.append(message.decode())
        elif int(status) == 1:
            self.warnings.append(message.decode())


def _start(loaded, values: dict, t_final: float | None = None):
    """Instantiate, set ``values`` (FMU names), initialize: None, or the error message."""
    log = Log()
    fmu = loaded.instantiate("b", logger=log)
    _KEEP.append(fmu._titop_keep)
    vr = loaded.vr
    try:
        for name, x in values.items():
            fmu.setReal([vr[name]], [x])
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        if t_final:
            fmu.doStep(0.0, t_final)
        return None
    except FMICallException:
        assert log.errors
        return log.errors[-1]
    finally:
        fmu.freeInstance()


@pytest.mark.parametrize("model", ["TitopRevoluteBodyC0", "TitopPrismaticBodyC1",
                                   "TitopRigidBodyC0"])  # fmt: skip
@pytest.mark.parametrize("values, refused", HUGE, ids=[str(i) for i in range(len(HUGE))])
def test_fmus_refuse_the_same_values_in_the_same_words(fmus, model, values, refused):
    """The FMUs (RevoluteBodyC0 of issue 33 row 12 among them) accept what the blocks accept
    and refuse the rest naming the same parameter, with the blocks' message word for word."""
    _, paths = fmus
    loaded = load(paths[model])
    msg = _start(loaded, fmi_scalars(values), t_final=0.01)
    cls = {"TitopRevoluteBodyC0": RevoluteBody, "TitopPrismaticBodyC1": PrismaticBody,
           "TitopRigidBodyC0": RigidBody}[model]  # fmt: skip
    if refused is None:
        assert msg is None
        return
    assert msg is not None and f"parameter '{refused}'" in msg, msg
    with pytest.raises(ParameterError) as info:
        _make(cls, values)
    python = str(info.value)
    assert msg[msg.index("parameter '") :] == python[python.index("parameter '") :]


def test_fmus_accept_a_small_body_and_a_long_axis(fmus):
    _, paths = fmus
    rigid = load(paths["TitopRigidBodyC0"])
    assert _start(rigid, fmi_scalars({"mass": 1e-6, "inertia": np.diag([1e-13] * 3)}), 0.1) is None
    assert _start(rigid, fmi_scalars({"mass": 1.0, "inertia": np.diag([1e-15] * 3)}), 0.1) is None
    revolute = load(paths["TitopRevoluteBodyC0"])
    values = {"mass": 1.0, "com": [0.0, 0.5, 0.0], "axis": [1e200, 0.0, 0.0]}
    assert _start(revolute, fmi_scalars(values), 0.1) is None
    msg = _start(revolute, fmi_scalars({"axis": [0.0, 0.0, 0.0]}))
    assert msg is not None and "zero joint axis" in msg


@pytest.mark.parametrize(
    "scale, printed", [(1e-18, "[3e-18, 5e-18, 1.7e-17]"), (1e7, "[30000000.0, 50000000.0, "
                                                                 "170000000.0]")]
)  # fmt: skip
def test_fmus_print_the_moments_as_the_blocks_do(fmus, scale, printed):
    """The triangle warning of the balloon's inertia scaled by 1e-18 and 1e7: the blocks'
    words, digit for digit."""
    _, paths = fmus
    loaded = load(paths["TitopRigidBodyC0"])
    inertia = np.array(BalloonParameters().J_balloon) * scale
    log = Log()
    fmu = loaded.instantiate("tiny", logger=log)
    _KEEP.append(fmu._titop_keep)
    try:
        for name, x in fmi_scalars({"mass": 1e-5, "inertia": inertia}).items():
            fmu.setReal([loaded.vr[name]], [x])
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
    finally:
        fmu.freeInstance()
    with pytest.warns(InertiaWarning) as record:
        RigidBody("tiny", 1e-5, inertia)
    python = str(record[0].message)
    (fmu_text,) = [w for w in log.warnings if "triangle" in w]
    assert printed in fmu_text
    assert fmu_text[fmu_text.index("parameter '") :] == python[python.index("parameter '") :]


def _factor(unit: str | None, M: float, L: float) -> float:
    """How a variable of ``unit`` scales with mass M and length L (time unscaled)."""
    table = {"kg": M, "m": L, "kg.m2": M * L * L, "N": M * L, "N.m": M * L * L, "m/s": L,
             "m/s2": L}  # fmt: skip
    if not unit or unit.startswith("rad") or unit == "s":
        return 1.0
    return table[unit]


def _run_scaled(loaded, M: float, L: float, steps: int = 200):
    """A block FMU with its parameters and inputs scaled by (M, L): its outputs over ``steps``
    steps of 1 ms, and the Jacobian of its outputs in its inputs at the start (its directional
    derivatives, which the master's loop solve uses), each divided by its scale."""
    md = loaded.md
    rng = np.random.default_rng(11)
    fmu = loaded.instantiate("s", logger=Log())
    _KEEP.append(fmu._titop_keep)
    try:
        byname = {v.name: v for v in md.modelVariables}
        pars = {
            v.name: float(v.start)
            for v in md.modelVariables
            if v.causality == "parameter" and v.type == "Real" and v.start is not None
        }
        for n in ("com[1]", "com[2]", "C1.point[2]", "ext.point[1]"):
            if n in pars:
                pars[n] = rng.uniform(0.2, 0.8)
        pars["solver.max_step"] = 1e-3
        for n, x in pars.items():
            fmu.setReal([byname[n].valueReference], [x * _factor(byname[n].unit, M, L)])
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        ins = [v for v in md.modelVariables if v.causality == "input" and v.type == "Real"]
        outs = [v for v in md.modelVariables if v.causality == "output"]
        u = rng.normal(size=len(ins))
        fmu.setReal([v.valueReference for v in ins],
                    [x * _factor(v.unit, M, L) for x, v in zip(u, ins, strict=True)])  # fmt: skip
        jac = np.zeros((len(outs), len(ins)))
        refs = [v.valueReference for v in outs]
        for j, v in enumerate(ins):
            col = fmu.getDirectionalDerivative(refs, [v.valueReference], [1.0])
            jac[:, j] = [c * _factor(v.unit, M, L) / _factor(o.unit, M, L)
                         for c, o in zip(col, outs, strict=True)]  # fmt: skip
        rows = []
        for k in range(steps):
            fmu.doStep(k * 1e-3, 1e-3)
            y = fmu.getReal([v.valueReference for v in outs])
            rows.append([x / _factor(v.unit, M, L) for x, v in zip(y, outs, strict=True)])
        fmu.terminate()
    finally:
        fmu.freeInstance()
    return np.array(rows), jac


@pytest.mark.parametrize("model", ["TitopRigidBodyC1", "TitopRevoluteBodyC1",
                                   "TitopRevoluteBodyC0", "TitopPrismaticBodyC1"])  # fmt: skip
def test_block_fmus_are_scale_invariant(fmus, model):
    """Each body FMU of the balloon, its parameters and inputs scaled by 1e-6 and by 1e6 in mass
    and length: its outputs over 0.2 s and its directional derivatives are the original's,
    scaled, to rounding (1e-13)."""
    _, paths = fmus
    loaded = load(paths[model])
    ref, ref_jac = _run_scaled(loaded, 1.0, 1.0)
    for s in (1e-6, 1e6):
        got, jac = _run_scaled(loaded, s, s)
        assert np.max(np.abs(got - ref)) <= 1e-13 * np.max(np.abs(ref)), s
        assert np.max(np.abs(jac - ref_jac)) <= 1e-13 * np.max(np.abs(ref_jac)), s


# ----------------------------------------------------------------------------------------------
# the scale test: the balloon scaled by 1e-6 and 1e6 in mass and length
# ----------------------------------------------------------------------------------------------


def scaled_balloon(M: float, L: float) -> BalloonParameters:
    """The balloon's parameters in a system of units where the kilogram is M and the metre L
    (time unchanged): masses by M, lengths by L, inertias and the pendulums' dampers (N m s/rad)
    by M L², the slider's spring and damper (N/m, N s/m) by M, gravity by L."""
    p = BalloonParameters()

    def v(x, s):
        return tuple(float(c) * s for c in x)

    return BalloonParameters(
        m_balloon=p.m_balloon * M, J_balloon=tuple(v(row, M * L * L) for row in p.J_balloon),
        CB=v(p.CB, L), gravity=v(p.gravity, L), m_slider=p.m_slider * M, t_axis=p.t_axis,
        k=p.k * M, d_s=p.d_s * M, m_p1=p.m_p1 * M, SP1=v(p.SP1, L), d_p1=p.d_p1 * M * L * L,
        m_p2=p.m_p2 * M, P1P2=v(p.P1P2, L), d_p2=p.d_p2 * M * L * L,
    )  # fmt: skip


def dimensionless(columns, L: float) -> dict[str, np.ndarray]:
    return {k: np.asarray(columns[k]) / (L if k in LENGTHS else 1.0) for k in COLUMNS}


def test_the_scaled_balloon_simulates_in_process_as_the_original():
    """The balloon scaled by 1e-6 and by 1e6 in mass and length: accepted (its inertia of
    1e-18 kg m² too), and its 20 s of motion, divided by the length scale, equal the
    original's to 1e-9. The integrator's error control is relative only (atol negligible at
    every scale): a scalar absolute tolerance would weigh the states differently at each
    scale."""
    results = {}
    for s in (1.0, 1e-6, 1e6):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InertiaWarning)  # the paper's triangle violation
            system = build_balloon(scaled_balloon(s, s))
        res = Engine(system).simulate(20.0, output_interval=0.05, record=COLUMNS, rtol=1e-10,
                                      atol=1e-30)  # fmt: skip
        results[s] = dimensionless(res, s)
    for s in (1e-6, 1e6):
        for k in COLUMNS:
            err = float(np.max(np.abs(results[s][k] - results[1.0][k])))
            assert err <= 1e-9, (s, k, err)
    assert np.ptp(results[1.0]["theta1"]) > 1.0  # the pendulums did swing


def test_the_scaled_balloon_co_simulates_as_the_original(fmus):
    """The balloon's block FMUs scaled by 1e-6 and by 1e6 in mass and length, co-simulated by
    the master (1 s, steps of 1 ms, RK4 inside, the default loop tolerance 1e-8): the
    dimensionless results equal the original's to 1e-9 (to rounding in fact, about 5e-15). Every
    test of the loop solve is relative to the scale of its loop equation (a group of three of one
    unit at one port, judged against the largest of its unit in the model, and the terms the
    Jacobians make it of: titopfmu/master/loop.py ``scales``, the same in ``_step.c``): the
    solve takes the same decisions (iterations, Jacobians measured) at every scale."""
    from titopfmu.master import CoSimulation

    folder, _ = fmus
    results, iterations = {}, {}
    for s in (1.0, 1e-6, 1e6):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InertiaWarning)
            system = build_balloon(scaled_balloon(s, s))
            cs = CoSimulation.from_system(system, folder, solver={"solver.method": 4})
            res = cs.simulate(1.0, 1e-3, record=COSIM_RECORD, output_interval=0.05)
        assert cs.stats.compiled_steps == 1000  # the compiled step ran the loop
        results[s] = dimensionless(balloon_columns_from_cosim(res), s)
        iterations[s] = sum(res.iterations)
    for s in (1e-6, 1e6):
        for k in COLUMNS:
            err = float(np.max(np.abs(results[s][k] - results[1.0][k])))
            assert err <= 1e-9, (s, k, err)
        assert abs(iterations[s] - iterations[1.0]) <= 0.02 * iterations[1.0], iterations
    assert np.ptp(results[1.0]["theta1"]) > 1.0  # the pendulums did swing


def test_the_scaled_balloon_as_a_model_fmu_runs_as_the_original(tmp_path):
    """The same scale test with the balloon as one model FMU (titopfmu.export_fmu), run by fmpy
    in co-simulation with its internal DOP853 at rtol 1e-10 (atol negligible): the FMU's own
    checks accept the scaled bodies, and the dimensionless results equal the original's to
    1e-9, as the block FMUs co-simulated through the master do (the test above)."""
    from fmpy import simulate_fmu

    from titopfmu import export_fmu

    results = {}
    for s in (1.0, 1e-6, 1e6):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InertiaWarning)
            system = build_balloon(scaled_balloon(s, s))
        fmu = export_fmu(system, tmp_path / f"balloon_{s:g}.fmu", outputs=COLUMNS, win64=False)
        r = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=20.0,
                         output_interval=0.05, output=list(COLUMNS),
                         start_values={"solver.rtol": 1e-10, "solver.atol": 1e-30})  # fmt: skip
        results[s] = dimensionless({k: r[k] for k in COLUMNS}, s)
    for s in (1e-6, 1e6):
        for k in COLUMNS:
            err = float(np.max(np.abs(results[s][k] - results[1.0][k])))
            assert err <= 1e-9, (s, k, err)
    assert np.ptp(results[1.0]["theta1"]) > 1.0
