"""Compiled kernels. Sources: the top-level ``_kernels/`` folder (Cython), built by ``setup.py``.

Kernels only compute: they assume validated, C-contiguous float64 input. Call them through the
public API in ``dpsolve``.

An installed dpsolve (a wheel, ``pip install .``) also holds the kernels' Cython declarations,
``dpsolve/_kernels/*.pxd``, for other Cython code to cimport, e.g.
``from dpsolve._kernels._loss cimport loss_value, LOGISTIC`` (docs/performance.md).
"""
import os


def get_include():
    """The folder of the installed ``.pxd`` files and of the C header ``_stream.pxd`` includes
    (``ziggurat_tables.h``): add it to ``include_dirs`` when cimporting ``_stream``.

    Editable installs and in-place builds have no copies there (``setup.py``'s ``build_py``).
    """
    return os.path.dirname(os.path.abspath(__file__))
