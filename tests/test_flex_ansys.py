"""A flexible body from an ANSYS MAPDL model (issue 34, point 2; docs/flexible.md, "ANSYS MAPDL
models"): the ``.full`` file's K and M read with Ansys's reader ``ansys-mapdl-reader``, the node
coordinates from the ``.rst`` of the same mesh.

The reader's example model: a titanium bar 1 x 1 x 5 in (EX 16.9e6 psi, NUXY 0.31, DENS 4.1408e-4
lbf s^2/in^4: ``rst.materials``), 40 SOLID186 elements (321 nodes, UX UY UZ), in in-lbf-s
units. The ``.full`` file is a cantilever: the 63 dofs of its 21 nodes at z = 0 are constrained
(``full.const``); its ``.rst`` is ANSYS's free-free modal solution of the same mesh (the
z = 0 face moves in its modes; 7366.5 Hz first), not of the cantilever. Independent references:

* a shift-invert sparse eigen solve (ARPACK) of the reader's own K and M, in the file's units;
* Timoshenko's beam (titopfmu.flex.Beam, Cowper's shear coefficient, rotary inertia);
* ANSYS's own free-free frequencies (the ``.rst``);
* the tip face made rigid by a null-space constraint elimination written here.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse.linalg

import titopfmu as t
from titopfmu.flex import Beam, FlexModelError, Section, cantilever_modes
from titopfmu.flex.ansys import read_ansys
from titopfmu.flex.fe import skew

reader = pytest.importorskip("ansys.mapdl.reader")  # the ansys extra (in the test extra)
from ansys.mapdl.reader import examples  # noqa: E402

UNITS = {"length": "in", "mass": "lbf s^2/in", "time": "s"}
SLINCH = 4.4482216152605 / 0.0254  # kg per lbf s^2/in
Z3 = np.zeros((3, 3))
EX, NUXY, DENS = 16.9e6, 0.31, 4.1408e-4  # the .rst's material 1 (psi, -, lbf s^2/in^4)


def spec(**kw) -> dict:
    return {"ansys": examples.fullfile, "mesh": examples.rstfile, "units": UNITS, **kw}


@pytest.fixture(scope="module")
def reference_hz() -> np.ndarray:
    """The cantilever's 12 lowest frequencies (Hz) from the reader's K and M directly: the
    upper triangles made symmetric, the constrained dofs' empty rows dropped, ARPACK."""
    full = reader.read_binary(examples.fullfile)
    dof_ref, k, m = full.load_km(sort=True)
    K = k + scipy.sparse.triu(k, 1).T
    M = m + scipy.sparse.triu(m, 1).T
    keep = np.flatnonzero(M.diagonal() > 0)
    assert keep.size == 963 - 63 and full.const.shape == (63, 2)
    K, M = K[keep][:, keep].tocsc(), M[keep][:, keep].tocsc()
    w2 = scipy.sparse.linalg.eigsh(K, k=12, M=M, sigma=0.0, which="LM", return_eigenvectors=False)
    return np.sqrt(np.sort(w2)) / (2 * np.pi)


@pytest.fixture(scope="module")
def tip_labels() -> list[int]:
    rst = reader.read_binary(examples.rstfile)
    nodes = zip(rst.mesh.nnum, rst.mesh.nodes, strict=True)
    return [int(j) for j, x in nodes if abs(x[2] - 5.0) < 1e-9]


@pytest.fixture(scope="module")
def cantilever() -> t.WeldedBody:
    return t.WeldedBody("bar", 0.0, Z3, flexible=spec(modes=12))


def on_ground(body: t.WeldedBody) -> np.ndarray:
    """The elastic frequencies (Hz) of ``body`` welded on Ground, linearised by the engine."""
    s = t.System("c")
    s.add(t.Ground("ground", children={"P": (0.0, 0.0, 0.0)}))
    s.add(body)
    s.connect("ground.P", f"{body.name}.P")
    return np.sort([m.omega_n for m in t.linearize(s).modes() if not m.rigid]) / (2 * np.pi)


