"""lab/reports/campaigns.py: the latest campaign of a kind is the newest name, tagged after untagged."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "reports"))
import campaigns  # noqa: E402


def test_a_tagged_campaign_of_the_same_day_is_later(tmp_path):
    (tmp_path / "summa").mkdir()
    for name in ("2026-11-27-h200x4-z", "2026-11-28-h200x4", "2026-11-28-h200x4-c"):
        (tmp_path / "summa" / f"{name}.jsonl").write_text("")
    found = [p.stem for p in campaigns.campaigns("summa", tmp_path)]
    assert found == ["2026-11-27-h200x4-z", "2026-11-28-h200x4", "2026-11-28-h200x4-c"]
    assert campaigns.latest("summa", tmp_path).stem == "2026-11-28-h200x4-c"
