"""Build the Cython kernels in ``_kernels/`` as extension modules ``dpsolve._kernels.<name>``,
and install their ``.pxd`` declarations beside them (``dpsolve/_kernels/*.pxd``).

Metadata lives in ``pyproject.toml``; this file only describes the extensions.
"""
import glob
import multiprocessing
import os
import sys

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_py import build_py

KERNELS = ["losses", "vector", "noise", "stream", "sgd", "gd", "minibatch", "joint", "threads",
           "linalg", "frank_wolfe"]

# numpy ships its random C library (bit generators, distributions) as a static library.
NUMPY_RANDOM_LIB = os.path.join(os.path.dirname(np.__file__), "random", "lib")

# Bit-identical results across platforms: never let the compiler fuse a*b + c into an FMA.
COMPILE_ARGS = [] if sys.platform == "win32" else ["-O3", "-ffp-contract=off"]
LIBRARIES = ["npyrandom"] + ([] if sys.platform == "win32" else ["m"])

# Kernels whose loops run on several cores (Cython prange), and the module that sets their thread
# count: it must talk to the same OpenMP runtime as they do, not to _openmp.pxd's serial stand-ins.
PARALLEL = {"gd", "sgd", "threads", "linalg", "frank_wolfe"}
# Apple's clang has no OpenMP of its own: there the loops run on one core, with the same result.
OPENMP = {"win32": ["/openmp"], "darwin": []}.get(sys.platform, ["-fopenmp"])

# The kernels are translated (Cython) and compiled (build_ext) several at a time, one per core
# this process may use: the build is most of `pip install .`. The same sources and flags, so the
# same bits. Cython's pool of processes would run this file again in each one where processes
# start afresh (spawn, forkserver) instead of forking: there it translates one at a time.
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
TRANSLATORS = CORES if multiprocessing.get_all_start_methods()[0] == "fork" else 0

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


class build_py_with_declarations(build_py):
    """Also install ``_kernels/*.pxd`` (and the headers they include) as ``dpsolve/_kernels/*``.

    Other Cython code can then ``from dpsolve._kernels._loss cimport loss_value`` against an
    installed dpsolve (docs/performance.md). The sources stay in the top-level ``_kernels/``, where
    the kernels cimport them by top-level name; so a shipped ``.pxd`` cimports nothing from its
    siblings (tests/test_packaging.py checks). Editable installs do not get the copies: they
    import the source tree's ``dpsolve/``, and copying into it would leave stale declarations
    behind when ``_kernels/`` changes.
    """

    def _declarations(self):
        target = os.path.join(self.build_lib, "dpsolve", "_kernels")
        return [(source, os.path.join(target, os.path.basename(source)))
                for pattern in ("*.pxd", "*.h")
                for source in sorted(glob.glob(os.path.join("_kernels", pattern)))]

    def run(self):
        super().run()
        if not getattr(self, "editable_mode", False):
            for source, target in self._declarations():
                self.mkpath(os.path.dirname(target))
                self.copy_file(source, target)

    def get_outputs(self, include_bytecode=True):
        outputs = super().get_outputs(include_bytecode)
        if getattr(self, "editable_mode", False):
            return outputs
        return outputs + [target for _, target in self._declarations()]


setup(
    cmdclass={"build_py": build_py_with_declarations},
    options={"build_ext": {"parallel": CORES}},
    ext_modules=cythonize(
        extensions,
        nthreads=TRANSLATORS,
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
