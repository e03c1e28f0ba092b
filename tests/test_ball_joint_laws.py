"""Ball joint damping (issue 32): a SphericalBody's ``damping`` d, the effort -d ω on its 3 dof
(ω the relative angular velocity in the child's frame), evaluated by the core
(titop_body.damping), as MuJoCo's ball joint damping (-damping qvel, engine_passive.c; checked
here on MuJoCo's own qfrc_damper). Tests: a damped isotropic body on a ball joint without
gravity against the closed form ω(t) = ω0 exp(-d t / J); an MJCF arm with a damped ball joint
against MuJoCo's mj_forward accelerations at random states; the complex-step Jacobian against
central differences; bad values refused by name (block, core, FMU)."""

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


def test_stiffness_on_a_ball_joint_is_still_listed(tmp_path):
    text = ARM.replace('type="ball" damping="0.8"', 'type="ball" damping="0.8" stiffness="2"')
    path = tmp_path / "arm.xml"
    path.write_text(text)
    with pytest.warns(MjcfWarning) as record:
        system = titopfmu.import_mjcf(path)
    got = [(u.what, u.line) for w in record for u in getattr(w.message, "unimported", [])]
    assert ("<joint stiffness>", 13) in got, got
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


def test_fmus_refuse_a_damped_ball_joint_by_name():
    from titopfmu.fmi.model import ModelFmuError, plan_model
    from titopfmu.master.from_system import FromSystemError, system_mapping

    with pytest.raises(ModelFmuError, match=r"block 'ball'.*joint damping.*model FMU"):
        plan_model(damped_ball())
    with pytest.raises(FromSystemError, match=r"block 'ball'.*joint damping.*block FMU"):
        system_mapping(damped_ball())