def test_the_model_read_is_the_clamped_titanium_bar(reference_hz) -> None:
    """In SI units (1 in = 0.0254 m, 1 lbf s^2/in = 175.127 kg): 300 free nodes x 3 dofs, P at
    the clamped face's centre; the frequencies are the file's (units cancel: consistent
    conversion) to 1e-8, and those of Timoshenko's beam of the same bar within 2 % (the solid
    is stiffer: its clamped face holds the Poisson contraction; measured 0.7 %-1.4 %); the
    mass is M's, short of rho V by the clamped nodes' share (left out by ANSYS)."""
    a = read_ansys(examples.fullfile, "bar", units=UNITS, mesh=examples.rstfile)
    fe = a.model
    assert fe.n_dofs == 900 and fe.n_nodes == 322 and a.labels[fe.root] == 0
    red = cantilever_modes(fe, 12)
    hz = red.frequencies_full[:12] / (2 * np.pi)
    np.testing.assert_allclose(hz, reference_hz, rtol=1e-8)
    # the root P: the centroid of the 21 clamped nodes (0.5, 0.5, 0) in; node 1 at (0, 0, 0)
    np.testing.assert_allclose(fe.node_positions[a.labels.index(1)], [-0.0127, -0.0127, 0.0])
    np.testing.assert_allclose(red.first_moment[:2], 0.0, atol=1e-12)
    assert 0.97 * DENS * 5.0 * SLINCH < red.mass < DENS * 5.0 * SLINCH
    kappa = 10 * (1 + NUXY) / (12 + 11 * NUXY)  # Cowper's, a rectangle
    beam = Beam("ref", 5.0, EX, DENS, Section.rectangle(1.0, 1.0), nu=NUXY, n_elements=80,
                rotary_inertia=True, shear_coefficient=kappa)  # fmt: skip
    beam_hz = cantilever_modes(beam.fe_model(), 9).frequencies() / (2 * np.pi)
    # bending y/z pair, torsion, bending pair, axial, bending pair, torsion: the same order
    np.testing.assert_allclose(hz[:9], beam_hz, rtol=0.02)


def test_welded_on_ground_the_engine_gives_the_files_frequencies(cantilever, reference_hz):
    """Cantilever modal truncation (12 modes) welded on Ground, linearised by the engine: the
    12 frequencies of the file's model to 1e-8 (no reduction error on the kept modes of the
    clamped body; measured 1.4e-9)."""
    np.testing.assert_allclose(on_ground(cantilever), reference_hz, rtol=1e-8)


def test_free_floating_against_ansys_free_free_solution() -> None:
    """The bar floating free (a RigidBody of zero rigid mass carrying it, 40 modes): 12 rigid
    states, then the first six elastic frequencies within 5 % of ANSYS's own free-free
    solution of the same mesh (the .rst), in pairs as ANSYS's. Not equal: the .full file lacks
    the clamped face's stiffness and mass, so the face moves rigidly with P here (measured
    +2.1 % to +4.0 %)."""
    s = t.System("free")
    s.add(t.RigidBody("bar", 0.0, Z3, flexible=spec(modes=40), gravity=(0.0, 0.0, 0.0)))
    modes = t.linearize(s).modes()
    w = np.sort([m.omega_n for m in modes if not m.rigid])[:6] / (2 * np.pi)
    assert sum(m.rigid for m in modes) == 12
    ansys_hz = reader.read_binary(examples.rstfile).time_values
    np.testing.assert_allclose(w, ansys_hz, rtol=0.05)
    assert w[0] == pytest.approx(w[1], rel=1e-8) and w[3] == pytest.approx(w[4], rel=1e-8)


