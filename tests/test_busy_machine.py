"""The kernels on a busy machine: how the OpenMP runtime is started, and the paths that run when a
second thread is descheduled (docs/performance.md, "A busy machine").

Speed itself is measured by ``benchmarks/bench_busy.py`` with a co-runner, never here.
"""
import ctypes.util
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from dpsolve._kernels import sgd, threads
from dpsolve._kernels.stream import Stream

import dpsolve._kernels

# The dpsolve this process imported (an install, or a source tree built in place): after a
# regular install the repository's own dpsolve/ has no compiled kernels.
PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(dpsolve._kernels.__file__)))
ROOT = os.path.dirname(PACKAGE)
WAIT_SETTINGS = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME", "OMP_DISPLAY_ENV")
needs_libgomp = pytest.mark.skipif(
    not sys.platform.startswith("linux") or ctypes.util.find_library("gomp") is None
    or not threads.has_openmp(), reason="reads libgomp's own report of its settings (Linux)")


def fresh_interpreter(code, **env):
    """Run ``code`` in a new Python whose environment has none of the wait settings but ``env``;
    returns (stdout, stderr)."""
    environ = {k: v for k, v in os.environ.items() if k not in WAIT_SETTINGS}
    environ.update(env)
    environ["PYTHONPATH"] = ROOT + os.pathsep + environ.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", code], env=environ, cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout, done.stderr


def libgomp_setting(stderr, name):
    """The value libgomp reports for ``name`` with OMP_DISPLAY_ENV=VERBOSE."""
    for line in stderr.splitlines():
        key, _, value = line.strip().partition(" = ")
        if key == name:
            return value.strip("'")
    raise AssertionError(f"libgomp did not report {name}:\n{stderr}")


# The kernels' package alone, without running dpsolve/__init__.py (which imports all of dpsolve
# and its dependencies: seconds), so each check takes a fraction of a second.
ALONE = ("import sys, types; package = types.ModuleType('dpsolve'); "
         f"package.__path__ = [{PACKAGE!r}]; sys.modules['dpsolve'] = package\n")
REPORT = ("import os; from dpsolve._kernels import threads; "
          "print(threads.wait_policy(), os.environ.get('OMP_WAIT_POLICY'), "
          "os.environ.get('GOMP_SPINCOUNT'))")


@needs_libgomp
def test_the_runtime_starts_with_passive_waiting_and_the_environment_is_restored():
    out, err = fresh_interpreter(ALONE + REPORT, OMP_DISPLAY_ENV="VERBOSE")
    assert out.split() == ["passive", "None", "None"]
    # what libgomp read as it started: no spinning at all
    assert libgomp_setting(err, "OMP_WAIT_POLICY") == "PASSIVE"
    assert libgomp_setting(err, "GOMP_SPINCOUNT") == "0"


@needs_libgomp
@pytest.mark.parametrize("name,value,spin", [("OMP_WAIT_POLICY", "ACTIVE", "30000000000"),
                                             ("GOMP_SPINCOUNT", "1234", "1234")])
def test_the_users_setting_wins(name, value, spin):
    out, err = fresh_interpreter(ALONE + REPORT, OMP_DISPLAY_ENV="VERBOSE", **{name: value})
    policy, *left = out.split()
    assert policy == "environment"
    assert left == [value if n == name else "None" for n in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")]
    assert libgomp_setting(err, "GOMP_SPINCOUNT") == spin


@needs_libgomp
def test_a_runtime_loaded_before_dpsolve_is_reported():
    """Another package that loaded the same libgomp first fixed its settings: dpsolve says so."""
    code = ALONE + "import ctypes, ctypes.util; ctypes.CDLL(ctypes.util.find_library('gomp')); " \
        + REPORT
    out, err = fresh_interpreter(code, OMP_DISPLAY_ENV="VERBOSE")
    assert out.split() == ["preloaded", "None", "None"]
    assert libgomp_setting(err, "GOMP_SPINCOUNT") == "300000"      # GCC's default spin


@needs_libgomp
@pytest.mark.slow
def test_importing_dpsolve_starts_the_runtime_with_passive_waiting():
    """Nothing dpsolve imports before its kernels (numpy, scipy, ...) loads libgomp first."""
    out, err = fresh_interpreter("import dpsolve\n" + REPORT, OMP_DISPLAY_ENV="VERBOSE")
    assert out.split() == ["passive", "None", "None"]
    assert libgomp_setting(err, "GOMP_SPINCOUNT") == "0"


def test_wait_policy_in_this_process():
    assert threads.wait_policy() in ("passive", "environment", "preloaded", "serial")
    assert (threads.wait_policy() == "serial") == (not threads.has_openmp())


def streams(seed):
    g = np.random.default_rng(seed)
    return Stream.from_generator(g), Stream.from_generator(g)


@pytest.mark.parametrize("p,steps,alone_after", [(3, 20_000, 1), (3, 20_000, 2), (50, 1_000, 2),
                                                 (50, 1_000, 3), (7000, 5, 1)])
def test_noise_ahead_going_on_alone_keeps_the_bits(p, steps, alone_after):
    """When the second thread is too slow (a busy machine), the first runs the block drawn last
    and draws the rest inline: forced here after barrier ``alone_after`` (at p = 3 a block is
    5,461 steps, at p = 50 327, at p = 7000 2), the same theta, draw counts and stream states as
    one thread."""
    rng = np.random.default_rng(6)
    n = 40
    X = rng.standard_normal((n, p)) / math.sqrt(p)
    y = rng.choice([-1.0, 1.0], n)
    results = []
    before = threads.max_threads()
    try:
        for count, forced in ((1, 0), (2, alone_after)):
            threads.set_num_threads(count)
            assert threads.max_threads() == count or not threads.has_openmp()
            sgd._go_alone_after(forced)
            theta, counts, s = np.zeros(p), np.zeros(n, dtype=np.intp), streams(8)
            assert sgd.noisy_sgd_steps(X, y, 0, 0.0, theta, 1, steps + 1, 3.0, 0, 0.02, 0.1, 0.9,
                                       *s, counts)
            results.append((theta.tobytes(), counts.tobytes(), [a.state.tobytes() for a in s]))
    finally:
        sgd._go_alone_after(0)
        threads.set_num_threads(before)
    assert results[0] == results[1]
    assert np.frombuffer(results[0][1], dtype=np.intp).sum() == steps
