"""Rotor inertia (armature) and mass-free links (issue 32, points 2 and 3).

* Armature: a parameter of every joint block with a dof, added to the joint's apparent inertia
  S^T Ia S in the core's sweep (eq. 20 with the rotor term) and to an inverse joint's effort;
  imported from MJCF (``<joint armature>``, default classes) as Pinocchio reads it
  (``model.armature``). Checked against Pinocchio's ABA/RNEA with the same armature, closed
  forms (pendulum frequency through the linearisation), a block FMU, a model FMU and the model
  file's round trip.
* Mass-free links: a joint body may have no mass; the check judges the articulated inertia of
  the subtree its joint moves (the engine's evaluation at the initial state; a leaf by its block
  alone), so icub and human of example-robot-data import and agree with Pinocchio; a subtree
  with no inertia about its joint is refused naming it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

from test_mjcf import reference, write  # noqa: E402
from test_urdf import PinocchioOfUrdf, erd, import_quiet, random_state  # noqa: E402

import titopfmu  # noqa: E402
from titopfmu import (  # noqa: E402
    Constant,
    Engine,
    Ground,
    PrismaticBody,
    RevoluteBody,
    RevoluteBodyInverse,
    SphericalBody,
    System,
    TitopError,
    linearize,
)
from titopfmu.blocks.base import SingularJointError  # noqa: E402
from titopfmu.mjcf import MjcfError, MjcfWarning  # noqa: E402
from titopfmu.urdf import UrdfError  # noqa: E402

EPS = np.finfo(float).eps

#: an arm with every joint kind, rotor inertias from a default class, a child class and the
#: joints' own attributes (hinge, slide, ball)
ARM = """<mujoco model="arm">
  <compiler angle="degree"/>
  <option gravity="0.5 0 -9.7"/>
  <default>
    <joint armature="0.2" damping="0.05"/>
    <default class="heavy"><joint armature="0.9"/></default>
  </default>
  <worldbody>
    <body name="base" pos="0.1 -0.2 0.5" quat="0.95 0.05 -0.1 0.3">
      <geom type="cylinder" size="0.1 0.05" mass="4"/>
      <body name="upper" pos="0 0 0.1" euler="10 0 0" childclass="heavy">
        <joint name="shoulder" type="hinge" axis="0.3 1 0.2" ref="15"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04" mass="1.2"/>
        <body name="fore" pos="0.4 0 0">
          <joint name="slider" type="slide" axis="1 0 0.1" armature="1.5"/>
          <inertial pos="0.15 0.01 0" mass="0.8" fullinertia="0.004 0.02 0.021 0.0002 0 0.0001"/>
          <body name="hand" pos="0.3 0 0" quat="0.9 0.1 0.3 0.2">
            <joint name="wrist" type="ball"/>
            <inertial pos="0.05 0.02 -0.01" mass="0.4" diaginertia="0.001 0.002 0.0025"/>
            <body name="finger" pos="0.1 0 0">
              <joint name="finger" type="hinge" axis="0 0 1" armature="0.01"/>
              <geom type="box" size="0.03 0.01 0.01" pos="0.03 0 0" mass="0.05"/>
            </body>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

