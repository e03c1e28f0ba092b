"""URDF import (titopfmu.import_urdf) against Pinocchio's own model of the same URDF: real robot
descriptions of the PyPI package example-robot-data (fixed and floating base), accelerations at
random states (pin.aba) and 2 s trajectories (pin.aba integrated by scipy); and bad URDFs."""

from __future__ import annotations

import importlib.metadata
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

pin = pytest.importorskip("pinocchio")

import titopfmu  # noqa: E402
from titopfmu import Engine, FreeBody, RigidBody, SphericalBody  # noqa: E402
from titopfmu.urdf import UrdfError, UrdfWarning  # noqa: E402

G = np.array([0.0, 0.0, -9.81])


def erd(filename: str) -> str:
    """Path of a URDF shipped by example-robot-data."""
    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed (pip install example-robot-data)")
    for f in files:
        if str(f).endswith("/" + filename):
            return str(f.locate())
    pytest.skip(f"{filename} not in example-robot-data")


#: panda.urdf of example-robot-data without its gripper's <mimic> (refused: the second finger
#: follows the first): both fingers independent prismatic joints, as Pinocchio reads the file
#: with mimic=False; a copy in the test's folder (its meshes are never read)
PANDA_NO_MIMIC = "panda_no_mimic.urdf"


def robot_path(filename: str, folder) -> str:
    """A URDF of example-robot-data, or the panda without its mimic written in ``folder``."""
    if filename != PANDA_NO_MIMIC:
        return erd(filename)
    text = Path(erd("panda.urdf")).read_text()
    stripped = re.sub(r"<mimic\b[^>]*/>", "", text)
    assert stripped.count("<mimic") == 0 < text.count("<mimic")
    path = Path(folder) / PANDA_NO_MIMIC
    path.write_text(stripped)
    return str(path)


