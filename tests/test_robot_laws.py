"""Joint damping and springs of robot descriptions, imported as JointSpringDamper laws: a damped
pendulum from a URDF and spring-damper joints from MJCF files (default classes, ``springref`` in
degrees) against the closed form of the damped oscillator (decay rate and frequency); and
imported robots' trajectories against Pinocchio's ABA with the same joint laws, integrated by
scipy, within 1e-8."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

pin = pytest.importorskip("pinocchio")

from test_mjcf import reference  # noqa: E402
from test_urdf import PinocchioOfUrdf, erd, random_state  # noqa: E402

import titopfmu  # noqa: E402
from titopfmu import Engine, JointSpringDamper  # noqa: E402
from titopfmu.urdf import UrdfWarning  # noqa: E402

# a pendulum: a 2 kg link whose centre of mass hangs 0.5 m below a continuous joint about y,
# damped by <dynamics damping="0.4">; J = I_yy + m l^2 about the axis
M, L, IYY, D_URDF, G = 2.0, 0.5, 0.03, 0.4, 9.81
PENDULUM = f"""<robot name="pendulum">
  <link name="base"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0 0 -{L}"/><mass value="{M}"/>
    <inertia ixx="0.02" iyy="{IYY}" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="swing" type="continuous"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 1"/><axis xyz="0 1 0"/><dynamics damping="{D_URDF}"/></joint>
</robot>
"""

# a rotor on a hinge without gravity, its spring (stiffness and damping from a default class)
# pulling it to springref = 30 degrees; J = the axis' moment, 0.05 + 1.5 * 0.2^2
SPRING_HINGE = """<mujoco model="rotor">
  <compiler angle="degree"/>
  <option><flag gravity="disable"/></option>
  <default><default class="sprung"><joint stiffness="2" damping="0.06" springref="30"/></default>
  </default>
  <worldbody>
    <body name="base">
      <body name="rotor" pos="0 0 0.3">
        <joint name="spin" type="hinge" axis="0 0 1" class="sprung"/>
        <inertial pos="0.2 0 0" mass="1.5" diaginertia="0.02 0.03 0.05"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

