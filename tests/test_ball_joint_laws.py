"""Ball joint damping (issue 32): a SphericalBody's ``damping`` d, the effort -d ω on its 3 dof
(ω the relative angular velocity in the child's frame), evaluated by the core
(titop_body.damping), as MuJoCo's ball joint damping (-damping qvel, engine_passive.c; checked
here on MuJoCo's own qfrc_damper). Tests: a damped isotropic body on a ball joint without
gravity against the closed form ω(t) = ω0 exp(-d t / J); an MJCF arm with a damped ball joint
against MuJoCo's mj_forward accelerations at random states; the complex-step Jacobian against
central differences; bad values refused by name (block, core, FMU).

Ball joint stiffness k: the effort -k θ, θ the rotation vector of spring_ref^-1 q in the child's
frame (titop_body.stiffness, spring_ref), as MuJoCo's mj_springdamper (qfrc_spring, checked
here); tests: the harmonic rotation of an isotropic body about a fixed axis at sqrt(k / J), an
MJCF arm with sprung and damped ball joints against MuJoCo, the complex-step Jacobian, bad
values refused by name."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import titopfmu
from titopfmu import Constant, Engine, Ground, ParameterError, SphericalBody, System
from titopfmu.mjcf import MjcfWarning

mujoco = pytest.importorskip("mujoco")

from mujoco_reference import MuJoCoOf  # noqa: E402

J, D = 0.3, 0.45


def damped_ball(damping: float = D, gravity=(0.0, 0.0, 0.0), com=(0.0, 0.0, 0.0)) -> System:
    s = System("ball")
    s.add(Ground("ground", children={"O": (0.0, 0.0, 0.0)}),
          SphericalBody("ball", 2.0, np.eye(3) * J, com=com, gravity=gravity, damping=damping,
                        omega0=(1.5, -0.7, 2.0)),
          Constant("tau", np.zeros(3)))  # fmt: skip
    s.connect("ground.O", "ball.P")
    s.connect("tau.y", "ball.joint.tau")
    return s


def test_a_damped_isotropic_ball_decays_as_the_closed_form():
    engine = Engine(damped_ball())
    sl = engine.plan.state_slices["ball"]
    x0 = engine.initial_state()
    w0 = x0[sl][4:7].copy()
    np.testing.assert_allclose(w0, [1.5, -0.7, 2.0])
    # the derivative: dω/dt = -d ω / J (no gyroscopic torque on an isotropic body)
    rng = np.random.default_rng(1)
    for _ in range(5):
        x = x0.copy()
        q = rng.normal(size=4)
        x[sl] = np.concatenate([q / np.linalg.norm(q), rng.uniform(-3, 3, 3)])
        dx = engine.derivative(0.0, x)
        np.testing.assert_allclose(dx[sl][4:7], -D / J * x[sl][4:7], rtol=1e-14, atol=1e-15)
    sol = solve_ivp(engine.derivative, (0.0, 3.0), x0, method="DOP853", rtol=1e-12,
                    atol=1e-14, t_eval=np.linspace(0.0, 3.0, 31))  # fmt: skip
    exact = w0[:, None] * np.exp(-D * sol.t / J)[None, :]
    err = np.max(np.abs(sol.y[sl][4:7] - exact))
    print(f"damped ball: |ω - ω0 exp(-d t / J)| {err:.2g} rad/s over 3 s")
    assert err < 1e-8


def test_zero_damping_is_the_undamped_body():
    x = Engine(damped_ball(0.0)).initial_state()
    a = Engine(damped_ball(0.0, gravity=(0, 0, -9.81), com=(0.1, 0.2, -0.3))).derivative(0.0, x)
    b = Engine(damped_ball(0.0, gravity=(0, 0, -9.81), com=(0.1, 0.2, -0.3))).derivative(0.0, x)
    np.testing.assert_array_equal(a, b)


ARM = """<mujoco model="ballarm">
  <compiler angle="radian"/>
  <option gravity="0.2 -0.1 -9.81"/>
  <default><joint damping="0.35"/></default>
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="shoulder" type="ball"/>
      <inertial pos="0.1 0.02 -0.2" mass="1.5" diaginertia="0.04 0.05 0.02"/>
      <body name="fore" pos="0.05 0 -0.4">
        <joint name="elbow" axis="0 1 0" damping="0.1"/>
        <inertial pos="0 0.01 -0.15" mass="0.8" diaginertia="0.01 0.012 0.004"/>
        <body name="hand" pos="0 0 -0.3" quat="0.9 0.1 0.3 0.2">
          <joint name="wrist" type="ball" damping="0.8"/>
          <inertial pos="0.02 0.03 -0.05" quat="0.8 0.2 0.1 0.4" mass="0.4"
                    diaginertia="0.003 0.002 0.001"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def imported(tmp_path, text: str):
    path = tmp_path / "arm.xml"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MjcfWarning)  # nothing left out
        return path, titopfmu.import_mjcf(path)


