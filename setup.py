"""Build the Cython kernels in ``_kernels/`` as extension modules ``dpsolve._kernels.<name>``.

Metadata lives in ``pyproject.toml``; this file only describes the extensions.
"""
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

KERNELS = ["losses", "vector", "noise", "stream", "sgd", "gd", "minibatch", "joint"]

# numpy ships its random C library (bit generators, distributions) as a static library.
NUMPY_RANDOM_LIB = os.path.join(os.path.dirname(np.__file__), "random", "lib")

# Bit-identical results across platforms: never let the compiler fuse a*b + c into an FMA.
COMPILE_ARGS = [] if sys.platform == "win32" else ["-O3", "-ffp-contract=off"]
LIBRARIES = ["npyrandom"] + ([] if sys.platform == "win32" else ["m"])

# Kernels whose loops run on several cores (Cython prange).
PARALLEL = {"gd", "sgd"}
# Apple's clang has no OpenMP of its own: there the loops run on one core, with the same result.
OPENMP = {"win32": ["/openmp"], "darwin": []}.get(sys.platform, ["-fopenmp"])

extensions = [
    Extension(
        f"dpsolve._kernels.{name}",
        [os.path.join("_kernels", f"{name}.pyx")],
        include_dirs=[np.get_include(), "_kernels"],   # _kernels: ziggurat_tables.h
        library_dirs=[NUMPY_RANDOM_LIB],
        libraries=LIBRARIES,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=COMPILE_ARGS + (OPENMP if name in PARALLEL else []),
        extra_link_args=OPENMP if name in PARALLEL and sys.platform != "win32" else [],
    )
    for name in KERNELS
]

setup(
    ext_modules=cythonize(
        extensions,
        include_path=["_kernels"],
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "initializedcheck": False,
            "cdivision": True,
        },
    )
)
