"""Suite-wide test configuration."""
from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The RTL tests run with every warning an error (DESIGN §6: Amaranth 0.5 deprecations
    must not slip in)."""
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and module.__name__.startswith("test_rtl"):
            item.add_marker(pytest.mark.filterwarnings("error"))
