"""docs/scripts/private_transformer_defaults.py on a smoke configuration: each variant is the
pipeline it names, spends the total epsilon asked for (its private step's share, the fit the
rest), and the report's tables are built from the paired scores."""
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas")
ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "docs" / "scripts" / "private_transformer_defaults.py"
pytestmark = pytest.mark.skipif(
    not (ROOT / "benchmarks" / "peers" / "bench_practitioners.py").exists(),
    reason="needs the source tree's benchmarks/")


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("private_transformer_defaults", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _categorical(core, n=240):
    """A small table with one numeric and two categorical columns (one candidate never
    occurs), as the script's datasets carry them."""
    import pandas as pd
    rng = np.random.default_rng(0)
    colour = rng.choice(["red", "green", "blue"], n, p=[0.6, 0.38, 0.02])
    size = rng.choice(["S", "M"], n)
    age = rng.uniform(20, 60, n)
    y = ((colour == "red") ^ (age > 40)).astype(int)
    columns = ("age", "colour", "size")
    X = np.column_stack([age, colour, size]).astype(object)
    dataset = core.Dataset("toy", "binary", X, y, np.array([18.0, np.nan, np.nan]),
                           np.array([100.0, np.nan, np.nan]), "toy", "toy", columns=columns,
                           categories={"colour": ["red", "green", "blue", "mauve"],
                                       "size": ["S", "M", "L"]})
    frame = pd.DataFrame({"age": age, "colour": colour, "size": size})
    return dataset, frame


def test_defaults_are_read_off_the_transformers(script):
    from dpsolve.preprocessing import PrivateCategoryEncoder, PrivateStandardScaler
    assert script.DEFAULT_CLIP == PrivateStandardScaler([(0, 1)], 1.0).clip
    assert script.DEFAULT_MIN_FREQUENCY == PrivateCategoryEncoder([0], 1.0).min_frequency
    assert script.standard(script.DEFAULT_CLIP) in script.SCALER_VARIANTS
    assert script.frequent(script.DEFAULT_MIN_FREQUENCY) in script.ENCODER_VARIANTS


def test_scaler_variants_spend_the_total_and_are_tabulated(script):
    core = script.core
    dataset = core.wine()
    variants = [script.PUBLIC_RANGES, script.PUBLIC_OUTER, script.ranges(),
                script.standard(1.0), script.standard(script.DEFAULT_CLIP)]
    # measure checks each fitted pipeline's total epsilon (fit_raw raises otherwise)
    rows = script.measure([(dataset, core.raw_frame(dataset))], variants, (0.5,), 2)
    assert len(rows) == 2 * len(variants)
    preprocess, rest = script.variant(script.standard(1.0), dataset, 0.5, seed=0)
    scaler = preprocess.transformers[0][1]
    assert scaler.clip == 1.0 and math.isclose(scaler.epsilon + rest, 0.5, rel_tol=1e-12)
    assert math.isclose(scaler.epsilon, script.SHARE * 0.5, rel_tol=1e-12)
    table = script.means_table(rows, variants, script.PUBLIC_RANGES, script.standard(1.0))
    assert len(table) == 3 and table[2].startswith("| wine (class 0 vs rest) | AUC | 0.5 |")
    mean = np.mean([r["score"] for r in rows if r["variant"] == script.ranges()])
    assert f"| {mean:.3f} |" in table[2]
    tally = script.tally_table(rows, [(script.standard(1.0), script.ranges())])
    assert tally[2].startswith("| standard, clip 1 | private ranges | ")


def test_encoder_variants_keep_the_numeric_columns_public(script):
    dataset, frame = _categorical(script.core)
    name = script.frequent(0.05)
    preprocess, rest = script.variant(name, dataset, 1.0, seed=0)
    (_, scaler, _), (_, encoder, columns) = preprocess.transformers
    assert type(scaler).__name__ == "PublicRangeScaler" and columns == ["colour", "size"]
    assert encoder.min_frequency == 0.05 and math.isclose(encoder.epsilon + rest, 1.0)
    rows = script.measure([(dataset, frame)], [script.PUBLIC_CATEGORIES, name], (1.0,), 2)
    assert {r["variant"] for r in rows} == {script.PUBLIC_CATEGORIES, name}
    assert all(0.0 <= r["score"] <= 1.0 for r in rows)
