"""Hostile and odd model files and expressions (issue 33, points 1 and 2).

A model file is read by a parser that cannot be made to explode (aliases and nesting bounded,
duplicate keys refused with both lines, YAML 1.2 / JSON numbers, numbers beyond the float range
refused by name), and a TimeFunction's expression is compiled once into float operations whose
cost per evaluation is bounded. Every refusal is a one-line ModelFileError (file, line, element),
and ``titopfmu run`` prints it as one line with exit 2. Each row of the issue has a test here;
the Hypothesis tests throw plausible and hostile pieces at both and check that the outcome is a
System or a one-line refusal, within a bound of time and memory.
"""

from __future__ import annotations

import json
import pickle
import resource
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from titopfmu.blocks import TitopError
from titopfmu.blocks.expressions import MAX_DEPTH as EXPR_MAX_DEPTH
from titopfmu.blocks.expressions import MAX_LENGTH, ExpressionError, TimeExpression
from titopfmu.modelfile import MAX_ALIAS_NODES, MAX_DEPTH, ModelFileError, load, loads

BASE = """\
format: titopfmu-model
version: 1
blocks:
- name: body
  type: RigidBody
  mass: {mass}
  inertia: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
"""
MASS_LINE = 6

TIME_FUNCTION = """\
format: titopfmu-model
version: 1
blocks:
- name: push
  type: TimeFunction
  size: {size}
  expression: {expression}
"""
EXPRESSION_LINE = 7

#: a refusal (or a load) takes less than this much CPU time of this process (time.process_time:
#: what else runs on the machine does not count, unlike a wall clock); today's worst case is far
#: below (tenths of s); a document that hangs the reader (9**9**9, a billion laughs) takes minutes
SECONDS = 5.0


