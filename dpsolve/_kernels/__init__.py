"""Compiled kernels. Sources: the top-level ``_kernels/`` folder (Cython), built by ``setup.py``.

Kernels only compute: they assume validated, C-contiguous float64 input. Call them through the
public API in ``dpsolve``.
"""
