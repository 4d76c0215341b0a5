"""Sphinx configuration for dpsolve's documentation.

Build with ``python -m sphinx -W -b html docs docs/_build`` (``pip install ".[docs]"``).

The API reference imports the *installed* dpsolve (or the one on PYTHONPATH): this file does not
put the repository root on ``sys.path``, because after a regular ``pip install .`` the source tree
there has no compiled kernels.
"""
import dpsolve

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
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# scripts/ and sweeps/ hold the reproduction scripts and sweep files, not pages; nothing is run.
exclude_patterns = ["_build", "scripts", "sweeps", "Thumbs.db", ".DS_Store"]

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

html_theme = "alabaster"
html_title = f"dpsolve {release}"
html_static_path = []

