"""The strategy comparison of DESIGN.md section 6: chain, balanced, union_group, multiway, floor.

Run it with `python -m benchmarks.run` from the repository root; see benchmarks/README.md.
"""
