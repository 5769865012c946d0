"""Code for a newer Python than the check parses (reference_host/providers/grammar.py): not checked,
never a syntax-error finding; a real syntax error still is one."""

from __future__ import annotations

import ast

import pytest

from asp_protocol.canonical import blob_id
from asp_protocol.errors import AspError
from reference_host.providers.grammar import (
    PARSER,
    ancestors_pyproject,
    newer_construct,
    requires_python_floor,
)
from tests.providers.test_provider_python_check import codes, evaluate, started_check

pytestmark = pytest.mark.anyio
NEWER = f"3.{PARSER[1] + 1}"
BROKEN = "def f(:\n    pass\n"  # a syntax error in every Python
PEP695 = "type Pair[T] = tuple[T, T]\n\n\ndef first[T](pair: Pair[T]) -> T:\n    return pair[0]\n"
needs_old_parser = pytest.mark.skipif(PARSER >= (3, 12), reason="this interpreter parses PEP 695")

# constructs newer grammars accept, each with the Python that first does
SAMPLES = {
    "type Alias = int\n": (3, 12),
    "def first[T](x: T) -> T:\n    return x\n": (3, 12),
    "class Box[T]:\n    pass\n": (3, 12),
    'names = ["a"]\nprint(f"{", ".join(names)}")\n': (3, 12),
    "try:\n    pass\nexcept ValueError, TypeError:\n    pass\n": (3, 14),
    'name = "x"\ngreeting = t"hello {name}"\n': (3, 14),
}


@pytest.mark.parametrize("spec, floor", [
    ('requires-python = ">=3.12"', (3, 12)),
    ('requires-python = ">=3.10,<4"', (3, 10)),
    ('requires-python = "~=3.13"', (3, 13)),
    ('requires-python = "==3.12.*"', (3, 12)),
    ('requires-python = ">3.11"', None),
    ('name = "no-spec"', None),
])  # fmt: skip
def test_the_floor_of_requires_python(spec: str, floor: tuple[int, int] | None) -> None:
    assert requires_python_floor(f"[project]\n{spec}\n".encode()) == floor


def test_poetry_pins_and_unreadable_files() -> None:
    poetry = b'[tool.poetry.dependencies]\npython = "^3.12"\n'
    assert requires_python_floor(poetry) == (3, 12)
    assert requires_python_floor(b"[project\nbroken") is None
    assert requires_python_floor(b'project = "3.12"\ntool = 1\n') is None
    assert requires_python_floor(b"\xff\xfe") is None


def test_the_nearest_pyproject_comes_first() -> None:
    assert ancestors_pyproject("a/b/m.py") == [
        "a/b/pyproject.toml",
        "a/pyproject.toml",
        "pyproject.toml",
    ]
    assert ancestors_pyproject("m.py") == ["pyproject.toml"]


@pytest.mark.parametrize("source", list(SAMPLES))
def test_each_newer_construct_is_recognised_where_this_parser_refuses_it(source: str) -> None:
    try:
        ast.parse(source)
    except SyntaxError as error:
        line = source.splitlines()[(error.lineno or 1) - 1]
        found = newer_construct(error.msg, line)
        assert found is not None and found.version == SAMPLES[source], (error.msg, line)
    else:
        assert SAMPLES[source] <= PARSER, "parsed by a Python older than the construct"


def test_a_plain_syntax_error_is_no_newer_construct() -> None:
    with pytest.raises(SyntaxError) as caught:
        ast.parse(BROKEN)
    assert newer_construct(caught.value.msg, "def f(:") is None


@needs_old_parser
@pytest.mark.needs_definitions
async def test_newer_syntax_with_no_declared_target_is_not_checked_never_denied() -> None:
    async with started_check() as host:
        changeset = host.changeset({"src/new.py": PEP695, "src/bad.py": "x = missing\n"})
        assessment = await evaluate(host, changeset)
        assert codes(assessment) == [("src/bad.py", "python/undefined-name")]
        assert assessment["status"] == "incomplete"
        [entry] = assessment["coverage"]["unsupported"]
        assert entry["detail"].startswith("src/new.py: type parameters or a `type` alias")
        assert assessment["coverage"]["covered"]["scope"] == {"paths": ["src/bad.py"]}


