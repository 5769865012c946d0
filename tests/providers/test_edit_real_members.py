"""A method renamed to the name of another attribute of its class's instances, found by applying
renames to click 8.1.8 and running its suite: `HelpFormatter.write_usage` -> `width` was
`complete`, and `self.width = width` in `__init__` then hid the method (76 tests failed)."""

from __future__ import annotations

import pytest

from tests.support.renamed import planned, provider_plan

FORMATTING = {  # click 8.1.8's formatting.py and core.py, in short
    "pkg/__init__.py": "",
    "pkg/fmt.py": (
        "class HelpFormatter:\n    def __init__(self, width=None):\n"
        "        self.width = width or 80\n        self.buffer = []\n"
        "        self.indent_by: int = 2\n\n"
        "    def write_usage(self, prog):\n        self.buffer.append(prog)\n\n"
        "    def getvalue(self):\n        return ''.join(self.buffer)\n\n\n"
        "class Parameter:\n    param_type_name = 'parameter'\n\n"
        "    def get_default(self):\n        return self.param_type_name\n\n\n"
        "class Option(Parameter):\n    def prompt_for_value(self):\n        return 1\n\n\n"
        "class Argument(Parameter):\n    hidden = False\n\n\n"
        "class Slotted:\n    __slots__ = ('size',)\n\n    def grow(self):\n        return 1\n"
    ),
    "pkg/use.py": (
        "from pkg.fmt import HelpFormatter, Option\n\n\n"
        "def show():\n    f = HelpFormatter()\n    f.write_usage('prog')\n"
        "    return f.getvalue(), Option().prompt_for_value()\n"
    ),
}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("symbol", "new", "said"),
    [
        ("pkg/fmt.py::HelpFormatter.write_usage", "width", "pkg/fmt.py:3"),  # self.width =
        ("pkg/fmt.py::HelpFormatter.write_usage", "buffer", "pkg/fmt.py:4"),
        ("pkg/fmt.py::HelpFormatter.write_usage", "indent_by", "pkg/fmt.py:5"),  # annotated
        ("pkg/fmt.py::Option.prompt_for_value", "param_type_name", "pkg/fmt.py::Parameter"),
        ("pkg/fmt.py::Parameter.get_default", "hidden", "pkg/fmt.py::Argument"),
        ("pkg/fmt.py::Slotted.grow", "size", "pkg/fmt.py:31"),  # __slots__ = ('size',)
    ],
)
async def test_a_method_is_not_renamed_to_another_attribute_of_its_instances(
    symbol: str, new: str, said: str
) -> None:
    plan = await provider_plan(FORMATTING, "rename", symbol=symbol, newName=new)
    assert plan["status"] == "error", plan
    assert said in plan["refusal"]["detail"], plan["refusal"]


@pytest.mark.anyio
async def test_a_method_renamed_to_a_free_name_stays_complete() -> None:
    plan = await provider_plan(
        FORMATTING, "rename", symbol="pkg/fmt.py::HelpFormatter.write_usage", newName="emit"
    )
    assert plan["status"] == "complete", plan
    assert "f.emit('prog')" in planned(FORMATTING, plan)["pkg/use.py"]


@pytest.mark.anyio
async def test_an_annotated_store_of_the_old_name_makes_the_rename_incomplete() -> None:
    """click's `self.default_map: t.Optional[...] = default_map` is a store like any other."""
    sources = dict(FORMATTING)
    sources["pkg/late.py"] = "from pkg.fmt import HelpFormatter\n\nf = HelpFormatter()\n"
    sources["pkg/late.py"] += "f.getvalue: object = print\n"
    plan = await provider_plan(
        sources, "rename", symbol="pkg/fmt.py::HelpFormatter.getvalue", newName="value"
    )
    assert plan["status"] == "incomplete", plan
    assert "pkg/late.py:4" in plan["incomplete"]["detail"], plan["incomplete"]
