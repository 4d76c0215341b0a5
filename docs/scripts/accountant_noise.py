"""How far the accountants' searches move between NumPy's SIMD code paths, against the grid their
results are rounded up onto (docs/conventions.md, "Same bits on every machine").

Prints, as JSON, the multiplier each search found before rounding, for DP-SGD's PLD calibration and
``calibrate``'s RDP and PLD searches over a range of settings. Run it twice, once with
``NPY_DISABLE_CPU_FEATURES="AVX512_ICL X86_V4 X86_V3"``, and compare with ``--compare a b``.
"""
import json
import math
import sys

import absl.logging

from dpsolve.privacy import accounting, calibration, mechanisms

SETTINGS = [(eps, delta, steps, rate) for eps in (0.3, 1.0, 3.0, 8.0)
            for delta in (1e-5, 1e-8) for steps, rate in ((40, 0.05), (1000, 0.01), (200, 0.2))]


def found():
    seen = []
    original = mechanisms.multiplier_onto_grid

    def record(m, steps_up=0):
        if steps_up == 0:
            seen.append(m)
        return original(m, steps_up)

    mechanisms.multiplier_onto_grid = calibration.multiplier_onto_grid = record
    out = {}
    for eps, delta, steps, rate in SETTINGS:
        key = f"{eps} {delta} {steps} {rate}"
        seen.clear()
        calibration.poisson_pld_sigma(eps, delta, sensitivity=1.0, steps=steps, rate=rate)
        out["dp_sgd pld " + key] = seen[0]
        for accountant in ("rdp", "pld"):
            seen.clear()
            accounting.calibrate(eps, delta, sensitivity=1.0, steps=steps,
                                 sampling=accounting.PoissonSampling(rate), accountant=accountant,
                                 neighbours="add_remove")
            out[f"calibrate {accountant} " + key] = seen[0]
    return out


if __name__ == "__main__":
    absl.logging.set_verbosity(absl.logging.ERROR)     # dp_accounting's RDP orders it drops
    if sys.argv[1:2] == ["--compare"]:
        a, b = (json.load(open(path)) for path in sys.argv[2:4])
        grid = 2.0 ** -mechanisms.MULTIPLIER_GRID_BITS
        rel = {k: abs(a[k] - b[k]) / a[k] for k in a}
        changed = [k for k in a if mechanisms.multiplier_onto_grid(a[k])
                   != mechanisms.multiplier_onto_grid(b[k])]
        worst = max(rel.values())
        print(f"{len(a)} searches; {sum(v > 0 for v in rel.values())} found another multiplier; "
              f"largest relative change {worst:.2e}; grid step >= {grid:.2e} relative "
              f"(straddle probability per search <= about {worst / grid:.1e}); "
              f"grid points changed: {changed}")
    else:
        json.dump(found(), sys.stdout)
