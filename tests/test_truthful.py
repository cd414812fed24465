"""Issue #14: dereference always answers, deletion is `gone`, intents fill only what applies, and
every reason and coverage status is true."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docs import long_markdown

from sparseread_mcp import Intent, ReadEngine, ReadRequest, Settings, Slot
from sparseread_mcp.protocol.coverage import support


def _engine(root: Path) -> ReadEngine:
    return ReadEngine(Settings(roots=(root,)))


def test_a_pointer_dereferences_to_its_exact_text_in_the_session_that_received_it(tmp_path: Path) -> None:
    (tmp_path / "manual.md").write_text(long_markdown())
    engine = _engine(tmp_path)
    found = engine.read("s", ReadRequest(target="manual.md", intent=Intent(needles=["SEC30-P0-MARK"])))
    item = found.items[0]
    again = engine.read("s", ReadRequest(target=item.pointer))
    assert [i.text for i in again.items] == [item.text]
    assert again.exposure.payload_chars > 0  # counted in E, like any delivery
    assert again.exposure.episode_chars == found.exposure.episode_chars + again.exposure.payload_chars
    anchored = engine.read("s", ReadRequest(target=f"manual.md#{item.anchor}"))  # an explicit anchor too
    assert [i.text for i in anchored.items] == [item.text]
    # Search results are still never resent.
    repeat = engine.read("s", ReadRequest(target="manual.md", intent=Intent(needles=["SEC30-P0-MARK"])))
    assert item.text not in [i.text for i in repeat.items]


def test_deleted_anchored_text_is_gone_and_an_edit_in_place_is_changed(tmp_path: Path) -> None:
    doc = tmp_path / "manual.md"
    text = long_markdown()
    doc.write_text(text)
    engine = _engine(tmp_path)
    item = engine.read("s", ReadRequest(target="manual.md", intent=Intent(needles=["SEC33-P2-MARK"]))).items[0]
    doc.write_text(text.replace(item.text, ""))
    gone = engine.read("v", ReadRequest(target=item.pointer, action="verify")).verification
    assert gone is not None and gone.status == "gone" and "nowhere" in gone.reason
    doc.write_text(text.replace("SEC33-P2-MARK", "SEC33-P2-EDITED"))
    changed = engine.read("w", ReadRequest(target=item.pointer, action="verify")).verification
    assert changed is not None and changed.status == "changed" and "SEC33-P2-EDITED" in (changed.diff or "")


def test_a_json_read_after_a_sql_read_of_another_file_takes_nothing_from_it(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    (tmp_path / "cities.csv").write_text("city,population\nOslo,700000\nBergen,285000\n")
    (tmp_path / "status.json").write_text(json.dumps({"service": {"name": "billing", "owner": "ops-team"}}))
    engine = _engine(tmp_path)
    table = engine.read("s", ReadRequest(target="cities.csv", intent=Intent(query="SELECT sum(population) FROM data")))
    assert table.result is not None
    pack = engine.read("s", ReadRequest(target="status.json", intent=Intent(goal="who owns the billing service")))
    assert pack.result is None
    assert "ops-team" in pack.model_dump_json()
    assert not pack.message or "continuing" not in pack.message


def test_a_table_focus_that_matches_nothing_says_so_and_points_to_intent_query(tmp_path: Path) -> None:
    pytest.importorskip("duckdb")
    rows = "\n".join(f"city{i},{1000 + i}" for i in range(400))
    (tmp_path / "cities.csv").write_text("city,population\n" + rows + "\n")
    engine = _engine(tmp_path)
    pack = engine.read("s", ReadRequest(target="cities.csv", intent=Intent(goal="zeppelin quarterly dividend")))
    assert pack.items == []
    assert "already" not in pack.gate.reason and "no passage matches" in pack.gate.reason
    assert pack.message and "intent.query" in pack.message
    assert any("schema" in step for step in pack.next)


def test_coverage_is_found_only_when_the_passage_carries_the_asked_figure() -> None:
    slot = Slot(id="capex", question="how much was capital expenditure in 2019")
    assert support(slot, "Capital expenditure in 2019 was 4,120 million.") >= 0.6
    assert support(slot, "Capital expenditure rose in that year, the report says.") < 0.6
    who = Slot(id="auditor", question="who audited the company financial statements")
    assert support(who, "The financial statements of the company were audited by Ernst & Young.") >= 0.6
    assert support(who, "the company financial statements were audited by an independent firm.") < 0.6


FILING = """# Settings

