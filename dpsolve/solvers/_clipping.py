"""The clipping norm the clipped-gradient solvers (:mod:`~dpsolve.solvers.clipped_gd`,
:mod:`~dpsolve.solvers.dp_sgd`) default to."""
import math


def default_clip_norm(problem):
    """The default clipping norm of the clipped-gradient solvers: the Lipschitz constant L, so
    that clipping never changes a gradient and the bounds hold.

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    float
        L; ValueError when the loss has none (squared loss without a radius).
    """
    clip_norm = problem.lipschitz
    if not math.isfinite(clip_norm):
        raise ValueError(f"the {problem.loss} loss has no finite Lipschitz constant without "
                         "a radius, so clip_norm has no default: give the Problem a radius "
                         "or pass clip_norm")
    return clip_norm
