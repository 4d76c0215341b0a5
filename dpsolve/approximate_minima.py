"""Approximate Minima Perturbation's settings (Iyengar et al. 2019): moved with its solver, to
:mod:`dpsolve.solvers.objective_perturbation.approximate_minima`. This name is that module (the
same object), for the code that imports it from here.
"""
from ._moved import moved_module

moved_module(__name__, "dpsolve.solvers.objective_perturbation.approximate_minima")
