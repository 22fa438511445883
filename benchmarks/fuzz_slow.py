"""The slow profile of the bad-input fuzz suite: 10x the examples of CI, new random ones each
run, no deadline (about 5 minutes a test on 2 cores; ``tests/test_fuzz.py``).

    python benchmarks/fuzz_slow.py [pytest options, e.g. -x -k cli]

It runs pytest on ``tests/test_fuzz.py`` with ``MKLEARN_FUZZ=slow`` and exits with its status.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    env = {**os.environ, "MKLEARN_FUZZ": "slow"}
    command = [sys.executable, "-m", "pytest", "-q", str(ROOT / "tests" / "test_fuzz.py"), *argv]
    return subprocess.call(command, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
