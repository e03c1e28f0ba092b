"""A rectangular flat plate (a solar-array panel) as a flexible body's :class:`FEModel`, meshed
and assembled with scikit-fem (issue 34; docs/flexible.md, section 11).

The panel lies in the x-y plane of its body frame R_a: x in [0, a], y in [-b/2, b/2], z = 0 the
mid-surface. Its edge x = 0 is attached to the root node P (the parent port, at the origin, the
middle of that edge) by a rigid spider (a multi-point constraint): every node of the edge moves
as a point of a rigid body with P, u_i = u_P + theta_P x r_i, theta_i = theta_P. The edge's
nodes are eliminated; clamping P (the reductions do) clamps the whole edge: the cantilever
plate. Per node 6 dofs ``[ux, uy, uz, rx, ry, rz]`` (m, rad), node-major, P first.

Formulation (a flat Reissner-Mindlin shell element, membrane and bending uncoupled):

- membrane, plane stress: N = (E h / (1 - nu^2)) [1 nu 0; nu 1 0; 0 0 (1 - nu)/2] eps_m,
  eps_m = (d ux/dx, d uy/dy, d ux/dy + d uy/dx);
- bending, Mindlin-Reissner: the normal's rotation (rx, ry) moves the point at height z by
  (z ry, -z rx); curvatures kappa = (d ry/dx, -d rx/dy, d ry/dy - d rx/dx), moments
  D [1 nu 0; nu 1 0; 0 0 (1 - nu)/2] kappa, D = E h^3 / (12 (1 - nu^2));
  transverse shear gamma = (d uz/dx + ry, d uz/dy - rx), forces k G h gamma (k = 5/6);
- drilling: Hughes and Brezzi's penalty alpha G h (rz - (d uy/dx - d ux/dy) / 2)^2 (alpha
  small, 1e-3 by default): rz follows the membrane's in-plane rotation, rigid rotations cost
  nothing, and the drilling modes lie far above the bending ones;
- against shear locking, selective reduced integration: transverse shear with the reduced
  Gauss rule, membrane, bending, drilling and mass with the element's full one (9-node
  ElementQuad2: 2 x 2 and 3 x 3; 4-node ElementQuad1: 1 point and 2 x 2; the drilling term
  under-integrated would leave rz modes of zero energy);
- consistent mass: rho h on (ux, uy, uz), rotary inertia rho h^3 / 12 on (rx, ry) and, so that
  M is positive definite, the same on the drilling rz (it adds m h^2 / 12 to J_zz).

Sbar (docs/flexible.md eq. (1)) is the mid-surface's: Sbar[a, a] = rho h int N_i N_j dA on the
translational dofs of component a, Sbar[a, b] = 0 for a != b (as the beam's centroid line);
stored dense, as `FEModel` holds it: 9 (6N)^2 floats (64 MB at the default 6 x 6 mesh).

Geometric stiffness per body-load case (section 4): the in-plane part of the body force
(``body_force_per_unit_load``) loads the membrane of the cantilever plate; its stress
resultants N0 (N/m) give the initial-stress stiffness KG = sum over u in (ux, uy, uz) of
int (grad u)^T N0 (grad u) dA (the out-of-plane parts of the body force bend the plate: second
order in linear theory, neglected as for the beam). Node-load cases: none.

scikit-fem assembles the scalar operators int D_p N_i D_q N_j dA (D in {1, d/dx, d/dy}) by
its ``BilinearForm`` on a ``MeshQuad``; the plate's matrices are their combinations.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from . import checks
from .checks import FlexModelError, FloatArray
from .fe import BODY_LOAD_CASES, FEModel, body_force_per_unit_load

#: the element kinds: the scikit-fem element, the full and the reduced Gauss rule (points per
#: direction)
_ELEMENTS = {"quad2": ("ElementQuad2", 3, 2), "quad1": ("ElementQuad1", 2, 1)}

# Derivative indices of the scalar operators: 0 the value, 1 d/dx, 2 d/dy.
_VAL, _DX, _DY = 0, 1, 2
# Field indices of a node's dofs.
_UX, _UY, _UZ, _RX, _RY, _RZ = range(6)


def _gauss_quad(n: int) -> tuple[FloatArray, FloatArray]:
    """The n x n Gauss-Legendre rule on scikit-fem's reference square [0, 1]^2."""
    x, w = np.polynomial.legendre.leggauss(n)
    x, w = 0.5 * (x + 1.0), 0.5 * w
    X, Y = np.meshgrid(x, x, indexing="ij")
    return np.vstack([X.ravel(), Y.ravel()]), np.outer(w, w).ravel()


