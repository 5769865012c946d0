"""A small multi-module Python package (src layout + tests) for the inspect engine and provider tests.

`shop.money` is the leaf; `shop.pricing` imports it (relative, aliased), `shop.cart` imports
pricing (absolute, aliased, dotted), `shop.__init__` re-exports; `shop.report` is unrelated.
"""

from __future__ import annotations

SAMPLE: dict[str, str] = {
    "pyproject.toml": "[project]\nname = 'shop'\n",
    "src/shop/__init__.py": (
        '"""Shop."""\n'
        "from shop.pricing import total as compute_total\n"
        '__all__ = ["compute_total"]\n'
    ),
    "src/shop/money.py": (
        "def round_cents(value):\n"
        "    return round(value, 2)\n"
        "\n"
        "\n"
        "class Money:\n"
        "    def __init__(self, amount):\n"
        "        self.amount = round_cents(amount)\n"
        "\n"
        "    def add(self, other):\n"
        "        return Money(self.amount + other.amount)\n"
    ),
    "src/shop/pricing.py": (
        "from . import money as m\n"
        "from .money import Money, round_cents\n"
        "\n"
        "\n"
        "def total(prices):\n"
        "    acc = Money(0)\n"
        "    for price in prices:\n"
        "        acc = acc.add(Money(price))\n"
        "    return round_cents(acc.amount)\n"
        "\n"
        "\n"
        "def discounted(prices, rate):\n"
        "    return m.round_cents(total(prices) * (1 - rate))\n"
    ),
    "src/shop/cart.py": (
        "import shop.pricing\n"
        "from shop.pricing import discounted as disc\n"
        "\n"
        "\n"
        "class Cart:\n"
        "    def __init__(self):\n"
        "        self.items = []\n"
        "\n"
        "    def total(self):\n"
        "        return shop.pricing.total(self.items)\n"
        "\n"
        "    def sale(self):\n"
        "        return disc(self.items, 0.1)\n"
        "\n"
        "\n"
        "class GiftCart(Cart):\n"
        "    def total(self):\n"
        "        return super().total() + 5\n"
        "\n"
        "    def wrap(self):\n"
        "        return self.sale()\n"
    ),
    "src/shop/report.py": ('def render(lines):\n    return "\\n".join(lines)\n'),
    "tests/test_money.py": (
        "from shop.money import Money\n"
        "\n"
        "\n"
        "def test_add():\n"
        "    assert Money(1).add(Money(2)).amount == 3\n"
    ),
    "tests/test_cart.py": (
        "from shop.cart import Cart\n\n\ndef test_sale():\n    assert Cart().sale() == 0\n"
    ),
    "tests/test_report.py": (
        'from shop.report import render\n\n\ndef test_render():\n    assert render(["a"]) == "a"\n'
    ),
}

MONEY = "src/shop/money.py"
PRICING = "src/shop/pricing.py"
CART = "src/shop/cart.py"
INIT = "src/shop/__init__.py"
REPORT = "src/shop/report.py"
ROUND_CENTS = f"{MONEY}::round_cents"
MONEY_ADD = f"{MONEY}::Money.add"


def sample_bytes() -> dict[str, bytes]:
    return {path: text.encode("utf-8") for path, text in SAMPLE.items()}