def refused(text: str, fmt: str | None = None, file: str = "m.yaml") -> ModelFileError:
    """The ModelFileError of ``text``, checked to be quick and on one line."""
    t0 = time.process_time()
    with pytest.raises(ModelFileError) as exc:
        loads(text, file=file, fmt=fmt)
    assert time.process_time() - t0 < SECONDS
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(file), msg
    return exc.value


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def laughs(levels: int = 9, width: int = 9) -> str:
    """The "billion laughs": each anchor holds ``width`` aliases of the one before."""
    names = [f"l{i}" for i in range(levels + 1)]
    out = [f"{names[0]}: &{names[0]} [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for a, b in zip(names, names[1:], strict=False):
        out.append(f"{b}: &{b} [{', '.join([f'*{a}'] * width)}]")
    return "\n".join(out) + "\n"


# -- row 1: aliases, recursive aliases, deep nesting ------------------------------------------


def test_billion_laughs_is_refused_at_once():
    # before: 53-60 s, then a MemoryError traceback
    text = BASE.format(mass="1.0") + laughs()
    assert len(text) < 1200
    e = refused(text)
    assert "aliases" in e.reason and str(MAX_ALIAS_NODES) in e.reason
    assert e.line is not None and e.line > MASS_LINE


def test_aliases_within_the_bound_are_read():
    """An anchor shared by several parameters (what aliases are for) is read as before."""
    text = (
        "format: titopfmu-model\nversion: 1\nblocks:\n"
        "- name: a\n  type: RigidBody\n  mass: 1.0\n"
        "  inertia: &I [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]]\n"
        "- name: b\n  type: RigidBody\n  mass: 2.0\n  inertia: *I\n"
    )
    s = loads(text)
    assert np.array_equal(s.blocks["a"].inertia, s.blocks["b"].inertia)
    assert s.blocks["b"].inertia[2, 2] == 3.0


@pytest.mark.parametrize(
    "mass", ["&x [1.0, *x]", "&x {a: *x}", "&x [[[*x]]]"], ids=["seq", "map", "deep"]
)
def test_a_recursive_alias_is_refused(mass):
    # before: a RecursionError traceback
    e = refused(BASE.format(mass=mass))
    assert "recursive" in e.reason and "*x" in e.reason and e.line == MASS_LINE
    assert "block 'body' (RigidBody)" in str(e) and "mass" in str(e)


@pytest.mark.parametrize(
    "text, fmt",
    [
        (BASE.format(mass="[" * 100_000 + "]" * 100_000), None),
        (BASE.format(mass="\n" + "".join(" " * (i + 4) + "-\n" for i in range(300))), None),
        ('{"format": "titopfmu-model", "version": 1, "x": ' + "[" * 100_000
         + "]" * 100_000 + "}", "json"),
        # JSON that YAML cannot read (a tab): the json module's reading, bounded all the same
        ('{"format": "titopfmu-model",\t"version": 1, "x": ' + "[" * 100_000
         + "]" * 100_000 + "}", "json"),
        ('{"format": "titopfmu-model",\t"version": 1, "x": ' + "[" * 80 + "]" * 80 + "}",
         "json"),
        (BASE.format(mass="&a [[[[[[[[[[1]]]]]]]]]]") + "x: &b [*a, [[[[[[[[[[*a]]]]]]]]]]]\n"
         + "".join(f"x{i}: &b{i} [[[[[[[[[[*{'b' if i == 0 else f'b{i - 1}'}]]]]]]]]]]\n"
                   for i in range(8)), None),
    ],
    ids=["yaml-flow", "yaml-block", "json", "json-tab", "json-80", "yaml-aliases"],
)  # fmt: skip
def test_deep_nesting_is_refused(text, fmt):
    # before: RecursionError tracebacks
    e = refused(text, fmt=fmt)
    assert f"deeper than {MAX_DEPTH} levels" in e.reason


def test_nesting_within_the_bound_is_read():
    text = BASE.format(mass="1.0") + "description: " + "[" * 50 + "]" * 50 + "\n"
    e = refused(text)  # read, then refused by the schema: a description is a string
    assert "schema" in e.reason and "description" in str(e)


# -- row 4: numbers in every form of YAML 1.2 and JSON ----------------------------------------


@pytest.mark.parametrize(
    "text, value",
    [("1e1", 10.0), ("1E1", 10.0), ("1e-8", 1e-8), ("1.0e-8", 1e-8), ("+2.5e+2", 250.0),
     (".5", 0.5), ("5.", 5.0), ("7", 7), ("0x10", 16), ("0o17", 15)],
)  # fmt: skip
def test_yaml_numbers_of_every_form(text, value):
    # before (YAML 1.1): '1e1', '1e-8', '1E1', '0o17' read as strings -> "'1e-8' is not of type
    # 'number'"
    s = loads(BASE.format(mass=text) + f"experiment: {{rtol: {text}, t_final: 1e1}}\n")
    assert s.blocks["body"].mass == value
    assert s.model_info.experiment == {"rtol": value, "t_final": 10.0}
    assert type(s.model_info.experiment["rtol"]) is type(value)


def test_json_numbers_of_every_form():
    doc = json.loads(json.dumps({"format": "titopfmu-model", "version": 1, "blocks": []}))
    text = json.dumps(doc)[:-1] + ', "experiment": {"rtol": 1e-8, "t_final": 1E1, "atol": 2e+3}}'
    s = loads(
        text.replace('"blocks": []', '"blocks": [{"name": "b", "type": "RigidBody", '
                     '"mass": 1e1, "inertia": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}]'),
        fmt="json",
    )  # fmt: skip
    assert s.blocks["b"].mass == 10.0
    assert s.model_info.experiment == {"rtol": 1e-8, "t_final": 10.0, "atol": 2000.0}


def test_yaml_11_words_are_strings_now():
    """YAML 1.2: ``yes``/``no``/``on``/``off`` are strings (YAML 1.1 made them booleans)."""
    e = refused(BASE.format(mass="no"))
    assert "'no' is not of type 'number'" in e.reason and e.line == MASS_LINE


# -- row 5: duplicate keys ----------------------------------------------------------------------


def test_a_duplicate_key_is_refused_with_both_lines():
    # before: accepted, the last one won
    text = BASE.format(mass="1.0") + "  mass: 2.0\n"
    e = refused(text)
    assert f"duplicate key 'mass' (lines {MASS_LINE} and 8)" in e.reason
    assert e.line == 8 and "block 'body' (RigidBody)" in str(e) and "parameter mass" in str(e)
    top = "format: titopfmu-model\nversion: 1\nformat: titopfmu-model\nblocks: []\n"
    assert "duplicate key 'format' (lines 1 and 3)" in refused(top).reason
    quoted = BASE.format(mass="1.0") + '  "mass": 2.0\n'  # the same key, written otherwise
    assert "duplicate key 'mass'" in refused(quoted).reason


def test_a_duplicate_key_in_json_is_refused():
    doc = {"format": "titopfmu-model", "version": 1, "blocks": [
        {"name": "b", "type": "RigidBody", "mass": 1.0,
         "inertia": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]}]}  # fmt: skip
    text = json.dumps(doc, indent=2).replace('"mass": 1.0,', '"mass": 1.0,\n"mass": 2.0,')
    e = refused(text, fmt="json", file="m.json")
    assert "duplicate key 'mass'" in e.reason and "lines" in e.reason and "block 'b'" in str(e)
    one_line = json.dumps(doc).replace('"mass": 1.0,', '"mass": 1.0, "mass": 2.0,')
    assert "line 1, columns" in refused(one_line, fmt="json", file="m.json").reason
    # JSON that YAML cannot read (a tab): refused by the json module's reading, by name
    tab = one_line.replace(', "mass": 2.0', ',\t"mass": 2.0')
    assert "duplicate key 'mass'" in refused(tab, fmt="json", file="m.json").reason