#: a free-flying robot whose moving joints have rotor inertias (ball, hinge, slide)
FLOATER = """<mujoco model="floater">
  <option gravity="0 0 -3"/>
  <worldbody>
    <body name="torso" pos="0.1 0.2 1" quat="0.95 0.1 0.2 0.1">
      <freejoint name="root"/>
      <inertial pos="0 0 0.1" mass="3" diaginertia="0.1 0.2 0.25"/>
      <body name="left" pos="0.2 0.1 0">
        <joint name="left_hip" type="hinge" axis="0 1 0" armature="0.3"/>
        <inertial pos="0 0 -0.2" mass="1" diaginertia="0.01 0.02 0.015"/>
        <body name="left_foot" pos="0 0 -0.4">
          <joint name="left_ankle" type="ball" armature="0.05"/>
          <inertial pos="0.03 0 -0.02" mass="0.3" diaginertia="0.002 0.003 0.004"/>
        </body>
      </body>
      <body name="right" pos="0.2 -0.1 0">
        <joint name="right_hip" type="slide" axis="0 0 1" armature="2"/>
        <geom type="sphere" size="0.08" mass="0.7"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

#: Gymnasium 1.3's ant.xml (MuJoCo's ant; MIT licence), its four unnamed leg-tip bodies named
#: (Pinocchio's parser, the reference here, names unnamed bodies alike): hinges with armature 1
#: and damping 1 from the default class, ranges, capsule geoms giving the inertias, a
#: free-flying torso
ANT = """<mujoco model="ant">
  <compiler angle="degree" coordinate="local" inertiafromgeom="true"/>
  <option integrator="RK4" timestep="0.01"/>
  <default>
    <joint armature="1" damping="1" limited="true"/>
    <geom conaffinity="0" condim="3" density="5.0" friction="1 0.5 0.5" margin="0.01"/>
  </default>
  <worldbody>
    <geom conaffinity="1" condim="3" name="floor" pos="0 0 0" size="40 40 40" type="plane"/>
    <body name="torso" pos="0 0 0.75">
      <geom name="torso_geom" pos="0 0 0" size="0.25" type="sphere"/>
      <joint armature="0" damping="0" limited="false" margin="0.01" name="root" pos="0 0 0"
             type="free"/>
      <body name="front_left_leg" pos="0 0 0">
        <geom fromto="0.0 0.0 0.0 0.2 0.2 0.0" name="aux_1_geom" size="0.08" type="capsule"/>
        <body name="aux_1" pos="0.2 0.2 0">
          <joint axis="0 0 1" name="hip_1" pos="0.0 0.0 0.0" range="-30 30" type="hinge"/>
          <geom fromto="0.0 0.0 0.0 0.2 0.2 0.0" name="left_leg_geom" size="0.08" type="capsule"/>
          <body name="front_left_foot" pos="0.2 0.2 0">
            <joint axis="-1 1 0" name="ankle_1" pos="0.0 0.0 0.0" range="30 70" type="hinge"/>
            <geom fromto="0.0 0.0 0.0 0.4 0.4 0.0" name="left_ankle_geom" size="0.08"
                  type="capsule"/>
          </body>
        </body>
      </body>
      <body name="front_right_leg" pos="0 0 0">
        <geom fromto="0.0 0.0 0.0 -0.2 0.2 0.0" name="aux_2_geom" size="0.08" type="capsule"/>
        <body name="aux_2" pos="-0.2 0.2 0">
          <joint axis="0 0 1" name="hip_2" pos="0.0 0.0 0.0" range="-30 30" type="hinge"/>
          <geom fromto="0.0 0.0 0.0 -0.2 0.2 0.0" name="right_leg_geom" size="0.08"
                type="capsule"/>
          <body name="front_right_foot" pos="-0.2 0.2 0">
            <joint axis="1 1 0" name="ankle_2" pos="0.0 0.0 0.0" range="-70 -30" type="hinge"/>
            <geom fromto="0.0 0.0 0.0 -0.4 0.4 0.0" name="right_ankle_geom" size="0.08"
                  type="capsule"/>
          </body>
        </body>
      </body>
      <body name="back_leg" pos="0 0 0">
        <geom fromto="0.0 0.0 0.0 -0.2 -0.2 0.0" name="aux_3_geom" size="0.08" type="capsule"/>
        <body name="aux_3" pos="-0.2 -0.2 0">
          <joint axis="0 0 1" name="hip_3" pos="0.0 0.0 0.0" range="-30 30" type="hinge"/>
          <geom fromto="0.0 0.0 0.0 -0.2 -0.2 0.0" name="back_leg_geom" size="0.08"
                type="capsule"/>
          <body name="back_foot" pos="-0.2 -0.2 0">
            <joint axis="-1 1 0" name="ankle_3" pos="0.0 0.0 0.0" range="-70 -30" type="hinge"/>
            <geom fromto="0.0 0.0 0.0 -0.4 -0.4 0.0" name="third_ankle_geom" size="0.08"
                  type="capsule"/>
          </body>
        </body>
      </body>
      <body name="right_back_leg" pos="0 0 0">
        <geom fromto="0.0 0.0 0.0 0.2 -0.2 0.0" name="aux_4_geom" size="0.08" type="capsule"/>
        <body name="aux_4" pos="0.2 -0.2 0">
          <joint axis="0 0 1" name="hip_4" pos="0.0 0.0 0.0" range="-30 30" type="hinge"/>
          <geom fromto="0.0 0.0 0.0 0.2 -0.2 0.0" name="rightback_leg_geom" size="0.08"
                type="capsule"/>
          <body name="right_back_foot" pos="0.2 -0.2 0">
            <joint axis="1 1 0" name="ankle_4" pos="0.0 0.0 0.0" range="30 70" type="hinge"/>
            <geom fromto="0.0 0.0 0.0 0.4 -0.4 0.0" name="fourth_ankle_geom" size="0.08"
                  type="capsule"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor ctrllimited="true" ctrlrange="-1.0 1.0" joint="hip_4" gear="150"/>
  </actuator>
