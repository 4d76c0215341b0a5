"""Objective perturbation's privacy constants (Chaudhuri, Monteleoni & Sarwate 2011; Kifer,
Smith & Thakurta 2012): moved with its solver, to
:mod:`dpsolve.solvers.objective_perturbation.privacy_constants`. This name is that module (the
same object), for the code that imports it from here.
"""
from ._moved import moved_module

moved_module(__name__, "dpsolve.solvers.objective_perturbation.privacy_constants")