class PinocchioOfUrdf:
    """Pinocchio's model of the URDF (built here, independently of the import) and the map
    between its (q, v) and the titopfmu engine state, joint by joint through the URDF joint
    names (``system.urdf_joints``). The joint efforts are the joint laws
    ``tau = -k (q - q_ref) - d q_dot - f_c tanh(q_dot / v_c) + stops`` of the 1-dof joints: d
    and f_c are Pinocchio's own reading of the file's damping and friction (``model.damping``,
    ``model.friction``; v_c the import's 1e-3), k and q_ref come from ``springs`` (joint name ->
    (k, q_ref)), which Pinocchio does not read; where the import made the joint ``limited``, its
    stops with the law's limits, stiffness and damping (the import's choice of scale, tested on
    its own in tests/test_joint_limits_friction.py), the limits equal to Pinocchio's reading of
    a URDF (``lowerPositionLimit``, ``upperPositionLimit``; its MJCF parser subtracts a joint's
    ``ref`` from its range, where MuJoCo limits the coordinate itself), the stop's formula
    written again here."""

    def __init__(self, path: str, system, floating: bool, model=None, gravity=G,
                 springs: dict | None = None) -> None:  # fmt: skip
        if model is None:
            model = (
                pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
                if floating
                else pin.buildModelFromUrdf(path)
            )
        self.model = model
        self.model.gravity = pin.Motion(np.asarray(gravity, dtype=float), np.zeros(3))
        self.data = self.model.createData()
        self.engine = Engine(system)
        self.slices = self.engine.plan.state_slices
        self.joints = []  # (pinocchio joint, block, kind)
        for j in range(1, self.model.njoints):
            block = system.blocks[system.urdf_joints[self.model.names[j]]]
            jm = self.model.joints[j]
            kind = (
                "root"
                if isinstance(block, RigidBody)
                else "free"
                if isinstance(block, FreeBody)
                else "ball"
                if isinstance(block, SphericalBody)
                else ("unbounded" if jm.nq == 2 else "1dof")
            )
            self.joints.append((jm, block, kind))
        self.laws = []  # (state slice of the joint, v index, k, d, q_ref, f_c, stops or None)
        for jm, block, kind in self.joints:
            if kind in ("1dof", "unbounded"):
                k, q_ref = (springs or {}).get(self.model.names[jm.id], (0.0, 0.0))
                d = float(self.model.damping[jm.idx_v])
                fc = float(self.model.friction[jm.idx_v])
                law = system.blocks[system.source(f"{block.name}.joint.tau").split(".")[0]]
                stops = None
                if getattr(law, "limited", False):
                    lo, up = (float(a[jm.idx_q]) for a in (self.model.lowerPositionLimit,
                                                           self.model.upperPositionLimit))
                    assert kind == "1dof"
                    if str(path).endswith(".urdf"):
                        assert (lo, up) == (law.lower, law.upper)
                    stops = (law.lower, law.upper, law.k_stop, law.d_stop)
                if k or d or fc or stops:
                    self.laws.append((self.slices[block.name], jm.idx_v, k, d, q_ref, fc, stops))
        # a ball joint's damping (SphericalBody damping: -d ω, ω its last 3 states): Pinocchio
        # 4.1's MJCF parser leaves it zero; the import's value (against MuJoCo's own damping in
        # tests/test_ball_joint_laws.py)
        self.ball_dampers = []
        for jm, block, kind in self.joints:
            d = getattr(block, "damping", 0.0)
            if kind == "ball" and d:
                self.ball_dampers.append((self.slices[block.name], jm.idx_v, d))

    def tau(self, x):
        """The joint laws' efforts at the engine state x (1-dof joints: [q, q_dot])."""
        tau = np.zeros(self.model.nv)
        for sl, iv, k, d, q_ref, fc, stops in self.laws:
            q, qd = x[sl]
            tau[iv] = -k * (q - q_ref) - d * qd - fc * np.tanh(qd / 1e-3)
            if stops is not None:  # spring + damping bounded by it, pushing out
                lo, up, ks, ds = stops
                for p, v, sign in ((lo - q, -qd, 1.0), (q - up, qd, -1.0)):
                    if p > 0:
                        tau[iv] += sign * (ks * p + np.clip(ds * v, -ks * p, ks * p))
        for sl, iv, d in self.ball_dampers:
            tau[iv : iv + 3] = -d * x[sl][4:7]
        return tau

    def q_v(self, x):
        q, v = np.zeros(self.model.nq), np.zeros(self.model.nv)
        for jm, block, kind in self.joints:
            xs = x[self.slices[block.name]]
            iq, iv = jm.idx_q, jm.idx_v
            if kind == "root":
                quat = xs[[4, 5, 6, 3]]
                q[iq : iq + 7] = np.concatenate([xs[0:3], quat / np.linalg.norm(quat)])
                v[iv : iv + 6] = xs[7:13]
            elif kind == "ball":  # [qw, qx, qy, qz, ω_r (child frame)]; Pinocchio [x, y, z, w]
                q[iq : iq + 4] = xs[[1, 2, 3, 0]] / np.linalg.norm(xs[0:4])
                v[iv : iv + 3] = xs[4:7]
            elif kind == "unbounded":
                q[iq : iq + 2] = [np.cos(xs[0]), np.sin(xs[0])]
                v[iv] = xs[1]
            else:
                q[iq], v[iv] = xs
        return q, v

    def aba(self, x):
        q, v = self.q_v(x)
        return pin.aba(self.model, self.data, q, v, self.tau(x))

    def titop_acc(self, dx):
        """titopfmu's derivative in Pinocchio's v order."""
        a = np.zeros(self.model.nv)
        for jm, block, kind in self.joints:
            d = dx[self.slices[block.name]]
            a[jm.idx_v : jm.idx_v + jm.nv] = {"root": d[7:13], "ball": d[4:7]}.get(kind, d[1])
        return a

    def rhs(self, t, x):
        """The titopfmu state's rate with Pinocchio's accelerations (quaternion kinematics of
        the root as in the engine's state definition)."""
        a = self.aba(x)
        dx = np.zeros_like(x)

        def quaternion_rate(w, om):  # [w, x, y, z], ω in the rotated frame
            qw, qx, qy, qz = w
            return 0.5 * np.array(
                [
                    -qx * om[0] - qy * om[1] - qz * om[2],
                    qw * om[0] + qy * om[2] - qz * om[1],
                    qw * om[1] + qz * om[0] - qx * om[2],
                    qw * om[2] + qx * om[1] - qy * om[0],
                ]
            )

        for jm, block, kind in self.joints:
            sl = self.slices[block.name]
            xs = x[sl]
            if kind == "root":
                w, vx = xs[3:7], xs[7:13]
                R = Rotation.from_quat(w[[1, 2, 3, 0]]).as_matrix()
                dq = quaternion_rate(w, vx[3:6])
                dx[sl] = np.concatenate([R @ vx[0:3], dq, a[jm.idx_v : jm.idx_v + 6]])
            elif kind == "ball":
                dx[sl] = np.concatenate([quaternion_rate(xs[0:4], xs[4:7]),
                                         a[jm.idx_v : jm.idx_v + 3]])  # fmt: skip
            else:
                dx[sl] = [xs[1], a[jm.idx_v]]
        return dx


