"""Time functions from expressions: ``f(t)`` written as text, so that a model file can hold it.

A :class:`~titopfmu.blocks.TimeFunction` built on a :class:`TimeExpression` can be saved in a
model file (``expression:``); one built on any other callable cannot.

How an expression is evaluated (issue 33: a model file is input, and input may be hostile).
The text is parsed once by Python's own parser (:func:`ast.parse`), checked against a whitelist
and compiled once into a tree of closures over numpy ``float64`` operations; no ``eval`` runs.
What makes the cost of one evaluation bounded:

- every number is a ``float64`` from the start (integer literals included), and so is ``t``: no
  operation can reach Python's unbounded integers, so ``**`` costs the same whatever the
  exponent (``9**9**9`` is a float power, not a 370-million-digit integer) -- the exponent's
  bound is the float range, and a result beyond it is ``inf``, not a hang;
- no strings (no string constant means anything in ``f(t)``), no attributes, no subscripts, no
  comprehensions, no keyword arguments; lists only as the whole expression (one value per
  component): nothing can build a large string or array;
- the functions (:data:`_FUNCS`) are numpy ufuncs, ``clip`` and ``where``, each taking a fixed
  number of float arguments and returning one float;
- the text, its syntax tree and the vector are bounded (:data:`MAX_LENGTH`, :data:`MAX_NODES`,
  :data:`MAX_DEPTH`, :data:`MAX_COMPONENTS`), so one evaluation is at most ``MAX_NODES`` float
  operations;
- constant parts are folded when the expression is compiled, with floating-point errors raised:
  a constant part that overflows or is not a number (``9**9**9``, ``1/0``, ``log(-1)``) and a
  literal beyond the float range (``1e400``, a 400-digit integer) are refused there, by name.

A refused expression raises :class:`ExpressionError` (a ValueError) saying the expression and the
reason on one line; the model-file reader adds the file, the line and the block.

Why not a library: numexpr (installable, not installed) turns the text into its expression tree
with Python's ``eval`` itself and knows neither ``a if c else b`` nor lists nor some of the
functions here (``clip``, ``heaviside``), so existing model files would fail; asteval interprets a
much larger language (loops, function definitions, assignments) node by node at every call, which
would have to be turned off piece by piece and costs more per evaluation of ``f(t)``, a call made at
every step of a simulation. The language here is small enough that a whitelist plus float-only
arithmetic bounds it completely.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

#: at most this many characters in one expression
MAX_LENGTH = 10_000
#: at most this many syntax-tree nodes in one TimeExpression (all its components): the bound on
#: the float operations of one evaluation
MAX_NODES = 10_000
#: at most this many levels of nesting in one expression's syntax tree
MAX_DEPTH = 200
#: at most this many components (values of f(t))
MAX_COMPONENTS = 1_000

_FUNCS = {
    n: getattr(np, n)
    for n in (
        "sin",
        "cos",
        "tan",
        "arcsin",
        "arccos",
        "arctan",
        "arctan2",
        "sinh",
        "cosh",
        "tanh",
        "exp",
        "log",
        "log10",
        "sqrt",
        "abs",
        "sign",
        "minimum",
        "maximum",
        "floor",
        "ceil",
        "heaviside",
        "hypot",
        "clip",
        "where",
    )
}
#: the number of arguments of each function (ufuncs: their nin)
_ARITY = {n: (3 if n in ("clip", "where") else f.nin) for n, f in _FUNCS.items()}
_CONSTS = {"pi": np.float64(math.pi), "e": np.float64(math.e)}

_ONE, _ZERO = np.float64(1.0), np.float64(0.0)


def _truth(r):
    """A comparison's result as a float (1.0 or 0.0): booleans are not numbers in numpy
    (``-(t > 1)`` would be an error)."""
    if r is np.True_ or r is True:
        return _ONE
    if r is np.False_ or r is False:
        return _ZERO
    return np.asarray(r, dtype=float)  # t an array (a direct call of f)

_FLOAT_MAX = float(np.finfo(np.float64).max)

_UNARY = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
    ast.Not: lambda a: _ZERO if a else _ONE,
}
_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}

_Fn = Callable[[Any], Any]


class ExpressionError(ValueError):
    """An expression is refused: the message names it and says why (one line). ``index`` is the
    component (0-based) of a list of expressions, or None."""

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


class _Const:
    """A folded constant (a float64) during compilation."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value


def _show(text: str, limit: int = 60) -> str:
    """The expression as quoted in a message: one line, at most ``limit`` characters."""
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


