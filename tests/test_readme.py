"""The README: one screen, the two quick-start commands first, every link to a file that exists.

Its example is run, and its output compared with the one it shows, in tests/test_docs.py (slow
tier); this file only reads text."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = 'pip install . && dpsolve demo\npip install ".[test]" && python -m pytest\n'


def test_readme_opens_with_the_two_commands():
    title, first_block = re.match(r"(.*?)```bash\n(.*?)```", README, re.S).groups()
    assert title.strip() == "# dpsolve"
    assert first_block == COMMANDS


def test_readme_fits_on_a_screen():
    assert len(README.splitlines()) <= 60


def test_readme_links_and_images_point_to_files_that_exist():
    targets = re.findall(r"\]\(([^)\s]+)\)", README)
    local = [t.split("#")[0] for t in targets if not re.match(r"[a-z]+://", t)]
    assert "docs/parameters.md" in local and "docs/benchmarks.md" in local
    assert "docs/figures/practitioners_auc_vs_epsilon.svg" in local
    assert [t for t in local if not (ROOT / t).is_file()] == []


def test_readme_anchors_exist_in_their_pages():
    # myst's anchors: the heading, lower case, punctuation dropped, spaces as hyphens
    for page, anchor in re.findall(r"\]\((docs/[\w/]+\.md)#([\w-]+)\)", README):
        headings = re.findall(r"^#+ (.+)$", (ROOT / page).read_text(encoding="utf-8"), re.M)
        slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
        assert anchor in slugs, (page, anchor)