# -- row 6: numbers beyond the float range ------------------------------------------------------


@pytest.mark.parametrize(
    "number", ["1" + "0" * 400, "-" + "9" * 5000, "1e400", "-1e999"], ids=lambda v: v[:8]
)
def test_a_number_beyond_the_float_range_is_refused_by_name(number):
    # before: an OverflowError traceback (400 digits); 1e400 read as inf
    for text, fmt in [
        (BASE.format(mass=number), None),
        (json.dumps({"format": "titopfmu-model", "version": 1, "blocks": [
            {"name": "body", "type": "RigidBody", "mass": 0,
             "inertia": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}]}, indent=1)
         .replace('"mass": 0', f'"mass": {number}'), "json"),
    ]:  # fmt: skip
        e = refused(text, fmt=fmt)
        assert "beyond the float range" in e.reason, e
        assert "block 'body' (RigidBody), parameter mass" in str(e)
        assert e.line == _line_of(text, f"{number}")


def test_odd_tags_and_values_are_refused_on_one_line():
    for mass in ["!!int x", "!!float ''", "!!bool maybe", "!!null x", "!!python/object:os.system x",
                 "*undefined", "!!binary aGk=", "? [a]\n  : 1"]:  # fmt: skip
        refused(BASE.format(mass=mass))
    refused("\ufeff" + BASE.format(mass="\x00"))


def test_a_file_that_is_not_utf8(tmp_path):
    p = tmp_path / "m.yaml"
    p.write_bytes(BASE.format(mass="1.0").encode() + b"name: \xff\xfe\n")
    with pytest.raises(ModelFileError) as exc:
        load(p)
    assert exc.value.line == 8 and "not UTF-8" in str(exc.value)


# -- row 2: expressions -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "expression, reason",
    [
        ("9**9**9*t", "'9**9**9' is not a finite number (overflow"),
        ('"a"*10**10', "strings are not allowed"),
        ("[t]*10**10", "a list ('[t]') is allowed only as the whole expression"),
        ("1/0*t", "'1/0' is not a finite number (divide by zero"),
        ("1e400*t", "'1e400' is beyond the float range"),
        ("1" + "0" * 400 + "*t", "of 401 digits is beyond the float range"),
        ("log(-1)+t", "'log(-1)' is not a finite number"),
        ("sin(t, out=t)", "keyword arguments are not allowed"),
        ("t.real", "Attribute is not allowed"),
        ("-" * 100_000 + "t", f"longer than {MAX_LENGTH} characters"),
        ("-" * 5000 + "t", "nested too deeply"),
        ("+".join(["t"] * 300), f"nested deeper than {EXPR_MAX_DEPTH} levels"),
        ("[t, sin]", "the function 'sin' is not called"),
    ],
    ids=lambda v: v[:20],
)
def test_a_refused_expression_names_the_block_the_line_and_the_reason(expression, reason):
    # before: 9**9**9*t hung `titopfmu run` for > 60 s; "a"*10**10 a MemoryError traceback
    e = refused(TIME_FUNCTION.format(size=1, expression=json.dumps(expression)))
    assert reason in e.reason, e
    assert e.line == EXPRESSION_LINE and "block 'push' (TimeFunction)" in str(e)