class _Compiler:
    """One expression text -> (closure of t, number of components)."""

    def __init__(self, text: str, index: int | None) -> None:
        self.text, self.index = text, index

    def fail(self, reason: str) -> ExpressionError:
        return ExpressionError(f"expression {_show(self.text)}: {reason}", self.index)

    def part(self, node: ast.AST) -> str:
        seg = ast.get_source_segment(self.text, node) or type(node).__name__
        return _show(" ".join(seg.split()), 40)

    def compile(self) -> tuple[list[_Fn], int]:
        text = self.text
        if len(text) > MAX_LENGTH:
            raise self.fail(f"longer than {MAX_LENGTH} characters ({len(text)})")
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError as exc:
            raise self.fail(" ".join(str(exc.msg).split())) from None
        except (MemoryError, RecursionError):  # the parser's own nesting limits
            raise self.fail("nested too deeply for the parser") from None
        except ValueError as exc:
            raise self.fail(" ".join(str(exc).split())) from None
        self.nodes = self._size(tree)
        body = tree.body
        if isinstance(body, (ast.List, ast.Tuple)):  # a vector: one value per component
            if len(body.elts) > MAX_COMPONENTS:
                raise self.fail(f"more than {MAX_COMPONENTS} components ({len(body.elts)})")
            return [self._fn(self.build(e)) for e in body.elts], len(body.elts)
        return [self._fn(self.build(body))], 1

    def _size(self, tree: ast.AST) -> int:
        """Node count and depth of the tree, checked without recursion."""
        count, stack = 0, [(tree, 1)]
        while stack:
            node, depth = stack.pop()
            count += 1
            if depth > MAX_DEPTH:
                raise self.fail(f"nested deeper than {MAX_DEPTH} levels")
            if count > MAX_NODES:
                raise self.fail(f"more than {MAX_NODES} syntax elements")
            stack.extend((c, depth + 1) for c in ast.iter_child_nodes(node))
        return count

    @staticmethod
    def _fn(c) -> _Fn:
        if isinstance(c, _Const):
            value = c.value
            return lambda t: value
        return c

    def fold(self, node: ast.AST, fn: _Fn):
        """A constant part evaluated now; refused if it is not a finite number."""
        try:
            with np.errstate(all="raise"):
                value = np.float64(fn(None))
        except (FloatingPointError, ArithmeticError) as exc:
            reason = f"the constant part {self.part(node)} is not a finite number ({exc})"
            raise self.fail(reason) from None
        if not math.isfinite(value):
            raise self.fail(f"the constant part {self.part(node)} is not a finite number")
        return _Const(value)

    def build(self, node: ast.AST):
        """A _Const or a closure of t for ``node`` (a scalar expression)."""
        if isinstance(node, ast.Constant):
            return self.constant(node)
        if isinstance(node, ast.Name):
            if node.id == "t":
                return lambda t: t
            if node.id in _CONSTS:
                return _Const(_CONSTS[node.id])
            if node.id in _FUNCS:
                raise self.fail(f"the function {node.id!r} is not called (write {node.id}(...))")
            raise self.fail(f"unknown name {node.id!r}; names: t, pi, e and the functions")
        if isinstance(node, ast.UnaryOp):
            op = _UNARY.get(type(node.op))
            if op is None:
                raise self.fail(f"the operator {type(node.op).__name__} is not allowed")
            a = self.build(node.operand)
            if isinstance(a, _Const):
                return self.fold(node, lambda t: op(a.value))
            return lambda t: op(a(t))
        if isinstance(node, ast.BinOp):
            op = _BINARY.get(type(node.op))
            if op is None:
                raise self.fail(
                    f"the operator {type(node.op).__name__} is not allowed (+ - * / // % **)"
                )
            a, b = self.build(node.left), self.build(node.right)
            if isinstance(a, _Const) and isinstance(b, _Const):
                return self.fold(node, lambda t: op(a.value, b.value))
            fa, fb = self._fn(a), self._fn(b)
            return lambda t: op(fa(t), fb(t))
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.IfExp):
            c, a, b = self.build(node.test), self.build(node.body), self.build(node.orelse)
            if isinstance(c, _Const):
                return a if c.value else b
            fa, fb = self._fn(a), self._fn(b)
            return lambda t: fa(t) if c(t) else fb(t)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, (ast.List, ast.Tuple)):
            raise self.fail(
                f"a list ({self.part(node)}) is allowed only as the whole expression, "
                "one value per component"
            )
        raise self.fail(f"{type(node).__name__} is not allowed")

    def constant(self, node: ast.Constant) -> _Const:
        v = node.value
        if isinstance(v, bool):
            return _Const(_ONE if v else _ZERO)
        if isinstance(v, int):
            if abs(v) > _FLOAT_MAX:
                digits = len(str(abs(v)))
                raise self.fail(f"the number of {digits} digits is beyond the float range")
            return _Const(np.float64(v))
        if isinstance(v, float):
            if not math.isfinite(v):  # a literal such as 1e400 parses to inf
                raise self.fail(f"the number {self.part(node)} is beyond the float range")
            return _Const(np.float64(v))
        if isinstance(v, (str, bytes)):
            raise self.fail(f"strings are not allowed ({self.part(node)}): f(t) is numbers")
        raise self.fail(f"the constant {self.part(node)} is not allowed (numbers only)")

    def compare(self, node: ast.Compare):
        ops = []
        for op in node.ops:
            f = _COMPARE.get(type(op))
            if f is None:
                raise self.fail(f"the comparison {type(op).__name__} is not allowed")
            ops.append(f)
        parts = [self.build(node.left)] + [self.build(c) for c in node.comparators]
        fns = [self._fn(p) for p in parts]
        if len(ops) == 1:
            op, fa, fb = ops[0], fns[0], fns[1]

            def one(t):
                return _truth(op(fa(t), fb(t)))

            fn = one
        else:

            def chain(t):
                a = fns[0](t)
                for op, g in zip(ops, fns[1:], strict=True):
                    b = g(t)
                    if not op(a, b):
                        return _ZERO
                    a = b
                return _ONE

            fn = chain
        if all(isinstance(p, _Const) for p in parts):
            return self.fold(node, fn)
        return fn

    def call(self, node: ast.Call):
        if not (isinstance(node.func, ast.Name) and node.func.id in _FUNCS):
            raise self.fail(f"only the functions {sorted(_FUNCS)}")
        name = node.func.id
        if node.keywords:
            raise self.fail(f"{name}(): keyword arguments are not allowed")
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise self.fail(f"{name}(): starred arguments are not allowed")
        if len(node.args) != _ARITY[name]:
            raise self.fail(
                f"{name}() takes {_ARITY[name]} argument(s), {len(node.args)} given"
            )
        f = _FUNCS[name]
        args = [self.build(a) for a in node.args]
        fns = [self._fn(a) for a in args]
        if len(fns) == 1:
            (fa,) = fns

            def fn(t):
                return f(fa(t))

        elif len(fns) == 2:
            fa, fb = fns

            def fn(t):
                return f(fa(t), fb(t))

        else:

            def fn(t):
                return f(*[g(t) for g in fns])

        if all(isinstance(a, _Const) for a in args):
            return self.fold(node, fn)
        return fn


