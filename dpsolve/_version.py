"""dpsolve's version, as pyproject.toml declares it (``project.version``): here, and not in the
package root, so that modules inside the package (the reference cache's keys) can read it
without importing ``dpsolve`` itself."""
__version__ = "0.2.0"