def test_mjcf_ball_joint_damping_matches_mujoco(tmp_path):
    path, system = imported(tmp_path, ARM)
    assert system.blocks["upper"].damping == 0.35
    assert system.blocks["hand"].damping == 0.8
    ref = MuJoCoOf(path, system)
    rng = np.random.default_rng(7)
    # MuJoCo's ball joint damping is -damping qvel on each of its dof
    ref.d.qpos[:], ref.d.qvel[:] = ref.qpos_qvel(ref.random_state(rng))
    mujoco.mj_forward(ref.m, ref.d)
    np.testing.assert_allclose(ref.d.qfrc_damper, -ref.m.dof_damping * ref.d.qvel, rtol=1e-15)
    assert list(ref.m.dof_damping) == [0.35] * 3 + [0.1] + [0.8] * 3
    worst = ref.worst_error(rng, n=20)
    print(f"damped ball joints: relative acceleration error {worst:.2g} (MuJoCo)")
    assert worst < 1e-10
    # without the wrist's damping the accelerations differ (the comparison sees it)
    system.blocks["hand"].damping = 0.0
    ref2 = MuJoCoOf(path, system)
    assert ref2.worst_error(np.random.default_rng(7), n=5) > 1e-3


def test_stiffness_on_the_free_flying_root_is_imported(tmp_path):
    text = ARM.replace('<joint name="shoulder" type="ball"/>',
                       '<joint name="root" type="free" stiffness="2"/>')
    path = tmp_path / "arm.xml"
    path.write_text(text)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        system = titopfmu.import_mjcf(path)
    got = [(u.what, u.line) for w in record for u in getattr(w.message, "unimported", [])]
    assert got == [], got  # the root's: tests/test_free_joint_laws.py
    assert (system.blocks["upper"].stiffness, system.blocks["upper"].damping) == (2.0, 0.35)
    assert system.blocks["hand"].damping == 0.8


def test_complex_step_jacobian_matches_central_differences(tmp_path):
    _, system = imported(tmp_path, ARM)
    engine = Engine(system)
    ref = MuJoCoOf(tmp_path / "arm.xml", system)
    x = ref.random_state(np.random.default_rng(3))
    Jc = engine.jacobian(0.0, x)
    h = 1e-6
    Jd = np.zeros_like(Jc)
    for k in range(len(x)):
        e = np.zeros_like(x)
        e[k] = h
        Jd[:, k] = (engine.derivative(0.0, x + e) - engine.derivative(0.0, x - e)) / (2 * h)
    err = np.max(np.abs(Jc - Jd)) / max(1.0, np.max(np.abs(Jc)))
    print(f"complex-step Jacobian vs central differences: {err:.2g}")
    assert err < 1e-7
    # the damping's own part: d(dω)/dω of the isotropic ball is -d / J exactly
    e1 = Engine(damped_ball())
    sl = e1.plan.state_slices["ball"]
    Jb = e1.jacobian(0.0, e1.initial_state())
    np.testing.assert_allclose(Jb[sl.start + 4 : sl.start + 7, sl.start + 4 : sl.start + 7],
                               -D / J * np.eye(3), rtol=1e-14, atol=1e-15)  # fmt: skip


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf")])
def test_bad_damping_is_refused_by_name(bad):
    with pytest.raises(ParameterError, match=r"block 'b'.*'damping'"):
        SphericalBody("b", 1.0, np.eye(3), damping=bad)
    s = damped_ball()
    s.blocks["ball"].damping = bad  # past the block's check: the core's own check refuses it
    with pytest.raises(RuntimeError, match=r"damping must be >= 0 and finite"):
        Engine(s).derivative(0.0, Engine(damped_ball()).initial_state())