def test_a_list_of_expressions_names_the_component():
    e = refused(TIME_FUNCTION.format(size=2, expression="['t', '9**9**9']"))
    assert "parameter expression[2]" in str(e) and "not a finite number" in e.reason


def test_the_size_must_be_the_expressions():
    e = refused(TIME_FUNCTION.format(size=10**12, expression="'[t, 2*t]'"))
    assert "the expression gives 2 value(s), size says 1000000000000" in e.reason
    assert e.line == 6 and "parameter size" in str(e)


def test_expressions_evaluate_as_before():
    """Arithmetic is float64 (an int never grows): the values of today's expressions."""
    cases = {
        "sin(t)": [np.sin(1.5)],
        "[t, 2*t, 3]": [1.5, 3.0, 3.0],
        "2**10*t + 7 // 2 + 7 % 4": [1536.0 + 3 + 3],
        "(t > 1) - (t > 2) + (1 < t < 2)": [2.0],
        "-(t > 1)": [-1.0],
        "t if t > 1 else -t": [1.5],
        "not t > 1": [0.0],
        "where(t > 1, 1, 0) + clip(t, 0, 1) + heaviside(t - 1, 0.5)": [3.0],
        "pi * e + arctan2(1, t) + hypot(3, 4)": [np.pi * np.e + np.arctan2(1, 1.5) + 5.0],
        "maximum(t, 2) + minimum(t, 2) + abs(-t) + sign(-t) + floor(t) + ceil(t)": [7.0],
        "1e308 * t * 10": None,  # overflow at run time: inf, as in the FMUs, not an exception
    }
    for text, want in cases.items():
        f = TimeExpression(text)
        with np.errstate(all="ignore"):
            got = f(1.5)
        assert got.dtype == float and got.shape == (f.size,)
        if want is None:
            assert np.isinf(got).all()
        else:
            assert np.allclose(got, want), (text, got, want)
    assert np.array_equal(TimeExpression(["1.0", "2.0 * t", "0"])(2.0), [1.0, 4.0, 0.0])
    back = pickle.loads(pickle.dumps(TimeExpression(["sin(t)", "2 * t"])))  # to worker processes
    assert back.expression == ["sin(t)", "2 * t"] and np.allclose(back(1.0), [np.sin(1.0), 2.0])
    assert np.allclose(TimeExpression("sin(t)")(np.array([0.0, 1.0])), np.sin([0.0, 1.0]))


def test_a_long_but_balanced_expression_is_bounded_in_cost():
    """The bound on one evaluation: MAX_NODES float operations (a few ms at most)."""
    terms = [f"{k}*sin({k}*t)" for k in range(150)]
    while len(terms) > 1:  # balanced: its depth is a log of its length
        pairs = zip(terms[::2], terms[1::2], strict=False)
        terms = [f"({a} + {b})" for a, b in pairs] + terms[len(terms) & ~1 :]
    text = terms[0]
    assert len(text) < MAX_LENGTH
    f = TimeExpression(text)
    t0 = time.process_time()  # CPU time: other work on the machine does not count
    for _ in range(100):
        y = f(0.7)
    assert (time.process_time() - t0) / 100 < 0.01
    assert np.isclose(y[0], sum(k * np.sin(k * 0.7) for k in range(150)))


# -- the command line: one line, exit 2, no hang -------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [BASE.format(mass="1.0") + laughs(), TIME_FUNCTION.format(size=1, expression="9**9**9*t"),
     BASE.format(mass="1" + "0" * 400)],
    ids=["laughs", "expression", "digits"],
)  # fmt: skip
def test_titopfmu_run_refuses_with_one_line_and_exit_2(text, tmp_path):
    p = tmp_path / "hostile.yaml"
    p.write_text(text)
    limit = 1 << 31  # 2 GiB of address space: an explosion fails instead of eating the machine

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    r = subprocess.run(
        [sys.executable, "-m", "titopfmu", "run", str(p), "--out", str(tmp_path / "o.csv")],
        capture_output=True, text=True, timeout=60, preexec_fn=cap, cwd=tmp_path,
    )  # fmt: skip
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"{p}:" in lines[0]
    assert not (tmp_path / "o.csv").exists()


