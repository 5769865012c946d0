"""`Signature.problem` (reference_host/providers/check_calls.py) against Python's own binding of
arguments: for every pair of a signature and a call below, it reports a problem exactly when
`inspect.Signature.bind` raises TypeError."""

from __future__ import annotations

import ast
import inspect
import itertools

import pytest

from reference_host.providers.check_calls import (
    Signature,
    calls_of,
    changed_signatures,
    plain_functions,
)

SIGNATURES = [
    "def f(): pass",
    "def f(a): pass",
    "def f(a, b=1): pass",
    "def f(a, /, b): pass",
    "def f(a, /, b=2, *, c): pass",
    "def f(*, c, d=4): pass",
    "def f(a, *args): pass",
    "def f(a, **kwargs): pass",
    "def f(a, b=1, *args, c, d=2, **kwargs): pass",
    "def f(x, y, /): pass",
]
CALLS = [
    "f()",
    "f(1)",
    "f(1, 2)",
    "f(1, 2, 3)",
    "f(a=1)",
    "f(1, a=1)",
    "f(1, b=2)",
    "f(b=2, a=1)",
    "f(1, c=3)",
    "f(c=3)",
    "f(1, 2, c=3, d=4)",
    "f(x=1, y=2)",
    "f(1, zz=5)",
]


@pytest.mark.parametrize(("definition", "call"), list(itertools.product(SIGNATURES, CALLS)))
def test_a_problem_is_reported_exactly_when_python_refuses_the_call(
    definition: str, call: str
) -> None:
    node = ast.parse(definition).body[0]
    assert isinstance(node, ast.FunctionDef)
    namespace: dict[str, object] = {}
    exec(definition, namespace)  # the definitions above, nothing else
    expression = ast.parse(call, mode="eval").body
    assert isinstance(expression, ast.Call)
    args = [ast.literal_eval(a) for a in expression.args]
    kwargs = {k.arg: ast.literal_eval(k.value) for k in expression.keywords if k.arg}
    try:
        inspect.signature(namespace["f"]).bind(*args, **kwargs)  # type: ignore[arg-type]
        refused = False
    except TypeError:
        refused = True
    problem = Signature.of(node).problem(expression)
    assert (problem is not None) == refused, (definition, call, problem)


def test_a_call_that_unpacks_is_not_judged() -> None:
    node = ast.parse("def f(a): pass").body[0]
    assert isinstance(node, ast.FunctionDef)
    for call in ("f(*xs)", "f(**kw)", "f(1, *xs, **kw)"):
        expression = ast.parse(call, mode="eval").body
        assert isinstance(expression, ast.Call)
        assert Signature.of(node).problem(expression) is None


def test_only_plain_functions_defined_once_are_compared() -> None:
    before = ast.parse(
        "def a(x): pass\ndef b(x): pass\n@cache\ndef c(x): pass\ndef d(x): pass\n"
        "def e(x): pass\ndef g(x): pass\n"
    )
    after = ast.parse(
        "def a(x, y): pass\ndef b(x): pass\n@cache\ndef c(x, y): pass\ndef d(x, y): pass\n"
        "d = wrap(d)\ndef e(x, y): pass\ndef h():\n    def e(): pass\ndef g(x, y=0): pass\n"
    )
    changed = changed_signatures(before, after)
    assert sorted(changed) == ["a", "g"]
    assert changed["a"][0].positional == ("x",) and changed["a"][1].positional == ("x", "y")


def test_calls_are_tied_by_the_name_imported_or_the_module_object() -> None:
    tree = ast.parse("from m import f as g\nimport m as mm\ng(1)\nmm.f(2)\nmm.other(3)\nf(4)\n")
    found = [(c.lineno, mod, fn) for c, mod, fn in calls_of(tree, {"g": "m f"}, {"mm": "m"})]
    assert found == [(3, "m", "f"), (4, "m", "f"), (5, "m", "other")]


@pytest.mark.parametrize(
    ("source", "takes"),
    [
        ("class C:\n    def __init__(self, a, b=1): pass\n", ("a", "b")),
        ("class B:\n    pass\nclass C(B, object):\n    def __init__(self, /, a): pass\n", ("a",)),
        ("@dataclass\nclass C:\n    def __init__(self, a): pass\n", None),
        ("class C(Enum):\n    def __init__(self, a): pass\n", None),
        ("class C(metaclass=M):\n    def __init__(self, a): pass\n", None),
        ("class C:\n    def __new__(cls, a): pass\n    def __init__(self, a): pass\n", None),
        (
            "class B:\n    def __call__(self): pass\nclass C(B):\n    def __init__(self, a): pass\n",
            None,
        ),
        ("class C:\n    pass\n", None),  # object's own: nothing to compare
    ],
)
def test_a_class_is_judged_by_its_init_only_when_nothing_else_answers_the_call(
    source: str, takes: tuple[str, ...] | None
) -> None:
    found = plain_functions(ast.parse(source)).get("C")
    assert (found.positional if found is not None else None) == takes


@pytest.mark.parametrize("call", ["C()", "C(1)", "C(1, 2)", "C(1, 2, 3)", "C(b=1)", "C(a=1, b=2)"])
def test_a_class_call_binds_as_python_binds_its_init(call: str) -> None:
    source = "class C:\n    def __init__(self, a, b=1):\n        pass\n"
    namespace: dict[str, object] = {}
    exec(source, namespace)  # the class above, nothing else
    expression = ast.parse(call, mode="eval").body
    assert isinstance(expression, ast.Call)
    try:
        eval(call, namespace)  # the call above on the class above
        refused = False
    except TypeError:
        refused = True
    found = plain_functions(ast.parse(source))["C"]
    assert (found.problem(expression) is not None) == refused
