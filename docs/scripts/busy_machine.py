"""Two OpenMP threads against one, for docs/performance.md, "A busy machine".

Usage: ``python docs/scripts/busy_machine.py [co_runners]``: for ``clipped_gd`` (200 steps) and
``noisy_sgd`` (2·10⁵ steps), logistic, n = 2·10⁴, p = 20, prints the median wall time of seven
fits on one thread and on two (interleaved, in this process) and their ratio, with
``co_runners`` processes spinning (``python -c "while True: pass"``, default 0) for the whole
run. Also prints how the kernels' threads wait (``dpsolve._kernels.threads.wait_policy``): run
it with ``OMP_WAIT_POLICY=ACTIVE`` in the environment to see GCC's spinning default.
"""
import sys

sys.path.insert(0, ".")     # run from the repository root: its dpsolve and benchmarks
from benchmarks.bench_busy import print_ratios  # noqa: E402  (the asv suite's own measurement)
from dpsolve._kernels import threads  # noqa: E402


def main(co_runners):
    """Ratio of two threads to one for each solver, as the asv benchmark measures it."""
    print(f"wait policy: {threads.wait_policy()}; co-runners: {co_runners}")
    print_ratios(("clipped_gd", "noisy_sgd"), (co_runners,))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
