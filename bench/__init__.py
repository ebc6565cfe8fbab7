"""Benchmarks of tracetui against the floor (a bare Textual app) and the naive route (pandas): `python bench/run.py`."""