def rigid_face_hz(tip: list[int], count: int) -> np.ndarray:
    """The cantilever with its z = 5 face rigid (a 6-dof master at the face's centre), by a
    null-space elimination of the constraints u_s = u_m + theta_m x (x_s - x_m)."""
    full = reader.read_binary(examples.fullfile)
    dof_ref, k, m = full.load_km(sort=True)
    K = (k + scipy.sparse.triu(k, 1).T).toarray()
    M = (m + scipy.sparse.triu(m, 1).T).toarray()
    keep = np.flatnonzero(np.diag(M) > 0)
    K, M, dof_ref = K[np.ix_(keep, keep)], M[np.ix_(keep, keep)], dof_ref[keep]
    rst = reader.read_binary(examples.rstfile)
    xyz = dict(zip(rst.mesh.nnum.tolist(), rst.mesh.nodes, strict=True))
    xm = np.mean([xyz[j] for j in tip], axis=0)
    n = K.shape[0]
    C = []
    for d, (node, comp) in enumerate(dof_ref):
        if node in tip:
            row = np.zeros(n + 6)
            row[d], row[n + comp] = 1.0, -1.0
            row[n + 3 : n + 6] = -np.cross(np.eye(3)[comp], xyz[node] - xm)  # e.(th x r)
            C.append(row)
    Z = scipy.linalg.null_space(np.array(C))
    Kx, Mx = np.zeros((n + 6, n + 6)), np.zeros((n + 6, n + 6))
    Kx[:n, :n], Mx[:n, :n] = K, M
    w2 = scipy.linalg.eigh(Z.T @ Kx @ Z, Z.T @ Mx @ Z, eigvals_only=True,
                           subset_by_index=(0, count - 1))  # fmt: skip
    return np.sqrt(w2) / (2 * np.pi)


def test_craig_bampton_with_a_rigid_spider_at_the_tip(tip_labels) -> None:
    """A child port on the solid: the 21 tip-face nodes tied to a master at the face's centre
    (RBE2); Craig-Bampton (its 6 constraint modes, 24 fixed-interface modes) welded on Ground:
    the engine's 12 lowest frequencies are those of the bar with a rigid tip face (eliminated
    here independently) from above (a Rayleigh-Ritz reduction) within 5e-3, the first six
    within 1e-3 (the reduction error, measured 3.2e-3 and 4.5e-4; with 12 modes 1.5e-2 and
    4.5e-3, with 48 1.2e-3 and 1.8e-4); the port sits at the face's centre, 5 in above P."""
    body = t.WeldedBody("bar", 0.0, Z3, flexible=spec(method="craig_bampton", modes=24,
                                                      nodes=[tip_labels]))  # fmt: skip
    red = body.flexible
    np.testing.assert_allclose(red.node_positions[1], [0.0, 0.0, 0.127], atol=1e-15)
    hz = on_ground(body)[:12]
    exact = rigid_face_hz(tip_labels, 12)
    err = hz / exact - 1
    assert err.min() > -1e-9 and err.max() < 5e-3 and err[:6].max() < 1e-3, err


def test_units_and_the_mass_check(reference_hz) -> None:
    """The same file declared in mm-t-s scales masses and lengths, not frequencies; a total
    mass in kg passes in the right units and is refused in wrong ones, naming the body."""
    a = read_ansys(examples.fullfile, "bar", units=UNITS, mesh=examples.rstfile)
    Tt, _ = a.model.rigid_modes()
    mass = float(np.trace(Tt.T @ a.model.M @ Tt) / 3.0)
    read_ansys(examples.fullfile, "bar", units=UNITS, mesh=examples.rstfile, total_mass=mass)
    wrong = {"length": "in", "mass": "kg", "time": "s"}
    with pytest.raises(FlexModelError, match=r"body 'bar'.*'total_mass'.*not the declared .*"
                       "wrong units.*constrained nodes' mass"):  # fmt: skip
        read_ansys(examples.fullfile, "bar", units=wrong, mesh=examples.rstfile, total_mass=mass)
    mm = read_ansys(examples.fullfile, "bar", units={"length": "mm", "mass": "t", "time": "s"},
                    mesh=examples.rstfile).model  # fmt: skip
    np.testing.assert_allclose(mm.node_positions, a.model.node_positions / 25.4, rtol=1e-12)
    w2 = scipy.linalg.eigh(mm.K, mm.M, eigvals_only=True, subset_by_index=(0, 0))
    assert np.sqrt(w2[0]) / (2 * np.pi) == pytest.approx(reference_hz[0], rel=1e-8)