def import_quiet(path, floating):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UrdfWarning)
        return titopfmu.import_urdf(path, floating_base=floating, gravity=G)


def random_state(ref: PinocchioOfUrdf, rng) -> np.ndarray:
    x = ref.engine.initial_state()
    for _, block, kind in ref.joints:
        sl = ref.slices[block.name]
        if kind == "root":
            qx, qy, qz, qw = Rotation.random(random_state=rng).as_quat()
            x[sl] = np.concatenate([rng.uniform(-1, 1, 3), [qw, qx, qy, qz], rng.uniform(-1, 1, 6)])
        elif kind == "ball":
            qx, qy, qz, qw = Rotation.random(random_state=rng).as_quat()
            x[sl] = np.concatenate([[qw, qx, qy, qz], rng.uniform(-2, 2, 3)])
        else:
            x[sl] = [rng.uniform(-np.pi, np.pi), rng.uniform(-2, 2)]
    return x


def worst_acceleration_error(ref: PinocchioOfUrdf, rng, n: int = 25) -> float:
    """Largest relative gap between the engine's accelerations and ``pin.aba`` at ``n`` random
    states (relative to the largest acceleration, at least 1)."""
    worst = 0.0
    for _ in range(n):
        x = random_state(ref, rng)
        a_pin = ref.aba(x)
        a_titop = ref.titop_acc(ref.engine.derivative(0.0, x))
        worst = max(worst, np.max(np.abs(a_titop - a_pin)) / max(1.0, np.max(np.abs(a_pin))))
    return worst


ROBOTS = [
    ("ur5_robot.urdf", False, 6),
    (PANDA_NO_MIMIC, False, 9),
    ("talos_left_arm.urdf", False, 7),
    ("double_pendulum_continuous.urdf", False, 2),
    ("solo12.urdf", True, 18),
]


@pytest.mark.parametrize("filename,floating,nv", ROBOTS)
def test_accelerations_match_pinocchio(filename, floating, nv, tmp_path):
    """Pinocchio's ABA with the joints' damping efforts (the panda's 0.003 and 0.3, talos's 1.0:
    the import's JointSpringDamper laws against Pinocchio's own reading of <dynamics>)."""
    path = robot_path(filename, tmp_path)
    system = import_quiet(path, floating)
    ref = PinocchioOfUrdf(path, system, floating)
    assert ref.model.nv == nv
    laws = [b for b in system.blocks.values() if isinstance(b, titopfmu.JointSpringDamper)]
    assert len(laws) == len(ref.laws)  # a law per damped joint, as Pinocchio reads the file
    if filename in (PANDA_NO_MIMIC, "talos_left_arm.urdf"):
        assert len(laws) == nv
    worst = worst_acceleration_error(ref, np.random.default_rng(1))
    assert worst < 1e-9, f"{filename}: max relative acceleration error {worst:.3g}"