# -- fuzz: plausible and hostile pieces --------------------------------------------------------

_NUMBERS = st.sampled_from(
    ["1", "1.0", "1e1", "1E-8", "-0.0", ".5", "5.", "+3", "0x1F", "0o17", "1_000", "12:30",
     ".inf", "-.Inf", ".nan", "1e400", "-1e999", "1" + "0" * 400, "9" * 5000, "0" * 50 + "1",
     "yes", "no", "on", "~", "null", "true", "0b101", "1e", "e1", "--1", "2001-12-14"]
)  # fmt: skip
_WORDS = st.sampled_from(["name", "type", "mass", "inertia", "blocks", "format", "version", "k",
                          "children", "experiment", "rtol", "RigidBody", "TimeFunction", "a.b"])
_TEXT = st.text(max_size=12)
_SCALARS = st.one_of(_NUMBERS, _WORDS, _TEXT.map(json.dumps))


def _yaml_pieces(draw) -> str:
    """A random hostile or plausible YAML piece (one or more lines, no final newline)."""
    kind = draw(st.integers(0, 9))
    key = draw(_WORDS)
    if kind == 0:  # alias chains of random width and depth
        levels, width = draw(st.integers(1, 12)), draw(st.integers(1, 12))
        return laughs(levels, width).rstrip("\n")
    if kind == 1:  # deep flow nesting, maybe unbalanced
        n, m = draw(st.integers(0, 3000)), draw(st.integers(0, 3000))
        return f"{key}: " + "[" * n + draw(_SCALARS) + "]" * m
    if kind == 2:  # deep block nesting
        n = draw(st.integers(0, 120))
        return f"{key}:\n" + "".join(" " * (i + 2) + "- \n" for i in range(n)) + " " * (n + 2) + "1"
    if kind == 3:  # a duplicate key
        return f"{key}: {draw(_SCALARS)}\n{key}: {draw(_SCALARS)}"
    if kind == 4:  # a recursive or undefined alias, a tag
        return draw(st.sampled_from([f"{key}: &r [*r]", f"{key}: *nope", f"{key}: !!int x",
                                     f"{key}: !!python/object/apply:os.system [ls]",
                                     f"{key}: &a {{x: *a}}", f"{key}: !!float 1e999"]))
    if kind == 5:  # odd numbers and unicode
        return f"{key}: {draw(_SCALARS)}"
    if kind == 6:  # flow collections of scalars
        items = draw(st.lists(_SCALARS, max_size=6))
        return f"{key}: [{', '.join(items)}]"
    if kind == 7:  # raw text
        return draw(st.text(max_size=40))
    if kind == 8:  # an anchor and aliases of it
        return f"a{key}: &{key} {draw(_SCALARS)}\nb{key}: [*{key}, *{key}]"
    return f"  {key}: {draw(_SCALARS)}"  # inside the block's mapping


@st.composite
def yaml_documents(draw) -> str:
    lines = BASE.format(mass=draw(_NUMBERS)).splitlines()
    for _ in range(draw(st.integers(1, 3))):
        lines.insert(draw(st.integers(0, len(lines))), _yaml_pieces(draw))
    return "\n".join(lines) + "\n"


_JSON_VALUES = st.recursive(
    st.one_of(st.integers(-(10**400), 10**400), st.floats(), st.text(max_size=8), st.booleans(),
              st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(_WORDS, inner, max_size=4)),
    max_leaves=20,
)  # fmt: skip


