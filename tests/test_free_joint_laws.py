"""Free joint damping and springs (issue 32), as MuJoCo's free joint (engine_passive.c,
mj_springdamper, and -damping qvel): on a free-flying root (RigidBody) or a free joint body
(FreeBody), ``damping`` d gives -d v on the translation (v the body origin's velocity) and
-d ω on the rotation; ``stiffness`` k gives -k (p - p0) on the translation (p the origin's
position: world frame for the root, [OP]_{R_b} for a FreeBody) and -k θ on the rotation (θ the
rotation vector of q0^-1 q, body frame); p0 = ``spring_position``, q0 = ``spring_ref``. The
core evaluates them (titop_body.damping, stiffness, spring_ref, spring_pos); an MJCF
``<joint type="free">``'s damping and stiffness are the RigidBody root's, p0 and q0 MuJoCo's
``qpos_spring`` (the body's written pos and quat).

Tests: MuJoCo's own qfrc_spring and qfrc_damper against the formulas above (what MuJoCo does);
mj_forward accelerations at random states; an imported model's trajectory against MuJoCo's RK4
simulation at a small step; a FreeBody under a Ground against MuJoCo; the energy balance
E(t) - E(0) = -∫ d (|v|^2 + |ω|^2) dt (and conservation without damping); the whole-model FMU
against the engine; one FMU per block refusing them by name; bad values refused by name."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import titopfmu
from titopfmu import Constant, Engine, FreeBody, Ground, ParameterError, RigidBody, System
from titopfmu.mjcf import MjcfError

mujoco = pytest.importorskip("mujoco")

from mujoco_reference import MuJoCoOf  # noqa: E402

KF, DF = 3.5, 0.7  # the free joint's stiffness and damping in FREE

FREE = """<mujoco model="freespring">
  <compiler angle="radian"/>
  <option gravity="0.3 -0.2 -9.81"/>
  <default><joint damping="0.1"/></default>
  <worldbody>
    <body name="box" pos="0.3 -0.2 1.1" quat="0.9 0.2 -0.3 0.1">
      <joint name="root" type="free" damping="0.7" stiffness="3.5" springref="2"/>
      <inertial pos="0.05 -0.02 0.1" quat="0.9 0.1 0.2 -0.3" mass="1.3"
                diaginertia="0.04 0.06 0.09"/>
      <body name="arm" pos="0 0.05 -0.3">
        <joint name="hinge" axis="0 1 0" stiffness="0.4"/>
        <inertial pos="0 0 -0.1" mass="0.4" diaginertia="0.002 0.003 0.001"/>
      </body>
    </body>
  </worldbody>
</mujoco>"""


def imported(tmp_path, text: str = FREE):
    path = tmp_path / "free.xml"
    path.write_text(text)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        system = titopfmu.import_mjcf(path)
    listed = [u.what for w in record for u in getattr(w.message, "unimported", [])]
    assert listed == [], listed  # nothing left out: the free joint's laws are imported
    return path, system


def sub_quat(qa, qb):
    """MuJoCo's mju_subQuat(qa, qb): the rotation vector of qb^-1 qa ([w, x, y, z])."""
    ra = Rotation.from_quat(np.roll(qa, -1))
    rb = Rotation.from_quat(np.roll(qb, -1))
    return (rb.inv() * ra).as_rotvec()


def test_the_import_takes_mujocos_qpos_spring(tmp_path):
    path, system = imported(tmp_path)
    box = system.blocks["box"]
    assert isinstance(box, RigidBody)
    m = mujoco.MjModel.from_xml_path(str(path))
    assert (box.damping, box.stiffness) == (DF, KF)
    np.testing.assert_allclose(m.dof_damping[:6], DF)
    # qpos_spring of a free joint: the body's written pos and quat (springref not read)
    np.testing.assert_allclose(box.spring_position, m.qpos_spring[0:3], rtol=0, atol=1e-15)
    np.testing.assert_allclose(box.spring_ref, m.qpos_spring[3:7], rtol=0, atol=1e-15)