def test_block_fmus_refuse_a_damped_ball_joint_by_name():
    from titopfmu.fmi.model import plan_model
    from titopfmu.master.from_system import FromSystemError, system_mapping

    plan_model(damped_ball())  # a model FMU parameter (the model FMU test below)
    with pytest.raises(FromSystemError, match=r"block 'ball'.*joint damping.*block FMU"):
        system_mapping(damped_ball())


# -- ball joint stiffness -------------------------------------------------------------------

K = 2.7


def qmul(a, b):
    return np.array([a[0] * b[0] - a[1:] @ b[1:],
                     *(a[0] * b[1:] + b[0] * a[1:] + np.cross(a[1:], b[1:]))])  # fmt: skip


def sprung_ball(stiffness: float = K, spring_ref=(1.0, 0.0, 0.0, 0.0), quaternion0=None,
                damping: float = 0.0) -> System:  # fmt: skip
    s = System("ball")
    s.add(Ground("ground", children={"O": (0.0, 0.0, 0.0)}),
          SphericalBody("ball", 2.0, np.eye(3) * J, stiffness=stiffness, spring_ref=spring_ref,
                        quaternion0=quaternion0, damping=damping),
          Constant("tau", np.zeros(3)))  # fmt: skip
    s.connect("ground.O", "ball.P")
    s.connect("tau.y", "ball.joint.tau")
    return s


def rotvec(qref, q):
    """The rotation vector of qref^-1 q (MuJoCo's mju_subQuat), plainly."""
    d = qmul(qref * [1, -1, -1, -1], q)
    d = -d if d[0] < 0 else d
    s = np.linalg.norm(d[1:])
    return 2.0 * np.arctan2(s, d[0]) / s * d[1:] if s > 0 else 2.0 * d[1:]


@pytest.mark.parametrize("ref", [(1.0, 0.0, 0.0, 0.0), (0.8, 0.2, -0.5, 0.26)])
def test_a_sprung_isotropic_ball_oscillates_at_sqrt_k_over_j(ref):
    ref = np.asarray(ref) / np.linalg.norm(ref)
    n = np.array([0.3, -0.8, 0.52])
    n /= np.linalg.norm(n)
    a = 0.9  # rad: the rotation stays about n (child's frame), theta'' = -k/J theta exactly
    q0 = qmul(ref, np.r_[np.cos(a / 2), np.sin(a / 2) * n])
    engine = Engine(sprung_ball(spring_ref=ref, quaternion0=q0))
    sl = engine.plan.state_slices["ball"]
    x0 = engine.initial_state()
    np.testing.assert_allclose(x0[sl][:4], q0, rtol=1e-15, atol=1e-15)
    rng = np.random.default_rng(2)  # the derivative: dω/dt = -k θ / J at rest
    for _ in range(5):
        x = x0.copy()
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        x[sl] = np.r_[q, 0.0, 0.0, 0.0]
        dx = engine.derivative(0.0, x)
        np.testing.assert_allclose(dx[sl][4:7], -K / J * rotvec(ref, q), rtol=1e-13, atol=1e-14)
    w = np.sqrt(K / J)
    t = np.linspace(0.0, 2 * 2 * np.pi / w, 41)
    sol = solve_ivp(engine.derivative, (0.0, t[-1]), x0, method="DOP853", rtol=1e-12,
                    atol=1e-14, t_eval=t)  # fmt: skip
    th = a * np.cos(w * t)
    exact = np.array([qmul(ref, np.r_[np.cos(v / 2), np.sin(v / 2) * n]) for v in th]).T
    err = np.max(np.abs(sol.y[sl][:4] - exact))
    errw = np.max(np.abs(sol.y[sl][4:7] - n[:, None] * (-a * w * np.sin(w * t))[None, :]))
    print(f"sprung ball: |q - q_exact| {err:.2g}, |ω - ω_exact| {errw:.2g} over 2 periods")
    assert err < 1e-8 and errw < 1e-8


