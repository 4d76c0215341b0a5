"""The practitioner page's raw-table variants (benchmarks/peers/bench_practitioners.py): the
public-range transformers map a raw table onto the hand-mapped features, the coarse outer ranges
contain the documented ones, and a private-ranges fit's total epsilon is the one asked for."""
import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pandas")
PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "peers" / "bench_practitioners.py"
pytestmark = pytest.mark.skipif(not PATH.exists(), reason="needs the source tree's benchmarks/")


@pytest.fixture(scope="module")
def core():
    spec = importlib.util.spec_from_file_location("bench_practitioners_raw", PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_public_range_transformers_give_the_hand_mapped_features(core):
    dataset = core.wine()
    mapped = core.raw_preprocess(dataset).fit_transform(core.raw_frame(dataset))
    # the same affine map, up to the rounding of its arithmetic
    np.testing.assert_allclose(mapped, dataset.features(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("low, high, outer", [(0.0, 16.0, (0.0, 100.0)), (1.0, 2.0, (0.0, 10.0)),
                                              (math.log(0.1), math.log(1e4), (-10.0, 10.0)),
                                              (0.0, 100.0, (0.0, 100.0))])
def test_outer_range_is_the_power_of_ten_around_the_documented_range(core, low, high, outer):
    assert core.outer_range(low, high) == outer
    assert outer[0] <= low and high <= outer[1]


def test_private_ranges_fit_spends_the_total_epsilon(core):
    dataset = core.wine()
    model = core.make_raw_model("private ranges", dataset, 0.5, seed=0)
    model.fit(core.raw_frame(dataset), dataset.labels())
    assert math.isclose(model[-1].epsilon_, 0.5, rel_tol=1e-12)
    assert [round(e, 12) for _, e in model.privacy_steps_] == [
        round(core.SCALER_SHARE * 0.5, 12), round((1 - core.SCALER_SHARE) * 0.5, 12)]
