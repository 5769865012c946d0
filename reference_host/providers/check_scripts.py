"""Python scripts without a `.py` name: `bin/deploy` whose first line is `#!/usr/bin/env python3`.

The check read a path as Python by its suffix alone, so a change to such a script was a path of a
kind no provider checks: never an `allow`, and never a finding either, though it is Python that
runs. A changed path whose last part has no suffix is read (its after-state, one blob) and taken
for Python when its first line is a shebang that runs a Python interpreter (`python`, `python3`,
`python3.12`, through `env`, `env -S` or a path). Anything else stays a path the check does not
cover, as before.
"""

from __future__ import annotations

import re

from reference_host.providers.check_reads import Target, read_batched
from reference_host.providers.runtime import Call

_SHEBANG = re.compile(rb"#![^\n]*?(?:^|[/\s])python(?:[0-9]+(?:\.[0-9]+)?)?(?=\s|$)")


def runs_python(data: bytes) -> bool:
    """Whether *data* starts with a shebang line that runs a Python interpreter."""
    first = data[:256].split(b"\n", 1)[0].rstrip(b"\r")
    return first.startswith(b"#!") and _SHEBANG.match(first) is not None


def may_be_script(path: str) -> bool:
    """A path whose last part has no suffix (`bin/deploy`, not `notes.txt` or `.envrc`)."""
    name = path.rpartition("/")[2]
    return bool(name) and "." not in name


async def python_scripts(call: Call, targets: list[Target]) -> set[str]:
    """The changed paths of *targets* that are Python scripts by their first line (read through
    the callbacks, inside the read grant; one that cannot be read is left as not Python)."""
    grant = call.session.read_grant
    wanted = {
        t.path: t.after
        for t in targets
        if t.changed and t.after is not None and may_be_script(t.path) and grant.allows(t.path)
    }
    if not wanted:
        return set()
    served, _missing = await read_batched(call.callbacks, list(dict.fromkeys(wanted.values())))
    return {path for path, blob in wanted.items() if blob in served and runs_python(served[blob])}
