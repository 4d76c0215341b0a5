"""The cone-program solve with cvxpy: the fallback when the second-order methods do not reach
the certificate, and the independent cross-check of the tests."""
import warnings

import numpy as np

from .._row_ops import as_float64


def cone_solve(problem, tol):
    """Solve with cvxpy (Clarabel, then SCS). Returns ``(theta, alpha, status, solver)``. Here
    ``alpha`` is the dual point from the margin constraints (hinge only, else None). ``theta`` is
    None if both solvers fail."""
    import cvxpy as cp

    # cvxpy copies the data into its own float64 matrices anyway
    X, y, n = as_float64(problem.X), problem.y, problem.n
    theta = cp.Variable(problem.theta_shape)
    z = X @ theta
    loss = problem.loss_object
    # the mean loss, with its auxiliary constraints and (hinge) the margin constraint
    objective, constraints, margin = loss.cvxpy_objective(z, y, n)
    if problem.reg > 0:
        objective = objective + 0.5 * problem.reg * cp.sum_squares(theta)
    if problem.radius is not None:
        # (the Frobenius norm for multinomial; cp.norm(matrix, 2) would be the spectral norm)
        norm = (cp.norm(theta, "fro") if loss.is_multinomial
                else cp.norm1(theta) if problem.constraint == "l1" else cp.norm(theta, 2))
        constraints.append(norm <= problem.radius)
    cvx = cp.Problem(cp.Minimize(objective), constraints)

    # Hinge (not smooth): the solver's answer is final, so ask for tight tolerances (1e-10;
    # asking Clarabel for less has been seen to give worse answers, not better ones). Smooth
    # losses: the solution only warm-starts Newton polishing, which converges quadratically
    # from there. Tight interior-point tolerances would cost many slow exponential-cone
    # iterations (logistic at n = 10^4, p = 50: 5-28 s at 1e-10 against 4-9 s at 1e-7;
    # polishing adds < 0.1 s).
    inner = 1e-7 if loss.smooth else 1e-10
    attempts = [
        ("CLARABEL", dict(tol_gap_abs=inner, tol_gap_rel=inner, tol_feas=inner,
                          tol_ktratio=1e-8, max_iter=400)),
        ("SCS", dict(eps_abs=inner, eps_rel=inner, max_iters=200_000)),
    ]
    for name, opts in attempts:
        if name not in cp.installed_solvers():
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cvx.solve(solver=name, **opts)
        except Exception:          # noqa: BLE001 - a solver error means: try the next one
            continue
        if cvx.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or theta.value is None:
            continue
        value = np.asarray(theta.value, dtype=np.float64).reshape(problem.theta_shape)
        if not np.all(np.isfinite(value)):
            continue
        alpha = None
        if margin is not None and margin.dual_value is not None:
            # Lagrangian (1/n) sum xi - sum mu_i (xi_i - 1 + y_i z_i): b_i = n mu_i in [0, 1].
            mu = np.asarray(margin.dual_value, dtype=np.float64).reshape(n)
            if np.all(np.isfinite(mu)):
                alpha = np.clip(n * mu, 0.0, 1.0) * y
        return value, alpha, str(cvx.status), name
    return None, None, "failed", "NONE"