The default budget_tokens is 8_000 and the hard cap is 22_500.

# Term

The agreement runs for five (5) years unless terminated earlier.

# Results

(in millions)

Total revenue | 404,381 | 380,000

Operating income for fiscal 2022 was $6,098 million, up from $5,802 million.

# Leases

Operating lease income for fiscal 2022 included payments of $412 million under the operating leases.

# Dividends

The company did not pay a dividend in 2021.
"""


@pytest.fixture
def filing(tmp_path: Path) -> ReadEngine:
    (tmp_path / "filing.md").write_text(FILING)
    return _engine(tmp_path)


def _verdict(engine: ReadEngine, claim: str) -> str:
    pack = engine.read(claim, ReadRequest(target="filing.md", action="verify", intent=Intent(goal=claim)))
    assert pack.verification is not None
    return pack.verification.status


@pytest.mark.parametrize(
    "claim",
    [
        "the default budget_tokens is 8000",
        "the default budget tokens is 8,000",
        "the agreement runs for 5 years",
        "the agreement runs for five years",
        "total revenue was $404.381 billion",
        "operating income in fiscal 2022 was $6,098 million",
        "operating income in fiscal 2022 was $6.1 billion",
        "the company did not pay a dividend in 2021",
    ],
)
def test_numbers_in_other_formats_and_scales_verify(filing: ReadEngine, claim: str) -> None:
    assert _verdict(filing, claim) == "supported"


def test_contradicted_only_by_the_same_statement_with_another_value(filing: ReadEngine) -> None:
    assert _verdict(filing, "operating income in fiscal 2022 was $6,500 million") == "contradicted"
    assert _verdict(filing, "the default budget_tokens is 9000") == "contradicted"
    # A lexically similar passage with other numbers decides nothing: the model judges.
    assert _verdict(filing, "operating lease expense in fiscal 2022 was $980 million") == "unverified"


def test_polarity_and_absent_claims_are_never_supported(filing: ReadEngine) -> None:
    assert _verdict(filing, "the company paid a dividend in 2021") == "unverified"
    assert _verdict(filing, "the zeppelin fleet grew by 40 airships") == "not_found"


def test_an_unverified_claim_comes_with_the_passages_that_decide_it(filing: ReadEngine) -> None:
    claim = "operating income in fiscal 2022 rose sharply to a record"
    pack = filing.read("u", ReadRequest(target="filing.md", action="verify", intent=Intent(goal=claim)))
    assert pack.verification is not None and pack.verification.status == "unverified"
    assert "judge" in pack.verification.reason
    assert any("6,098" in item.text for item in pack.items)


def test_a_true_claim_about_a_table_row_is_never_contradicted_by_the_other_column(tmp_path: Path) -> None:
    (tmp_path / "note.md").write_text(
        '# Table\n"December 31,",,\n,2019,2018\nPrepaid expenses,"$2,303","$1,780"\n'
        'Total prepaid expenses and other,"$2,496","$1,947"\n\n# Paragraphs\n\nPrepaid expenses consist of the '
        "following (in thousands).\n"
    )
    engine = _engine(tmp_path)
    claim = "Total prepaid expenses and other in 2019 was $2,496"
    pack = engine.read("s", ReadRequest(target="note.md", action="verify", intent=Intent(goal=claim)))
    assert pack.verification is not None and pack.verification.status in ("supported", "unverified")
    assert any("2,496" in item.text for item in pack.items)
