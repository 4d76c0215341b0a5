"""The overhead tables of docs/multiparty.md ("Parties on workers"): SGD2 (multiparty_gd,
noise="per_party"), secure aggregation (multiparty_gd and aggregated_output_perturbation),
joint_sgd and SGD1 (noisy_sgd with parties) with the parties in this process against the same parties on a two-worker Dask
LocalCluster.

    python docs/scripts/remote_parties_overhead.py

Best of three runs of 200 iterations each; the parties' rows are sent to the workers once,
before timing (that time is reported apart). The released theta is checked to be the same bits.
"""
import time
import warnings

import numpy as np

import dpsolve

STEPS = 200


def best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def split(n, p, m):
    """A synthetic logistic problem and m equal parties of its rows."""
    X, y = dpsolve.datasets.make_synthetic(n, p, rng=0)
    problem = dpsolve.Problem(X, y, radius=1.0, reg=1e-3)
    return problem, dpsolve.Parties.from_sizes(problem, [n // m] * m)


def per_step_table(client, name, who, run, kernel_with_parties):
    """A per-step table for a protocol with one round trip a step: ``run(problem, where)`` with
    ``where`` the in-process parties (or None) for the C kernel, the in-process parties with
    ``record_transcript=True`` for the Python protocol, the parties on workers."""
    print()
    print(f"| n | p | {who} | {name} in process, C kernel (ms / step) | in process, Python "
          "protocol (ms / step) | on 2 workers (ms / step) |")
    print("|---|---|---|---|---|---|")
    for n, p, m in ((10_000, 20, 2), (10_000, 20, 4)):
        problem, parties = split(n, p, m)
        remote = parties.on(client)
        kernel_parties = parties if kernel_with_parties else None

        def kernel():
            return run(problem, kernel_parties)

        def protocol():
            return run(problem, parties, record_transcript=True)

        def there():
            return run(problem, remote)

        assert np.array_equal(kernel().theta, there().theta)
        a, b, c = (best(f) / STEPS * 1e3 for f in (kernel, protocol, there))
        print(f"| {n:,} | {p} | {m} | {a:.3f} | {b:.2f} | {c:.2f} |")


def main():
    import distributed
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        print("| n | p | parties | in process (ms / iteration) | on 2 workers (ms / iteration) "
              "| extra per iteration (ms) | sending the rows (s) |")
        print("|---|---|---|---|---|---|---|")
        for n, p, m in ((10_000, 20, 2), (100_000, 20, 2), (100_000, 20, 4), (400_000, 50, 2)):
            problem, parties = split(n, p, m)
            start = time.perf_counter()
            remote = parties.on(client)
            sending = time.perf_counter() - start

            def here():
                return dpsolve.multiparty_gd(problem, parties, 1.0, 1e-6, steps=STEPS, rng=0)

            def there():
                return dpsolve.multiparty_gd(problem, remote, 1.0, 1e-6, steps=STEPS, rng=0)

            assert np.array_equal(here().theta, there().theta)
            a, b = best(here) / STEPS * 1e3, best(there) / STEPS * 1e3
            print(f"| {n:,} | {p} | {m} | {a:.2f} | {b:.2f} | {b - a:.2f} | {sending:.2f} |")
        print()
        print("| n | p | parties | secure aggregation in process (ms / iteration) | on 2 "
              "workers (ms / iteration) | model aggregation in process (s) | on 2 workers (s) "
              "| model aggregation: same bits |")
        print("|---|---|---|---|---|---|---|---|")
        for n, p, m in ((10_000, 20, 2), (100_000, 20, 2)):
            problem, parties = split(n, p, m)
            remote = parties.on(client)

            def secure(where):
                return dpsolve.multiparty_gd(problem, where, 1.0, 1e-6,
                                             noise="secure_aggregation", steps=STEPS, rng=0)

            def model(where):
                return dpsolve.aggregated_output_perturbation(problem, where, 1.0, 1e-6, rng=0)

            assert np.array_equal(secure(parties).theta, secure(remote).theta)
            # the local minimisers are NumPy solves, run with BLAS at one thread everywhere
            # (docs/performance.md, "Same bits for any thread count")
            same = np.array_equal(model(parties).theta, model(remote).theta)
            a, b = (best(lambda w=w: secure(w)) / STEPS * 1e3 for w in (parties, remote))
            c, d = (best(lambda w=w: model(w)) for w in (parties, remote))
            print(f"| {n:,} | {p} | {m} | {a:.2f} | {b:.2f} | {c:.3f} | {d:.3f} "
                  f"| {'yes' if same else 'no'} |")

        def joint(problem, where, **extra):
            return dpsolve.joint_sgd(problem, where, 1.0, 1e-6, steps=STEPS, rng=0, **extra)

        def sgd1(problem, where, **extra):
            with warnings.catch_warnings():     # the observers' epsilons: not timed here
                warnings.simplefilter("ignore", dpsolve.privacy.PrivacyWarning)
                return dpsolve.noisy_sgd(problem, 0.5, 1e-10, parties=where, steps=STEPS,
                                         calibration="rdp", rng=0, **extra)

        # joint SGD's kernel runs with in-process owners, SGD1's without parties
        per_step_table(client, "joint SGD", "owners", joint, kernel_with_parties=True)
        per_step_table(client, "SGD1", "parties", sgd1, kernel_with_parties=False)
    finally:
        client.close()
        cluster.close()


if __name__ == "__main__":
    main()