</mujoco>
"""


def within_limits(ref: PinocchioOfUrdf, rng) -> np.ndarray:
    """A random state (test_urdf.random_state) with every 1-dof coordinate inside its range
    (Pinocchio's limits, at most ±π): the import's joint stops then exert nothing, and Pinocchio
    (which has none) is the reference."""
    x = random_state(ref, rng)
    m = ref.model
    for jm, block, kind in ref.joints:
        if kind == "1dof":
            lo = max(float(m.lowerPositionLimit[jm.idx_q]), -np.pi)
            hi = min(float(m.upperPositionLimit[jm.idx_q]), np.pi)
            x[ref.slices[block.name]][0] = rng.uniform(lo, hi)
    return x


def worst_gap(ref: PinocchioOfUrdf, n: int = 25, seed: int = 3) -> tuple[float, float]:
    """The largest relative gap between the engine's accelerations and ``pin.aba`` (relative to
    the largest acceleration, at least 1) at n random states within the limits, and the largest
    ratio of that gap to the conditioning bound ε cond(M) of Pinocchio's joint-space inertia."""
    rng = np.random.default_rng(seed)
    worst = ratio = 0.0
    for _ in range(n):
        x = within_limits(ref, rng)
        a_pin = ref.aba(x)
        gap = np.max(np.abs(ref.titop_acc(ref.engine.derivative(0.0, x)) - a_pin))
        gap /= max(1.0, np.max(np.abs(a_pin)))
        q, _ = ref.q_v(x)
        M = pin.crba(ref.model, ref.data, q)
        M = np.triu(M) + np.triu(M, 1).T
        worst, ratio = max(worst, gap), max(ratio, gap / (EPS * np.linalg.cond(M)))
    return worst, ratio


def imported(path: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MjcfWarning)
        return titopfmu.import_mjcf(path)


# -- armature: MJCF against Pinocchio -------------------------------------------------------


@pytest.mark.parametrize("text,gravity", [(ARM, [0.5, 0.0, -9.7]), (FLOATER, [0.0, 0.0, -3.0]),
                                          (ANT, [0.0, 0.0, -9.81])], ids=["arm", "floater", "ant"])
def test_mjcf_armature_accelerations_match_pinocchio(tmp_path, text, gravity):
    """Pinocchio's own model of the file (its MJCF parser fills model.armature, default classes
    applied): ABA within 1e-10 relative; without the rotor inertias the two differ by order 1."""
    path = write(tmp_path, text)
    system = imported(path)
    ref = reference(path, system, gravity)
    assert np.any(ref.model.armature > 0)
    for jm, block, kind in ref.joints:  # each joint body holds Pinocchio's reading
        if kind != "root":
            want = ref.model.armature[jm.idx_v : jm.idx_v + jm.nv]
            np.testing.assert_array_equal(np.atleast_1d(block.armature), want)
    worst, _ = worst_gap(ref)
    print(f"armature: max relative acceleration gap to Pinocchio {worst:.3g}")
    assert worst < 1e-10
    ref.model.armature[:] = 0.0  # the same comparison against Pinocchio without them
    assert worst_gap(ref, n=3)[0] > 1e-2


