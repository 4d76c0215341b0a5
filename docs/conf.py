"""Sphinx configuration for dpsolve's documentation.

Build the site from the repository root::

    pip install ".[docs]"
    python -m sphinx -W -b html docs docs/_build

The pages document the *installed* dpsolve. ``python -m`` puts the current directory first on
``sys.path``, and at the repository root that is the source tree, whose ``dpsolve/`` has no
compiled kernels after a regular (non-editable) ``pip install .``. So this file imports dpsolve
and, if that fails inside the source tree, drops the root from ``sys.path`` and imports the
installed copy instead. An editable install with the kernels built in place imports from the
root at the first try and is used as it is.

The gallery (``auto_examples/``) is built by sphinx-gallery from ``../examples/plot_*.py``; every
example is run at each build and a failing one fails the build.
"""
import importlib
import importlib.util
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _is_root(entry):
    # '' and '.' on sys.path mean the current directory
    return Path(os.path.abspath(entry or os.curdir)).resolve() == ROOT


def _import_installed_dpsolve():
    """Import dpsolve; if the copy found first is the root's unbuilt source tree, import the
    installed one instead (see the module docstring)."""
    try:
        return importlib.import_module("dpsolve")
    except ImportError as error:
        spec = importlib.util.find_spec("dpsolve")
        origin = Path(spec.origin).resolve() if spec and spec.origin else None
        if origin is None or ROOT / "dpsolve" not in origin.parents:
            raise
        failure = error
    sys.path[:] = [entry for entry in sys.path if not _is_root(entry)]
    for name in [name for name in sys.modules if name.split(".")[0] == "dpsolve"]:
        del sys.modules[name]
    importlib.invalidate_caches()
    try:
        return importlib.import_module("dpsolve")
    except ImportError as error:
        raise ImportError(
            f"the dpsolve source tree at {ROOT} has no compiled kernels ({failure}) and no "
            "installed dpsolve was found: pip install \".[docs]\" first") from error


dpsolve = _import_installed_dpsolve()

project = "dpsolve"
author = "dpsolve developers"
copyright = "dpsolve developers"
release = version = dpsolve.__version__

extensions = [
    "myst_parser",            # the pages are Markdown
    "sphinx.ext.autodoc",     # API reference from the docstrings
    "sphinx.ext.autosummary",  # summary tables on the API pages (no generated stub files)
    "sphinx.ext.mathjax",
    "numpydoc",               # the docstrings are in numpydoc format
    "sphinx_design",          # the landing page's cards (grid / grid-item-card)
    "sphinx_gallery.gen_gallery",  # the examples gallery, run at every build
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# scripts/ and sweeps/ hold the reproduction scripts and sweep files, not pages; nothing is run.
exclude_patterns = ["_build", "scripts", "sweeps", "Thumbs.db", ".DS_Store"]

# sphinx-gallery: runs ../examples/plot_*.py in file-name order and writes auto_examples/ (a
# build product, in .gitignore). A failing example fails the build; figures are matplotlib's,
# and matplotlib's state is reset between examples.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
}

# MyST: `$...$` / `$$...$$` math, `\begin{align}` blocks, `:::` fences; anchors on headings up to
# level 3 so pages can link to each other's sections (`noisy_sgd.md#privacy`).
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# autodoc / autosummary: members in source order; autosummary only renders tables (the entries
# themselves are written with autofunction/autoclass on the same page), so nothing is generated
# into the source tree.
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_typehints = "none"  # the numpydoc "Parameters" sections give the types
autosummary_generate = False

# numpydoc: no automatic member tables for classes (autoclass :members: lists them), and no
# cross-referencing of the free-text types in "Parameters" sections.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# pydata-sphinx-theme, as NumPy, SciPy, pandas and scikit-learn. The navbar links the main
# sections (_templates/navbar-sections.html), the left sidebar lists every page
# (_templates/sidebar-nav-global.html), the right one the page's headings to two levels.
# _static/custom.css keeps code blocks from scrolling sideways.
html_theme = "pydata_sphinx_theme"
html_title = f"dpsolve {release}"
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navbar_start": ["navbar-logo"],
    "navbar_center": ["navbar-sections"],
    "navbar_end": ["theme-switcher"],
    "show_toc_level": 2,
    "navigation_depth": 2,
    "show_prev_next": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
# the landing page is full width (its cards are the navigation); elsewhere, every page
html_sidebars = {"index": [], "**": ["sidebar-nav-global"]}



# -- the solvers' API entries, from the registry --------------------------------------------------
# ``.. registered-solvers::`` writes ``autofunction`` for every registered solver, in registry
# order (``:summary:`` an autosummary table of them instead; ``:partition: none`` or ``any``
# keeps the single-machine or the multi-party ones): a new solver's entry cannot be forgotten.
from docutils.parsers.rst import Directive, directives  # noqa: E402


class RegisteredSolvers(Directive):
    option_spec = {"summary": directives.flag,
                   "partition": lambda value: directives.choice(value, ("none", "any"))}

    def run(self):
        specs = dpsolve.solvers.registry()
        if "partition" in self.options:
            single = self.options["partition"] == "none"
            specs = [spec for spec in specs if (spec.partition is None) == single]
        if "summary" in self.options:
            lines = [".. autosummary::", "   :nosignatures:", ""]
            lines += [f"   {spec.name}" for spec in specs] + [""]
        else:
            lines = [line for spec in specs for line in (f".. autofunction:: {spec.name}", "")]
        self.state_machine.insert_input(lines, "registered-solvers (docs/conf.py)")
        return []


def setup(app):
    app.add_directive("registered-solvers", RegisteredSolvers)