SPRUNG = ARM.replace('<joint name="shoulder" type="ball"/>',
                     '<joint name="shoulder" type="ball" stiffness="3.5" springref="0.4"/>'
                     ).replace('type="ball" damping="0.8"',  # fmt: skip
                               'type="ball" damping="0.8" stiffness="1.2"')


def test_mjcf_ball_joint_stiffness_matches_mujoco(tmp_path):
    path, system = imported(tmp_path, SPRUNG)
    assert system.blocks["upper"].stiffness == 3.5
    assert system.blocks["hand"].stiffness == 1.2
    np.testing.assert_array_equal(system.blocks["hand"].spring_ref, [1, 0, 0, 0])
    ref = MuJoCoOf(path, system)
    assert list(ref.m.qpos_spring) == [1, 0, 0, 0, 0, 1, 0, 0, 0]  # springref not read
    rng = np.random.default_rng(11)
    for _ in range(5):  # MuJoCo's qfrc_spring is -k θ(qpos_spring^-1 qpos) on each ball
        ref.d.qpos[:], ref.d.qvel[:] = ref.qpos_qvel(ref.random_state(rng))
        mujoco.mj_forward(ref.m, ref.d)
        for adr, k in ((0, 3.5), (5, 1.2)):
            dof = 0 if adr == 0 else 4
            np.testing.assert_allclose(ref.d.qfrc_spring[dof : dof + 3],
                                       -k * rotvec(ref.m.qpos_spring[adr : adr + 4],
                                                   ref.d.qpos[adr : adr + 4]),
                                       rtol=1e-12, atol=1e-14)  # fmt: skip
    worst = ref.worst_error(rng, n=20)
    print(f"sprung, damped ball joints: relative acceleration error {worst:.2g} (MuJoCo)")
    assert worst < 1e-10
    system.blocks["upper"].stiffness = 0.0  # without the shoulder's spring: they differ
    assert MuJoCoOf(path, system).worst_error(np.random.default_rng(11), n=5) > 1e-3


def test_sprung_complex_step_jacobian_matches_central_differences(tmp_path):
    _, system = imported(tmp_path, SPRUNG)
    engine = Engine(system)
    ref = MuJoCoOf(tmp_path / "arm.xml", system)
    rng = np.random.default_rng(5)
    for x in (ref.random_state(rng), engine.initial_state()):  # the latter: at the reference
        Jc = engine.jacobian(0.0, x)
        h = 1e-6
        Jd = np.zeros_like(Jc)
        for k in range(len(x)):
            e = np.zeros_like(x)
            e[k] = h
            Jd[:, k] = (engine.derivative(0.0, x + e) - engine.derivative(0.0, x - e)) / (2 * h)
        err = np.max(np.abs(Jc - Jd)) / max(1.0, np.max(np.abs(Jc)))
        print(f"sprung: complex-step Jacobian vs central differences: {err:.2g}")
        assert err < 1e-7
    # the spring's own part at the reference: d(dω)/dq_xyz of the isotropic ball is -2 k / J
    e1 = Engine(sprung_ball())
    sl = e1.plan.state_slices["ball"]
    Jb = e1.jacobian(0.0, e1.initial_state())
    np.testing.assert_allclose(Jb[sl.start + 4 : sl.start + 7, sl.start + 1 : sl.start + 4],
                               -2 * K / J * np.eye(3), rtol=1e-14, atol=1e-15)  # fmt: skip


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf")])
def test_bad_stiffness_is_refused_by_name(bad):
    with pytest.raises(ParameterError, match=r"block 'b'.*'stiffness'"):
        SphericalBody("b", 1.0, np.eye(3), stiffness=bad)
    s = sprung_ball()
    s.blocks["ball"].stiffness = bad  # past the block's check: the core's own check refuses it
    with pytest.raises(RuntimeError, match=r"stiffness must be >= 0 and finite"):
        Engine(s).derivative(0.0, Engine(sprung_ball()).initial_state())