@needs_old_parser
@pytest.mark.needs_definitions
async def test_a_declared_target_this_parser_reads_keeps_the_syntax_error() -> None:
    files = {"pyproject.toml": '[project]\nrequires-python = ">=3.9"\n', "src/app.py": "A = 1\n"}
    async with started_check(files) as host:
        assessment = await evaluate(host, host.changeset({"src/new.py": PEP695}))
        assert codes(assessment) == [("src/new.py", "python/syntax-error")]
        assert assessment["status"] == "complete"
        forced = await evaluate(
            host, host.changeset({"src/new.py": PEP695}), configuration={"targetVersion": NEWER}
        )
        assert codes(forced) == [] and forced["status"] == "unsupported"


@pytest.mark.needs_definitions
async def test_a_newer_target_leaves_any_unparsable_file_unchecked() -> None:
    """Nearest `pyproject.toml` first: the sub-project is for a newer Python, the root is not.
    A syntax error of the sub-project cannot be told from newer syntax: not checked."""
    files = {
        "pyproject.toml": '[project]\nrequires-python = ">=3.8"\n',
        "tools/pyproject.toml": f'[project]\nrequires-python = ">={NEWER}"\n',
        "tools/a.py": "A = 1\n",
    }
    async with started_check(files) as host:
        changeset = host.changeset({"tools/b.py": BROKEN, "c.py": BROKEN})
        assessment = await evaluate(host, changeset)
        assert codes(assessment) == [("c.py", "python/syntax-error")]
        [entry] = assessment["coverage"]["unsupported"]
        assert entry["detail"] == (
            f"tools/b.py: written for Python {NEWER} (requires-python in tools/pyproject.toml); "
            f"this check parses Python 3.{PARSER[1]}, so the file is not checked"
        )
        read = set(assessment["validAsOf"]["blobs"])
        assert blob_id(files["tools/pyproject.toml"].encode()) in read, "what it read is named"
        # a pyproject.toml in the change is read from its after-state
        raised = host.changeset(
            {"pyproject.toml": f'[project]\nrequires-python = ">={NEWER}"\n', "c.py": BROKEN}
        )
        assert codes(await evaluate(host, raised)) == []


@pytest.mark.needs_definitions
async def test_the_pyproject_files_are_listed_once_per_baseline() -> None:
    """Home Assistant, 45,750 files: listing its pyproject files took ~0.8 s of every evaluation
    that met a file the parser refuses; a baseline's listing never changes."""
    async with started_check() as host:
        changeset = host.changeset({f"d{n}/m.py": BROKEN for n in range(3)})
        assessment = await evaluate(host, changeset)
        assert [path for path, _ in codes(assessment)] == ["d0/m.py", "d1/m.py", "d2/m.py"]
        assert len(host.tree_calls) == 1, "not one listing per directory"
        again = await evaluate(host, host.changeset({"d0/m.py": BROKEN, "e.py": BROKEN}))
        assert [path for path, _ in codes(again)] == ["d0/m.py", "e.py"]
        assert len(host.tree_calls) == 1, "the same baseline is not listed again"


@pytest.mark.needs_definitions
async def test_target_version_is_validated() -> None:
    async with started_check() as host:
        changeset = host.changeset({"src/app.py": "A = 2\n"})
        for bad in ("3", "python3.12", 312):
            with pytest.raises(AspError) as caught:
                await evaluate(host, changeset, configuration={"targetVersion": bad})
            assert caught.value.code == -32602


@pytest.mark.needs_definitions
async def test_a_file_it_could_not_analyse_is_left_out_of_the_covered_scope_alone() -> None:
    """sympy: one of 1,543 modules failed pyflakes (RecursionError); the Assessment kept the whole
    changeset as its scope, so the host counted all 1,543 as unanalysed ("0 evaluated")."""
    async with started_check() as host:
        big = "X = 1\n" * 400
        changeset = host.changeset({"src/big.py": big, "src/bad.py": "y = missing\n"})
        assessment = await evaluate(host, changeset, configuration={"maxFileBytes": 1000})
        assert codes(assessment) == [("src/bad.py", "python/undefined-name")]
        assert assessment["status"] == "incomplete"
        assert assessment["coverage"]["covered"]["scope"] == {"paths": ["src/bad.py"]}
        reasons = [d["detail"] for d in assessment["coverage"]["degraded"]]
        assert any("src/big.py: larger than maxFileBytes" in r for r in reasons)
