"""Seven seeded releases, and their input data, keep their bits: sha256 of the released float64
bytes, pinned here (docs/conventions.md, "Same bits on every machine").

A failure means a release's bits changed on this platform. Either

* a real change (a solver, a calibration, a sampler or an order of summation changed): record it
  in the changelog with the new hashes and update :data:`PINNED`; or
* a platform the promise does not cover. The pinned values belong to :data:`PINNED_ON`. Five of
  the seven releases depend on more than the seed: ``clipped_gd``, ``output_perturbation``,
  ``objective_perturbation`` and ``theta*`` on OpenBLAS's kernel family (its dot, gemv, gemm
  and LAPACK's eigh sum in different orders on AVX2 and AVX-512 kernels), and ``dp_sgd`` on
  NumPy's SIMD targets, NumPy, SciPy and dp_accounting (its PLD calibration of sigma), and
  through its projection on the kernel family too. The failure message shows this
  environment next to :data:`PINNED_ON`.

Thread counts are covered by tests/test_ordered_linalg.py and tests/test_kernels.py.
"""
import hashlib
import json
import os
import platform
import subprocess
import sys
import warnings

import numpy as np
import pytest

import dpsolve
from dpsolve import Problem, reference_minimizer
from dpsolve.solvers import registry

#: Where the hashes below were computed: Linux x86_64 (AMD EPYC, AVX-512), pip wheels.
PINNED_ON = {
    "platform": "Linux x86_64",
    "numpy": "2.4.6",
    "scipy": "1.17.1",
    "dp_accounting": "0.6.0",
    "blas": ["openblas 0.3.30 Haswell", "openblas 0.3.31.188.0 Haswell"],   # SciPy's, NumPy's
    "numpy_simd": ["X86_V2", "X86_V3", "X86_V4", "AVX512_ICL"],     # baseline and dispatched
}

#: sha256 of the released theta's float64 bytes (C order); "data" is X's bytes then y's.
PINNED = {
    "data":
        "07dfa5f0dbf0907c573294584baf0124cdc9169a50a393865a7eb70c78c87a93",
    "noisy_sgd":
        "ae5185c9fe74e99a43fa93eb7e5a594fe30b2b66fb74fa556a0e2c4e0a1f4d96",
    "clipped_gd":
        "78333c7637e52e5dbddc0e932be8d77afbbb20206b1580b491b045baa336efd1",
    "minibatch_sgd":
        "e56e09a25c08af63881ee280ac461673dab7d254167f2c12ad19a31c2210d3b1",
    "output_perturbation":
        "cecef76058e4c3c1509c8ea4ddca930e053122ca6dea0824cfcac6b189702b5a",
    "objective_perturbation":
        "25a05cc2b7bc7b13aaef952cc7ec0210c85659cfa44bfef8b5d0be3d4ea31c00",
    "dp_sgd":
        "981a58ccf0865545545dd9a4584f2eae81194f31060838fe59407e14131b3761",
    "theta*":
        "31f7c50088da38957eee59f1b2361b03a4e5e20e01be0136832e274fc9084575",
}

def _digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(np.asarray(a, dtype=np.float64)).tobytes())
    return h.hexdigest()


def _example(name, X, y):
    spec = {s.name: s for s in registry()}[name]
    return spec.function(Problem(X, y, "logistic", **spec.example_problem), rng=7,
                         **spec.example).theta


def release_hashes(names=tuple(PINNED)):
    """The sha256 of each named release (small problems: the whole set takes under a second,
    after the import)."""
    X, y = dpsolve.datasets.make_synthetic(400, 5, rng=3)
    releases = {
        "data": lambda: (X, y),
        # the closed-form calibration: RDP's would take a second here
        "noisy_sgd": lambda: (dpsolve.noisy_sgd(
            Problem(X, y, "logistic", radius=1.0, reg=0.1), 0.5, 1e-9, steps=2000,
            calibration="paper", rng=7).theta,),
        "clipped_gd": lambda: (_example("clipped_gd", X, y),),
        "minibatch_sgd": lambda: (_example("minibatch_sgd", X, y),),
        "output_perturbation": lambda: (_example("output_perturbation", X, y),),
        "objective_perturbation": lambda: (_example("objective_perturbation", X, y),),
        "dp_sgd": lambda: (_dp_sgd_release(),),
        "theta*": lambda: (reference_minimizer(
            Problem(X, y, "logistic", radius=1.0, reg=0.01), cache=False).theta,),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: _digest(*releases[name]()) for name in names}