def test_bad_input_names_the_body_and_the_fault(tmp_path, tip_labels) -> None:
    def refused(match: str, **kw) -> None:
        with pytest.raises(t.TitopError, match=r"block 'bar', parameter 'flexible': " + match):
            t.WeldedBody("bar", 0.0, Z3, flexible=spec(**kw))

    refused(r"'ansys': '.*missing.full': no such file", ansys=str(tmp_path / "missing.full"))
    refused(r"'mesh': '.*nope.rst': no such file", mesh=str(tmp_path / "nope.rst"))
    (tmp_path / "junk.full").write_bytes(b"not an ANSYS file" * 10)
    refused(r"'ansys': '.*junk.full' cannot be read as a .full file", ansys=str(tmp_path /
                                                                                "junk.full"))
    refused(r"'nodes': node 9999 is not in the .full file", nodes=[[9999, 1]])
    refused(r"'nodes': node 321 carries 3 of the 6 dofs .* a rigid spider", nodes=[321])
    refused(r"'nodes': node 1 is constrained in the file", nodes=[[1, 2]])
    refused(r"'root': node 321 is free in the file", root=321)
    refused(r"'total_mass': a mass in kg > 0, not 'heavy'", total_mass="heavy")
    refused(r"'units': \{'length': 'furlong'.*declare the model's consistent system",
            units={"length": "furlong", "mass": "kg", "time": "s"})
    with pytest.raises(t.TitopError, match=r"'units': missing: ANSYS files have no units"):
        t.WeldedBody("bar", 0.0, Z3, flexible={"ansys": examples.fullfile,
                                                "mesh": examples.rstfile})
    with pytest.raises(t.TitopError, match=r"'root': applies to an ANSYS source"):
        t.WeldedBody("bar", 0.0, Z3, flexible={"reduced": "x.npz", "root": 1})