@pytest.mark.parametrize(
    "filename,floating", [("ur5_robot.urdf", False), (PANDA_NO_MIMIC, False), ("solo12.urdf", True)]
)
def test_two_second_trajectories_match_pinocchio(filename, floating, tmp_path):
    path = robot_path(filename, tmp_path)
    system = import_quiet(path, floating)
    ref = PinocchioOfUrdf(path, system, floating)
    rng = np.random.default_rng(7)
    x0 = random_state(ref, rng)
    x0 = np.where(np.abs(x0) > 0, x0 * 0.5, x0)  # gentler start
    for _, block, kind in ref.joints:  # keep the root quaternion unit
        if kind == "root":
            sl = ref.slices[block.name]
            x0[sl][3:7] /= np.linalg.norm(x0[sl][3:7])
    t = np.linspace(0.0, 2.0, 41)
    sol = solve_ivp(ref.rhs, (0.0, 2.0), x0, method="DOP853", rtol=1e-11, atol=1e-12, t_eval=t)
    assert sol.success
    record = []
    for _, block, kind in ref.joints:
        if kind == "root":
            record += [f"{block.name}.position[{i}]" for i in (1, 2, 3)]
        else:
            record.append(f"{block.name}.joint.m[3]")
    res = ref.engine.simulate(
        2.0, output_interval=0.05, record=record, x0=x0, rtol=1e-11, atol=1e-12
    )
    ours = np.column_stack([res[c] for c in record])
    theirs = []
    for _, block, kind in ref.joints:
        sl = ref.slices[block.name]
        if kind == "root":
            theirs += [sol.y[sl.start + i] for i in range(3)]
        else:
            theirs.append(sol.y[sl.start])
    theirs = np.column_stack(theirs)
    np.testing.assert_allclose(res.time, t, atol=1e-12)
    err = np.max(np.abs(ours - theirs))
    print(f"{filename}: 2 s trajectory, max gap {err:.3g}")
    assert err < 1e-6, f"{filename}: trajectory gap {err:.3g}"
    assert np.max(np.ptp(theirs, axis=0)) > 0.1  # it really moves


# -- bad input --------------------------------------------------------------------------------

INERTIAL = (
    '<inertial><mass value="{m}"/><inertia ixx="{i}" iyy="0.1" izz="0.1" ixy="0" ixz="0" '
    'iyz="0"/></inertial>'
)


def urdf(joints: str, links=("a", "b", "c"), mass=1.0, ixx=0.1, mesh=False) -> str:
    geo = '<visual><geometry><mesh filename="package://nowhere/missing.stl"/></geometry></visual>'
    body = "\n".join(
        f'<link name="{n}">{INERTIAL.format(m=mass, i=ixx)}{geo if mesh else ""}</link>'
        for n in links
    )
    return f'<robot name="r">\n{body}\n{joints}\n</robot>\n'


def joint(name, kind, parent, child, extra=""):
    return (
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="0 0 0.5" rpy="0.1 0.2 0.3"/><axis xyz="0 1 0"/>{extra}</joint>'
    )


def test_missing_meshes_are_ignored_and_limits_warn_once(tmp_path):
    text = urdf(
        joint("j1", "revolute", "a", "b", '<limit lower="-1" upper="1" effort="1" velocity="1"/>')
        + "\n"
        + joint("j2", "continuous", "b", "c"),
        mesh=True,
    )
    p = tmp_path / "r.urdf"
    p.write_text(text)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = titopfmu.import_urdf(str(p))
    assert [x.category for x in w].count(UrdfWarning) == 1
    assert s.urdf_joints == {"j1": "b", "j2": "c"}
    Engine(s).derivative(0.0, Engine(s).initial_state())


def test_unsupported_joint_type_names_joint_and_line(tmp_path):
    text = urdf(
        joint("j1", "revolute", "a", "b", '<limit lower="-1" upper="1" effort="1" velocity="1"/>')
        + "\n"
        + joint("slide", "planar", "b", "c")
    )
    p = tmp_path / "planar.urdf"
    p.write_text(text)
    with pytest.raises(UrdfError) as exc:
        import_quiet(str(p), False)
    e = exc.value
    assert e.file == str(p) and "joint 'slide'" in str(e) and "planar" in str(e)
    assert e.line == text[: text.index('name="slide"')].count("\n") + 1


