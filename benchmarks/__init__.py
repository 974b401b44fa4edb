"""The benchmarks: the strategies that compute one multi-join, side by side on the same inputs.
Run them with `python -m benchmarks` from the repository root; see benchmarks/README.md."""
