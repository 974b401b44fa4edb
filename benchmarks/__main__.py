"""`python -m benchmarks`: the runner (benchmarks/run.py)."""

import sys

from benchmarks.run import main

sys.exit(main())