@st.composite
def json_documents(draw) -> str:
    doc = {"format": "titopfmu-model", "version": 1, "blocks": [
        {"name": "b", "type": "RigidBody", "mass": 1.0,
         "inertia": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]}]}  # fmt: skip
    key = draw(_WORDS)
    doc["blocks"][0][key] = draw(_JSON_VALUES)
    text = json.dumps(doc, indent=draw(st.sampled_from([None, 2])))
    kind = draw(st.integers(0, 4))
    if kind == 1:  # deep nesting
        n = draw(st.integers(0, 5000))
        text = text.replace('"mass": 1.0', '"mass": ' + "[" * n + "1" + "]" * n)
    elif kind == 2:  # a duplicate key
        text = text.replace('"mass": 1.0', '"mass": 1.0, "mass": 2.0')
    elif kind == 3:  # a huge or odd number
        text = text.replace('"mass": 1.0', '"mass": ' + draw(_NUMBERS))
    elif kind == 4:  # a tab (JSON that YAML cannot read)
        text = text.replace(", ", ",\t", 1)
    return text


def _outcome(read) -> None:
    """``read()`` gives a System or a one-line TitopError, within SECONDS of CPU time; nothing
    else."""
    t0 = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            read()
    except TitopError as exc:  # ModelFileError among them
        assert "\n" not in str(exc), str(exc)
    assert time.process_time() - t0 < SECONDS


_MEMORY_BOUND_KB = 400_000  # growth of the peak resident memory over a whole fuzz test


@pytest.fixture
def bounded_memory():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    yield
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < _MEMORY_BOUND_KB, f"peak memory grew by {grown} kB"


_FUZZ = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                        HealthCheck.function_scoped_fixture])  # fmt: skip


@_FUZZ
@given(text=yaml_documents())
def test_fuzz_yaml_model_files(text, bounded_memory):
    _outcome(lambda: loads(text, file="f.yaml"))


@_FUZZ
@given(text=json_documents())
def test_fuzz_json_model_files(text, bounded_memory):
    _outcome(lambda: loads(text, file="f.json", fmt="json"))


_ATOMS = st.one_of(
    st.sampled_from(["t", "pi", "e", "1", "2.5", "1e308", "1e400", "9", "0", "-1", "x", "sin",
                     "'a'", "b'a'", "True", "None", "...", "1j", "t.real", "__import__",
                     "[t]", "(t, t)", "{t}", "{1: t}", "10**10", "9**9**9", "1" + "0" * 400]),
    st.floats(allow_nan=False).map(repr),
    st.integers(-(10**30), 10**30).map(str),
)  # fmt: skip
_FUNCTIONS = st.sampled_from(["sin", "exp", "log", "sqrt", "arctan2", "hypot", "clip", "where",
                              "maximum", "heaviside", "floor", "open", "eval", "len"])
_OPERATORS = st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "<", "<=", "==", "!=", ">",
                              "&", "|", "^", "<<", ">>", "@", " and ", " or ", " in "])


def _expression(draw, depth: int) -> str:
    kind = draw(st.integers(0, 7 if depth < 6 else 0))
    if kind == 0:
        return draw(_ATOMS)
    sub = lambda: _expression(draw, depth + 1)  # noqa: E731
    if kind == 1:
        return f"{sub()} {draw(_OPERATORS)} {sub()}"
    if kind == 2:
        return f"{draw(st.sampled_from(['-', '+', 'not ', '~']))}{sub()}"
    if kind == 3:
        args = ", ".join(sub() for _ in range(draw(st.integers(0, 4))))
        return f"{draw(_FUNCTIONS)}({args})"
    if kind == 4:
        return f"({sub()} if {sub()} else {sub()})"
    if kind == 5:
        return "[" + ", ".join(sub() for _ in range(draw(st.integers(0, 4)))) + "]"
    if kind == 6:
        n = draw(st.integers(0, 400))
        return "(" * n + sub() + ")" * n
    return draw(st.text(max_size=20))


@st.composite
def expressions(draw) -> str:
    return _expression(draw, 0)


@_FUZZ
@given(text=expressions(), t=st.sampled_from([0.0, 1.5, -2.0, 1e300, float("nan")]))
def test_fuzz_expressions(text, t, bounded_memory):
    def direct():
        try:
            f = TimeExpression(text)
        except ExpressionError as exc:  # a ValueError; TitopError is not its base
            assert "\n" not in str(exc) and str(exc).startswith("expression ")
            return
        with np.errstate(all="ignore"):
            y = f(t)
        assert y.dtype == float and y.shape == (f.size,)

    _outcome(direct)
    _outcome(lambda: loads(TIME_FUNCTION.format(size=1, expression=json.dumps(text))))
