"""Count the calls a piece of Python makes into BLAS and LAPACK, whoever makes them.

A release promised to have the same bits on every x86-64 machine (docs/conventions.md, "Same bits
on every machine") must not call BLAS: OpenBLAS picks its kernels per CPU, and they sum in
different orders. Calls reach BLAS from many places (``a @ b``, ``np.dot``, ``np.linalg``,
``scipy.linalg``, a solver's C code), so the guard sits at the libraries' boundary instead:

* it lists the entry points that the compiled modules of NumPy, SciPy and the cone solvers import
  from the BLAS libraries threadpoolctl finds loaded (``nm -D``: undefined in a caller, defined in
  exactly one BLAS library);
* it compiles a small shared library defining each of them as a trampoline that counts the call
  (one atomic increment) and jumps to the real function, found by ``dlsym`` on that library's
  handle: arguments and results pass through untouched;
* :func:`run_guarded` runs code in a fresh interpreter with that library in ``LD_PRELOAD``, so
  the dynamic linker binds the callers' imports to the trampolines, and returns the counts of the
  calls made between :func:`reset` and :func:`counts`.

Linux x86-64 with gcc and binutils' ``nm`` only: what building dpsolve needs there anyway.
"""
import json
import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

_CALLER_PACKAGES = ("numpy", "scipy", "scs", "osqp", "clarabel", "ecos")


def _loaded_blas_libraries():
    """Paths of the BLAS libraries loaded once NumPy, SciPy, cvxpy and dpsolve are imported."""
    import numpy  # noqa: F401
    import scipy.linalg  # noqa: F401
    import cvxpy  # noqa: F401
    import dpsolve  # noqa: F401
    from threadpoolctl import threadpool_info
    return sorted({info["filepath"] for info in threadpool_info()
                   if info.get("user_api") == "blas"})


def _symbols(path, which):
    done = subprocess.run(["nm", "-D", which, path], capture_output=True, text=True, check=True)
    names = set()
    for line in done.stdout.splitlines():
        parts = line.split()
        if which == "--undefined-only" and len(parts) >= 2 and parts[-2] in ("U", "w"):
            names.add(parts[-1].split("@")[0])
        elif which == "--defined-only" and len(parts) == 3 and parts[1] in ("T", "W", "i"):
            names.add(parts[2].split("@")[0])
    return names


def _entry_points(libraries):
    """{symbol: library} for every function the callers import from exactly one BLAS library,
    and the imported names defined by more than one (which cannot be guarded)."""
    site = Path(sysconfig.get_paths()["purelib"])
    imported = set()
    for package in _CALLER_PACKAGES:
        for so in (site / package).rglob("*.so"):
            imported |= _symbols(str(so), "--undefined-only")
    defined = {lib: _symbols(lib, "--defined-only") & imported for lib in libraries}
    owner, shared = {}, set()
    for lib, names in defined.items():
        for name in names:
            if name in owner:
                shared.add(name)
            owner[name] = lib
    return {name: lib for name, lib in owner.items() if name not in shared}, shared


