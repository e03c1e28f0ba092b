"""Gymnasium's MuJoCo models (gymnasium/envs/mujoco/assets, the 14 XML files of Gymnasium 1.4),
imported as they are: every one imports with one warning, and its accelerations at random states
agree with MuJoCo's own (``mj_forward``'s ``qacc`` of the same file) and, where Pinocchio's MJCF
parser reads the file as it is, with Pinocchio's (``pin.aba`` of its model of the same file).

What is compared: the free dynamics of the joint tree with the joints' armature, damping and
springs (MuJoCo's passive forces), at states inside the joints' ranges, without contacts,
actuators (zero controls), tendons or fluid forces; these are not imported and listed in the
import's warning (``<geom>`` contacts, ``<actuator>``, ``<tendon>``, ``<option density
viscosity>``), and switched off in MuJoCo's model for the comparison (``mjDSBL_CONTACT``,
``mjDSBL_LIMIT``: the limits of the humanoids' tendons; ``density`` and ``viscosity`` 0).

Readings that differ between the tools, and how they are compared here:

* MuJoCo's free joint's velocity is the body origin's in the world frame (angular: body frame);
  titopfmu's root RigidBody and Pinocchio's free flyer give both in the body frame: MuJoCo's
  ``qacc[0:3]`` is R (v̇ + ω x v) of titopfmu's, and quaternions are (w, x, y, z) in MuJoCo,
  (x, y, z, w) in Pinocchio;
* Pinocchio's MJCF parser makes the joints of one body one composite joint, titopfmu a chain of
  joint bodies (massless intermediate ones): both are in MuJoCo's joint order;
* Pinocchio does not read a joint's stiffness and springref, nor ``<option gravity>``: its
  passive efforts here are -damping v - stiffness (q - springref) with MuJoCo's numbers, and its
  gravity MuJoCo's; it names unnamed bodies alike (ant) and reads the first top-level body only
  (reacher, pusher), and leaves geoms without contacts out of a body's inertia (reacher, pusher,
  swimmer) and ignores ``<compiler settotalmass>`` (half_cheetah: MuJoCo scales its masses to
  14 kg, as the import does): those files are compared with MuJoCo only.

The relative error is max |a - a_ref| / max(1, max |a_ref|).
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

mujoco = pytest.importorskip("mujoco")
gymnasium = pytest.importorskip("gymnasium")
pin = pytest.importorskip("pinocchio")

from mujoco_reference import MuJoCoOf  # noqa: E402

import titopfmu  # noqa: E402
from titopfmu.mjcf import MjcfWarning  # noqa: E402

ASSETS = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets"
FILES = sorted(p.name for p in ASSETS.glob("*.xml"))
#: Pinocchio's MJCF parser reads these as MuJoCo does (see the module docstring)
PINOCCHIO_READS = {"hopper.xml", "humanoid.xml", "humanoidstandup.xml",
                   "inverted_double_pendulum.xml", "inverted_pendulum.xml", "point.xml",
                   "walker2d.xml", "walker2d_v5.xml"}  # fmt: skip
TOLERANCE = 1e-10


def test_gymnasium_ships_its_14_models():
    assert len(FILES) == 14, FILES


def imported(path: Path):
    with pytest.warns(MjcfWarning) as record:
        system = titopfmu.import_mjcf(path)
    warned = [w for w in record if issubclass(w.category, MjcfWarning)]
    assert len(warned) == 1
    return system, warned[0].message


def pinocchio_accelerations(path: Path, ref: MuJoCoOf, x) -> np.ndarray:
    """Pinocchio's aba on its own model of the file, at MuJoCo's (qpos, qvel) of x, with the
    passive efforts -damping v - stiffness (q - springref) from MuJoCo's reading, in MuJoCo's
    convention (free joint: world-frame linear velocity)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = pin.buildModelFromMJCF(str(path))
    assert (model.nq, model.nv) == (ref.m.nq, ref.m.nv)
    model.gravity = pin.Motion(np.array(ref.m.opt.gravity), np.zeros(3))
    qpos, qvel = ref.qpos_qvel(x)
    q, v = qpos.copy(), qvel.copy()
    free = [(iq, iv) for kind, iq, iv, _, _ in ref.joints if kind == mujoco.mjtJoint.mjJNT_FREE]
    for iq, iv in free:  # Pinocchio: (x, y, z, w), body-frame linear velocity
        q[iq + 3 : iq + 7] = qpos[[iq + 4, iq + 5, iq + 6, iq + 3]]
        R = Rotation.from_quat(q[iq + 3 : iq + 7]).as_matrix()
        v[iv : iv + 3] = R.T @ qvel[iv : iv + 3]
    tau = np.zeros(model.nv)
    for kind, iq, iv, _, _ in ref.joints:
        if kind != mujoco.mjtJoint.mjJNT_FREE:
            j = int(ref.m.dof_jntid[iv])
            tau[iv] = (-ref.m.dof_damping[iv] * qvel[iv]
                       - ref.m.jnt_stiffness[j] * (qpos[iq] - ref.m.qpos_spring[iq]))  # fmt: skip
    assert np.allclose(model.armature, ref.m.dof_armature)  # Pinocchio reads armature alike
    a = np.array(pin.aba(model, model.createData(), q, v, tau))
    for iq, iv in free:  # back to MuJoCo's: d/dt (R v_body) = R (v̇ + ω x v)
        R = Rotation.from_quat(q[iq + 3 : iq + 7]).as_matrix()
        a[iv : iv + 3] = R @ (a[iv : iv + 3] + np.cross(v[iv + 3 : iv + 6], v[iv : iv + 3]))
    return a


@pytest.mark.parametrize("filename", FILES)
def test_every_gymnasium_model_imports_and_matches_mujoco(filename, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo's MUJOCO_LOG.TXT (settotalmass is deprecated there)
    path = ASSETS / filename
    system, warning = imported(path)
    listed = {u.what for u in warning.unimported}
    root = ET.parse(path).getroot()
    assert "<actuator>" in listed  # zero controls below
    ref = MuJoCoOf(path, system)
    if np.any(ref.m.geom_contype | ref.m.geom_conaffinity):
        assert "<geom>" in listed  # contacts off below
    if root.find("tendon/fixed") is not None:
        assert "<tendon>" in listed
    option = root.find("option")
    if option is not None and {"density", "viscosity"} & set(option.attrib):
        assert "<option density viscosity>" in listed
    rng = np.random.default_rng(7)
    worst = worst_pin = 0.0
    for _ in range(10):
        x = ref.random_state(rng)
        ours, theirs = ref.accelerations(x)
        scale = max(1.0, np.max(np.abs(theirs)))
        worst = max(worst, np.max(np.abs(ours - theirs)) / scale)
        if filename in PINOCCHIO_READS:
            a_pin = pinocchio_accelerations(path, ref, x)
            worst_pin = max(worst_pin, np.max(np.abs(ours - a_pin)) / scale)
    print(f"{filename}: nv {ref.m.nv}, against MuJoCo {worst:.2g}, Pinocchio {worst_pin:.2g}")
    assert worst < TOLERANCE, f"{filename}: relative acceleration error {worst:.3g} (MuJoCo)"
    assert worst_pin < TOLERANCE, f"{filename}: relative error {worst_pin:.3g} (Pinocchio)"