@functools.lru_cache(maxsize=1)
def _skfem() -> Any:
    try:
        import skfem
    except ImportError as e:  # pragma: no cover - the dependency is declared
        raise ImportError("titopfmu.flex.Plate needs scikit-fem: pip install scikit-fem") from e
    return skfem


def _operators(basis: Any) -> dict[tuple[int, int], sp.csr_matrix]:
    """The 9 scalar matrices A[p, q]_ij = int D_p N_i D_q N_j dA on ``basis`` (scikit-fem's
    assembly; D_0 = 1, D_1 = d/dx, D_2 = d/dy)."""
    skfem = _skfem()

    def der(u: Any, p: int) -> Any:
        return u if p == _VAL else u.grad[p - 1]

    out = {}
    for p in range(3):
        for q in range(3):
            form = skfem.BilinearForm(lambda u, v, w, p=p, q=q: der(v, p) * der(u, q))
            out[(p, q)] = form.assemble(basis).tocsr()
    return out


def _strain_matrix(
    ops: dict[tuple[int, int], sp.csr_matrix],
    rows: list[dict[tuple[int, int], float]],
    C: FloatArray,
    n: int,
) -> sp.csr_matrix:
    """The stiffness int eps^T C eps dA (6n x 6n, node-major) of strains eps_s = sum over
    (field f, derivative d) of rows[s][(f, d)] D_d u_f."""
    K = sp.csr_matrix((6 * n, 6 * n))
    for s, rs in enumerate(rows):
        for t, rt in enumerate(rows):
            if C[s, t] == 0.0:
                continue
            for (f, d), cs in rs.items():
                for (g, e), ct in rt.items():
                    A = ops[(d, e)]
                    P = sp.csr_matrix(([1.0], ([f], [g])), shape=(6, 6))
                    K = K + C[s, t] * cs * ct * sp.kron(A, P, format="csr")
    return K


class _Mesh(NamedTuple):
    """The plate's mesh: scikit-fem bases, nodes and the spider."""

    full: Any  # skfem.CellBasis, the element's full Gauss rule
    red: Any  # skfem.CellBasis, the reduced rule (transverse shear)
    pos: FloatArray  # (N, 3) model node positions in R_a (m): P, then the untied plate nodes
    T: sp.csr_matrix  # (6 Ns, 6 N): plate dofs = T @ model dofs (the rigid spider)
    ns: int  # plate nodes (scalar dofs of the element)
    xy: FloatArray  # (Ns, 2) plate node positions (m)


