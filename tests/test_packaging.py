"""The distributions hold what they must: the sdist everything the build reads, the wheel the
kernels' Cython declarations that other Cython code cimports.

``pip install .`` builds from the working tree, so a file missing from the sdist goes unnoticed
until someone builds from the sdist (``python -m build``, asv's environments, a PyPI release):
asv continuous once failed with "'_kernels/losses.pyx' doesn't match any files".
"""
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# building the distributions (python -m build, in the bench extra) is the slow tier's; the fast
# tier checks, in the source tree, the declarations that the wheel ships
pytestmark = pytest.mark.skipif(not (ROOT / "pyproject.toml").exists(),
                                reason="needs the source tree")


def build_distributions(project, outdir, *kinds):
    """``python -m build`` of ``project`` into outdir, with build isolation as pip uses it; no
    kinds: an sdist, then a wheel built from that sdist. Returns {"sdist": path, "wheel": path}
    for what was built."""
    pytest.importorskip("build")
    done = subprocess.run([sys.executable, "-m", "build", *(f"--{kind}" for kind in kinds),
                           "--outdir", str(outdir), str(project)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    found = {kind: list(Path(outdir).glob(pattern))
             for kind, pattern in [("sdist", "*.tar.gz"), ("wheel", "*.whl")]}
    return {kind: archives[0] for kind, archives in found.items() if len(archives) == 1}


@pytest.fixture(scope="module")
def distributions(tmp_path_factory):
    """dpsolve's sdist and the wheel built from it (which compiles every kernel: about 1.5 min on
    two cores), as a release makes them: the wheel's contents then come from the sdist's."""
    return build_distributions(ROOT, tmp_path_factory.mktemp("dist"))


@pytest.mark.slow
def test_sdist_contains_the_kernel_sources_and_the_package(distributions):
    with tarfile.open(distributions["sdist"]) as tar:
        members = {Path(*Path(name).parts[1:]).as_posix() for name in tar.getnames()}
    needed = {p.relative_to(ROOT).as_posix()
              for pattern in ("_kernels/*.pyx", "_kernels/*.pxd", "_kernels/*.h", "dpsolve/**/*.py")
              for p in ROOT.glob(pattern)}
    needed |= {"setup.py", "pyproject.toml", "README.md"}
    assert needed - members == set()
    assert not any(name.startswith("_kernels/") and name.endswith(".c") for name in members)


# a cimport of another .pxd by its top-level name: it resolves in the build (include_path
# _kernels/) but not in an installed dpsolve/_kernels/
SIBLING_CIMPORT = re.compile(r"^\s*(from\s+_\w+\s+cimport|cimport\s+_\w+)", re.MULTILINE)


def test_the_declarations_to_ship_cimport_no_sibling_by_its_top_level_name():
    """What the wheel check below reads in the wheel, read in _kernels/: build_py ships these
    files unchanged as dpsolve/_kernels/*, where a top-level sibling name does not resolve."""
    declarations = sorted([*ROOT.glob("_kernels/*.pxd"), *ROOT.glob("_kernels/*.h")])
    assert {p.name for p in declarations} >= {"_loss.pxd", "_vector.pxd", "_schedule.pxd",
                                              "_stream.pxd", "ziggurat_tables.h"}
    for source in declarations:
        assert not SIBLING_CIMPORT.search(source.read_text()), source.name


@pytest.mark.slow
def test_wheel_ships_the_kernel_declarations(distributions):
    declarations = sorted([*ROOT.glob("_kernels/*.pxd"), *ROOT.glob("_kernels/*.h")])
    assert {p.name for p in declarations} >= {"_loss.pxd", "_vector.pxd", "_schedule.pxd",
                                              "_stream.pxd", "ziggurat_tables.h"}
    with zipfile.ZipFile(distributions["wheel"]) as wheel:
        names = set(wheel.namelist())
        for source in declarations:
            shipped = f"dpsolve/_kernels/{source.name}"
            assert shipped in names
            text = wheel.read(shipped)
            assert text == source.read_bytes()
            assert not SIBLING_CIMPORT.search(text.decode()), shipped
    modules = {Path(n).name.split(".")[0] for n in names
               if n.startswith("dpsolve/_kernels/") and n.endswith((".so", ".pyd"))}
    # every kernel source is built and shipped
    assert modules == {p.stem for p in (ROOT / "_kernels").glob("*.pyx")}


USER_PYX = '''
# A third party's module: cimports dpsolve's declarations by their package names.
from libc.stdint cimport uint64_t
from dpsolve._kernels._loss cimport HUBER_HINGE, LOGISTIC, check_loss_parameter, loss_value
from dpsolve._kernels._schedule cimport INV, step_size
from dpsolve._kernels._stream cimport stream_next
from dpsolve._kernels._vector cimport descend, dot, scale_onto_ball


def logistic_loss(double z, double y):
    return loss_value(LOGISTIC, z, y, 0.0)


def check_huber_width(double h):
    check_loss_parameter(HUBER_HINGE, h)


def inv_step(double eta0, double t):
    return step_size(INV, eta0, t)


def projected_step(double[::1] theta, double[::1] direction, double eta, double radius):
    cdef Py_ssize_t j, p = theta.shape[0]
    cdef double sq = 0.0
    for j in range(p):
        sq = descend(&theta[j], eta, direction[j], sq)
    scale_onto_ball(&theta[0], sq, radius, p)
    return dot(&theta[0], &theta[0], p)


def next_raw(uint64_t[::1] state):
    return stream_next(&state[0])
'''

USER_SETUP = '''
from Cython.Build import cythonize
from setuptools import Extension, setup

SITE = {site!r}      # the unpacked dpsolve wheel: what site-packages holds after pip install
setup(name="cimports-dpsolve", version="0", ext_modules=cythonize(
    [Extension("user", ["user.pyx"], include_dirs=[SITE + "/dpsolve/_kernels"])],
    include_path=[SITE], compiler_directives={{"language_level": 3}}))
'''

USER_CHECK = '''
import math
import numpy as np
import dpsolve, user
from dpsolve._kernels import get_include, losses, vector
from dpsolve.privacy import Stream

assert dpsolve.__file__.startswith({site!r}), dpsolve.__file__
assert get_include() == {include!r}
z, y = 0.3, -1.0
assert user.logistic_loss(z, y) == losses.loss_values(losses.LOSS_KINDS["logistic"],
                                                      np.array([z]), np.array([y]), 0.0)[0]
try:
    user.check_huber_width(0.0)
except ValueError as error:
    assert "huber_hinge needs a finite width h > 0" in str(error)
else:
    raise AssertionError("check_loss_parameter let h = 0 through")
assert user.inv_step(1.0, 4.0) == 0.25
theta = np.array([3.0, 4.0])
assert user.projected_step(theta, np.array([-1.0, 2.0]), 0.5, 1.0) <= 1.0 + 1e-15
assert np.array_equal(theta, vector.project_l2_ball(np.array([3.5, 3.0]), 1.0))
s = Stream(np.array([1, 2, 3], dtype=np.uint64))
state = s.state.copy()
assert user.next_raw(state) == s.raw(1)[0]
print("cimported")
'''


@pytest.mark.slow
def test_a_cython_module_cimports_the_installed_declarations(distributions, tmp_path):
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if sys.platform != "win32" and shutil.which(compiler) is None:
        pytest.skip(f"no C compiler found ({compiler!r}): cannot compile the module that "
                    f"cimports dpsolve's .pxd files")
    site = tmp_path / "site"
    with zipfile.ZipFile(distributions["wheel"]) as wheel:
        wheel.extractall(site)
    project = tmp_path / "user"
    project.mkdir()
    (project / "user.pyx").write_text(USER_PYX)
    (project / "setup.py").write_text(USER_SETUP.format(site=str(site)))
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68", "Cython>=3.0"]\n'
        'build-backend = "setuptools.build_meta"\n')
    user_wheel = build_distributions(project, tmp_path / "dist", "wheel")["wheel"]
    with zipfile.ZipFile(user_wheel) as wheel:
        wheel.extractall(tmp_path / "user_site")
    include = str(site / "dpsolve" / "_kernels")
    done = subprocess.run(
        [sys.executable, "-c", USER_CHECK.format(site=str(site), include=include)],
        capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "user_site"),
                                                          str(site)])})
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "cimported"
