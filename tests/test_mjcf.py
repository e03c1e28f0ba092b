"""MJCF import (titopfmu.import_mjcf) against Pinocchio's own model of the same MJCF file:
accelerations at random states (pin.aba) and 2 s trajectories, for a fixed-base arm (hinges on
unaligned axes, a slide, a ball joint, inertias from geoms, a joint reference angle, degrees) and a
free-flying robot; MuJoCo's qpos0 and gravity; and bad MJCF files."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

pin = pytest.importorskip("pinocchio")
mujoco = pytest.importorskip("mujoco")

from mujoco_reference import MuJoCoOf  # noqa: E402
from test_urdf import PinocchioOfUrdf, random_state, worst_acceleration_error  # noqa: E402

import titopfmu  # noqa: E402
from titopfmu.mjcf import MjcfError, MjcfWarning  # noqa: E402
from titopfmu.sources import is_mjcf, load_model  # noqa: E402

ARM = """<mujoco model="arm">
  <compiler angle="degree"/>
  <option gravity="0.5 0 -9.7"/>
  <default><joint damping="0.05"/></default>
  <worldbody>
    <geom type="plane" size="1 1 0.1"/>
    <body name="base" pos="0.1 -0.2 0.5" quat="0.95 0.05 -0.1 0.3">
      <geom type="cylinder" size="0.1 0.05" mass="4"/>
      <body name="upper" pos="0 0 0.1" euler="10 0 0">
        <joint name="shoulder" type="hinge" axis="0.3 1 0.2" ref="15" range="-90 90"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04" mass="1.2"/>
        <body name="fore" pos="0.4 0 0">
          <joint name="slider" type="slide" axis="1 0 0.1"/>
          <inertial pos="0.15 0.01 0" mass="0.8" fullinertia="0.004 0.02 0.021 0.0002 0 0.0001"/>
          <body name="hand" pos="0.3 0 0" quat="0.9 0.1 0.3 0.2">
            <joint name="wrist" type="ball"/>
            <inertial pos="0.05 0.02 -0.01" mass="0.4" diaginertia="0.001 0.002 0.0025"/>
            <body name="finger" pos="0.1 0 0">
              <joint name="finger" type="hinge" axis="0 0 1"/>
              <geom type="box" size="0.03 0.01 0.01" pos="0.03 0 0" mass="0.05"/>
            </body>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="shoulder"/></actuator>