def test_non_physical_inertia_names_link_and_line():
    text = urdf(
        joint("j1", "continuous", "a", "b") + "\n" + joint("j2", "continuous", "b", "c"), ixx=-3.0
    )
    with pytest.raises(UrdfError) as exc:
        import_quiet(text, False)
    e = exc.value
    assert "link 'b'" in str(e) and "inertia" in str(e) and e.file == "<urdf string>"
    assert e.line == text[: text.index('<link name="b"')].count("\n") + 1


def test_loop_is_refused():
    text = urdf(
        joint("j1", "continuous", "a", "b")
        + "\n"
        + joint("j2", "continuous", "b", "c")
        + "\n"
        + joint("j3", "continuous", "c", "b")
    )
    with pytest.raises(UrdfError, match="<urdf string>.*URDF parser refused"):
        import_quiet(text, False)


def test_massless_moving_link_is_refused_when_its_joint_moves_nothing():
    """A massless leaf link (no mass, no inertia) is refused naming it; one with an inertia
    about its axis is not (tests/test_armature_massless.py: massless links that carry others)."""
    text = urdf(joint("j1", "continuous", "a", "b"), links=("a", "b"))
    massless = text.replace('<mass value="1.0"/><inertia ixx="0.1" iyy="0.1" izz="0.1"',
                            '<mass value="0"/><inertia ixx="0" iyy="0" izz="0"', 2)
    with pytest.raises(UrdfError, match="link 'b'.*massless") as exc:
        import_quiet(massless, False)
    assert exc.value.line == massless[: massless.index('<link name="b"')].count("\n") + 1
    spinning = text.replace('<mass value="1.0"/>', '<mass value="0"/>')
    assert import_quiet(spinning, False).blocks["b"].mass == 0.0


# -- what the import leaves out, and mimic joints ---------------------------------------------


def test_mimic_joints_are_imported_as_joint_mimic_blocks(tmp_path):
    """panda.urdf's second finger mimics the first: a JointMimic from the leader's joint.m to the
    follower's joint.tau (tests/test_mimic.py checks the dynamics against Pinocchio's mimic
    model); the follower's own <limit> and <dynamics> are listed, with their lines."""
    path = erd("panda.urdf")
    with pytest.warns(UrdfWarning) as w:
        s = titopfmu.import_urdf(path)
    mm = s.blocks["panda_rightfinger_mimic"]
    assert isinstance(mm, titopfmu.JointMimic) and (mm.multiplier, mm.offset) == (1.0, 0.0)
    assert s.source("panda_rightfinger.joint.tau") == "panda_rightfinger_mimic.tau"
    assert s.source("panda_rightfinger_mimic.m") == "panda_leftfinger.joint.m"
    msg = str(w[0].message)
    assert "<limit> of joint 'panda_finger_joint2' (on a mimic follower" in msg
    three = urdf(
        joint("j1", "continuous", "a", "b") + "\n"
        + joint("j2", "continuous", "b", "c",
                '<mimic joint="j1" multiplier="-2" offset="0.1"/>')
    )  # fmt: skip
    s = import_quiet(three, False)
    mm = s.blocks["c_mimic"]
    assert (mm.multiplier, mm.offset) == (-2.0, 0.1)


def test_a_mimic_on_a_fixed_joint_has_no_effect_and_is_accepted():
    """talos_left_arm.urdf's gripper links are fixed and carry <mimic> elements: no effect."""
    text = urdf(
        joint("j1", "continuous", "a", "b") + "\n"
        + joint("j2", "fixed", "b", "c", '<mimic joint="j1"/><limit lower="0" upper="1" '
                'effort="1" velocity="1"/><dynamics damping="3"/>')
    )  # fmt: skip
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = titopfmu.import_urdf(text)
    assert s.urdf_joints == {"j1": "b"} and not w  # nothing left out