# a 2 kg slider on a spring (springref in metres, never converted), damped
SPRING_SLIDE = """<mujoco model="slider">
  <option gravity="0 0 0"/>
  <worldbody>
    <body name="base">
      <body name="carriage">
        <joint name="rail" type="slide" axis="1 0 0" stiffness="50" damping="1.2"
               springref="0.1"/>
        <inertial pos="0 0.1 0" mass="2" diaginertia="0.01 0.01 0.01"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

# (name, file text, suffix, body, J, k, d, q_ref, start, the law's stiffness): the pendulum's
# stiffness is gravity's, m g l, its law a damper alone
OSCILLATORS = [
    ("urdf_pendulum", PENDULUM, ".urdf", "arm", IYY + M * L * L, M * G * L, D_URDF, 0.0, 1e-3,
     0.0),
    ("mjcf_hinge_spring", SPRING_HINGE, ".xml", "rotor", 0.05 + 1.5 * 0.2**2, 2.0, 0.06,
     np.pi / 6, 0.0, 2.0),
    ("mjcf_slide_spring", SPRING_SLIDE, ".xml", "carriage", 2.0, 50.0, 1.2, 0.1, 0.0, 50.0),
]  # fmt: skip


def load(path: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UrdfWarning)  # MjcfWarning too
        if path.endswith(".urdf"):
            return titopfmu.import_urdf(path, gravity=(0.0, 0.0, -G))
        return titopfmu.import_mjcf(path)


@pytest.mark.parametrize("case", OSCILLATORS, ids=[c[0] for c in OSCILLATORS])
def test_damped_oscillator_decays_and_swings_as_the_closed_form(tmp_path, case):
    """J q'' + d q' + k (q - q_ref) = 0 (the pendulum: k = m g l, linear at 1e-3 rad, where
    sin q - q is 2e-7 relative): the import's law makes the motion decay at sigma = d / (2 J)
    and swing at omega = sqrt(k / J - sigma^2). Measured from the zero crossings of q - q_ref
    (spaced pi / omega) and the ratio of successive extremes (exp(sigma pi / omega)), located
    by scipy's event finder on the engine's derivative."""
    name, text, suffix, body, J, k, d, q_ref, start, law_k = case
    path = tmp_path / f"{name}{suffix}"
    path.write_text(text)
    system = load(str(path))
    law = system.blocks[f"{body}_tau"]
    assert isinstance(law, JointSpringDamper)
    assert (law.k, law.d) == pytest.approx((law_k, d), rel=1e-12, abs=1e-12)
    assert law.q_ref == pytest.approx(q_ref, rel=1e-15, abs=1e-15)
    engine = Engine(system)
    assert len(engine._native_laws()) == 1  # the core evaluates the law itself
    sl = engine.plan.state_slices[body]
    x0 = engine.initial_state()
    x0[sl] = [start, 0.0]
    i = sl.start
    sigma, omega = d / (2 * J), np.sqrt(k / J - (d / (2 * J)) ** 2)
    periods = 6
    amplitude = abs(start - q_ref)

    def crossing(t, x):
        return x[i] - q_ref

    def extreme(t, x):
        return x[i + 1]

    sol = solve_ivp(engine.derivative, (0.0, periods * 2 * np.pi / omega), x0, method="DOP853",
                    rtol=1e-12, atol=1e-12 * amplitude, events=[crossing, extreme],
                    dense_output=True)  # fmt: skip
    assert sol.success
    zeros = sol.t_events[0]
    tops = sol.t_events[1][sol.t_events[1] > 1e-9]  # not the start, at rest
    omega_measured = np.pi / np.mean(np.diff(zeros))
    values = np.abs(sol.sol(tops)[i] - q_ref)
    sigma_measured = np.mean(np.log(values[:-1] / values[1:])) / (np.pi / omega_measured)
    print(
        f"{name}: decay rate {sigma_measured:.12g} 1/s (closed form {sigma:.12g}), "
        f"frequency {omega_measured:.12g} rad/s (closed form {omega:.12g}); relative errors "
        f"{abs(sigma_measured / sigma - 1):.2g}, {abs(omega_measured / omega - 1):.2g}"
    )
    assert len(zeros) >= 2 * periods - 1 and len(tops) >= 2 * periods - 1
    assert sigma_measured == pytest.approx(sigma, rel=1e-6)
    assert omega_measured == pytest.approx(omega, rel=1e-6)
    # and the whole motion: q(t) = q_ref + (q0 - q_ref) e^{-sigma t} (cos wt + sigma/w sin wt)
    t = np.linspace(0.0, sol.t[-1], 200)
    exact = q_ref + (start - q_ref) * np.exp(-sigma * t) * (
        np.cos(omega * t) + sigma / omega * np.sin(omega * t)
    )
    assert np.max(np.abs(sol.sol(t)[i] - exact)) < 1e-6 * amplitude


def damped_ur5(folder: Path) -> tuple[str, list[float]]:
    """ur5_robot.urdf with <dynamics damping> 0.0 replaced by a damping per joint."""
    text = Path(erd("ur5_robot.urdf")).read_text()
    values = iter([2.0, 3.0, 1.5, 0.4, 0.3, 0.2])
    damped = re.sub(r'damping="0\.0"', lambda m: f'damping="{next(values)}"', text)
    assert damped.count('damping="0.0"') == 0 and damped != text
    path = folder / "ur5_damped.urdf"
    path.write_text(damped)
    return str(path), [2.0, 3.0, 1.5, 0.4, 0.3, 0.2]


ARM_SPRINGS = """<mujoco model="sprung_arm">
  <compiler angle="degree"/>
  <default>
    <joint damping="0.3"/>
    <default class="stiff"><joint stiffness="6" springref="-20"/></default>
  </default>
  <worldbody>
    <body name="base" pos="0 0 0.5">
      <body name="upper" pos="0 0 0.1" euler="10 0 0">
        <joint name="shoulder" type="hinge" axis="0.3 1 0.2" ref="15" class="stiff"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04" mass="1.2"/>
        <body name="fore" pos="0.4 0 0">
          <joint name="slider" type="slide" axis="1 0 0.1" stiffness="40" springref="0.05"
                 damping="2"/>
          <inertial pos="0.15 0.01 0" mass="0.8" fullinertia="0.004 0.02 0.021 0.0002 0 0.0001"/>
          <body name="hand" pos="0.3 0 0">
            <joint name="wrist" type="hinge" axis="0 0 1" class="stiff" stiffness="1"/>
            <inertial pos="0.05 0.02 -0.01" mass="0.4" diaginertia="0.001 0.002 0.0025"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""
