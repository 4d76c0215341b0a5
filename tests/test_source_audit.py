"""The audit of the source documents' calibrations (docs/privacy_audit.md, generated) confirms
what docs/source_mistakes.md says about them."""
import math
from pathlib import Path

import pytest

from dpsolve.privacy import epsilon_of, gaussian_event, source_audit
from dpsolve.privacy.accounting import UniformSampling


@pytest.mark.slow
def test_noisy_sgd_paper_noise_is_private_and_several_fold_too_large():
    (row,) = source_audit.noisy_sgd_rows(ns=(1000,), epsilons=(0.5,))
    assert row.certified_epsilon == pytest.approx(0.088, abs=0.002)    # docs/noisy_sgd.md: ~0.08
    assert row.ratio > 5
    tight = gaussian_event(row.tight_noise, 2000.0, steps=10 ** 6, sampling=UniformSampling(1000))
    assert epsilon_of(tight, row.delta, "rdp") <= row.epsilon


def test_multiparty_gd_paper_noise_is_very_conservative():
    rows = source_audit.multiparty_gd_rows(steps_grid=(100,), epsilons=(1.0,))
    assert rows[0].certified_epsilon == pytest.approx(0.17, abs=0.01)   # privacy_audit.md: 0.17
    assert rows[0].ratio > 4


@pytest.mark.slow
def test_old_row_names_are_deprecated_aliases():
    with pytest.warns(DeprecationWarning, match="multiparty_gd_rows"):
        old = source_audit.sgd2_rows(steps_grid=(100,), epsilons=(1.0,))
    assert old == source_audit.multiparty_gd_rows(steps_grid=(100,), epsilons=(1.0,))
    with pytest.warns(DeprecationWarning, match="noisy_sgd_rows"):
        old = source_audit.sgd1_rows(ns=(10,), epsilons=(0.5,))
    assert old == source_audit.noisy_sgd_rows(ns=(10,), epsilons=(0.5,))


def test_dpgd_basic_composition_overshoots_more_with_more_steps():
    few, many = source_audit.dpgd_rows(ns=(1000,), steps_grid=(10, 100))
    assert few.certified_epsilon < few.epsilon and many.certified_epsilon < many.epsilon
    assert many.ratio > few.ratio > 1


def test_jayaraman_gradient_noise_through_zcdp_slightly_exceeds_the_claim():
    (row,) = source_audit.jayaraman_gradient_rows(steps_grid=(100,), epsilons=(0.5,))
    L = math.log(1 / row.delta)
    assert f"eps = {0.5 + 0.25 / (4 * L):.4g}" in row.note            # eps + eps^2 / (4 ln 1/delta)
    assert row.certified_epsilon < row.epsilon                        # exact composition is fine


def test_jayaraman_laplace_is_only_eps_sqrt_p():
    rows = source_audit.jayaraman_laplace_rows(dims=(10, 50), epsilon=1.0)
    assert [r.certified_epsilon for r in rows] == pytest.approx([math.sqrt(10), math.sqrt(50)])
    assert [r.ratio for r in rows] == pytest.approx([1 / math.sqrt(10), 1 / math.sqrt(50)])


def test_scs13_is_exactly_as_stated():
    for row in source_audit.scs13_rows():
        assert row.certified_epsilon == pytest.approx(row.epsilon) and row.ratio == pytest.approx(1)


def test_nsgd_with_unit_constants_is_not_private():
    rows = source_audit.nsgd_rows(owners_grid=(16,), epsilons=(1.0,))
    assert rows[0].certified_epsilon > 100 * rows[0].epsilon
    seeds_view = float(rows[0].note.rsplit("= ", 1)[1])
    assert seeds_view > rows[0].epsilon     # not even under the seed's own amplified reading


def test_markdown_marks_broken_claims():
    rows = source_audit.jayaraman_laplace_rows(dims=(10,)) + source_audit.scs13_rows(alphas=(1.0,))
    table = source_audit.to_markdown(rows).splitlines()
    assert "**above claim**" in table[2] and "**above claim**" not in table[3]


@pytest.mark.slow
def test_docs_page_is_current(tmp_path):
    """docs/privacy_audit.md is what the code generates (regenerate it when this fails)."""
    page = Path(__file__).resolve().parents[1] / "docs" / "privacy_audit.md"
    out = tmp_path / "audit.md"
    source_audit.main(["--out", str(out)])
    assert out.read_text() == page.read_text()