def _dp_sgd_release():
    """DP-SGD at n = 4,000, p = 30, q = 0.05, 40 steps, seed 0 (sigma calibrated by PLD)."""
    X, y = dpsolve.datasets.make_synthetic(4000, 30, rng=0)
    return dpsolve.dp_sgd(Problem(X, y, "logistic", radius=1.0), 1.0, 1e-6,
                          sampling_rate=0.05, steps=40, rng=0).theta


def environment():
    """This platform, in the terms of :data:`PINNED_ON`."""
    from threadpoolctl import threadpool_info
    from numpy._core._multiarray_umath import (__cpu_baseline__, __cpu_dispatch__,
                                               __cpu_features__)
    import scipy
    from importlib.metadata import version
    blas = sorted(f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}"
                  for i in threadpool_info() if i.get("user_api") == "blas")
    return {"platform": f"{platform.system()} {platform.machine()}",
            "numpy": np.__version__, "scipy": scipy.__version__,
            "dp_accounting": version("dp-accounting"), "blas": blas,
            "numpy_simd": list(__cpu_baseline__)
            + [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]}


def test_releases_keep_their_bits():
    got = release_hashes()
    changed = {name: got[name] for name in PINNED if got[name] != PINNED[name]}
    assert not changed, (
        f"release bits changed: {json.dumps(changed, indent=1)}\n"
        f"pinned on {json.dumps(PINNED_ON, indent=1)}\n"
        f"this platform {json.dumps(environment(), indent=1)}\n"
        "A real change: record it in the changelog with the new hashes. Another platform: "
        "see docs/conventions.md, 'Same bits on every machine'.")


def _hashes_under(variables, names):
    """:func:`release_hashes` in a fresh interpreter with extra environment variables."""
    code = (f"import json, runpy; m = runpy.run_path({__file__!r}); "
            f"print(json.dumps(m['release_hashes']({tuple(names)!r})))")
    # run from tests/: from the repository root, `python -c` would import the source tree,
    # which has no compiled kernels after a regular install
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, **variables}, timeout=300,
                          cwd=os.path.dirname(os.path.abspath(__file__)))
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cpu_has_avx512():
    try:
        with open("/proc/cpuinfo") as f:
            return " avx512f " in f.read().replace("\n", " ")
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not (sys.platform.startswith("linux") and platform.machine() == "x86_64"
                         and _cpu_has_avx512()),
                    reason="needs Linux x86_64 with AVX-512 (to force other kernels)")
def test_pins_catch_other_kernels():
    """The pins are able to fail: OpenBLAS's AVX-512 kernels (what an AVX-512 Intel Xeon gets)
    change the BLAS-dependent releases, NumPy without its AVX-512 targets changes dp_sgd's
    calibrated sigma, and neither changes the releases computed in the kernels."""
    if "Haswell" not in " ".join(environment()["blas"]):
        pytest.skip("the pins were taken on OpenBLAS's Haswell kernels")
    blas = _hashes_under({"OPENBLAS_CORETYPE": "SkylakeX"}, PINNED)
    assert {n for n in PINNED if blas[n] != PINNED[n]} == {
        "clipped_gd", "output_perturbation", "objective_perturbation", "theta*"}
    if not {"X86_V4", "AVX512_ICL"} <= set(environment()["numpy_simd"]):
        pytest.skip("NumPy's AVX-512 targets are not in use here")
    simd = _hashes_under({"NPY_DISABLE_CPU_FEATURES": "AVX512_ICL X86_V4"}, PINNED)
    assert {n for n in PINNED if simd[n] != PINNED[n]} == {"dp_sgd"}