@dataclass(frozen=True)
class Plate:
    """A uniform rectangular plate clamped along its edge x = 0 (see the module).

    :param name: the body's name (error messages name it)
    :param a: length along x, from the clamped edge (m)
    :param b: width along y, y in [-b/2, b/2] (m)
    :param thickness: h (m)
    :param E: Young's modulus (Pa)
    :param rho: density (kg/m^3)
    :param nu: Poisson's ratio, in (-1, 0.5)
    :param nx: elements along x (6 by default)
    :param ny: elements along y (6 by default)
    :param element: ``"quad2"`` (9-node biquadratic, the default) or ``"quad1"`` (4-node)
    :param shear_coefficient: k of the transverse shear (5/6)
    :param drilling: alpha of the drilling penalty alpha G h (> 0; 1e-3)
    """

    name: str
    a: float
    b: float
    thickness: float
    E: float
    rho: float
    nu: float
    nx: int = 6
    ny: int = 6
    element: str = "quad2"
    shear_coefficient: float = 5.0 / 6.0
    drilling: float = 1e-3

    def __post_init__(self) -> None:
        body = str(self.name)
        for p in ("a", "b", "thickness", "E", "rho", "shear_coefficient", "drilling"):
            object.__setattr__(self, p, checks.positive(body, p, getattr(self, p)))
        try:
            nu = float(self.nu)
        except (TypeError, ValueError):
            raise FlexModelError(body, "'nu'", f"not a number: {self.nu!r}") from None
        if not (-1.0 < nu < 0.5):
            raise FlexModelError(body, "'nu'", f"must be in (-1, 0.5), got {nu!r}")
        object.__setattr__(self, "nu", nu)
        for p in ("nx", "ny"):
            v = getattr(self, p)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise FlexModelError(body, f"'{p}'", f"must be an integer >= 1, got {v!r}")
        if not isinstance(self.element, str) or self.element not in _ELEMENTS:
            raise FlexModelError(
                body, "'element'", f"unknown {self.element!r} (one of {sorted(_ELEMENTS)})"
            )
        object.__setattr__(self, "name", body)

    @property
    def mass(self) -> float:
        """rho a b h (kg)."""
        return self.rho * self.a * self.b * self.thickness

    @property
    def flexural_rigidity(self) -> float:
        """D = E h^3 / (12 (1 - nu^2)) (N m)."""
        return self.E * self.thickness**3 / (12.0 * (1.0 - self.nu**2))

    @functools.cached_property
    def _mesh(self) -> _Mesh:
        """The scikit-fem bases (full and reduced rule), the plate nodes' positions and the
        spider's transformation T (full plate dofs = T @ model dofs)."""
        skfem = _skfem()
        cls, n_full, n_red = _ELEMENTS[self.element]
        mesh = skfem.MeshQuad.init_tensor(
            np.linspace(0.0, self.a, self.nx + 1),
            np.linspace(-0.5 * self.b, 0.5 * self.b, self.ny + 1),
        )
        elem = getattr(skfem, cls)()
        full = skfem.Basis(mesh, elem, quadrature=_gauss_quad(n_full))
        red = skfem.Basis(mesh, elem, quadrature=_gauss_quad(n_red))
        xy = full.doflocs.T  # (Ns, 2): one plate node per scalar dof
        ns = xy.shape[0]
        tol = 1e-9 * max(self.a, self.b)
        edge = np.flatnonzero(np.abs(xy[:, 0]) <= tol)
        keep = np.setdiff1d(np.arange(ns), edge)
        # model nodes: P (0) at the origin, then the plate nodes off the clamped edge
        pos = np.zeros((1 + keep.size, 3))
        pos[1:, :2] = xy[keep]
        rows, cols, vals = [], [], []
        for k, i in enumerate(keep):
            for c in range(6):
                rows.append(6 * i + c)
                cols.append(6 * (k + 1) + c)
                vals.append(1.0)
        for i in edge:  # u_i = u_P + theta_P x r_i = u_P - r_i~ theta_P, theta_i = theta_P
            x, y = xy[i]
            rt = np.array([[0.0, 0.0, -y], [0.0, 0.0, x], [y, -x, 0.0]])  # -r~ (z = 0)
            blk = np.zeros((6, 6))
            blk[:3, :3] = np.eye(3)
            blk[:3, 3:] = rt
            blk[3:, 3:] = np.eye(3)
            r, c = np.nonzero(blk)
            rows += list(6 * i + r)
            cols += list(c)
            vals += list(blk[r, c])
        T = sp.csr_matrix((vals, (rows, cols)), shape=(6 * ns, 6 * (1 + keep.size)))
        return _Mesh(full, red, pos, T, ns, xy)

    @functools.cached_property
    def _matrices(self) -> dict[str, sp.csr_matrix]:
        """The plate's full (unconstrained) sparse K, M and mass-per-area operator A00."""
        m = self._mesh
        ns = m.ns
        opf, opr = _operators(m.full), _operators(m.red)
        E, nu, h = self.E, self.nu, self.thickness
        G = E / (2.0 * (1.0 + nu))
        iso = np.array([[1.0, nu, 0.0], [nu, 1.0, 0.0], [0.0, 0.0, 0.5 * (1.0 - nu)]])
        membrane = [{(_UX, _DX): 1.0}, {(_UY, _DY): 1.0}, {(_UX, _DY): 1.0, (_UY, _DX): 1.0}]
        bending = [{(_RY, _DX): 1.0}, {(_RX, _DY): -1.0}, {(_RY, _DY): 1.0, (_RX, _DX): -1.0}]
        shear = [{(_UZ, _DX): 1.0, (_RY, _VAL): 1.0}, {(_UZ, _DY): 1.0, (_RX, _VAL): -1.0}]
        drill = [{(_RZ, _VAL): 1.0, (_UY, _DX): -0.5, (_UX, _DY): 0.5}]
        K = (
            _strain_matrix(opf, membrane, E * h / (1.0 - nu**2) * iso, ns)
            + _strain_matrix(opf, bending, self.flexural_rigidity * iso, ns)
            + _strain_matrix(opr, shear, self.shear_coefficient * G * h * np.eye(2), ns)
            + _strain_matrix(opf, drill, self.drilling * G * h * np.eye(1), ns)
        )
        A00 = opf[(_VAL, _VAL)]
        inertia = np.array([1.0, 1.0, 1.0, h * h / 12.0, h * h / 12.0, h * h / 12.0])
        M = self.rho * h * sp.kron(A00, sp.diags(inertia), format="csr")
        return {"K": K.tocsr(), "M": M, "A00": A00.tocsr()}

    def _reduce(self, A: sp.spmatrix) -> FloatArray:
        out = self._tied(A).toarray()
        return 0.5 * (out + out.T)

    def _tied(self, A: sp.spmatrix) -> sp.csr_matrix:
        """T^T A T: a plate matrix on the model's dofs (the spider applied)."""
        T = self._mesh.T
        return (T.T @ A @ T).tocsr()

    def sparse_matrices(self) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """``(K, M)``: the model's stiffness and mass (those of :meth:`fe_model`) as sparse
        matrices (6N x 6N, N/m and kg by dof kinds), for fine meshes' eigen analyses."""
        mats = self._matrices
        return self._tied(mats["K"]), self._tied(mats["M"])

    def fe_model(self, geometric_stiffness: bool = True) -> FEModel:
        """The plate's :class:`FEModel`: root node 0 = P at the origin (the middle of the
        clamped edge, the spider's master), Sbar given; with ``geometric_stiffness`` the
        body-load cases' KG (computed on first use per case)."""
        mats = self._matrices
        A = self.rho * self.thickness * mats["A00"]
        nd = 6 * (self.n_nodes)
        Sbar = np.zeros((3, 3, nd, nd))
        for c in range(3):
            P = sp.csr_matrix(([1.0], ([c], [c])), shape=(6, 6))
            Sbar[c, c] = self._reduce(sp.kron(A, P, format="csr"))
        return FEModel(
            self.name,
            self._mesh.pos,
            self._reduce(mats["M"]),
            self._reduce(mats["K"]),
            root=0,
            Sbar=Sbar,
            geometric_stiffness=self.kg if geometric_stiffness else None,
        )

    @property
    def n_nodes(self) -> int:
        """Nodes of the model: P and the plate's nodes off the clamped edge."""
        return int(self._mesh.pos.shape[0])

    def node_at(self, x: float, y: float) -> int:
        """The model node nearest to the point (x, y, 0) of R_a (m), e.g. a corner at the tip
        (a child port)."""
        pos = self._mesh.pos
        return int(np.argmin(np.hypot(pos[:, 0] - x, pos[:, 1] - y)))

    def kg(self, case: str) -> FloatArray | None:
        """The geometric stiffness (6N x 6N, model dofs) per unit load value of the body-load
        ``case``, from the membrane pre-stress of its in-plane body force; None for the
        node-load cases."""
        if case not in BODY_LOAD_CASES:
            return None
        if case not in self._kg_cache:
            kg = self._kg(case)
            kg.setflags(write=False)  # shared by every caller
            self._kg_cache[case] = kg
        return self._kg_cache[case]

    @functools.cached_property
    def _kg_cache(self) -> dict[str, FloatArray]:
        """The geometric stiffnesses computed so far, by case."""
        return {}

    def _kg(self, case: str) -> FloatArray:
        skfem = _skfem()
        m = self._mesh
        full, xy, ns, T = m.full, m.xy, m.ns, m.T
        mats = self._matrices
        # consistent nodal load of the in-plane body force rho h f(r) (f linear in r: exact
        # as f interpolated at the nodes)
        r = np.zeros((ns, 3))
        r[:, :2] = xy
        f = body_force_per_unit_load(case, r)
        A = self.rho * self.thickness * mats["A00"]
        load = np.zeros(6 * ns)
        load[_UX::6] = A @ f[:, 0]
        load[_UY::6] = A @ f[:, 1]
        if not np.any(load):
            return np.zeros((6 * self.n_nodes, 6 * self.n_nodes))
        K = self._tied(mats["K"]).tocsc()
        rhs = T.T @ load
        free = np.arange(6, K.shape[0])
        u = np.zeros(K.shape[0])
        u[free] = spla.spsolve(K[free][:, free], rhs[free])
        uf = T @ u
        E, nu, h = self.E, self.nu, self.thickness
        ux = full.interpolate(uf[_UX::6])
        uy = full.interpolate(uf[_UY::6])
        c = E * h / (1.0 - nu**2)
        exx, eyy = ux.grad[0], uy.grad[1]
        gxy = ux.grad[1] + uy.grad[0]
        nxx, nyy, nxy = c * (exx + nu * eyy), c * (eyy + nu * exx), c * 0.5 * (1 - nu) * gxy

        @skfem.BilinearForm
        def kg_form(u: Any, v: Any, w: Any) -> Any:
            gu, gv = u.grad, v.grad
            return (
                w["nxx"] * gv[0] * gu[0]
                + w["nyy"] * gv[1] * gu[1]
                + w["nxy"] * (gv[0] * gu[1] + gv[1] * gu[0])
            )

        Ks = kg_form.assemble(full, nxx=nxx, nyy=nyy, nxy=nxy)
        # the initial-stress stiffness of the three displacement components
        P = sp.diags([1.0, 1.0, 1.0, 0.0, 0.0, 0.0]).tocsr()
        return self._reduce(sp.kron(Ks, P, format="csr"))