def test_without_the_reader_a_clear_error(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ansys.mapdl", None)
    with pytest.raises(t.TitopError, match=r"block 'bar', parameter 'flexible': 'ansys': "
                       r".*needs ansys-mapdl-reader: pip install titopfmu\[ansys\]"):  # fmt: skip
        t.WeldedBody("bar", 0.0, Z3, flexible=spec())


def test_model_file_paths_relative_to_the_file_round_trip(tmp_path, cantilever) -> None:
    """A model file names the ANSYS files relative to itself; saved in another folder, the
    paths are rewritten relative to that folder (the folders can move); loaded back, the same
    reduced model."""
    import shutil

    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(examples.fullfile, models / "bar.full")
    shutil.copy(examples.rstfile, models / "bar.rst")
    (models / "m.yaml").write_text("""
format: titopfmu-model
version: 1
name: bar_on_ground
blocks:
  - {name: ground, type: Ground, children: {P: [0, 0, 0]}}
  - name: bar
    type: WeldedBody
    mass: 0.0
    inertia: [[0, 0, 0], [0, 0, 0], [0, 0, 0]]
    flexible: {ansys: bar.full, mesh: bar.rst, modes: 12,
               units: {length: in, mass: lbf s^2/in, time: s}}
connections:
  - [ground.P, bar.P]
""")
    s = t.load(models / "m.yaml")
    assert s.blocks["bar"].flexible_source["ansys"] == str(models / "bar.full")
    out = tmp_path / "elsewhere" / "deeper"
    out.mkdir(parents=True)
    s.save(out / "copy.yaml")
    text = (out / "copy.yaml").read_text()
    assert "ansys: ../../models/bar.full" in text and "mesh: ../../models/bar.rst" in text
    again = t.load(out / "copy.yaml").blocks["bar"].flexible
    for key in ("Kee", "Mee", "Ct", "Cr", "inertia", "S", "R"):
        np.testing.assert_array_equal(getattr(again, key), getattr(cantilever.flexible, key))


def test_a_reduced_model_path_is_saved_relative_to_the_file(tmp_path) -> None:
    """``flexible: arm.npz`` in a model file: saved in another folder, written relative to it
    (``../models/arm.npz``); loaded back, the same reduced model."""
    from titopfmu.flex import write_reduced_model

    beam = Beam("arm", 1.0, 70e9, 2700.0, Section.rectangle(0.03, 0.008), nu=0.3, n_elements=6)
    red = cantilever_modes(beam.fe_model(), 3)
    models = tmp_path / "models"
    models.mkdir()
    write_reduced_model(models / "arm.npz", red)
    s = t.System("s")
    s.add(t.Ground("g", children={"P": (0.0, 0.0, 0.0)}))
    s.add(t.WeldedBody("arm", 0.0, Z3, flexible=str(models / "arm.npz")))
    s.connect("g.P", "arm.P")
    s.save(models / "m.yaml")
    assert "flexible: arm.npz" in (models / "m.yaml").read_text()
    moved = t.load(models / "m.yaml")
    (tmp_path / "out").mkdir()
    moved.save(tmp_path / "out" / "m.json")
    assert '"flexible": "../models/arm.npz"' in (tmp_path / "out" / "m.json").read_text()
    again = t.load(tmp_path / "out" / "m.json").blocks["arm"].flexible
    np.testing.assert_array_equal(again.Kee, red.Kee)
    np.testing.assert_array_equal(again.S, red.S)


def test_a_dof_map_is_checked_by_name() -> None:
    """``FEModel.dof_map``: a point mass on springs at (2, 0, 0) (node 0 = P clamped in the
    file, no dofs; node 1 its translations, listed in the order z, x, y) is accepted: its
    rigid-mode rows those of a translation and of -r~, its frequencies sqrt(k / m), Shabana's
    S_ab its m e_a e_b^T; pairs repeated, components out of 0..5, a node with some of the
    translations and a root with some of its dofs are refused."""
    from titopfmu.flex import FEModel

    pos = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    fe = FEModel("s", pos, M=3.0 * np.eye(3), K=np.diag([48.0, 12.0, 27.0]),
                 dof_map=[[1, 2], [1, 0], [1, 1]])  # fmt: skip
    Tt, Tr = fe.rigid_modes()
    np.testing.assert_array_equal(Tt, np.eye(3)[[2, 0, 1]])
    np.testing.assert_array_equal(Tr, -skew(pos[1])[[2, 0, 1]])
    red = cantilever_modes(fe, 3)
    np.testing.assert_allclose(red.frequencies(), [2.0, 3.0, 4.0], rtol=1e-12)
    Sbar = fe.component_mass()
    for a in range(3):
        for b in range(3):
            expect = np.zeros((3, 3))
            expect[[2, 0, 1].index(a), [2, 0, 1].index(b)] = 3.0
            np.testing.assert_array_equal(Sbar[a, b], expect)
    M2, K2 = np.eye(3), np.eye(3)
    for dmap, match in (([[1, 0], [1, 0], [1, 1]], "appears twice"),
                        ([[1, 0], [1, 1], [1, 6]], "components"),
                        ([[1, 0], [1, 1], [1, 3]], "node 1 carries some of the three"),
                        ([[0, 3], [0, 4], [0, 5]], "root node 0 carries 3 dofs")):  # fmt: skip
        with pytest.raises(FlexModelError, match=r"body 's', 'dof_map': .*" + match):
            FEModel("s", pos, M=M2, K=K2, dof_map=dmap)
