"""docs/scripts/feature_range_default.py on a smoke configuration: each variant is the scaler and
feature range it names at the total epsilon asked for, the comparisons read log-loss the right
way round, and the rule is the one the page states; and the two range scalers share the
default it chose."""
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas")
ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "docs" / "scripts" / "feature_range_default.py"
pytestmark = pytest.mark.skipif(
    not (ROOT / "benchmarks" / "peers" / "bench_practitioners.py").exists(),
    reason="needs the source tree's benchmarks/")


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("feature_range_default", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_both_range_scalers_default_to_the_centred_range():
    from dpsolve.preprocessing import PrivateRangeScaler, PublicRangeScaler
    assert PublicRangeScaler((0, 1)).feature_range == (-1, 1)
    assert PrivateRangeScaler((0, 1), epsilon=1.0).feature_range == (-1, 1)


def test_variants_are_the_scalers_they_name_at_the_total_epsilon(script):
    dataset = script.core.wine()
    for feature_range in script.FEATURE_RANGES:
        preprocess, rest = script.variant(script.PUBLIC[feature_range], dataset, 0.5, seed=0)
        scaler = preprocess.transformers[0][1]
        assert type(scaler).__name__ == "PublicRangeScaler" and rest == 0.5
        assert scaler.feature_range == feature_range
        preprocess, rest = script.variant(script.PRIVATE[feature_range], dataset, 0.5, seed=0)
        scaler = preprocess.transformers[0][1]
        assert type(scaler).__name__ == "PrivateRangeScaler"
        assert scaler.feature_range == feature_range
        assert math.isclose(scaler.epsilon + rest, 0.5, rel_tol=1e-12)
    # measure checks each fitted pipeline's total epsilon (fit_raw raises otherwise)
    rows = script.measure([(dataset, script.core.raw_frame(dataset))], (0.5,), 2,
                          variants=tuple(script.PUBLIC.values()))
    assert len(rows) == 4 and all(0.0 <= r["auc"] <= 1.0 for r in rows)
    measured = script.cells(rows, *script.RULED[0])
    assert [c["metric"] for c in measured] == ["AUC", "balanced accuracy", "log-loss"]
    got = [r["auc"] for r in sorted(rows, key=lambda r: r["seed"])
           if r["variant"] == script.PUBLIC[-1, 1]]
    assert measured[0]["first"] == pytest.approx(np.mean(got), rel=1e-12)


def _rows(differences, key="log_loss"):
    """Two variants' scores on one binary table, ``differences`` apart seed by seed."""
    rows = []
    for seed, d in enumerate(differences):
        base = {"dataset": "t", "kind": "binary", "epsilon": 1.0, "seed": seed,
                "auc": 0.5, "balanced_accuracy": 0.5, "log_loss": 0.5}
        rows.append({**base, "variant": "b"})
        rows.append({**base, "variant": "a", key: 0.5 + d})
    return rows


def test_a_lower_log_loss_is_better_and_the_rule_counts_cells(script):
    lower = script.cells(_rows([-0.1, -0.11, -0.09, -0.1]), "a", "b")
    assert [c["word"] for c in lower] == ["tie", "tie", "better"]
    higher = script.cells(_rows([0.1, 0.11, 0.09, 0.1]), "a", "b")
    assert higher[2]["word"] == "worse"
    cells = [{"word": "better"}] * 6 + [{"word": "tie"}] * 3 + [{"word": "worse"}]
    assert script.verdict(cells) == (True, 6, 1)          # 6 of 10 better, 1 of 10 worse
    assert script.verdict(cells[:4] + cells[6:]) == (False, 4, 1)   # 4 of 8: not more than half
    assert script.verdict(cells + [{"word": "worse"}])[0] is False  # 2 of 11 worse
