"""Seven seeded releases, and their input data, keep their bits: sha256 of the released float64
bytes, pinned here (docs/conventions.md, "Same bits on every machine").

A failure means a release's bits changed on this platform. Either

* a real change (a solver, a calibration, a sampler or an order of summation changed): record it
  in the changelog with the new hashes and update :data:`PINNED_BY_KERNEL`; or
* a platform the promise does not cover. The pinned values belong to :data:`PINNED_ON`, one set
  per OpenBLAS kernel family (:data:`PINNED_BY_KERNEL`, chosen by the kernels in use). Five of
  the seven releases depend on more than the seed: ``clipped_gd``, ``output_perturbation``,
  ``objective_perturbation`` and ``theta*`` on OpenBLAS's kernel family (its dot, gemv, gemm
  and LAPACK's eigh sum in different orders on AVX2 and AVX-512 kernels), and ``dp_sgd`` on
  NumPy's SIMD targets, NumPy, SciPy and dp_accounting (its PLD calibration of sigma), and
  through its projection possibly on the kernel family (not in this example: its pins agree on
  both families). The failure message shows this
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

#: Where the hashes below were computed: Linux x86_64 (AMD EPYC, AVX-512), pip wheels, OpenBLAS on
#: each of its two x86-64 kernel families (chosen by hand with OPENBLAS_CORETYPE, never in a test).
PINNED_ON = {
    "platform": "Linux x86_64",
    "numpy": "2.4.6",
    "scipy": "1.17.1",
    "dp_accounting": "0.6.0",
    "blas": ["openblas 0.3.30", "openblas 0.3.31.188.0"],       # SciPy's, NumPy's
    "numpy_simd": ["X86_V2", "X86_V3", "X86_V4", "AVX512_ICL"],     # baseline and dispatched
}

#: The releases whose bits depend on the BLAS kernel family (docs/conventions.md).
BLAS_DEPENDENT = {"clipped_gd", "output_perturbation", "objective_perturbation", "theta*"}

_SAME_ON_EVERY_KERNEL = {
    "data": "07dfa5f0dbf0907c573294584baf0124cdc9169a50a393865a7eb70c78c87a93",
    "noisy_sgd": "ae5185c9fe74e99a43fa93eb7e5a594fe30b2b66fb74fa556a0e2c4e0a1f4d96",
    "minibatch_sgd": "e56e09a25c08af63881ee280ac461673dab7d254167f2c12ad19a31c2210d3b1",
    "dp_sgd": "60e872a119061077816cd8eb5489c2d80520bedf78aa1565d6caca757c4d0933",
}

#: sha256 of the released theta's float64 bytes (C order); "data" is X's bytes then y's. By
#: OpenBLAS kernel family (threadpoolctl's ``architecture``: Haswell for AVX2 and, by default,
#: older AMD Zen; SkylakeX for AVX-512, an AMD Zen 4 included).
PINNED_BY_KERNEL = {
    "Haswell": {
        **_SAME_ON_EVERY_KERNEL,
        "clipped_gd": "9a9b970f0c6c73b8d022301abe277bc12e9ccb259b84232937af25dbf0c30184",
        "output_perturbation":
            "74dae9a1808bc519f51e3431bdfeaf4b2eb36e37483082c2f34b6ef5ce83ca91",
        "objective_perturbation":
            "ae823726502a964d4753b5c9de11b98e8d296a23ddbae5d191bf28947ac9151a",
        "theta*": "31f7c50088da38957eee59f1b2361b03a4e5e20e01be0136832e274fc9084575",
    },
    "SkylakeX": {
        **_SAME_ON_EVERY_KERNEL,
        "clipped_gd": "a6eba026408c0f045918507bd52d88ee897fcb553a1939c3914fcfb3936f6565",
        "output_perturbation":
            "8e7801228157d4291cabe42077eedcda8d54d45458a4f73e5723d0b1de1f328e",
        "objective_perturbation":
            "fc47cf3b76ac5efbc50c76fc683cc5f0c48e9db11823ac1415217c22b18e8488",
        "theta*": "2fbe4b0dc23ad1884e9eef69320fb40776fe9441f7f1164f79dca29e8000f591",
    },
}
PINNED = PINNED_BY_KERNEL["Haswell"]       # the names, in order

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
                  for i in threadpool_info() if i.get("user_api") == "blas"
                  and _numpy_or_scipy(i.get("filepath", "")))
    return {"platform": f"{platform.system()} {platform.machine()}",
            "numpy": np.__version__, "scipy": scipy.__version__,
            "dp_accounting": version("dp-accounting"), "blas": blas,
            "numpy_simd": list(__cpu_baseline__)
            + [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]}


def kernel_family():
    """OpenBLAS's kernel family of NumPy's and SciPy's BLAS (they must agree), or None. Other
    packages may load a BLAS of their own (SCS, say): the releases do not call it."""
    from threadpoolctl import threadpool_info
    families = {i.get("architecture") for i in threadpool_info() if i.get("user_api") == "blas"
                and _numpy_or_scipy(i.get("filepath", ""))}
    return families.pop() if len(families) == 1 else None


def _numpy_or_scipy(path):
    """Whether a loaded library is NumPy's or SciPy's own (their wheels' ``*.libs`` folders)."""
    return os.path.basename(os.path.dirname(path)) in ("numpy.libs", "scipy.libs")


def test_releases_keep_their_bits():
    family = kernel_family()
    assert family in PINNED_BY_KERNEL, (
        f"no pins for the BLAS kernels here: {environment()['blas']} (pinned: "
        f"{sorted(PINNED_BY_KERNEL)}); see docs/conventions.md, 'Same bits on every machine'")
    pinned = PINNED_BY_KERNEL[family]
    got = release_hashes()
    changed = {name: got[name] for name in PINNED if got[name] != pinned[name]}
    assert not changed, (
        f"release bits changed: {json.dumps(changed, indent=1)}\n"
        f"pinned on {json.dumps(PINNED_ON, indent=1)}, {family} kernels\n"
        f"this platform {json.dumps(environment(), indent=1)}\n"
        "A real change: record it in the changelog with the new hashes. Another platform: "
        "see docs/conventions.md, 'Same bits on every machine'.")


def test_the_kernel_families_differ_in_the_blas_dependent_releases_only():
    """The two families' pins, computed by one build of this code, differ exactly where
    docs/conventions.md says a release depends on the kernels: the pins can tell them apart."""
    haswell, skylake = PINNED_BY_KERNEL["Haswell"], PINNED_BY_KERNEL["SkylakeX"]
    assert {name for name in PINNED if haswell[name] != skylake[name]} == BLAS_DEPENDENT


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


@pytest.mark.slow
def test_pins_catch_other_simd_targets():
    """The pins are able to fail: NumPy without its AVX-512 targets changes dp_sgd's calibrated
    sigma, and nothing else (the kernels' releases are computed without NumPy's SIMD loops)."""
    family = kernel_family()
    if family not in PINNED_BY_KERNEL:
        pytest.skip("no pins for these BLAS kernels (test_releases_keep_their_bits says so)")
    if not {"X86_V4", "AVX512_ICL"} <= set(environment()["numpy_simd"]):
        pytest.skip("NumPy's AVX-512 targets are not in use here")
    simd = _hashes_under({"NPY_DISABLE_CPU_FEATURES": "AVX512_ICL X86_V4"}, PINNED)
    assert {n for n in PINNED if simd[n] != PINNED_BY_KERNEL[family][n]} == {"dp_sgd"}