def test_inverse_joint_effort_carries_the_armature():
    """An imposed joint motion: τ = S^T W + armature q̈ (Pinocchio's RNEA with armature): a
    point-mass pendulum on its joint, τ = (m l² + a) q̈ + m g l sin q."""
    m, l, a, g = 1.3, 0.7, 0.25, 9.81
    s = System("inverse")
    s.add(Ground("ground", children={"O": (0.0, 0.0, 0.0)}),
          RevoluteBodyInverse("pend", m, np.zeros((3, 3)), com=(0.0, -l, 0.0), axis=(0, 0, 1),
                              armature=a, gravity=(0.0, -g, 0.0)),
          Constant("motion", [2.5, -0.4, 0.6]))  # fmt: skip
    s.connect("ground.O", "pend.P")
    s.connect("motion.y", "pend.joint.m")
    engine = Engine(s)
    tau = engine.signal(engine.evaluate(0.0, engine.initial_state()), "pend.joint.tau")
    qdd, q = 2.5, 0.6
    np.testing.assert_allclose(tau, [(m * l * l + a) * qdd + m * g * l * np.sin(q)], rtol=1e-13)


def test_linearisation_follows_the_armature():
    """The pendulum's frequency sqrt(m g l / (m l² + a)) from the linear model (the core's
    exact derivatives)."""
    m, l, a, g = 1.3, 0.8, 0.4, 9.81
    s = System("pendulum")
    s.add(Ground("ground", children={"O": (0.0, 0.0, 0.0)}),
          RevoluteBody("pend", m, np.zeros((3, 3)), com=(0.0, -l, 0.0), axis=(0, 0, 1),
                       armature=a, gravity=(0.0, -g, 0.0)),
          Constant("tau", 0.0))  # fmt: skip
    s.connect("ground.O", "pend.P")
    s.connect("tau.y", "pend.joint.tau")
    model = linearize(s, 0.0, inputs=["pend.joint.tau"], outputs=["pend.joint.m[3]"])
    (mode,) = [md for md in model.modes() if not md.rigid]
    w = np.sqrt(m * g * l / (m * l * l + a))
    assert abs(mode.omega_n - w) < 1e-10 * w


def test_bad_armature_is_refused_naming_block_and_parameter(tmp_path):
    for bad in (-0.1, np.nan, np.inf):
        with pytest.raises(TitopError, match=r"block 'j'.*'armature'"):
            RevoluteBody("j", 1.0, np.eye(3), armature=bad)
    with pytest.raises(TitopError, match=r"block 's'.*'armature'.*>= 0"):
        SphericalBody("s", 1.0, np.eye(3), armature=[0.1, -0.2, 0.1])
    with pytest.raises(TitopError, match=r"block 's'.*'armature'.*3 components"):
        SphericalBody("s", 1.0, np.eye(3), armature=[0.1, 0.2])
    assert list(SphericalBody("s", 1.0, np.eye(3), armature=0.3).armature) == [0.3] * 3
    bad = ARM.replace('armature="1.5"', 'armature="-1.5"')
    with pytest.raises(MjcfError) as exc:
        imported(write(tmp_path, bad))
    e = exc.value
    assert "joint 'slider'" in str(e) and "armature -1.5 is negative" in str(e)
    assert e.line == bad[: bad.index('name="slider"')].count("\n") + 1


def test_armature_on_the_free_flying_root_is_listed(tmp_path):
    text = FLOATER.replace('<freejoint name="root"/>',
                           '<joint name="root" type="free" armature="0.5"/>')  # fmt: skip
    with pytest.warns(MjcfWarning) as record:
        titopfmu.import_mjcf(write(tmp_path, text))
    got = [(u.what, u.line) for w in record for u in getattr(w.message, "unimported", [])]
    assert ("armature of joint 'root'", 5) in got, got


