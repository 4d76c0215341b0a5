"""SGD1 across parties (Bassily, Smith & Thakurta 2014; docs/multiparty.md): the protocol
equals the single-party run, messages use only the sender's rows, transcripts replay, and each
observer's epsilon is what the threat model says."""
import math

import numpy as np
import pytest

import dpsolve
from dpsolve import Parties
from dpsolve.privacy import UniformSampling, epsilon_of, gaussian_epsilon, gaussian_event


def _setup(loss="logistic", n=60, p=3, sizes=(20, 30, 10), **kw):
    X, y = dpsolve.datasets.make_synthetic(n, p, rng=0)
    problem = dpsolve.Problem(X, y, loss, radius=1.0, **kw)
    return problem, Parties.from_sizes(problem, list(sizes))


@pytest.mark.slow
@pytest.mark.parametrize("loss, step_size, reg", [pytest.param("logistic", "lipschitz", 0.0,
                                                               marks=pytest.mark.slow),
                                                  ("hinge", "strongly_convex", 0.1),
                                                  ("huber_hinge", "lipschitz", 0.05)])
def test_protocol_equals_single_party_run_bitwise(loss, step_size, reg):
    problem, parties = _setup(loss, reg=reg)
    kw = dict(steps=2000, calibration="paper", step_size=step_size, rng=4)
    single = dpsolve.noisy_sgd(problem, 0.5, 1e-6, **kw)
    fast = dpsolve.noisy_sgd(problem, 0.5, 1e-6, parties=parties, **kw)
    protocol = dpsolve.noisy_sgd(problem, 0.5, 1e-6, parties=parties, record_transcript=True,
                                 **kw)
    assert np.array_equal(single.theta, fast.theta)
    assert np.array_equal(single.theta, protocol.theta)
    transcript = protocol.transcript
    assert np.array_equal(transcript.replay(), protocol.theta)
    assert np.array_equal(transcript.sender, parties.owner[transcript.index])
    # the kernel's draw counts and the protocol's index sequence agree: same observers
    assert dict(fast.observers) == dict(protocol.observers)
    assert single.observers == {} and single.transcript is None


def test_a_message_depends_only_on_the_senders_rows():
    problem, parties = _setup()
    X2 = problem.X.copy()
    X2[20:] = -X2[20:]                          # change every row of the other parties
    y2 = problem.y.copy()
    y2[20:] = -y2[20:]
    other = Parties.from_sizes(dpsolve.Problem(X2, y2, "logistic", radius=1.0), [20, 30, 10])
    theta = np.array([0.3, -0.2, 0.5])
    for row in range(20):
        a = parties[0].sgd1_message(theta, row, 60.0, 0.0, 2.0, np.random.default_rng(row))
        b = other[0].sgd1_message(theta, row, 60.0, 0.0, 2.0, np.random.default_rng(row))
        assert np.array_equal(a, b)
    # and it is SGD1's G_t for that row (docs/noisy_sgd.md): n (loss' x + reg theta) + sigma xi
    x, yv = problem.X[5], problem.y[5]
    d = -yv / (1 + math.exp(yv * (x @ theta)))
    xi = np.random.default_rng(9).standard_normal(3)
    np.testing.assert_allclose(parties[0].sgd1_message(theta, 5, 60.0, 0.0, 2.0,
                                                       np.random.default_rng(9)),
                               60 * d * x + 2.0 * xi, rtol=1e-13)


@pytest.mark.slow
def test_observer_epsilons_closed_form():
    problem, parties = _setup()
    fit = dpsolve.noisy_sgd(problem, 0.5, 1e-6, steps=3000, parties=parties,
                            record_transcript=True, rng=1)
    sens = 2 * 60 * problem.lipschitz
    counts = np.bincount(fit.transcript.index, minlength=60)
    # B: the worst row's K Gaussians compose exactly to mu = sqrt(K) sens / sigma
    assert fit.observers["coordinator"] == pytest.approx(
        gaussian_epsilon(math.sqrt(counts.max()) * sens / fit.sigma, 1e-6), rel=1e-9)
    # parties: party j's S_j steps, one of its n_j rows each
    expected = max(epsilon_of(gaussian_event(fit.sigma, sens, steps=int(counts[q.rows].sum()),
                                             sampling=UniformSampling(q.n, 1)), 1e-6, "rdp")
                   for q in parties)
    assert fit.observers["parties"] == pytest.approx(expected, rel=1e-12)
    assert fit.observers["outsider"] == fit.privacy.certified_epsilon
    # no amplification against B: it is the least private view
    assert fit.observers["coordinator"] > fit.observers["parties"] > fit.observers["outsider"]


@pytest.mark.slow
def test_observers_above_the_claim_warn():
    problem, parties = _setup()
    with pytest.warns(dpsolve.PrivacyWarning) as record:
        dpsolve.noisy_sgd(problem, 0.5, 1e-6, steps=3000, calibration="rdp", parties=parties,
                          rng=0)
    messages = [str(w.message) for w in record]
    assert any("against coordinator" in m for m in messages)
    assert any("against parties" in m for m in messages)


def test_bad_multiparty_inputs():
    problem, parties = _setup()
    other, _ = _setup()
    with pytest.raises(ValueError, match="partition of this problem"):
        dpsolve.noisy_sgd(other, 0.5, 1e-6, steps=10, parties=parties)
    with pytest.raises(TypeError, match="Parties"):
        dpsolve.noisy_sgd(problem, 0.5, 1e-6, steps=10, parties=[np.arange(30)])
    with pytest.raises(ValueError, match="needs parties"):
        dpsolve.noisy_sgd(problem, 0.5, 1e-6, steps=10, record_transcript=True)
    with pytest.raises(ValueError, match="transcript_limit"):
        dpsolve.noisy_sgd(problem, 0.5, 1e-6, steps=1000, parties=parties,
                          record_transcript=True, transcript_limit=1000)
    with pytest.raises(TypeError, match="record_transcript"):
        dpsolve.noisy_sgd(problem, 0.5, 1e-6, steps=10, parties=parties, record_transcript=1)
