"""Seeded releases, and their input data, keep their bits on every x86-64 machine: sha256 of the
released float64 bytes, pinned once here (docs/conventions.md, "Same bits on every machine").

The promise: the same dpsolve, NumPy, SciPy and dp_accounting give these bits whatever the CPU's
SIMD extensions and its OpenBLAS kernel family. No release here calls BLAS
(tests/test_no_blas.py checks), and the one accountant search among them (``dp_sgd``'s PLD
calibration, computed with NumPy's SIMD loops) is rounded up onto a public grid of multipliers.
CI runs this file again under ``NPY_DISABLE_CPU_FEATURES`` without AVX-512, and without AVX2,
and requires the same hashes (``.ci/run``); so does the slow test below.

A failure means a release's bits changed: a solver, a calibration, a sampler or an order of
summation changed (record it in the changelog with the new hashes), or the promise does not hold
on this platform (the message shows this environment next to :data:`PINNED_ON`; report it).

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
from dpsolve import Problem
from dpsolve.solvers import registry

#: Where the hashes below were computed (one machine; the promise is that any other agrees).
PINNED_ON = {
    "platform": "Linux x86_64 (AMD EPYC, AVX-512)",
    "numpy": "2.4.6",
    "scipy": "1.17.1",
    "dp_accounting": "0.6.0",
}

#: sha256 of the released theta's float64 bytes (C order); "data" is X's bytes then y's.
PINNED = {
    "data": "07dfa5f0dbf0907c573294584baf0124cdc9169a50a393865a7eb70c78c87a93",
    "noisy_sgd": "ae5185c9fe74e99a43fa93eb7e5a594fe30b2b66fb74fa556a0e2c4e0a1f4d96",
    "clipped_gd": "9be5e3a4b5a0e2b1d4813245d32b64ce90739fe885943208390894333edc298f",
    "minibatch_sgd": "e56e09a25c08af63881ee280ac461673dab7d254167f2c12ad19a31c2210d3b1",
    "output_perturbation":
        "6f6feb5ce457ab963e6c5327f56c7335dd7c7923368a1f3b5eeaf3b3dc80c1d3",
    "objective_perturbation":
        "982e7528fca8a2d3da381c6c648db31624849ebc6b1426230e2812fb70233af3",
    "dp_sgd": "8ea8e91288c79cc65f4189e06575f3dde357e27ca7e5e835dbc2cfa207649ab6",
}

#: NumPy SIMD settings under which the pins must hold too: without AVX-512, and without AVX2
#: (NumPy's baseline X86_V2 left).
OTHER_SIMD = {
    "no AVX-512": "AVX512_ICL X86_V4",
    "no AVX2": "AVX512_ICL X86_V4 X86_V3",
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
    """This platform, in the terms of :data:`PINNED_ON`, with what the promise says does not
    matter (the BLAS libraries and their kernels, NumPy's SIMD targets)."""
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
        "A real change: record it in the changelog with the new hashes. Otherwise the promise "
        "of docs/conventions.md, 'Same bits on every machine', fails here: report it.")


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
@pytest.mark.parametrize("setting", sorted(OTHER_SIMD))
def test_pins_hold_on_other_simd_targets(setting):
    """NumPy without its AVX-512 (or AVX2) loops gives every pinned release the same bits.
    Where the CPU lacks those targets, NumPy already runs without them and this repeats the
    fast test."""
    simd = _hashes_under({"NPY_DISABLE_CPU_FEATURES": OTHER_SIMD[setting]}, PINNED)
    assert simd == PINNED, {n: simd[n] for n in PINNED if simd[n] != PINNED[n]}