def test_model_files_round_trip_the_armature(tmp_path):
    s = System("arms")
    s.add(Ground("ground", children={"O": (0.0, 0.0, 0.0)}),
          RevoluteBody("upper", 1.0, np.eye(3) * 0.1, com=(0.2, 0, 0), armature=0.7,
                       children={"E": (0.4, 0.0, 0.0)}),
          SphericalBody("hand", 0.5, np.eye(3) * 0.01, armature=[0.1, 0.2, 0.3]),
          Constant("t1", 0.0), Constant("t2", [0.0, 0.0, 0.0]))  # fmt: skip
    s.connect("ground.O", "upper.P")
    s.connect("upper.E", "hand.P")
    s.connect("t1.y", "upper.joint.tau")
    s.connect("t2.y", "hand.joint.tau")
    path = s.save(tmp_path / "arms.yaml")
    assert "armature" in path.read_text()
    back = titopfmu.load(path)
    assert back.blocks["upper"].armature == 0.7
    np.testing.assert_array_equal(back.blocks["hand"].armature, [0.1, 0.2, 0.3])
    x0 = Engine(s).initial_state()
    np.testing.assert_array_equal(Engine(back).derivative(0.0, x0), Engine(s).derivative(0.0, x0))
    text = path.read_text().replace("armature: 0.7", "armature: -0.7")
    with pytest.raises(TitopError, match=r"upper.*armature"):
        titopfmu.loads(text)


# -- mass-free links --------------------------------------------------------------------------


@pytest.mark.parametrize("filename", ["icub.urdf", "icub_reduced.urdf", "human.urdf"])
@pytest.mark.parametrize("floating", [False, True])
def test_robots_with_massless_links_import_and_match_pinocchio(filename, floating):
    """icub (r_hip_1: a point mass on its joint axis; r_hip_2: an inertia of rounding noise,
    -5e-20 kg m^2) and human (19 massless links building its multi-dof hips, spine, shoulders):
    ABA within 1e-10 relative, or the conditioning bound ε cond(M) of Pinocchio's joint-space
    inertia where it is larger (icub's full model: cond(M) up to 6e10, gaps up to 8e-9 seen,
    at most 1e-3 of the bound)."""
    path = erd(filename)
    system = import_quiet(path, floating)
    ref = PinocchioOfUrdf(path, system, floating)
    massless = [b for b in system.blocks.values() if getattr(b, "mass", None) == 0.0]
    if filename == "human.urdf":
        assert len(massless) == 19
    worst, ratio = worst_gap(ref)
    print(f"{filename} floating={floating}: gap {worst:.3g}, {ratio:.3g} of eps cond(M)")
    assert worst < 1e-10 or ratio < 1e-2, (worst, ratio)


def subtree_without_inertia(massless_leaf: bool = False) -> str:
    """A massless link b (revolute about y) carrying c, a point mass on b's axis that slides
    along it: c moves along its own axis (a mass), but nothing b's joint moves has inertia
    about it. With ``massless_leaf``, c is massless too (a leaf refused by itself)."""
    mass = "0" if massless_leaf else "1.5"
    return f"""<robot name="r">
  <link name="a"/>
  <link name="b"/>
  <link name="c"><inertial><origin xyz="0 0.3 0"/><mass value="{mass}"/>
    <inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>
  </joint>
  <joint name="j2" type="prismatic"><parent link="b"/><child link="c"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>
"""


def test_a_subtree_without_inertia_about_its_joint_is_refused_naming_the_link():
    text = subtree_without_inertia()
    with pytest.raises(UrdfError) as exc:
        import_quiet(text, False)
    e = exc.value
    assert "link 'b'" in str(e) and "massless" in str(e) and "no inertia about the joint" in str(e)
    assert e.line == text[: text.index('<link name="b"')].count("\n") + 1
    with pytest.raises(UrdfError, match="link 'c'.*massless") as exc:
        import_quiet(subtree_without_inertia(massless_leaf=True), False)
    # the point mass off b's axis: b moves it, and b imports massless
    fine = text.replace('<origin xyz="0 0.3 0"/>', '<origin xyz="0.2 0.3 0"/>')
    system = import_quiet(fine, False)
    assert system.blocks["b"].mass == 0.0
    Engine(system).derivative(0.0, Engine(system).initial_state())