def test_crosscheck_of_the_panda_with_its_mimic_passes(tmp_path, capsys):
    """Issue 32's title: ``titopfmu crosscheck panda.urdf --no-cosim`` passes, the gripper's
    mimic kept (the Pinocchio reference makes the follower Pinocchio's mimic joint): the
    accelerations at random states and the 2 s fall onto the joints' stops."""
    import json

    from titopfmu.model_cli import main

    path = erd("panda.urdf")
    out = tmp_path / "cc"
    assert main(["crosscheck", path, "--out", str(out), "--no-cosim"]) == 0
    printed = capsys.readouterr().out
    assert "panda: PASS" in printed and "FMUs + master: not run;" in printed
    r = json.loads((out / "results.json").read_text())
    print(f"panda with its mimic: accelerations {r['acc_error']:.3g}, 2 s trajectory "
          f"{r['traj_error']:.3g}")  # fmt: skip
    assert r["acc_error"] < 1e-12 and r["traj_error"] < 1e-6
    assert "panda_rightfinger.joint.m[3]" in r["per_signal"]  # the follower compared too


def test_what_is_not_imported_is_listed_once_with_its_lines():
    text = (
        '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'  # 1
        '<link name="a"/>\n'  # 2
        f'<link name="b" colour="red">{INERTIAL.format(m=1.0, i=0.1)}\n'  # 3
        '<collision><geometry><box size="1 1 1"/></geometry></collision></link>\n'  # 4
        '<joint name="j1" type="revolute"><parent link="a"/><child link="b"/>\n'  # 5
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="5" velocity="2"/>\n'  # 6
        '<dynamics damping="0.5" friction="0.2"/></joint>\n'  # 7
        '<transmission name="t"><joint name="j1"/></transmission>\n'  # 8
        '<gazebo reference="b"/>\n'  # 9
        '<sensor name="s"/>\n'  # 10
        '</robot>\n'
    )  # fmt: skip
    with pytest.warns(UrdfWarning) as record:
        s = titopfmu.import_urdf(text)
    assert len(record) == 1
    w = record[0].message
    got = {(u.what, u.line) for u in w.unimported}
    assert got == {
        ("<link colour>", 3), ("<collision>", 4), ("<limit effort velocity>", 6),
        ("<transmission>", 8), ("<gazebo>", 9), ("<sensor>", 10),
    }, got  # fmt: skip
    message = str(w)
    assert "<limit effort velocity> (effort and velocity limits" in message
    assert "): line 6;" in message
    # damping, friction and position limits are imported (tests/test_joint_limits_friction.py)
    assert "damping" not in message and "friction" not in message and "lower" not in message
    law = s.blocks["b_tau"]
    assert isinstance(law, titopfmu.JointSpringDamper) and (law.k, law.d) == (0.0, 0.5)
    assert (law.friction, law.limited, law.lower, law.upper) == (0.2, True, -1.0, 1.0)


def test_damping_that_cannot_be_imported_is_listed_or_refused():
    """Damping on a floating joint is listed (the law is for 1-dof joints); a negative one is
    refused with the joint and the line."""
    floating = urdf(joint("j1", "floating", "a", "b", '<dynamics damping="2"/>'), links=("a", "b"))
    with pytest.warns(UrdfWarning) as record:
        s = titopfmu.import_urdf(floating)
    assert isinstance(s.blocks["b"], FreeBody) and isinstance(s.blocks["b_tau"], titopfmu.Constant)
    [u] = record[0].message.unimported
    assert u.what == "<dynamics damping>" and "1-dof" in u.note and u.line == 4
    negative = urdf(joint("j1", "continuous", "a", "b", '<dynamics damping="-1"/>'),
                    links=("a", "b"))  # fmt: skip
    with pytest.raises(UrdfError, match=r"<urdf string>:4: joint 'j1': .*damping.*negative"):
        import_quiet(negative, False)


def test_the_documented_table_is_the_imports_table():
    """docs/model-files.md shows URDF_RULES, the table the import's warning is made from."""
    from titopfmu.urdf import URDF_RULES, rules_table

    docs = (Path(__file__).resolve().parent.parent / "docs" / "model-files.md").read_text()
    start = "<!-- generated from titopfmu.urdf.URDF_RULES: URDF elements -->\n"
    table = docs[docs.index(start) + len(start) : docs.index("\n<!-- end of URDF elements -->")]
    assert table == rules_table(URDF_RULES)
