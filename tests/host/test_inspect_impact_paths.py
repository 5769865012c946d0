"""`request.paths` of an impact query as the host expands them (reference_host/inspect/params.py):
a file, or every file under a directory, in path order, looked up in the snapshot's sorted paths."""

from __future__ import annotations

import pytest

from asp_protocol.errors import AspError
from reference_host.inspect.params import provider_params

INDEX = {
    p: f"blob:sha256:{n:064x}"
    for n, p in enumerate(
        ["src/a.py", "src/a-b.py", "src/a/x.py", "src/a/y/z.py", "src/a0.py", "src/ab.py", "t.py"]
    )
}
BASELINE = {"rev": "git:tree:1"}


def changed(*paths: str) -> list[str]:
    request = {"verb": "impact", "paths": list(paths)}
    params = provider_params(request, BASELINE, INDEX, sorted(INDEX))
    assert params == provider_params(request, BASELINE, INDEX)  # same without the kept order
    return [c["path"] for c in params["changeset"]["changes"]]


def test_a_directory_means_exactly_the_files_under_it_in_order() -> None:
    assert changed("src/a") == ["src/a/x.py", "src/a/y/z.py"]  # not src/a-b.py, src/a0.py
    assert changed("src/a/") == ["src/a/x.py", "src/a/y/z.py"]
    assert changed("src") == sorted(p for p in INDEX if p.startswith("src/"))
    assert changed("src/a.py", "t.py") == ["src/a.py", "t.py"]


def test_a_path_in_no_file_is_an_input_error() -> None:
    for missing in ("src/b", "src/a/x", "sr"):
        with pytest.raises(AspError) as refused:
            changed(missing)
        assert refused.value.code == -32602