#: the springs as written above (Pinocchio does not read them): joint -> (k, q_ref)
ARM_SPRINGS_K = {"shoulder": (6.0, np.deg2rad(-20.0)), "slider": (40.0, 0.05),
                 "wrist": (1.0, np.deg2rad(-20.0))}  # fmt: skip


def two_second_gap(ref: PinocchioOfUrdf, x0: np.ndarray) -> tuple[float, float]:
    """Largest gap between the engine's joint states (coordinates and rates) and Pinocchio's
    (ABA with the same joint laws), both integrated by scipy's DOP853 at rtol 1e-12 for 2 s and
    compared at 41 instants; and how far they moved."""
    t = np.linspace(0.0, 2.0, 41)
    kw = dict(method="DOP853", rtol=1e-12, atol=1e-12, t_eval=t)
    ours = solve_ivp(ref.engine.derivative, (0.0, 2.0), x0, **kw)
    theirs = solve_ivp(ref.rhs, (0.0, 2.0), x0, **kw)
    assert ours.success and theirs.success
    rows = np.concatenate([np.arange(ref.slices[b.name].start, ref.slices[b.name].stop)
                           for _, b, _ in ref.joints])  # fmt: skip
    gap = float(np.max(np.abs(ours.y[rows] - theirs.y[rows])))
    moved = float(np.max(np.ptp(theirs.y[rows], axis=1)))
    return gap, moved


def test_damped_ur5_trajectory_matches_pinocchio_with_the_same_laws(tmp_path):
    path, damping = damped_ur5(tmp_path)
    system = load(path)
    ref = PinocchioOfUrdf(path, system, False, gravity=(0.0, 0.0, -G))
    assert sorted(law[3] for law in ref.laws) == sorted(damping)  # Pinocchio's reading
    laws = {n: b for n, b in system.blocks.items() if isinstance(b, JointSpringDamper)}
    assert sorted(b.d for b in laws.values()) == sorted(damping) and len(laws) == 6
    assert len(ref.engine._native_laws()) == 6
    x0 = random_state(ref, np.random.default_rng(5))
    gap, moved = two_second_gap(ref, x0)
    print(f"damped UR5: 2 s trajectory, joint states within {gap:.3g} (moved {moved:.3g})")
    assert gap < 1e-8 and moved > 0.1


def test_sprung_mjcf_arm_trajectory_matches_pinocchio_with_the_same_laws(tmp_path):
    path = tmp_path / "sprung_arm.xml"
    path.write_text(ARM_SPRINGS)
    system = load(str(path))
    ref = reference(str(path), system, [0.0, 0.0, -9.81], springs=ARM_SPRINGS_K)
    assert len(ref.laws) == 3 and len(ref.engine._native_laws()) == 3
    for name, block in (("shoulder", "upper"), ("slider", "fore"), ("wrist", "hand")):
        law = system.blocks[f"{block}_tau"]
        k, q_ref = ARM_SPRINGS_K[name]
        d = float(ref.model.damping[ref.model.joints[ref.model.getJointId(name)].idx_v])
        assert (law.k, law.d, law.q_ref) == pytest.approx((k, d, q_ref), rel=1e-14)
    x0 = random_state(ref, np.random.default_rng(9))
    gap, moved = two_second_gap(ref, x0)
    print(f"sprung MJCF arm: 2 s trajectory, joint states within {gap:.3g} (moved {moved:.3g})")
    assert gap < 1e-8 and moved > 0.1