def test_the_engine_judges_a_massless_body_by_what_its_joint_moves():
    """A massless revolute body with children is valid when they have inertia about its axis
    (accelerations as the same chain with the mass lumped: the massless body adds nothing); one
    whose subtree has none is refused when the engine is built, naming the block."""

    def chain(tip_com) -> System:
        s = System("chain")
        s.add(Ground("ground", children={"O": (0.0, 0.0, 0.0)}),
              RevoluteBody("ghost", 0.0, np.zeros((3, 3)), axis=(0, 0, 1),
                           children={"C": (0.0, 0.0, 0.2)}),
              PrismaticBody("tip", 2.0, np.zeros((3, 3)), axis=(0, 0, 1), com=tip_com),
              Constant("t1", 0.3), Constant("t2", 0.1))  # fmt: skip
        s.connect("ground.O", "ghost.P")
        s.connect("ghost.C", "tip.P")
        s.connect("t1.y", "ghost.joint.tau")
        s.connect("t2.y", "tip.joint.tau")
        return s

    ok = Engine(chain((0.5, 0.0, 0.0)))
    dx = ok.derivative(0.0, ok.initial_state())
    # about z: 2 kg at 0.5 m, I = 0.5 kg m^2: θ̈ = 0.3 / 0.5; along z: ẍ = 0.1 / 2 - 9.81
    np.testing.assert_allclose(dx[[1, 3]], [0.6, 0.05 - 9.81], rtol=1e-14)
    with pytest.raises(SingularJointError) as exc:
        Engine(chain((0.0, 0.0, 0.3)))  # the tip's mass on the ghost's axis
    assert exc.value.block == "ghost" and exc.value.parameter == "inertia"
    assert "'tip'" in str(exc.value) and "no inertia about the joint" in str(exc.value)


def test_a_tiny_body_is_accepted_by_the_engine_and_the_fmus(tmp_path):
    """A body of 1e-6 kg and 1e-13 kg m^2 (valid, small) on a joint: accepted by the block, the
    engine, its block FMU and a model FMU, which give the engine's motion."""
    from fmpy import simulate_fmu
    from fmu_helpers import load, start

    from titopfmu.fmi.catalog import FMU_TYPES
    from titopfmu.fmi.native.build import build_native

    s = System("tiny")
    s.add(Ground("ground", children={"O": (0.0, 0.0, 0.0)}),
          RevoluteBody("bead", 1e-6, np.eye(3) * 1e-13, axis=(0, 0, 1), com=(1e-3, 0.0, 0.0),
                       armature=1e-13, theta0=0.3, gravity=(0.0, -9.81, 0.0)),
          Constant("tau", 0.0))  # fmt: skip
    s.connect("ground.O", "bead.P")
    s.connect("tau.y", "bead.joint.tau")
    res = Engine(s).simulate(0.5, output_interval=0.1, record=["bead.joint.m[3]"], rtol=1e-10,
                             atol=1e-12)  # fmt: skip
    fmu = titopfmu.export_fmu(s, tmp_path / "tiny.fmu", signals=["bead.joint.m[3]"], win64=False)
    r = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=0.5, output_interval=0.1,
                     output=["bead.joint.m[3]"])  # fmt: skip
    got = np.interp(res.time, r["time"], r["bead.joint.m[3]"])
    assert np.max(np.abs(got - res["bead.joint.m[3]"])) < 1e-6
    ftype = FMU_TYPES["revolute_body"]
    lf = load(build_native(ftype, 0, tmp_path / "block", win64=False))
    f = lf.instantiate("tiny")
    try:
        start(f, lf, ftype.params(0), {"mass": 1e-6, "inertia": np.eye(3) * 1e-13,
                                       "com": [1e-3, 0.0, 0.0], "armature": 1e-13})  # fmt: skip
    finally:
        f.terminate()
        f.freeInstance()


# -- FMUs ----------------------------------------------------------------------------------------


