"""The source distribution holds everything the build reads.

``pip install .`` builds from the working tree, so a file missing from the sdist goes unnoticed
until someone builds from the sdist (``python -m build``, asv's environments, a PyPI release):
asv continuous once failed with "'_kernels/losses.pyx' doesn't match any files".
"""
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


@pytest.mark.skipif(not (ROOT / "pyproject.toml").exists(), reason="needs the source tree")
def test_sdist_contains_the_kernel_sources_and_the_package(tmp_path):
    pytest.importorskip("build")
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--outdir",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True)
    (archive,) = tmp_path.glob("dpsolve-*.tar.gz")
    with tarfile.open(archive) as tar:
        members = {Path(*Path(name).parts[1:]).as_posix() for name in tar.getnames()}
    needed = {p.relative_to(ROOT).as_posix()
              for pattern in ("_kernels/*.pyx", "_kernels/*.pxd", "_kernels/*.h", "dpsolve/**/*.py")
              for p in ROOT.glob(pattern)}
    needed |= {"setup.py", "pyproject.toml", "README.md"}
    assert needed - members == set()
    assert not any(name.startswith("_kernels/") and name.endswith(".c") for name in members)
