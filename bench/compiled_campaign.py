"""A larger differential campaign: the compiled engine against the reference on random programs.

    python bench/compiled_campaign.py [--examples 40] [--lanes 4] [--seed 0]

Runs tests/test_compiled_engine.py's random-program checks (straight-line and structured
programs, both widths, forward, backward, gradient and tangent passes) on many more
programs than the test module's bounded sample, with hypothesis shrinking on (a failure
is reported minimal).  Kernels go to a temporary cache directory.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=40, help="programs per kind")
    parser.add_argument("--lanes", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    os.environ.setdefault("REVASM_CACHE_DIR", tempfile.mkdtemp(prefix="revasm-campaign-"))

    import test_compiled_engine as t
    from hypothesis import HealthCheck, given, seed, settings
    from hypothesis import strategies as st
    from program_generators import straight_line_programs, structured_programs

    options = settings(max_examples=args.examples, deadline=None, database=None,
                       suppress_health_check=list(HealthCheck))

    def check(case, lane_seed, tangent):
        compiled, reference = t.both(case, args.lanes, lane_seed)
        for machine in (compiled, reference):
            machine.run(1)
        t.assert_same(compiled, reference)
        for machine in (compiled, reference):
            machine.run_back()
        t.assert_same(compiled, reference)
        for machine in (compiled, reference):
            machine.run(1)
        t.gradient_pass(case, compiled, reference, lane_seed, tangent=tangent)
        t.assert_same(compiled, reference, banks=("G", "T", "TG") if tangent else ("G",),
                      addresses=sorted(case.memory))

    for name, strategy in (("straight-line", straight_line_programs()),
                           ("structured", structured_programs())):
        started = time.time()

        @seed(args.seed)
        @options
        @given(case=strategy, lane_seed=st.integers(0, 2**32), tangent=st.booleans())
        def campaign(case, lane_seed, tangent):
            check(case, lane_seed, tangent)

        campaign()
        print(f"{name}: {args.examples} programs equal on every lane "
              f"({time.time() - started:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
