"""A finite-element model of a flexible body, as the reduction reads it (:class:`FEModel`).

Degrees of freedom: 6 per node, node-major, in the body frame R_a (origin at the root node P,
the parent port): ``[ux, uy, uz, rx, ry, rz]`` of node 0, then node 1, ... (m and rad; the
rotations are small rotation vectors); or any list of (node, component) pairs (``dof_map``: a
solid's nodes carry translations only, and a root node without dofs is clamped in the file
itself, as a model exported clamped at its base). SI units throughout: m, kg, s, N, rad.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from . import checks
from .checks import FlexModelError, FloatArray

#: the body-load cases of the geometric stiffness, and the physical load value each multiplies
#: (all in R_a): the frame's linear acceleration a (m/s^2; with gravity g: a - g), its angular
#: acceleration alpha (rad/s^2), the products of its angular velocity omega_i omega_j (rad^2/s^2)
BODY_LOAD_CASES: tuple[str, ...] = (
    "ax", "ay", "az",
    "alx", "aly", "alz",
    "wxx", "wyy", "wzz", "wxy", "wyz", "wxz",
)  # fmt: skip
#: the six components of a unit force (N) or moment (N m) applied on the body at an interface
#: node, in R_a; a case is named ``node<j>.<component>`` with j the node's index
NODE_LOAD_COMPONENTS: tuple[str, ...] = ("fx", "fy", "fz", "mx", "my", "mz")

#: ``(case) -> the full geometric stiffness per unit load value (N/m per unit), or None if the
#: model has none for this case``
GeometricStiffnessProvider = Callable[[str], "FloatArray | None"]


def body_force_per_unit_load(case: str, r: FloatArray) -> FloatArray:
    """The d'Alembert body force per unit mass (m/s^2) at the points ``r`` (k x 3, m, in R_a)
    per unit load value of the body-load ``case`` (one of :data:`BODY_LOAD_CASES`):
    f = -(a + alpha x r + omega x (omega x r)), split by load values."""
    r = np.atleast_2d(np.asarray(r, dtype=float))
    f = np.zeros_like(r)
    axis = {"x": 0, "y": 1, "z": 2}
    if case in ("ax", "ay", "az"):
        f[:, axis[case[1]]] = -1.0
    elif case in ("alx", "aly", "alz"):
        e = np.zeros(3)
        e[axis[case[2]]] = 1.0
        f = -np.cross(e, r)
    elif case in ("wxx", "wyy", "wzz"):
        i = axis[case[1]]
        f = r.copy()
        f[:, i] = 0.0  # -omega x (omega x r) = |omega|^2 r - omega (omega . r), omega = e_i
    elif case in ("wxy", "wyz", "wxz"):
        i, j = axis[case[1]], axis[case[2]]
        f[:, i] = -r[:, j]  # the cross term 2 omega_i omega_j of -(omega (omega . r) - ...)
        f[:, j] = -r[:, i]
    else:
        raise KeyError(case)
    return f


@dataclass(frozen=True)
class FEModel:
    """A linear finite-element model of a flexible body, in its body frame R_a.

    :param name: the body's name (error messages name it)
    :param node_positions: (N, 3) undeformed node positions in R_a (m); the root node's is 0
    :param M: (6N, 6N) mass matrix (kg, kg m, kg m^2 by dof kinds), symmetric positive definite
    :param K: (6N, 6N) stiffness matrix (N/m, N, N m/rad), symmetric positive semi-definite with
        at most 6 rigid-body modes, positive definite once the root node is clamped
    :param root: index of the root node P (the parent port, clamped to the floating frame)
    :param Sbar: optional (3, 3, 6N, 6N) component mass operator of the translational field,
        ``Sbar[a, b] = int rho N_a^T N_b dV`` (Shabana's S_ab; N_a: the row of the shape
        functions giving displacement component a). None: the nodal approximation
        ``Sbar[a, b][i_a, j_b] = (M[i_a, j_a] + M[i_b, j_b]) / 2``, the components' own
        translational mass between nodes i and j (exact for lumped masses, whose ``Sbar[a, b]``
        couples a node's a- and b-translations by its mass)
    :param geometric_stiffness: ``(case) -> (6N, 6N)`` geometric stiffness per unit load value
        of a load case (:data:`BODY_LOAD_CASES`, ``node<j>.fx`` ...), or None when the model has
        none for it; None: no geometric stiffness at all
    :param dof_map: optional (n, 2) integers, the (node index, component 0..5 = ux, uy, uz, rx,
        ry, rz) of each of M's and K's n rows; None: 6 per node, node-major (then n = 6N and
        the shapes above). A node may carry any components (a solid's node: the translations);
        the root node all six, or none: then the file's model is already clamped at P (its
        constrained dofs removed, as a ``.full`` file of a model fixed at its base), P a point
        that moves rigidly with the clamped part. Child ports need all six (docs/flexible.md)
    """

    name: str
    node_positions: FloatArray
    M: FloatArray
    K: FloatArray
    root: int = 0
    Sbar: FloatArray | None = None
    geometric_stiffness: GeometricStiffnessProvider | None = field(default=None, repr=False)
    dof_map: np.ndarray | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        body = str(self.name)
        try:
            pos = np.array(self.node_positions, dtype=float)
        except (TypeError, ValueError):
            raise FlexModelError(body, "'node_positions'", "not a numeric array") from None
        if pos.ndim != 2 or pos.shape[1] != 3 or pos.shape[0] < 2:
            raise FlexModelError(
                body, "'node_positions'", f"must be (N >= 2, 3), got shape {pos.shape}"
            )
        if not np.all(np.isfinite(pos)):
            raise FlexModelError(body, "'node_positions'", "has non-finite entries")
        n_nodes = pos.shape[0]
        if not (isinstance(self.root, (int, np.integer)) and 0 <= self.root < n_nodes):
            raise FlexModelError(
                body, "'root'", f"node {self.root!r} does not exist (nodes 0..{n_nodes - 1})"
            )
        size = float(np.max(np.linalg.norm(pos - pos[self.root], axis=1)))
        if size <= 0.0:
            raise FlexModelError(body, "'node_positions'", "all nodes coincide")
        if np.linalg.norm(pos[self.root]) > 1e-9 * size:
            raise FlexModelError(
                body,
                "'node_positions'",
                f"the root node {self.root} is at {pos[self.root].tolist()}, not at the origin "
                "of R_a (the body frame's origin is the parent port P)",
            )
        if self.dof_map is not None:
            object.__setattr__(self, "dof_map", _check_dof_map(body, self.dof_map, n_nodes,
                                                              self.root))  # fmt: skip
        ndof = 6 * n_nodes if self.dof_map is None else self.dof_map.shape[0]
        M = checks.square(body, "M", self.M, ndof)
        K = checks.square(body, "K", self.K, ndof)
        checks.positive_definite(body, "M", M)
        n_zero = checks.positive_semidefinite(body, "K", K)
        if n_zero > 6:
            raise FlexModelError(
                body,
                "matrix 'K'",
                f"has {n_zero} rigid-body modes, more than the 6 the root interface P removes",
            )
        free = self.free_dofs(n_nodes)
        Kff = K[np.ix_(free, free)]
        if checks.positive_semidefinite(body, "K", Kff) > 0:
            raise FlexModelError(
                body,
                "matrix 'K'",
                f"singular with the root node {self.root} clamped: more rigid-body modes than "
                "the interface allows (a mechanism, or an unconnected node)",
            )
        if self.Sbar is not None:
            S = np.array(self.Sbar, dtype=float)
            if S.shape != (3, 3, ndof, ndof) or not np.all(np.isfinite(S)):
                raise FlexModelError(
                    body, "matrix 'Sbar'", f"must be finite (3, 3, {ndof}, {ndof}), got {S.shape}"
                )
            object.__setattr__(self, "Sbar", S)
        object.__setattr__(self, "name", body)
        object.__setattr__(self, "node_positions", pos)
        object.__setattr__(self, "M", M)
        object.__setattr__(self, "K", K)

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return int(self.node_positions.shape[0])

    @property
    def n_dofs(self) -> int:
        """Number of degrees of freedom (6 per node, or the rows of ``dof_map``)."""
        return 6 * self.n_nodes if self.dof_map is None else int(self.dof_map.shape[0])

    def dofs(self, n_nodes: int | None = None) -> np.ndarray:
        """(n_dofs, 2): the (node index, component 0..5) of each dof."""
        if self.dof_map is not None:
            return self.dof_map
        n = self.n_nodes if n_nodes is None else n_nodes
        return np.stack([np.repeat(np.arange(n), 6), np.tile(np.arange(6), n)], axis=1)

    def free_dofs(self, n_nodes: int | None = None) -> np.ndarray:
        """Indices of the dofs other than the root node's."""
        return np.flatnonzero(self.dofs(n_nodes)[:, 0] != self.root)

    def node_dofs(self, node: int) -> np.ndarray:
        """The 6 dof indices of ``node`` (ux, uy, uz, rx, ry, rz); refused by name unless the
        node carries all six (a solid's node: tie it to a master node, docs/flexible.md)."""
        if self.dof_map is None:
            return np.arange(6 * node, 6 * node + 6)
        rows = np.flatnonzero(self.dof_map[:, 0] == node)
        if rows.size != 6:
            raise FlexModelError(
                self.name,
                "'nodes'",
                f"node {node} carries {rows.size} of the 6 dofs (ux..rz) a port needs: a "
                "solid's node has translations only; tie a face to a master node instead",
            )
        return rows[np.argsort(self.dof_map[rows, 1])]

    def node_shape(self, basis: FloatArray, node: int) -> FloatArray:
        """(6, n): the translation and rotation of ``node`` per column of ``basis`` (n_dofs, n);
        zero for the components the node does not carry (the clamped root's, all six)."""
        dofs = self.dofs()
        rows = np.flatnonzero(dofs[:, 0] == node)
        out = np.zeros((6, basis.shape[1]))
        out[dofs[rows, 1]] = basis[rows]
        return out

    def check_node(self, node: object, what: str) -> int:
        """``node`` as a node index, refused by name unless it exists."""
        if not isinstance(node, (int, np.integer)) or isinstance(node, bool):
            raise FlexModelError(self.name, f"'{what}'", f"node {node!r} is not an integer index")
        if not 0 <= int(node) < self.n_nodes:
            raise FlexModelError(
                self.name, f"'{what}'", f"node {node} does not exist (nodes 0..{self.n_nodes - 1})"
            )
        return int(node)

    def component_mass(self) -> FloatArray:
        """Shabana's component mass operator ``Sbar`` (3, 3, 6N, 6N) (kg): the given one, or
        the nodal approximation built from M (see the class)."""
        if self.Sbar is not None:
            return self.Sbar
        n = self.n_dofs
        S = np.zeros((3, 3, n, n))
        dofs = self.dofs()
        # each component's translation dofs by node, in one node order (every node carries the
        # three translations or none: _check_dof_map)
        order = [dofs[dofs[:, 1] == a] for a in range(3)]
        index = [np.flatnonzero(dofs[:, 1] == a)[np.argsort(order[a][:, 0], kind="stable")]
                 for a in range(3)]  # fmt: skip
        for a in range(3):
            for b in range(3):
                ia, ib = index[a], index[b]
                # int rho u_a u_b couples node i's a-translation with node j's b-translation by
                # the translational mass between i and j (not M's a-b block, zero for a point
                # mass although its S_ab is m e_a e_b^T)
                S[a, b][np.ix_(ia, ib)] = 0.5 * (self.M[np.ix_(ia, ia)] + self.M[np.ix_(ib, ib)])
        return S

    def rigid_modes(self, positions: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
        """``(Tt, Tr)``, (6N, 3) each: the nodal dofs of a unit rigid translation (Tt) and of a
        unit small rigid rotation about P (Tr: translations -x_i~ (x_i the node positions,
        m), rotations the identity) along/about the axes of R_a."""
        x = self.node_positions if positions is None else positions
        node, comp = self.dofs().T
        Tt = np.zeros((node.size, 3))
        Tr = np.zeros((node.size, 3))
        tr = comp < 3
        Tt[tr, comp[tr]] = 1.0
        # a small rotation theta about P moves node i by theta x x_i = -x_i~ theta: the
        # translation dof (i, c) is row c of -x_i~; the rotation dof (i, 3 + c) is theta_c
        sk = np.stack([-skew(xi) for xi in x]) if len(x) else np.zeros((0, 3, 3))
        Tr[tr] = sk[node[tr], comp[tr]]
        Tr[~tr, comp[~tr] - 3] = 1.0
        return Tt, Tr

    def kg(self, case: str) -> FloatArray | None:
        """The full geometric stiffness per unit load value of ``case`` (or None)."""
        if self.geometric_stiffness is None:
            return None
        return self.geometric_stiffness(case)


def _check_dof_map(body: str, dof_map: object, n_nodes: int, root: int) -> np.ndarray:
    """``dof_map`` as an (n, 2) integer array, refused by name unless its pairs are distinct,
    its nodes exist and carry no component outside 0..5, and the root has all or none."""
    d = np.asarray(dof_map)
    if d.ndim != 2 or d.shape[1] != 2 or d.shape[0] < 1 or not np.issubdtype(d.dtype, np.integer):
        raise FlexModelError(body, "'dof_map'", f"must be (n, 2) integers, got {d.shape}")
    if d[:, 0].min() < 0 or d[:, 0].max() >= n_nodes or d[:, 1].min() < 0 or d[:, 1].max() > 5:
        raise FlexModelError(body, "'dof_map'", f"nodes 0..{n_nodes - 1}, components 0..5")
    if np.unique(d, axis=0).shape[0] != d.shape[0]:
        raise FlexModelError(body, "'dof_map'", "a (node, component) pair appears twice")
    for node in np.unique(d[:, 0]):
        if np.sum((d[:, 0] == node) & (d[:, 1] < 3)) not in (0, 3):
            raise FlexModelError(body, "'dof_map'", f"node {node} carries some of the three "
                                 "translations: all three or none")  # fmt: skip
    n_root = int(np.sum(d[:, 0] == root))
    if n_root not in (0, 6):
        raise FlexModelError(body, "'dof_map'", f"the root node {root} carries {n_root} dofs: "
                             "all six (clamped by the reduction) or none (clamped in the file)")
    d = d.astype(int)
    d.setflags(write=False)
    return d


def skew(v: FloatArray) -> FloatArray:
    """The cross-product matrix v~ (v~ w = v x w)."""
    x, y, z = v
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def as_mapping_provider(kg: Mapping[str, FloatArray]) -> GeometricStiffnessProvider:
    """A geometric-stiffness provider from a mapping ``case -> full matrix``."""
    return lambda case: kg.get(case)