def _outputs(lf, sa, ftype, values, u):
    """The block FMU's outputs and the core block's (StandaloneBlock) at the inputs u."""
    from fmu_helpers import start

    from titopfmu.fmi.ports import port_variables

    ports = port_variables(sa, ftype)
    f = lf.instantiate("cmp")
    try:
        start(f, lf, ftype.params(sa.block.n_children), values, t0=0.25)
        vrs, vals = [], []
        for pv in ports:
            if pv.core in u:
                for comp, v in zip(pv.components, u[pv.core], strict=True):
                    vrs.append(lf.vr[comp.name])
                    vals.append(float(v))
        f.setReal(vrs, vals)
        expected, _ = sa.evaluate(0.25, sa.initial_state(), u)
        return {pv.core: (np.array(f.getReal([lf.vr[c.name] for c in pv.components])),
                          expected[pv.core]) for pv in ports if pv.direction == "out"}  # fmt: skip
    finally:
        f.terminate()
        f.freeInstance()


@pytest.fixture(scope="module")
def block_fmus(tmp_path_factory):
    from fmu_helpers import load

    from titopfmu.fmi.catalog import FMU_TYPES
    from titopfmu.fmi.native.build import build_native

    out = tmp_path_factory.mktemp("armature_fmus")
    return {(k, n): (FMU_TYPES[k], load(build_native(FMU_TYPES[k], n, out / k, win64=False)))
            for k, n in (("revolute_body", 1), ("spherical_body", 0))}  # fmt: skip


@pytest.mark.parametrize("key,n", [("revolute_body", 1), ("spherical_body", 0)])
def test_a_block_fmu_with_armature_equals_the_engine(block_fmus, key, n):
    from titopfmu.blocks.standalone import StandaloneBlock
    from titopfmu.fmi.catalog import random_values

    ftype, lf = block_fmus[(key, n)]
    rng = np.random.default_rng(4)
    values = random_values(ftype.params(n), rng)
    values["armature"] = np.array(0.7) if key == "revolute_body" else np.array([0.2, 0.5, 0.9])
    sa = StandaloneBlock(ftype.make("ref", values, n))
    u = {ch.name: rng.normal(0.0, 0.8, ch.size) for ch in sa.inputs}
    for ch in sa.inputs:
        if ch.size == 18:
            u[ch.name][15:18] = rng.uniform(-1.2, 1.2, 3)
    got = _outputs(lf, sa, ftype, values, u)
    for core, (fmu_value, engine_value) in got.items():
        np.testing.assert_allclose(fmu_value, engine_value, rtol=1e-12, atol=1e-12, err_msg=core)
    no_rotor = dict(values, armature=np.zeros_like(values["armature"]))
    other = _outputs(lf, StandaloneBlock(ftype.make("ref", no_rotor, n)), ftype, no_rotor, u)
    assert max(np.max(np.abs(a - got[c][0])) for c, (a, _) in other.items()) > 1e-3


def test_block_fmus_refuse_a_bad_armature_and_a_massless_leaf(block_fmus):
    from fmpy.fmi1 import FMICallException
    from fmu_helpers import set_parameters

    ftype, lf = block_fmus[("spherical_body", 0)]
    cases = [({"armature": np.array([0.1, -0.2, 0.0])}, "parameter 'armature[2]'"),
             ({"mass": 0.0, "inertia": np.zeros((3, 3))}, "parameter 'inertia'"),
             ({"mass": -1.0}, "parameter 'mass'")]  # fmt: skip
    for values, words in cases:
        log = []

        def logger(env, instance, status, category, message, log=log):
            log.append(message.decode() if isinstance(message, bytes) else str(message))

        f = lf.instantiate("bad", logger=logger)
        try:
            f.setupExperiment(startTime=0.0)
            f.enterInitializationMode()
            set_parameters(f, lf, ftype.params(0), values)
            with pytest.raises(FMICallException):
                f.exitInitializationMode()
            assert any(words in m for m in log), (words, log)
        finally:
            f.freeInstance()
    # massless, with an armature on each axis: its joint moves the rotors
    f = lf.instantiate("rotor")
    try:
        from fmu_helpers import start

        start(f, lf, ftype.params(0), {"mass": 0.0, "inertia": np.zeros((3, 3)),
                                       "armature": np.array([0.1, 0.2, 0.3])})  # fmt: skip
    finally:
        f.terminate()
        f.freeInstance()


