"""Peers: the same private learning with other Python libraries, in the same run as dpsolve.

Optional (``pip install ".[peers]"``, which brings PyTorch, Opacus and diffprivlib); without them
these benchmarks are skipped (their ``setup`` raises NotImplementedError, asv's skip signal).
"""
