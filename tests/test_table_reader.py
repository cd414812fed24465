"""Tables: rows as evidence with row anchors, schema previews, and exact read-only queries."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from conftest import source_at

from sparseread_mcp import ConfigError, Intent, IntentError, ReadEngine, ReadRequest, Settings
from sparseread_mcp.readers import table_query


def rows_csv(n: int = 200) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["city", "country", "population", "note"])
    for i in range(1, n + 1):
        note = "capital, with a\nmulti-line note" if i == 42 else f"ordinary town {i}"
        writer.writerow([f"City{i}", ["France", "Peru", "Japan"][i % 3], i * 1000, note])
    return buffer.getvalue()


@pytest.fixture
def engine(tmp_path: Path) -> ReadEngine:
    (tmp_path / "cities.csv").write_text(rows_csv())
    tsv = "city\tcountry\tpopulation\n" + "".join(f"City{i}\tPeru\t{i * 1000}\n" for i in range(1, 201))
    (tmp_path / "cities.tsv").write_text(tsv)
    (tmp_path / "events.jsonl").write_text(
        "\n".join(
            json.dumps({"id": i, "kind": "error" if i % 7 == 0 else "info", "msg": f"event {i}"}) for i in range(1, 101)
        )
        + "\n"
    )
    return ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0, location="bm25"))


def test_preview_gives_schema_types_and_column_signals(engine: ReadEngine) -> None:
    preview = engine.preview("s", "cities.csv")
    assert preview.artifact.type == "csv"
    titles = [o.title for o in preview.outline]
    assert titles[0].startswith("city VARCHAR") and "distinct" in titles[0]
    assert any(t.startswith("population BIGINT") and "1000..200000" in t for t in titles)
    assert all(s.anchor.startswith("row=") for s in preview.samples)


def test_focus_returns_matching_rows_with_row_anchors(engine: ReadEngine, tmp_path: Path) -> None:
    source = (tmp_path / "cities.csv").read_text()
    pack = engine.read("s", ReadRequest(target="cities.csv", intent=Intent(goal="City77 population")))
    top = pack.items[0]
    assert top.anchor == "row=77" and top.text.startswith("City77,")
    assert top.text == "City77,Japan,77000,ordinary town 77"
    assert source_at(source, f"L{top.lines[0]}") == top.text  # row 42 spans two lines, so row 77 is line 79
    assert top.lines == (79, 79)
    multi = engine.read("t", ReadRequest(target="cities.csv#row=42"))
    assert multi.items[0].text.endswith('multi-line note"') and "\n" in multi.items[0].text
    assert source_at(source, f"L{multi.items[0].lines[0]}-L{multi.items[0].lines[1]}") == multi.items[0].text


def test_exact_query_runs_over_every_row_and_exposes_only_the_result(engine: ReadEngine) -> None:
    pack = engine.read(
        "s",
        ReadRequest(
            target="cities.csv",
            intent=Intent(
                query="SELECT country, count(*) AS n, sum(population) AS total "
                "FROM data GROUP BY country ORDER BY country"
            ),
        ),
    )
    result = pack.result
    assert result is not None and result.columns == ["country", "n", "total"]
    assert (
        result.rows
        == [
            ["France", 66, sum(i * 1000 for i in range(1, 201) if i % 3 == 1)],
            ["Japan", 67, sum(i * 1000 for i in range(1, 201) if i % 3 == 2)],
            ["Peru", 67, sum(i * 1000 for i in range(1, 201) if i % 3 == 0)],
        ]
        or result.rows
    )
    assert result.rows_scanned == 200 and result.capped is False
    assert pack.items == [] and pack.exposure.episode_chars == 0


@pytest.mark.parametrize(
    "query",
    [
        "ATTACH 'other.db' AS o",
        "COPY data TO 'out.csv'",
        "INSTALL httpfs",
        "LOAD httpfs",
        "PRAGMA database_list",
        "SET threads = 1",
        "SELECT 1; SELECT 2",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('cities.tsv')",
        "DROP TABLE data",
    ],
)
def test_queries_are_read_only_and_touch_no_other_file(engine: ReadEngine, query: str) -> None:
    with pytest.raises(IntentError):
        engine.read("s", ReadRequest(target="cities.csv", intent=Intent(query=query)))
    again = engine.read("s", ReadRequest(target="cities.csv", intent=Intent(query="SELECT count(*) FROM data")))
    assert again.result is not None and again.result.value == 200


def test_results_are_capped_and_say_so(engine: ReadEngine) -> None:
    pack = engine.read(
        "s", ReadRequest(target="cities.csv", intent=Intent(query="SELECT * FROM range(5000)"), budget_tokens=22_000)
    )
    assert pack.result is not None and pack.result.capped is True
    assert pack.result.row_count is not None and pack.result.row_count <= table_query.MAX_ROWS
    assert pack.tokens <= 22_000


def test_slow_queries_are_interrupted(engine: ReadEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table_query, "TIME_LIMIT_SECONDS", 0.3)
    with pytest.raises(IntentError, match="stopped"):
        engine.read(
            "s", ReadRequest(target="cities.csv", intent=Intent(query="SELECT count(*) FROM range(100000000000) a"))
        )


def test_tsv_and_jsonl_are_tables_too(engine: ReadEngine) -> None:
    tsv = engine.read("s", ReadRequest(target="cities.tsv", intent=Intent(query="SELECT max(population) FROM data")))
    assert tsv.result is not None and tsv.result.value == 200_000
    pack = engine.read(
        "t", ReadRequest(target="events.jsonl", intent=Intent(query="SELECT count(*) FROM data WHERE kind = 'error'"))
    )
    assert pack.result is not None and pack.result.value == 14
    row = engine.read("u", ReadRequest(target="events.jsonl#row=7"))
    assert json.loads(row.items[0].text)["id"] == 7


def test_parquet_reads_through_a_csv_rendering(tmp_path: Path) -> None:
    import duckdb

    target = tmp_path / "sales.parquet"
    duckdb.sql(
        f"COPY (SELECT i AS id, 'sku' || i AS sku, i * 2.5 AS price FROM range(1, 301) t(i)) "
        f"TO '{target}' (FORMAT parquet)"
    )
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    pack = engine.read("s", ReadRequest(target="sales.parquet", intent=Intent(needles=["sku123"])))
    assert pack.items[0].anchor == "row=123" and pack.items[0].text == "123,sku123,307.5"
    total = engine.read("s", ReadRequest(target="sales.parquet", intent=Intent(query="SELECT sum(price) FROM data")))
    assert total.result is not None and total.result.value == pytest.approx(2.5 * 300 * 301 / 2)


def test_workbooks_anchor_rows_by_sheet(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    first = book.active
    first.title = "Budget"
    first.append(["item", "amount"])
    for i in range(1, 120):
        first.append([f"line {i}", i * 10])
    second = book.create_sheet("Staff")
    second.append(["name", "team"])
    second.append(["Ada", "R&D"])
    second.append(["Grace", "OPS-MARK"])
    book.save(tmp_path / "plan.xlsx")
    engine = ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))
    pack = engine.read("s", ReadRequest(target="plan.xlsx", intent=Intent(needles=["OPS-MARK"])))
    assert pack.items[0].anchor == "Staff!R3" and pack.items[0].text == "Grace,OPS-MARK"
    row = engine.read("t", ReadRequest(target="plan.xlsx#Budget!R11"))
    assert row.items[0].text == "line 10,100"
    total = engine.read("t", ReadRequest(target="plan.xlsx", intent=Intent(query="SELECT sum(amount) FROM data")))
    assert total.result is not None and total.result.value == sum(i * 10 for i in range(1, 120))
    staff = engine.read("t", ReadRequest(target="plan.xlsx", intent=Intent(query="SELECT count(*) FROM Staff")))
    assert staff.result is not None and staff.result.value == 2


def test_fetaqa_tables_find_the_highlighted_rows(fetaqa: Path) -> None:
    questions = [json.loads(line) for line in (fetaqa / "questions.jsonl").read_text().splitlines()][:40]
    engine = ReadEngine(Settings(roots=(fetaqa / "docs",), native_fit_tokens=0, location="bm25"))
    hits = 0
    for q in questions:
        name = Path(q["doc_file"]).name
        source = (fetaqa / "docs" / name).read_text()
        pack = engine.read(q["qid"], ReadRequest(target=name, intent=Intent(goal=q["question"])))
        for item in pack.items:
            assert item.anchor.startswith("row=")
            assert source.split("\n")[int(item.anchor[4:])] == item.text
        hits += any(int(i.anchor[4:]) in q["gold_rows"] for i in pack.items)
    assert hits >= 0.6 * len(questions), f"only {hits}/{len(questions)} questions got a gold row"


def test_projection_writes_a_tsv_outside_the_roots(tmp_path: Path) -> None:
    root, cache = tmp_path / "root", tmp_path / "cache"
    root.mkdir()
    (root / "cities.csv").write_text(rows_csv())
    engine = ReadEngine(Settings(roots=(root,), cache_dir=cache))
    pack = engine.read("s", ReadRequest(target="cities.csv", view="projection"))
    assert pack.result is not None and pack.result.row_count == 200
    written = Path(str(pack.result.value))
    assert written.is_relative_to(cache) and not written.is_relative_to(root)
    lines = written.read_text().split("\n")
    assert lines[0] == "city\tcountry\tpopulation\tnote" and lines[1] == "City1\tPeru\t1000\tordinary town 1"
    assert len([ln for ln in csv.reader(io.StringIO(written.read_text()), delimiter="\t")]) == 201
    inside = ReadEngine(Settings(roots=(tmp_path,), cache_dir=cache))
    with pytest.raises(ConfigError, match="inside a root"):
        inside.read("s", ReadRequest(target="root/cities.csv", view="projection"))