@pytest.mark.parametrize("bad", [(1.0, 0.0, 0.0, 0.1), (0.0, 0.0, 0.0, 0.0),
                                 (float("nan"), 0.0, 0.0, 0.0), (1.0, 0.0, 0.0)])  # fmt: skip
def test_bad_spring_reference_is_refused_by_name(bad):
    with pytest.raises(ParameterError, match=r"block 'b'.*'spring_ref'"):
        SphericalBody("b", 1.0, np.eye(3), stiffness=1.0, spring_ref=bad)
    if len(bad) == 4:
        s = sprung_ball()
        s.blocks["ball"].spring_ref = np.array(bad)  # the core's own check
        with pytest.raises(RuntimeError, match=r"spring_ref must be a unit quaternion"):
            Engine(s).derivative(0.0, Engine(sprung_ball()).initial_state())


def test_block_fmus_refuse_a_sprung_ball_joint_by_name():
    from titopfmu.fmi.model import plan_model
    from titopfmu.master.from_system import FromSystemError, system_mapping

    plan_model(sprung_ball())  # a model FMU parameter (the model FMU test below)
    with pytest.raises(FromSystemError, match=r"block 'ball'.*joint stiffness.*block FMU"):
        system_mapping(sprung_ball())


def test_a_model_fmu_of_sprung_damped_ball_joints_equals_the_engine(tmp_path):
    """The whole-model FMU takes each ball joint's damping, stiffness and spring_ref as
    parameters by their block names: its model-exchange derivative at random states equals
    the engine's (1e-9 relative), with the file's values and with values set through the FMU;
    its co-simulation follows the engine's trajectory."""
    pytest.importorskip("fmpy")
    from fmpy import read_model_description, simulate_fmu
    from fmu_helpers import me_derivative_error

    path, system = imported(tmp_path, SPRUNG)
    cols = ["upper.joint.m[1]", "hand.joint.m[3]"]
    fmu = titopfmu.export_fmu(system, tmp_path / "arm.fmu", signals=cols, win64=False)
    md = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    for name in ("upper.damping", "upper.stiffness", "hand.damping", "hand.stiffness",
                 "hand.spring_ref[1]", "hand.spring_ref[4]"):  # fmt: skip
        assert name in vr, sorted(vr)
    ref = MuJoCoOf(path, system)
    rng = np.random.default_rng(17)
    states = [ref.random_state(rng) for _ in range(5)]
    qr = np.array([0.9, -0.2, 0.3, 0.25])
    qr /= np.linalg.norm(qr)
    changed = {"upper.stiffness": 0.7, "hand.damping": 0.0, "upper.damping": 1.1}
    worst = 0.0
    for values in ({}, {**changed, **{f"hand.spring_ref[{k + 1}]": qr[k] for k in range(4)}}):
        engine = Engine(system)
        if values:
            s2 = imported(tmp_path, SPRUNG)[1]
            s2.blocks["upper"].stiffness, s2.blocks["hand"].damping = 0.7, 0.0
            s2.blocks["upper"].damping, s2.blocks["hand"].spring_ref = 1.1, qr
            engine = Engine(s2)
            a, b = engine.derivative(0.0, states[0]), Engine(system).derivative(0.0, states[0])
            assert np.max(np.abs(a - b)) > 1e-3  # the values set through the FMU matter
        worst = max(worst, me_derivative_error(fmu, engine, states, values))
    print(f"model FMU of sprung, damped ball joints: derivative vs engine {worst:.2g}")
    assert worst < 1e-9
    res = Engine(system).simulate(1.0, output_interval=0.1, record=cols, rtol=1e-10, atol=1e-12)
    r = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=1.0, output_interval=0.01,
                     output=cols, start_values={"solver.rtol": 1e-10, "solver.atol": 1e-12})
    for c in cols:
        err = np.max(np.abs(np.interp(res.time, r["time"], r[c]) - res[c]))
        print(f"{c}: co-simulation vs engine {err:.2g}")
        assert err < 1e-7, c