def test_a_model_fmu_with_armature_and_massless_links_matches_the_engine(tmp_path):
    """A massless link with a rotor inertia carrying a sliding point mass: the model FMU's 1 s
    motion against the engine (1e-6); the point mass moved onto the link's axis and the rotor
    taken away by the FMU's parameters: refused at initialisation, naming the block."""
    from fmpy import simulate_fmu
    from fmpy.fmi1 import FMICallException
    from fmu_helpers import load

    s = import_quiet(subtree_without_inertia().replace('xyz="0 0.3 0"', 'xyz="0.2 0.3 0"'),
                     False)  # fmt: skip
    s.blocks["b"].armature = 0.05  # (read when the model is built)
    cols = ["b.joint.m[3]", "c.joint.m[3]"]
    res = Engine(s).simulate(1.0, output_interval=0.1, record=cols, rtol=1e-10, atol=1e-12)
    fmu = titopfmu.export_fmu(s, tmp_path / "r.fmu", signals=cols, win64=False)
    r = simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=1.0, output_interval=0.01,
                     output=cols)  # fmt: skip
    for c in cols:
        assert np.max(np.abs(np.interp(res.time, r["time"], r[c]) - res[c])) < 1e-6, c
    assert np.ptp(res["b.joint.m[3]"]) > 1e-3
    lf = load(fmu)
    log = []

    def logger(env, instance, status, category, message):
        log.append(message.decode() if isinstance(message, bytes) else str(message))

    f = lf.instantiate("bad", logger=logger)
    try:
        f.setupExperiment(startTime=0.0)
        f.enterInitializationMode()
        f.setReal([lf.vr["c.com[1]"], lf.vr["b.armature"]], [0.0, 0.0])
        with pytest.raises(FMICallException):
            f.exitInitializationMode()
        assert any("'b.inertia'" in m and "articulated inertia" in m for m in log), log
    finally:
        f.freeInstance()


def test_one_fmu_per_body_refuses_a_massless_link_and_the_crosscheck_runs_its_model_fmu(tmp_path):
    """A massless link with children is valid (the engine and a model FMU judge its joint with
    its subtree), but one FMU per body cannot run it: its FMU solves its joint with its own
    inertia, its children's wrenches as inputs. ``from_system`` refuses it in one line naming
    the block; the crosscheck's FMU leg then runs the whole-model FMU and passes."""
    pytest.importorskip("fmpy")
    pytest.importorskip("pinocchio")
    from titopfmu.crosscheck import crosscheck
    from titopfmu.master.from_system import FromSystemError, system_mapping

    s = System("ghost_chain")
    s.add(Ground("ground", children={"O": (0.0, 0.0, 0.0)}),
          RevoluteBody("ghost", 0.0, np.zeros((3, 3)), axis=(1, 0, 0),
                       children={"C": (0.0, 0.0, -0.2)}),
          RevoluteBody("tip", 2.0, np.diag([0.01, 0.02, 0.03]), axis=(0, 1, 0),
                       com=(0.1, 0.0, -0.4), theta0=0.3),
          Constant("t1", 0.2), Constant("t2", -0.1))  # fmt: skip
    s.connect("ground.O", "ghost.P")
    s.connect("ghost.C", "tip.P")
    s.connect("t1.y", "ghost.joint.tau")
    s.connect("t2.y", "tip.joint.tau")
    with pytest.raises(FromSystemError) as exc:
        system_mapping(s)
    msg = str(exc.value)
    assert msg.startswith("block 'ghost': its body alone has no inertia about its joint")
    assert "\n" not in msg and "titopfmu export --fmu" in msg
    r = crosscheck(s, tmp_path / "cc", cosim=True, t_final=1.0, n_states=5)
    assert r.passed, r.summary()
    assert r.cosim_label == "model FMU" and "block 'ghost'" in r.cosim
    assert r.cosim_acc_error < 1e-12 and r.cosim_traj_error < 1e-6