class TimeExpression:
    """``f(t)`` from arithmetic expressions of ``t`` (one per component, or one giving a list):
    numbers, ``+ - * / // % **``, comparisons, ``a if c else b``, ``not``, ``pi``, ``e`` and the
    numpy functions of :data:`_FUNCS`. Nothing else is allowed (no attributes, no other names,
    no strings), so a model file cannot run arbitrary code, and the cost of one evaluation is
    bounded (see the module's documentation). ``size`` is the number of values of ``f(t)``.
    A :class:`TimeFunction` built on one can be saved. Refusals raise :class:`ExpressionError`."""

    def __init__(self, expression: str | list[str]) -> None:
        self.expression = expression
        exprs = [expression] if isinstance(expression, str) else list(expression)
        if len(exprs) > MAX_COMPONENTS:
            raise ExpressionError(f"more than {MAX_COMPONENTS} expressions ({len(exprs)})")
        index = None if isinstance(expression, str) else 0
        self._fns: list[_Fn] = []
        nodes = 0
        for i, text in enumerate(exprs):
            c = _Compiler(str(text), None if index is None else i)
            fns, _ = c.compile()
            nodes += c.nodes
            if nodes > MAX_NODES:
                raise c.fail(f"the expressions have more than {MAX_NODES} syntax elements")
            self._fns.extend(fns)
        if len(self._fns) > MAX_COMPONENTS:
            raise ExpressionError(f"more than {MAX_COMPONENTS} components ({len(self._fns)})")
        self.size = len(self._fns)

    def __call__(self, t: float):
        t = np.asarray(t, dtype=float) if isinstance(t, np.ndarray) else np.float64(t)
        return np.array([f(t) for f in self._fns], dtype=float).reshape(-1)

    def __reduce__(self):  # pickled as its text (closures are not picklable): compiled again
        return (TimeExpression, (self.expression,))

    def __repr__(self) -> str:
        return f"TimeExpression({self.expression!r})"