</mujoco>
"""

FLOATER = """<mujoco model="floater">
  <option gravity="0 0 -3"/>
  <worldbody>
    <body name="torso" pos="0.1 0.2 1" quat="0.95 0.1 0.2 0.1">
      <freejoint name="root"/>
      <inertial pos="0 0 0.1" mass="3" diaginertia="0.1 0.2 0.25"/>
      <body name="left" pos="0.2 0.1 0">
        <joint name="left_hip" type="hinge" axis="0 1 0"/>
        <inertial pos="0 0 -0.2" mass="1" diaginertia="0.01 0.02 0.015"/>
        <body name="left_foot" pos="0 0 -0.4">
          <joint name="left_ankle" type="ball"/>
          <inertial pos="0.03 0 -0.02" mass="0.3" diaginertia="0.002 0.003 0.004"/>
        </body>
      </body>
      <body name="right" pos="0.2 -0.1 0">
        <joint name="right_hip" type="slide" axis="0 0 1"/>
        <geom type="sphere" size="0.08" mass="0.7"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def write(tmp_path, text: str, name: str = "model.xml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def imported(path: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MjcfWarning)
        return titopfmu.import_mjcf(path)


def reference(path: str, system, gravity, springs=None) -> PinocchioOfUrdf:
    """Pinocchio's model of the file, built here (its MJCF parser, independently of the import;
    it does not read <option gravity>, which is set from the file's numbers). Pinocchio 4.1
    drops the pose of a top-level body without a joint but places nested ones: the reference
    of a fixed-base file is built from a copy whose bodies hang from one more, empty, body."""
    text = open(path).read()
    if "free" not in text:
        wrapped = path[:-4] + "_wrapped.xml"
        with open(wrapped, "w") as f:
            f.write(text.replace("<worldbody>", '<worldbody><body name="wrapper">', 1)
                    .replace("</worldbody>", "</body></worldbody>", 1))  # fmt: skip
        path = wrapped
    model = pin.buildModelFromMJCF(path)  # a top-level <freejoint/> becomes its free flyer
    floating = model.joints[1].shortname() == "JointModelFreeFlyer"
    return PinocchioOfUrdf(path, system, floating, model=model, gravity=gravity, springs=springs)


CASES = [(ARM, [0.5, 0.0, -9.7], 1 + 1 + 3 + 1), (FLOATER, [0.0, 0.0, -3.0], 6 + 1 + 3 + 1)]


@pytest.mark.parametrize("text,gravity,nv", CASES, ids=["arm", "floater"])
def test_accelerations_match_pinocchio(tmp_path, text, gravity, nv):
    path = write(tmp_path, text)
    system = imported(path)
    ref = reference(path, system, gravity)
    assert ref.model.nv == nv
    kinds = {kind for _, _, kind in ref.joints}
    assert "ball" in kinds and ("root" in kinds) == (text is FLOATER)
    worst = worst_acceleration_error(ref, np.random.default_rng(3))
    assert worst < 1e-9, f"max relative acceleration error {worst:.3g}"


@pytest.mark.parametrize("text,gravity,nv", CASES, ids=["arm", "floater"])
def test_two_second_trajectories_match_pinocchio(tmp_path, text, gravity, nv):
    """From a random state, the engine's equations and Pinocchio's, integrated alike for 2 s:
    every body frame's position in the world (Pinocchio's forward kinematics of both end
    states) within 1e-6 m."""
    path = write(tmp_path, text)
    system = imported(path)
    ref = reference(path, system, gravity)
    x0 = random_state(ref, np.random.default_rng(11))
    x0 = np.where(np.abs(x0) > 0, 0.5 * x0, x0)
    for _, block, kind in ref.joints:  # keep the quaternions unit
        sl = ref.slices[block.name]
        if kind in ("root", "ball"):
            k = 3 if kind == "root" else 0
            x0[sl][k : k + 4] /= np.linalg.norm(x0[sl][k : k + 4])
    kw = dict(method="DOP853", rtol=1e-11, atol=1e-12)
    ours = solve_ivp(ref.engine.derivative, (0.0, 2.0), x0, **kw)
    theirs = solve_ivp(ref.rhs, (0.0, 2.0), x0, **kw)
    assert ours.success and theirs.success

    def frames(x):
        data = ref.model.createData()
        pin.framesForwardKinematics(ref.model, data, ref.q_v(x)[0])
        return np.array([data.oMf[i].translation for i in range(len(ref.model.frames))])

    start, a, b = frames(x0), frames(ours.y[:, -1]), frames(theirs.y[:, -1])
    gap = np.max(np.abs(a - b))
    print(f"2 s trajectory: frame positions within {gap:.3g} m")
    assert gap < 1e-6, f"2 s trajectory: frame positions differ by {gap:.3g} m"
    assert np.max(np.abs(b - start)) > 0.1  # it really moves


def test_initial_state_is_mujocos_qpos0_and_gravity_is_the_files(tmp_path):
    path = write(tmp_path, FLOATER)
    system = imported(path)
    x = titopfmu.Engine(system).initial_state()
    torso = system.blocks["torso"]
    assert isinstance(torso, titopfmu.RigidBody)
    np.testing.assert_allclose(torso.position0, [0.1, 0.2, 1.0])
    q = np.array([0.95, 0.1, 0.2, 0.1])
    state = x[:13]
    np.testing.assert_allclose(state[3:7], q / np.linalg.norm(q), atol=1e-12)
    np.testing.assert_allclose(torso.gravity, [0.0, 0.0, -3.0])
    arm = imported(write(tmp_path, ARM, "arm.xml"))
    assert arm.blocks["upper"].q0 == pytest.approx(np.deg2rad(15.0))  # the joint's ref
    np.testing.assert_allclose(arm.blocks["upper"].gravity, [0.5, 0.0, -9.7])
    base = arm.blocks["base"]  # the static top-level body: the Ground, placed by its pose
    assert isinstance(base, titopfmu.Ground)
    np.testing.assert_allclose(base.position, [0.1, -0.2, 0.5])
    quat = np.array([0.95, 0.05, -0.1, 0.3])
    w, x, y, z = quat / np.linalg.norm(quat)
    np.testing.assert_allclose(base.R, Rotation.from_quat([x, y, z, w]).as_matrix(), atol=1e-14)


def test_what_is_not_imported_warns_once_with_lines_and_the_cli_loads_mjcf(tmp_path):
    """ARM's default damping makes laws on its hinges and slide, the shoulder's range stops in
    its law, its ball joint's damping is the SphericalBody's; the actuator and the geoms'
    contacts are listed, each with its line."""
    path = write(tmp_path, ARM)
    with pytest.warns(MjcfWarning) as record:
        system = titopfmu.import_mjcf(path)
    assert len(record) == 1
    w = record[0].message
    got = {(u.what, u.line) for u in w.unimported}
    assert got == {("<actuator>", 27), ("<geom>", 6), ("<geom>", 8), ("<geom>", 11),
                   ("<geom>", 20)}, got  # fmt: skip
    message = str(w)
    for what in ("<actuator>",
                 "contacts are not modelled): lines 6, 8, 11, 20"):  # fmt: skip
        assert what in message, what
    assert "range" not in message  # imported (tests/test_joint_limits_friction.py)
    shoulder = system.blocks["upper_tau"]
    assert (shoulder.limited, shoulder.lower, shoulder.upper) == (True, -np.pi / 2, np.pi / 2)
    laws = {n: (b.k, b.d) for n, b in system.blocks.items()
            if isinstance(b, titopfmu.JointSpringDamper)}  # fmt: skip
    assert laws == {"upper_tau": (0.0, 0.05), "fore_tau": (0.0, 0.05), "finger_tau": (0.0, 0.05)}
    assert is_mjcf(tmp_path / "model.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MjcfWarning)
        system = load_model(path)
    assert sorted(b for b in system.blocks if not b.endswith("_tau")) == sorted(
        ["base", "upper", "fore", "hand", "finger"]
    )
    res = titopfmu.Engine(system).simulate(0.1, output_interval=0.05, record=["finger.joint.m[3]"])
    assert np.all(np.isfinite(res.values))


# -- bad input --------------------------------------------------------------------------------


def refused(tmp_path, text: str, *fragments: str, line: int | None = None) -> MjcfError:
    path = write(tmp_path, text)
    with pytest.raises(MjcfError) as info:
        titopfmu.import_mjcf(path)
    err = info.value
    assert err.file == path
    for f in fragments:
        assert f in str(err), (f, str(err))
    if line is not None:
        assert err.line == line, (err.line, str(err))
    return err


BODY = '<inertial pos="0 0 0" mass="1" diaginertia="0.1 0.1 0.1"/>'


def test_bodies_pinocchio_would_drop_are_refused_not_dropped(tmp_path):
    """Pinocchio 4.1 reads the first top-level body only, and a free joint below the top; a free
    joint shares its body with no other joint."""
    text = f"""<mujoco>
  <worldbody>
    <body name="a"><freejoint/>{BODY}</body>
    <body name="b">
      <freejoint/>{BODY}
    </body>
  </worldbody>
</mujoco>"""
    refused(tmp_path, text, "body 'b'", "second top-level body with joints beside a free-flying",
            line=4)  # fmt: skip
    nested = f"""<mujoco>
  <worldbody>
    <body name="a"><joint name="j" axis="0 0 1"/>{BODY}
      <body name="b"><joint type="free"/>{BODY}</body>
    </body>
  </worldbody>
</mujoco>"""
    refused(tmp_path, nested, "body 'b'", "free joint", line=4)
    shared = f"""<mujoco>
  <worldbody>
    <body name="a">
      <joint name="j" axis="0 0 1"/><freejoint/>{BODY}
    </body>
  </worldbody>
</mujoco>"""
    refused(tmp_path, shared, "body 'a'", "free joint must be alone in its body", line=3)
    for tag in ("frame", "include"):
        hidden = f"""<mujoco>
  <worldbody>
    <body name="a"><joint name="j" axis="0 0 1"/>{BODY}
      <{tag} name="x"><body name="b"><joint name="k"/>{BODY}</body></{tag}>
    </body>
  </worldbody>
</mujoco>"""
        refused(tmp_path, hidden, f"<{tag}> is not supported", line=4)


def test_duplicate_names_and_poses_pinocchio_would_mix_up_are_refused(tmp_path):
    unnamed = f"""<mujoco>
  <worldbody>
    <body name="a"><joint name="j" axis="0 0 1"/>{BODY}
      <body><joint name="k"/>{BODY}</body>
      <body><joint name="l"/>{BODY}</body>
    </body>
  </worldbody>
</mujoco>"""
    twice = unnamed.replace("<body>", '<body name="c">')
    refused(tmp_path, twice, "second body named 'c'", line=5)
    turned = f"""<mujoco>
  <worldbody>
    <body name="base" pos="0 0 1" euler="0 0 0.5">
      <body name="a"><joint name="j" axis="0 0 1"/>{BODY}</body>
    </body>
  </worldbody>
</mujoco>"""
    refused(tmp_path, turned, "body 'base'", "'euler'", "'pos' and 'quat'", line=3)
    extrinsic = f"""<mujoco>
  <compiler eulerseq="XYZ"/>
  <worldbody><body name="a"><joint name="j" axis="0 0 1"/>{BODY}</body></worldbody>
</mujoco>"""
    refused(tmp_path, extrinsic, "eulerseq 'XYZ'", line=2)


def test_geoms_without_contacts_count_in_the_inertia_as_in_mujoco(tmp_path):
    """MuJoCo counts a geom without contacts (here through its default class) in its body's
    inertia, Pinocchio's parser does not: the import counts it, as MuJoCo's own model does."""
    visual = """<mujoco>
  <default>
    <default class="visual"><geom contype="0" conaffinity="0"/></default>
  </default>
  <worldbody>
    <body name="a"><joint name="j" axis="0 0 1"/>
      <geom type="sphere" size="0.1" mass="1"/>
      <geom class="visual" type="box" size="0.2 0.2 0.2" pos="0.1 0 0"/>
    </body>
  </worldbody>
</mujoco>"""
    path = write(tmp_path, visual)
    with pytest.warns(MjcfWarning) as record:
        system = titopfmu.import_mjcf(path)
    assert [(u.what, u.line) for u in record[0].message.unimported] == [("<geom>", 7)]
    m = mujoco.MjModel.from_xml_path(path)
    a = system.blocks["a"]
    assert a.mass == pytest.approx(m.body_mass[1], rel=1e-14)
    np.testing.assert_allclose(a.com, m.body_ipos[1], atol=1e-15)
    R = Rotation.from_quat(m.body_iquat[1][[1, 2, 3, 0]]).as_matrix()
    np.testing.assert_allclose(a.inertia, R @ np.diag(m.body_inertia[1]) @ R.T, atol=1e-14)


def test_disabled_gravity_is_zero(tmp_path):
    text = f"""<mujoco>
  <option gravity="0 0 -5"><flag gravity="disable"/></option>
  <worldbody><body name="a"><joint name="j" axis="0 1 0"/>{BODY}</body></worldbody>
</mujoco>"""
    system = imported(write(tmp_path, text))
    np.testing.assert_array_equal(system.blocks["a"].gravity, [0.0, 0.0, 0.0])


def test_loops_and_other_documents_are_refused(tmp_path):
    loop = f"""<mujoco>
  <worldbody>
    <body name="a"><joint name="j" axis="0 0 1"/>{BODY}</body>
  </worldbody>
  <equality>
    <connect name="close" body1="a" body2="world" anchor="0 0 0"/>
  </equality>
</mujoco>"""
    refused(tmp_path, loop, "equality constraints (connect)", "LoopClosure", line=6)
    refused(tmp_path, "<robot name='r'/>", "<robot>", "not <mujoco>")
    refused(tmp_path, "<mujoco><worldbody>", "not well-formed XML")
    refused(tmp_path, "<mujoco><option gravity='0 -9'/><worldbody/></mujoco>", "gravity")


def test_massless_and_non_physical_bodies_name_the_body(tmp_path):
    massless = """<mujoco>
  <worldbody>
    <body name="ghost"><joint name="j" axis="0 0 1"/></body>
  </worldbody>
</mujoco>"""
    refused(tmp_path, massless, "body 'ghost'", "massless", "<inertial>", line=3)
    triangle = """<mujoco>
  <worldbody>
    <body name="odd"><joint name="j" axis="0 0 1"/>
      <inertial pos="0 0 0" mass="1" fullinertia="1 1 1 2 0 0"/>
    </body>
  </worldbody>
</mujoco>"""
    refused(tmp_path, triangle, "body 'odd'", "inertia", line=3)


def test_crosscheck_of_an_mjcf_file_passes_in_process_as_fmus_and_in_pinocchio(
    tmp_path, monkeypatch
):
    """``titopfmu crosscheck floater.xml``: the free-flying MJCF model in process, as FMUs with
    the master (free root, hinge, ball and slide FMUs) and in Pinocchio built from the System."""
    import json

    from titopfmu.model_cli import main

    monkeypatch.setenv("TITOPFMU_CACHE_DIR", str(tmp_path / "fmu_cache"))
    path = write(tmp_path, FLOATER, "floater.xml")
    out = tmp_path / "cc"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["crosscheck", path, "--out", str(out), "--states", "10", "--quiet"])
    data = json.loads((out / "results.json").read_text())
    assert code == 0 and data["passed"], data
    assert data["acc_error"] < 1e-9 and data["traj_error"] < 1e-6
    assert data["cosim_acc_error"] < 1e-8 and data["cosim_traj_error"] < 1e-4


def test_joint_couplings_and_hidden_bodies_are_refused_inactive_ones_listed(tmp_path):
    """An <equality><joint> (a mimic) names both joints; an inactive equality is listed; the
    generators whose bodies Pinocchio's parser drops are refused; a mesh geom that would give a
    body its inertia is refused (Pinocchio's parser gives it none of its own)."""
    two = f"""<mujoco>
  <worldbody>
    <body name="a"><joint name="j1" axis="0 0 1"/>{BODY}
      <body name="b"><joint name="j2" axis="0 0 1"/>{BODY}</body>
    </body>
  </worldbody>
  <equality>
    <joint name="mimic" joint1="j2" joint2="j1" polycoef="0 -1 0 0 0"/>
  </equality>
</mujoco>"""
    err = refused(tmp_path, two, "couples joint 'j2' to joint 'j1'", "not supported",
                  "polycoef 0 -1 0 0 0", line=8)  # fmt: skip
    assert err.element == "equality/joint 'mimic'"
    inactive = two.replace('polycoef="0 -1 0 0 0"', 'active="false"')
    with pytest.warns(MjcfWarning) as record:
        titopfmu.import_mjcf(write(tmp_path, inactive, "inactive.xml"))
    assert [(u.what, u.line) for u in record[0].message.unimported] == [
        ('<joint active="false">', 8)
    ]
    for tag in ("replicate", "composite", "flexcomp", "attach"):
        hidden = f"""<mujoco>
  <worldbody>
    <body name="a"><joint name="j1" axis="0 0 1"/>{BODY}
      <{tag} count="2"><body name="b"><joint name="j2"/>{BODY}</body></{tag}>
    </body>
  </worldbody>
</mujoco>"""
        refused(tmp_path, hidden, f"<{tag}> is not supported", line=4)
    mesh = """<mujoco>
  <asset><mesh name="m" file="m.stl"/></asset>
  <worldbody>
    <body name="a"><joint name="j" axis="0 0 1"/>
      <geom type="sphere" size="0.1"/><geom type="mesh" mesh="m"/>
    </body>
  </worldbody>
</mujoco>"""
    refused(tmp_path, mesh, "body 'a'", "mesh geom", "<inertial>", line=4)


def test_springs_dampers_on_the_free_root_imported_negative_refused(tmp_path):
    text = f"""<mujoco>
  <default><joint damping="0.5"/></default>
  <worldbody>
    <body name="torso"><joint name="root" type="free"/>{BODY}
      <body name="head"><joint name="neck" type="ball" stiffness="3"/>{BODY}</body>
      <body name="tail"><joint name="wag" axis="0 0 1" armature="0.1"/>{BODY}</body>
    </body>
  </worldbody>
</mujoco>"""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        system = titopfmu.import_mjcf(write(tmp_path, text))
    got = [(u.what, u.line) for w in record for u in getattr(w.message, "unimported", [])]
    assert got == [], got
    assert system.blocks["torso"].damping == 0.5  # tests/test_free_joint_laws.py
    assert system.blocks["head"].damping == 0.5  # imported (tests/test_ball_joint_laws.py)
    assert system.blocks["head"].stiffness == 3.0  # imported (tests/test_ball_joint_laws.py)
    assert isinstance(system.blocks["tail_tau"], titopfmu.JointSpringDamper)
    assert system.blocks["tail"].armature == 0.1  # imported (tests/test_armature_massless.py)
    assert isinstance(system.blocks["head_tau"], titopfmu.Constant)
    refused(tmp_path, text.replace('stiffness="3"', 'stiffness="-3"'), "joint 'neck'",
            "stiffness -3 is negative", line=5)  # fmt: skip
    refused(tmp_path, text.replace('stiffness="3"', 'stiffness="stiff"'), "joint 'neck'",
            "<joint stiffness> 'stiff' is not a finite number", line=5)  # fmt: skip
    refused(tmp_path, text.replace('type="free"', 'type="free" damping="-1"'),
            "joint 'root'", "damping -1 is negative", line=4)  # fmt: skip


def test_the_documented_table_is_the_imports_table():
    """docs/model-files.md shows MJCF_RULES, the table the import's warning is made from."""
    from pathlib import Path

    from titopfmu.mjcf import MJCF_RULES
    from titopfmu.urdf import rules_table

    docs = (Path(__file__).resolve().parent.parent / "docs" / "model-files.md").read_text()
    start = "<!-- generated from titopfmu.mjcf.MJCF_RULES: MJCF elements -->\n"
    table = docs[docs.index(start) + len(start) : docs.index("\n<!-- end of MJCF elements -->")]
    assert table == rules_table(MJCF_RULES)


# -- several joints in one body, several top-level trees, unnamed bodies ----------------------

MULTI = """<mujoco model="multi">
  <compiler angle="radian"/>
  <option gravity="0.3 -0.2 -9.8"/>
  <default>
    <joint damping="0.2" armature="0.01"/>
    <default class="soft"><joint stiffness="3" springref="0.2"/></default>
  </default>
  <worldbody>
    <body name="floor" pos="0 0 -1"><geom type="plane" size="1 1 0.1"/></body>
    <body name="arm" pos="0.1 0.2 0.5" euler="0.3 -0.2 0.1" childclass="soft">
      <joint name="yaw" type="hinge" axis="0 0 1" pos="0.05 0 0" ref="0.3"/>
      <joint name="reach" type="slide" axis="1 0.2 0" pos="0 0.1 0"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.05" mass="1.5"/>
      <joint name="pitch" type="hinge" axis="0 1 0.3" pos="0.1 0 0.05" range="-1 1"/>
      <body pos="0.4 0 0" quat="0.9 0.1 0.2 0">
        <joint name="twist" type="hinge" axis="1 0 0" pos="0.03 0 0" armature="0.02"/>
        <joint name="wrist" type="ball" pos="0 0 0.02" damping="0" stiffness="0"/>
        <inertial pos="0.05 0.01 0" mass="0.5" diaginertia="0.002 0.003 0.004"/>
      </body>
    </body>
    <body name="cart" pos="0 1 0">
      <joint name="cx" type="slide" axis="1 0 0"/>
      <joint type="slide" axis="0 1 0" ref="0.1"/>
      <geom type="box" size="0.1 0.1 0.1" mass="2" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
</mujoco>
"""


def test_several_joints_in_one_body_match_mujoco(tmp_path):
    """MULTI has three joints in one body (hinge, slide, hinge, each at its own pos and axis,
    a geom between them, a ref, springs from the body's childclass), a hinge and a ball in an
    unnamed body (MuJoCo refuses a rotation after a ball), a second top-level tree (a cart on
    two slides, one unnamed) after a static top-level body, and a geom without contacts:
    accelerations at random states against MuJoCo's own model of the file (contacts off;
    damping is zero on the ball joint, where it would not be imported)."""
    path = write(tmp_path, MULTI)
    system = imported(path)
    ref = MuJoCoOf(path, system)
    assert ref.m.nv == 1 + 1 + 1 + 3 + 1 + 1 + 1
    worst = ref.worst_error(np.random.default_rng(5))
    print(f"several joints in one body: relative acceleration error {worst:.2g} (MuJoCo)")
    assert worst < 1e-10, f"relative acceleration error {worst:.3g}"


def test_several_joints_in_one_body_are_a_chain_named_after_the_body(tmp_path):
    path = write(tmp_path, MULTI)
    with pytest.warns(MjcfWarning) as record:
        system = titopfmu.import_mjcf(path)
    got = {(u.what, u.line) for u in record[0].message.unimported}
    assert got == {("<geom>", 9), ("<geom>", 13)}, got  # the plane, the capsule
    assert system.urdf_joints == {
        "yaw": "arm__yaw", "reach": "arm__reach", "pitch": "arm",
        "twist": "arm_body1__twist", "wrist": "arm_body1",
        "cx": "cart__cx", **{k: "cart" for k in system.urdf_joints if k not in (
            "yaw", "reach", "pitch", "wrist", "twist", "cx")},
    }  # fmt: skip
    assert len(system.urdf_joints) == 7
    assert isinstance(system.blocks["world"], titopfmu.Ground)
    m = mujoco.MjModel.from_xml_path(path)
    for block, body in (("arm__yaw", None), ("arm__reach", None), ("arm", "arm"),
                        ("arm_body1__twist", None), ("arm_body1", 3), ("cart__cx", None),
                        ("cart", "cart")):  # fmt: skip
        expected = 0.0 if body is None else m.body(body).mass[0]
        assert system.blocks[block].mass == pytest.approx(expected, rel=1e-14), block
    assert isinstance(system.blocks["arm_body1"], titopfmu.SphericalBody)
    np.testing.assert_array_equal(system.blocks["arm_body1"].armature, [0.01] * 3)
    assert system.blocks["arm_body1__twist"].armature == 0.02
    assert system.blocks["arm__yaw"].armature == 0.01
    laws = {n: (b.k, b.d) for n, b in system.blocks.items()
            if isinstance(b, titopfmu.JointSpringDamper)}  # fmt: skip
    assert laws == {"arm__yaw_tau": (3.0, 0.2), "arm__reach_tau": (3.0, 0.2),
                    "arm_tau": (3.0, 0.2), "arm_body1__twist_tau": (3.0, 0.2),
                    "cart__cx_tau": (0.0, 0.2), "cart_tau": (0.0, 0.2)}  # fmt: skip
    assert system.blocks["arm_tau"].limited and not system.blocks["arm__yaw_tau"].limited
    assert system.blocks["arm__yaw"].q0 == pytest.approx(0.3)  # qpos0: the ref


def test_unnamed_bodies_are_named_after_their_parent(tmp_path):
    unnamed = f"""<mujoco>
  <worldbody>
    <body name="a"><joint name="j" axis="0 0 1"/>{BODY}
      <body pos="0.1 0 0"><joint name="k"/>{BODY}</body>
      <body pos="0 0.1 0"><joint name="l"/>{BODY}
        <body pos="0 0 0.1"><joint name="n"/>{BODY}</body>
      </body>
    </body>
  </worldbody>
</mujoco>"""
    system = imported(write(tmp_path, unnamed))
    assert system.urdf_joints == {"j": "a", "k": "a_body1", "l": "a_body2", "n": "a_body2_body1"}


def test_a_chain_joint_without_inertia_about_it_names_the_joint_and_its_line(tmp_path):
    """Two hinges in a body whose mass is a point on the first one's axis: the first joint's
    subtree (the massless intermediate body and the point mass) has no inertia about it, the
    second one's has."""
    text = """<mujoco>
  <worldbody>
    <body name="a">
      <joint name="j1" axis="0 0 1"/>
      <joint name="j2" axis="1 0 0"/>
      <inertial pos="0 0 0.2" mass="1" diaginertia="0 0 0"/>
    </body>
  </worldbody>
</mujoco>"""
    err = refused(tmp_path, text, "joint 'j1' of body 'a'", "massless", line=4)
    assert "bodys" not in str(err) and "link" not in str(err)


def test_settotalmass_scales_the_masses_as_mujoco_does(tmp_path, monkeypatch):
    """MuJoCo scales every body's mass and inertia so that their total, the static table's
    included, is <compiler settotalmass> (Pinocchio's parser ignores it): the masses and the
    accelerations against MuJoCo's own model; beside a free-flying body it is refused."""
    monkeypatch.chdir(tmp_path)  # MuJoCo's MUJOCO_LOG.TXT (settotalmass is deprecated there)
    text = """<mujoco>
  <compiler settotalmass="10"/>
  <worldbody>
    <body name="arm"><joint name="j" axis="0 0 1"/>
      <geom type="capsule" fromto="0 0 0 0.5 0 0" size="0.05" mass="1"/>
      <body name="tip" pos="0.5 0 0"><joint name="k" axis="0 1 0"/>
        <geom type="box" size="0.1 0.05 0.02" pos="0.1 0 0" mass="1"/>
      </body>
    </body>
    <body name="table" pos="1 0 0"><geom type="box" size="0.2 0.2 0.2" mass="3"/></body>
  </worldbody>
</mujoco>"""
    path = write(tmp_path, text)
    system = imported(path)
    m = mujoco.MjModel.from_xml_path(path)
    for name in ("arm", "tip"):
        assert system.blocks[name].mass == pytest.approx(m.body(name).mass[0], rel=1e-14)
    assert m.body("arm").mass[0] == pytest.approx(2.0)
    worst = MuJoCoOf(path, system).worst_error(np.random.default_rng(2))
    assert worst < 1e-10, worst
    free = text.replace('<joint name="j" axis="0 0 1"/>', "<freejoint/>")
    refused(tmp_path, free, "body 'arm'", "settotalmass", line=4)
