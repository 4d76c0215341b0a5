"""Compiled kernels. Sources: the top-level ``_kernels/`` folder (Cython), built by ``setup.py``.

Kernels only compute: they assume validated, C-contiguous float64 input. Call them through the
public API in ``dpsolve``.

An installed dpsolve (a wheel, ``pip install .``) also holds the kernels' Cython declarations,
``dpsolve/_kernels/*.pxd``, for other Cython code to cimport, e.g.
``from dpsolve._kernels._loss cimport loss_value, LOGISTIC`` (docs/performance.md).

Importing this package starts the OpenMP runtime of the parallel kernels with threads that
sleep while they wait (``OMP_WAIT_POLICY=PASSIVE``) unless the environment says otherwise:
see :func:`dpsolve._kernels.threads.wait_policy` and docs/performance.md, "A busy machine".
"""
import os

# The settings of the environment that choose how OpenMP threads wait; if any is set, the user's
# choice stands.
_USER_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME")
_RUNTIMES = ("libgomp", "libomp", "libiomp")


def _openmp_runtimes():
    """The files of the OpenMP runtimes mapped into this process (Linux's ``/proc/self/maps``),
    or None where the OS does not say."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(maxsplit=5)[-1].strip() for line in maps}
    except OSError:
        return None
    return {path for path in paths if os.path.basename(path).startswith(_RUNTIMES)}


def _start_openmp():
    """Load the kernels' OpenMP runtime (through ``threads``) with passive waiting, the process
    environment left as it was; returns how its threads wait (``threads.wait_policy``).

    An OpenMP runtime reads its settings from the environment once, when it is loaded: GCC's
    spins 300,000 rounds at every barrier by default, and on a machine whose cores are busy a
    thread spinning for a descheduled sibling costs a whole time slice per parallel region
    (docs/performance.md, "A busy machine"). The variable is removed again at once, so that child
    processes and runtimes loaded later (other packages' own copies) see the user's environment.
    """
    if any(name in os.environ for name in _USER_SETTINGS):
        from . import threads
        return "environment"
    before = _openmp_runtimes()
    os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
    try:
        from . import threads
    finally:
        del os.environ["OMP_WAIT_POLICY"]
    if not threads.has_openmp():
        return "serial"
    after = _openmp_runtimes()
    if before is not None and after is not None and after and not after - before:
        # the runtime the kernels link was loaded before this package, by another one, and
        # kept the settings it read then
        return "preloaded"
    return "passive"


_wait_policy = _start_openmp()


def get_include():
    """The folder of the installed ``.pxd`` files and of the C header ``_stream.pxd`` includes
    (``ziggurat_tables.h``): add it to ``include_dirs`` when cimporting ``_stream``.

    Editable installs and in-place builds have no copies there (``setup.py``'s ``build_py``).
    """
    return os.path.dirname(os.path.abspath(__file__))
