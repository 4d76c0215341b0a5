"""The ``dpsolve`` command line."""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="dpsolve",
        description="Differentially private ERM solvers, measured against exact minimisers.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = commands.add_parser(
        "demo", help="run private SGD on built-in data and compare with Theorem 2",
        description="Run noisy_sgd (seed 000, SGD1) on a synthetic problem and, if scikit-learn "
                    "is installed, the breast-cancer data; print excess risk against the "
                    "theorem's bound and write a plot.")
    demo.add_argument("--seeds", type=int, default=5, help="replicates per setting (default 5)")
    demo.add_argument("--seed", type=int, default=0, help="root random seed (default 0)")
    demo.add_argument("--out", default="dpsolve-demo.png",
                      help="where to write the PNG plot (default dpsolve-demo.png; '' for none)")
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "demo":
        if args.seeds < 2:
            parser.error("--seeds must be at least 2 (the table reports a standard deviation)")
        from .demo import run_demo

        run_demo(seeds=args.seeds, seed=args.seed, out=args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