def _source(entry_points):
    names = sorted(entry_points)
    libraries = sorted(set(entry_points.values()))
    lines = ["#define _GNU_SOURCE", "#include <dlfcn.h>", "#include <stdio.h>",
             "#include <stdlib.h>", "#include <string.h>",
             f"#define N {len(names)}",
             # hidden: the trampolines address them relative to the instruction pointer
             "__attribute__((visibility(\"hidden\"))) unsigned long guard_counts[N];",
             "__attribute__((visibility(\"hidden\"))) void *guard_targets[N];",
             "static const char *names[N] = {" + ",".join(f'"{n}"' for n in names) + "};",
             "static const int owners[N] = {"
             + ",".join(str(libraries.index(entry_points[n])) for n in names) + "};",
             "static const char *libraries[] = {"
             + ",".join(json.dumps(lib) for lib in libraries) + "};",
             # resolve every target before Python starts: load the BLAS libraries now (NumPy's
             # and SciPy's later loads of the same files return these handles)
             "__attribute__((constructor)) static void guard_resolve(void) {",
             f"  void *handles[{len(libraries)}];",
             f"  for (int i = 0; i < {len(libraries)}; i++) {{",
             "    handles[i] = dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL);",
             "    if (!handles[i]) { fprintf(stderr, \"blas_guard: %s\\n\", dlerror()); abort(); }",
             "  }",
             "  for (int k = 0; k < N; k++) {",
             "    guard_targets[k] = dlsym(handles[owners[k]], names[k]);",
             "    if (!guard_targets[k]) { fprintf(stderr, \"blas_guard: no %s\\n\", names[k]); "
             "abort(); }",
             "  }",
             "}",
             "void guard_reset(void) { memset(guard_counts, 0, sizeof guard_counts); }",
             "int guard_size(void) { return N; }",
             "const char *guard_name(int k) { return names[k]; }",
             "unsigned long guard_count(int k) { return guard_counts[k]; }"]
    # each entry point: count, then jump to the real function with every register as it came
    for k, name in enumerate(names):
        lines.append(
            f'__asm__(".globl {name}\\n.type {name}, @function\\n{name}:\\n'
            f'  lock incq guard_counts+{8 * k}(%rip)\\n'
            f'  jmp *guard_targets+{8 * k}(%rip)\\n.size {name}, .-{name}\\n");')
    return "\n".join(lines) + "\n"


def build(directory):
    """Compile the guard into ``directory``; returns (path of the library, guarded names,
    imported names that could not be guarded)."""
    libraries = _loaded_blas_libraries()
    entry_points, shared = _entry_points(libraries)
    source = Path(directory) / "blas_guard.c"
    source.write_text(_source(entry_points))
    library = Path(directory) / "blas_guard.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-O1", str(source), "-o", str(library), "-ldl"],
                   check=True, capture_output=True, text=True)
    return str(library), sorted(entry_points), sorted(shared)


#: Prepended to the code :func:`run_guarded` runs: ``reset()`` and ``counts()`` (nonzero counts
#: by entry point since the last reset).
_PRELUDE = """
import ctypes, json, os
_guard = ctypes.CDLL(os.environ["DPSOLVE_BLAS_GUARD"])
_guard.guard_name.restype = ctypes.c_char_p
_guard.guard_count.restype = ctypes.c_ulong
def reset():
    _guard.guard_reset()
def counts():
    return {_guard.guard_name(k).decode(): _guard.guard_count(k)
            for k in range(_guard.guard_size()) if _guard.guard_count(k)}
"""


def run_guarded(library, code, cwd=None, timeout=600, env=None):
    """Run ``code`` (which may call ``reset()`` and ``counts()`` and must print one JSON line
    last) in a fresh interpreter with the guard preloaded; returns that JSON's value."""
    import dpsolve
    # the child imports the dpsolve this process imported (a source tree or an install)
    where = os.path.dirname(os.path.dirname(os.path.abspath(dpsolve.__file__)))
    environment = {**os.environ, **(env or {}), "DPSOLVE_BLAS_GUARD": library,
                   "LD_PRELOAD": library,
                   "PYTHONPATH": os.pathsep.join(
                       [where] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    # a folder of its own: the script's folder comes first on the child's sys.path, and a
    # shared one (/tmp) may hold modules that would shadow the standard library's
    with tempfile.TemporaryDirectory() as folder:
        script = os.path.join(folder, "guarded.py")
        with open(script, "w") as f:
            f.write(_PRELUDE + code)
        done = subprocess.run([sys.executable, script], capture_output=True, text=True,
                              env=environment, timeout=timeout,
                              cwd=cwd or os.path.dirname(os.path.abspath(__file__)))
    if done.returncode != 0:
        raise RuntimeError(f"the guarded interpreter failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
