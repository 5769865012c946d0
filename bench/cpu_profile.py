"""Run a Python module under cProfile with a CPU clock (not a test): `bridge_bench.py --cprofile`.

    python bench/cpu_profile.py OUT.pstats -m bridge serve ...

On a shared machine a wall-clock profile charges a function for the time it sat runnable while
other processes ran; `time.process_time` charges only this process's CPU. The stats are written
when the module returns (the bridge does on stdin EOF). Read them with
`python -c "import pstats; pstats.Stats('OUT.pstats').sort_stats('cumulative').print_stats(60)"`.
"""

from __future__ import annotations

import atexit
import cProfile
import runpy
import sys
import time


def main() -> None:
    out, flag, module, *rest = sys.argv[1:]
    assert flag == "-m", "usage: cpu_profile.py OUT -m MODULE [ARGS...]"
    sys.argv = [module, *rest]
    profile = cProfile.Profile(time.process_time)

    def dump() -> None:
        profile.disable()
        profile.dump_stats(out)

    atexit.register(dump)
    profile.enable()
    runpy.run_module(module, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