def test_mujocos_free_joint_forces_are_the_documented_ones(tmp_path):
    """What MuJoCo does, on its own data: qfrc_spring = [-k (p - p0), -k subQuat(q, q0)],
    qfrc_damper = -d qvel (qvel: the origin's velocity in the world frame, ω in the body's)."""
    path, _ = imported(tmp_path)
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = Rotation.random(random_state=rng).as_quat()[[3, 0, 1, 2]]
        d.qpos[:] = np.concatenate([rng.uniform(-1, 1, 3), q, [0.3]])
        d.qvel[:] = rng.uniform(-2, 2, m.nv)
        mujoco.mj_forward(m, d)
        p0, q0 = m.qpos_spring[0:3], m.qpos_spring[3:7]
        spring = np.concatenate([-KF * (d.qpos[0:3] - p0), -KF * sub_quat(d.qpos[3:7], q0)])
        np.testing.assert_allclose(d.qfrc_spring[:6], spring, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(d.qfrc_damper[:6], -DF * d.qvel[:6], rtol=1e-14, atol=0)


def test_accelerations_match_mujoco_at_random_states(tmp_path):
    path, system = imported(tmp_path)
    ref = MuJoCoOf(path, system)
    worst = ref.worst_error(np.random.default_rng(5), n=10)
    print(f"free joint laws: accelerations vs MuJoCo mj_forward {worst:.2g} (relative)")
    assert worst < 1e-12
    # without the root's laws the accelerations differ (the comparison sees them)
    for attr in ("damping", "stiffness"):
        s2 = imported(tmp_path)[1]
        setattr(s2.blocks["box"], attr, 0.0)
        assert MuJoCoOf(path, s2).worst_error(np.random.default_rng(5), n=3) > 1e-2, attr


def mujoco_trajectory(ref: MuJoCoOf, x0, times, dt: float):
    """MuJoCo's RK4 simulation from the titopfmu state x0: qpos at ``times``."""
    m, d = ref.m, ref.d
    m.opt.integrator = int(mujoco.mjtIntegrator.mjINT_RK4)
    m.opt.timestep = dt
    mujoco.mj_resetData(m, d)
    d.qpos[:], d.qvel[:] = ref.qpos_qvel(x0)
    out = []
    for t in times:
        while d.time < t - 0.5 * dt:
            mujoco.mj_step(m, d)
        out.append(np.array(d.qpos))
    return np.array(out)


def test_an_imported_free_body_follows_mujocos_simulation(tmp_path):
    """The imported sprung, damped free body with a sprung, damped arm, thrown from its rest
    pose: titopfmu's trajectory (DOP853, rtol 1e-12) against MuJoCo's RK4 at a 1e-4 s step,
    over 2 s (several periods of the spring), to 1e-9."""
    path, system = imported(tmp_path)
    ref = MuJoCoOf(path, system)
    engine = ref.engine
    x0 = engine.initial_state()
    sl = engine.plan.state_slices["box"]
    x0[sl][7:13] = [0.4, -0.3, 0.5, 1.2, -0.8, 0.6]  # the twist at P, body frame
    times = np.linspace(0.0, 2.0, 41)
    sol = solve_ivp(engine.derivative, (0.0, 2.0), x0, method="DOP853", rtol=1e-12,
                    atol=1e-14, t_eval=times)  # fmt: skip
    assert sol.success
    theirs = mujoco_trajectory(ref, x0, times, 1e-4)
    ours = np.array([ref.qpos_qvel(x)[0] for x in sol.y.T])
    ours[:, 3:7] *= np.sign(np.sum(ours[:, 3:7] * theirs[:, 3:7], axis=1))[:, None]
    err = np.max(np.abs(ours - theirs))
    travel = np.max(np.abs(theirs - theirs[0]))
    print(
        f"imported free body: trajectory vs MuJoCo RK4 (dt 1e-4) {err:.2g} over 2 s "
        f"(motion {travel:.2g})"
    )
    assert travel > 0.1  # it moves
    assert err < 1e-9
    # the undamped, unsprung body drifts away from MuJoCo's (the comparison sees the laws)
    s2 = imported(tmp_path)[1]
    s2.blocks["box"].stiffness = 0.0
    sol2 = solve_ivp(Engine(s2).derivative, (0.0, 2.0), x0, method="DOP853", rtol=1e-10,
                     atol=1e-12, t_eval=times)  # fmt: skip
    assert np.max(np.abs(sol2.y[sl][0:3].T - theirs[:, 0:3])) > 1e-2


def free_box(damping=DF, stiffness=KF, root=True, gravity=(0.0, 0.0, 0.0)) -> System:
    """A lone body (mass 1.3 kg, centre of mass off P) with the free joint's laws: a RigidBody
    root, or a FreeBody under a Ground at the origin (identity P_a0b: its relative pose is its
    absolute one)."""
    q0 = np.array([0.8, -0.1, 0.4, 0.2])
    q0 /= np.linalg.norm(q0)
    common = dict(mass=1.3, inertia=np.diag([0.04, 0.06, 0.09]), com=(0.05, -0.02, 0.1),
                  gravity=gravity, damping=damping, stiffness=stiffness, spring_ref=q0,
                  spring_position=(0.2, -0.1, 0.5))  # fmt: skip
    s = System("box")
    if root:
        s.add(RigidBody("box", position=(0.5, 0.1, 0.3), euler=(0.3, -0.2, 0.5),
                        twist=(0.4, -0.3, 0.5, 1.2, -0.8, 0.6), **common))  # fmt: skip
        return s
    s.add(Ground("ground", children={"O": (0.0, 0.0, 0.0)}),
          FreeBody("box", position0=(0.5, 0.1, 0.3), euler0=(0.3, -0.2, 0.5),
                   velocity0=(0.4, -0.3, 0.5), omega0=(1.2, -0.8, 0.6), **common),
          Constant("tau", np.zeros(6)))  # fmt: skip
    s.connect("ground.O", "box.P")
    s.connect("tau.y", "box.joint.tau")
    return s


def mujoco_box(b) -> tuple:
    """MuJoCo's model of free_box's body: a free joint with its damping and stiffness, its
    qpos_spring set to the body's spring_position and spring_ref."""
    w, x, y, z = b.spring_ref
    xml = f"""<mujoco><option gravity="{" ".join(map(str, b.gravity))}"/><worldbody>
  <body name="box"><joint type="free" damping="{b.damping}" stiffness="{b.stiffness}"/>
    <inertial pos="{" ".join(map(str, b.com))}" mass="{b.mass}"
              diaginertia="{" ".join(map(str, np.diag(b.inertia)))}"/></body>
</worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    m.qpos_spring[:] = [*b.spring_position, w, x, y, z]
    return m, mujoco.MjData(m)


@pytest.mark.parametrize("root", [True, False], ids=["RigidBody", "FreeBody"])
def test_a_free_body_matches_mujoco(root):
    """A hand-built RigidBody root and a FreeBody under a Ground (states [p, q, v_P, ω] in both,
    v_P and ω in the body frame) against MuJoCo's free joint: accelerations at random states."""
    s = free_box(root=root, gravity=(0.3, -0.2, -9.81))
    engine = Engine(s)
    sl = engine.plan.state_slices["box"]
    m, d = mujoco_box(s.blocks["box"])
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(8):
        x = engine.initial_state()
        q = Rotation.random(random_state=rng).as_quat()[[3, 0, 1, 2]]
        x[sl] = np.concatenate([rng.uniform(-1, 1, 3), q, rng.uniform(-2, 2, 6)])
        R = Rotation.from_quat(q[[1, 2, 3, 0]]).as_matrix()
        v, w = x[sl][7:10], x[sl][10:13]
        d.qpos[:], d.qvel[:] = x[sl][0:7], np.concatenate([R @ v, w])
        mujoco.mj_forward(m, d)
        ds = engine.derivative(0.0, x)[sl]
        ours = np.concatenate([R @ (ds[7:10] + np.cross(w, v)), ds[10:13]])
        worst = max(worst, np.max(np.abs(ours - d.qacc)) / max(1.0, np.max(np.abs(d.qacc))))
    print(f"{'RigidBody' if root else 'FreeBody'} with free joint laws vs MuJoCo: {worst:.2g}")
    assert worst < 1e-12


def energy(b, xs) -> float:
    """Kinetic energy plus the springs' potential k/2 (|p - p0|^2 + |θ|^2) (J), from the state
    [p, q, v_P, ω] (v_P, ω in the body frame): independent of the core."""
    p, q, v, w = xs[0:3], xs[3:7], xs[7:10], xs[10:13]
    vc = v + np.cross(w, b.com)  # the centre of mass's velocity
    kinetic = 0.5 * b.mass * vc @ vc + 0.5 * w @ b.inertia @ w
    th = sub_quat(q / np.linalg.norm(q), b.spring_ref)
    dp = p - b.spring_position
    return kinetic + 0.5 * b.stiffness * (dp @ dp + th @ th)


@pytest.mark.parametrize("root", [True, False], ids=["RigidBody", "FreeBody"])
def test_energy_decays_by_the_damping_work(root):
    """Without gravity: E(t) = E(0) - ∫ d (|v_P|^2 + |ω|^2) dt (the damping wrench's power,
    integrated alongside the motion), E decreasing; without damping E is conserved."""
    for damping in (DF, 0.0):
        s = free_box(damping=damping, root=root)
        engine, b = Engine(s), s.blocks["box"]
        sl = engine.plan.state_slices["box"]
        x0 = engine.initial_state()

        def rhs(t, y, engine=engine, sl=sl, damping=damping):
            xs = y[:-1][sl]
            return np.append(
                engine.derivative(t, y[:-1]),
                damping * (xs[7:10] @ xs[7:10] + xs[10:13] @ xs[10:13]),
            )

        times = np.linspace(0.0, 4.0, 81)
        sol = solve_ivp(rhs, (0.0, 4.0), np.append(x0, 0.0), method="DOP853", rtol=1e-12,
                        atol=1e-14, t_eval=times)  # fmt: skip
        e = np.array([energy(b, y[:-1][sl]) for y in sol.y.T])
        balance = np.max(np.abs(e + sol.y[-1] - e[0])) / e[0]
        print(
            f"{'root' if root else 'FreeBody'} d={damping}: E(0) {e[0]:.4g} J, E(4 s) "
            f"{e[-1]:.4g} J, energy balance {balance:.2g} (relative)"
        )
        assert balance < 1e-9
        if damping:
            assert e[-1] < 0.5 * e[0]  # it decays
            assert np.all(np.diff(e) < 1e-12 * e[0])


@pytest.mark.parametrize("bad", [-0.1, float("nan"), float("inf")])
@pytest.mark.parametrize("what", ["damping", "stiffness"])
@pytest.mark.parametrize("cls", [RigidBody, FreeBody])
def test_bad_values_are_refused_by_name(cls, what, bad):
    with pytest.raises(ParameterError, match=rf"block 'b'.*'{what}'"):
        cls("b", 1.0, np.eye(3), **{what: bad})
    s = free_box(root=cls is RigidBody)
    setattr(s.blocks["box"], what, bad)  # past the block's check: the core's own check
    with pytest.raises(RuntimeError, match=rf"{what} must be >= 0 and finite"):
        Engine(s)


def test_bad_references_are_refused_by_name():
    for cls in (RigidBody, FreeBody):
        with pytest.raises(ParameterError, match=r"block 'b'.*'spring_ref'.*unit quaternion"):
            cls("b", 1.0, np.eye(3), spring_ref=(1.0, 1.0, 0.0, 0.0))
        with pytest.raises(ParameterError, match=r"block 'b'.*'spring_position'.*non-finite"):
            cls("b", 1.0, np.eye(3), spring_position=(0.0, float("nan"), 0.0))
    s = free_box()
    s.blocks["box"].spring_position = np.array([0.0, float("inf"), 0.0])
    with pytest.raises(RuntimeError, match=r"spring_position must be finite"):
        Engine(s)


def test_mjcf_negative_free_joint_laws_are_refused_naming_the_joint(tmp_path):
    for what in ("damping", "stiffness"):
        path = tmp_path / "bad.xml"
        path.write_text(FREE.replace(f'{what}="{DF if what == "damping" else KF}"', f'{what}="-1"'))
        with pytest.raises(MjcfError, match=rf"joint 'root'.*{what} -1 is negative"):
            titopfmu.import_mjcf(path)


def test_block_fmus_refuse_free_joint_laws_by_name():
    from titopfmu.fmi.model import plan_model
    from titopfmu.master.from_system import FromSystemError, system_mapping

    for root in (True, False):
        for what in ("damping", "stiffness"):
            s = free_box(root=root, **{("stiffness" if what == "damping" else "damping"): 0.0})
            plan_model(s)  # a model FMU parameter (the model FMU test below)
            kind = "RigidBody" if root else "FreeBody"
            with pytest.raises(
                FromSystemError, match=rf"block 'box'.*joint {what} \({kind} {what}\).*block FMU"
            ):
                system_mapping(s)


def test_a_model_fmu_of_the_free_joint_laws_equals_the_engine(tmp_path):
    """The whole-model FMU takes the root's damping, stiffness, spring_ref and spring_position
    as parameters by their block names: its model-exchange derivative at random states equals
    the engine's, with the file's values and with values set through the FMU; a negative one
    is refused naming it; its co-simulation follows the engine's trajectory."""
    import shutil

    pytest.importorskip("fmpy")
    from fmpy import extract, read_model_description, simulate_fmu
    from fmpy.fmi1 import FMICallException
    from fmpy.fmi2 import FMU2Model
    from fmu_helpers import callbacks_with, me_derivative_error

    path, system = imported(tmp_path)
    cols = ["arm.joint.m[2]", "arm.joint.m[3]"]
    fmu = titopfmu.export_fmu(system, tmp_path / "free.fmu", signals=cols, win64=False)
    md = read_model_description(str(fmu))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    for name in ("box.damping", "box.stiffness", "box.spring_ref[1]", "box.spring_ref[4]",
                 "box.spring_position[1]", "box.spring_position[3]"):  # fmt: skip
        assert name in vr, sorted(vr)
    ref = MuJoCoOf(path, system)
    rng = np.random.default_rng(17)
    states = [ref.random_state(rng) for _ in range(5)]
    qr = np.array([0.9, -0.2, 0.3, 0.25])
    qr /= np.linalg.norm(qr)
    pr = np.array([0.1, 0.7, -0.4])
    changed = {"box.stiffness": 1.7, "box.damping": 0.2,
               **{f"box.spring_ref[{k + 1}]": qr[k] for k in range(4)},
               **{f"box.spring_position[{k + 1}]": pr[k] for k in range(3)}}  # fmt: skip
    worst = 0.0
    for values in ({}, changed):
        engine = Engine(system)
        if values:
            s2 = imported(tmp_path)[1]
            b = s2.blocks["box"]
            b.stiffness, b.damping, b.spring_ref, b.spring_position = 1.7, 0.2, qr, pr
            engine = Engine(s2)
            a, c = engine.derivative(0.0, states[0]), Engine(system).derivative(0.0, states[0])
            assert np.max(np.abs(a - c)) > 1e-2  # the values set through the FMU matter
        worst = max(worst, me_derivative_error(fmu, engine, states, values))
    unzipped = extract(str(fmu))
    try:
        f = FMU2Model(
            guid=md.guid,
            unzipDirectory=unzipped,
            modelIdentifier=md.modelExchange.modelIdentifier,
            instanceName="bad",
        )
        messages: list[str] = []
        callbacks = callbacks_with(lambda env, inst, st, cat, msg: messages.append(msg.decode()))
        f.instantiate(loggingOn=True, callbacks=callbacks)
        try:
            f.setupExperiment(startTime=0.0)
            f.enterInitializationMode()
            with pytest.raises(FMICallException):
                f.setReal([vr["box.damping"]], [-1.0])
                f.exitInitializationMode()
        finally:
            f.freeInstance()
        assert any("parameter 'box.damping' = -1.0 must be >= 0" in m for m in messages), messages
    finally:
        shutil.rmtree(unzipped, ignore_errors=True)
    print(f"model FMU of the free joint laws: derivative vs engine {worst:.2g}")
    assert worst < 1e-9
    res = Engine(system).simulate(1.0, output_interval=0.1, record=cols, rtol=1e-10, atol=1e-12)
    r = simulate_fmu(
        str(fmu),
        fmi_type="CoSimulation",
        stop_time=1.0,
        output_interval=0.01,
        output=cols,
        start_values={"solver.rtol": 1e-10, "solver.atol": 1e-12},
    )
    for c in cols:
        err = np.max(np.abs(np.interp(res.time, r["time"], r[c]) - res[c]))
        print(f"{c}: co-simulation vs engine {err:.2g}")
        assert err < 1e-7, c


def test_the_object_path_refuses_the_laws_by_name():
    """A system the core cannot run (a user's block subclass) runs the object path, which has
    no joint damping or springs: refused naming the block, not run without them."""
    from titopfmu.assembly.engine import AssemblyError

    class MyBody(RigidBody):
        pass

    s = System("mine")
    s.add(MyBody("box", 1.0, np.eye(3), damping=0.5))
    with pytest.raises(AssemblyError, match=r"block 'box': its joint damping needs the core"):
        Engine(s)
    s = System("mine")
    s.add(MyBody("box", 1.0, np.eye(3)))
    Engine(s).derivative(0.0, Engine(s).initial_state())  # without them: the object path runs


@pytest.mark.parametrize("root", [True, False], ids=["RigidBody", "FreeBody"])
def test_complex_step_jacobian_matches_central_differences(root):
    """The core's complex build (titopz_eval) carries the free joint's laws: its Jacobian
    against central differences at a random state."""
    s = free_box(root=root, gravity=(0.3, -0.2, -9.81))
    engine = Engine(s)
    sl = engine.plan.state_slices["box"]
    rng = np.random.default_rng(9)
    x = engine.initial_state()
    q = Rotation.random(random_state=rng).as_quat()[[3, 0, 1, 2]]
    x[sl] = np.concatenate([rng.uniform(-1, 1, 3), q, rng.uniform(-2, 2, 6)])
    Jc = engine.jacobian(0.0, x)
    h = 1e-6
    Jd = np.zeros_like(Jc)
    for k in range(len(x)):
        e = np.zeros_like(x)
        e[k] = h
        Jd[:, k] = (engine.derivative(0.0, x + e) - engine.derivative(0.0, x - e)) / (2 * h)
    err = np.max(np.abs(Jc - Jd)) / max(1.0, np.max(np.abs(Jc)))
    print(f"free joint laws: complex-step Jacobian vs central differences {err:.2g}")
    assert err < 1e-7
    # without the laws the Jacobian differs (the comparison sees them)
    s0 = free_box(root=root, damping=0.0, stiffness=0.0, gravity=(0.3, -0.2, -9.81))
    assert np.max(np.abs(Engine(s0).jacobian(0.0, x) - Jc)) > 0.1


def rotated_free_body() -> System:
    """free_box's body as a FreeBody under a Ground at a port off the origin, with a rotated
    P_a0b (the joint's position in R_b, its placement in Pinocchio's R_a0)."""
    b = free_box(root=False, gravity=(0.3, -0.2, -9.81)).blocks["box"]
    R0 = Rotation.from_euler("xyz", [0.3, -0.5, 0.7]).as_matrix()
    s = System("rotated")
    s.add(
        Ground("ground", children={"O": (0.1, 0.2, 0.3)}),
        FreeBody("box", mass=b.mass, inertia=b.inertia, com=b.com, gravity=b.gravity, P_a0b=R0,
                 damping=b.damping, stiffness=b.stiffness, spring_ref=b.spring_ref,
                 spring_position=b.spring_position),
        Constant("tau", np.zeros(6)),
    )  # fmt: skip
    s.connect("ground.O", "box.P")
    s.connect("tau.y", "box.joint.tau")
    return s


@pytest.mark.parametrize("case", ["root", "free", "mjcf free", "mjcf ball"])
def test_the_pinocchio_reference_carries_the_laws(tmp_path, case):
    """The Pinocchio reference (titopfmu crosscheck's) adds the ball and free joints' and the
    root's laws to its generalised forces: its accelerations equal the engine's at random
    states (and differ without the laws)."""
    pytest.importorskip("pinocchio")
    from test_ball_joint_laws import SPRUNG

    from titopfmu.crosscheck import engine_accelerations
    from titopfmu.reference.pinocchio_model import to_pinocchio

    rng = np.random.default_rng(21)
    if case.startswith("mjcf"):
        _, s = imported(tmp_path, FREE if case == "mjcf free" else SPRUNG)
        engine = Engine(s)
        states = [MuJoCoOf(tmp_path / "free.xml", s).random_state(rng) for _ in range(5)]
    else:
        s = free_box(gravity=(0.3, -0.2, -9.81)) if case == "root" else rotated_free_body()
        engine = Engine(s)
        sl = engine.plan.state_slices["box"]
        states = []
        for _ in range(5):
            x = engine.initial_state()
            q = Rotation.random(random_state=rng).as_quat()[[3, 0, 1, 2]]
            x[sl] = np.concatenate([rng.uniform(-1, 1, 3), q, rng.uniform(-2, 2, 6)])
            states.append(x)
    ref = to_pinocchio(s)
    worst, gap = 0.0, 0.0
    for x in states:
        ours = engine_accelerations(engine, ref, engine.derivative(0.0, x))
        theirs = ref.accelerations(x)
        worst = max(worst, np.max(np.abs(ours - theirs)) / max(1.0, np.max(np.abs(theirs))))
        q, v = ref.q_v(x)
        gap = max(gap, float(np.max(np.abs(ref.passive(q, v)))))
    print(f"{case}: Pinocchio reference with the laws vs engine {worst:.2g}")
    assert worst < 1e-12
    assert gap > 0.1  # the laws act at these states


def test_the_crosscheck_of_a_sprung_damped_free_body_passes(tmp_path):
    """``titopfmu crosscheck`` of the imported free body: Pinocchio with the laws (accelerations
    and a trajectory) and, one FMU per block refusing the root's laws, the whole-model FMU (its
    outputs named apart from the root's 'position' parameter)."""
    pytest.importorskip("pinocchio")
    pytest.importorskip("fmpy")
    from titopfmu.crosscheck import crosscheck

    _, system = imported(tmp_path)
    r = crosscheck(system, tmp_path / "cc", cosim=True, t_final=1.0)
    print(r.summary())
    assert r.passed and r.verdict == "PASS", r.summary()
    assert r.acc_error < 1e-12 and r.traj_error < 1e-6
    assert r.cosim_label == "model FMU"
    assert "joint damping (RigidBody damping)" in r.cosim
    assert r.cosim_acc_error is not None and r.cosim_acc_error < 1e-12
    assert r.cosim_traj_error is not None and r.cosim_traj_error < 1e-6
