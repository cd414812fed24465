"""JSON, YAML and TOML: key-path outline and anchors, values verbatim, array filters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sparseread_mcp import AnchorError, Intent, IntentError, ReadEngine, ReadRequest, Settings, UnsupportedArtifact


@pytest.fixture
def engine(tmp_path: Path) -> ReadEngine:
    incidents = [
        {
            "id": i,
            "status": "error" if i % 9 == 0 else "ok",
            "latency_ms": i * 3,
            "service": {"name": f"svc-{i % 4}", "region": "eu-west"},
            "note": f"incident note {i}",
        }
        for i in range(1, 121)
    ]
    incidents[60]["note"] = "disk full on the primary database (MARKER-JSON-61)"
    document = {"version": 3, "owner": {"team": "platform", "pager": "+41 00"}, "incidents": incidents}
    (tmp_path / "status.json").write_text(json.dumps(document, indent=2))
    (tmp_path / "deploy.yaml").write_text(
        "service:\n  name: api\n  replicas: 3\n  ports:\n    - 80\n    - 443\n"
        + "".join(f"job{i}:\n  image: registry/app:{i}\n  schedule: '*/5 * * * *'\n" for i in range(80))
        + "secrets:\n  vault_path: kv/prod/api  # MARKER-YAML\n"
    )
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "1.0"\ndependencies = [\n  "httpx>=0.27",\n  "anyio",\n]\n\n'
        + "".join(f'[tool.task{i}]\ncmd = "run {i}"\n' for i in range(80))
        + '[tool.marker]\nvalue = "MARKER-TOML"\n'
    )
    return ReadEngine(Settings(roots=(tmp_path,), native_fit_tokens=0))


def test_json_outline_has_paths_types_and_array_lengths(engine: ReadEngine) -> None:
    preview = engine.preview("s", "status.json", budget_tokens=8000)
    titles = {o.anchor: o.title for o in preview.outline}
    assert titles["$.incidents"] == "$.incidents: array[120] of object"
    assert titles["$.owner"] == "$.owner: object{2}"
    assert "$.incidents[0].service" in titles and "$.incidents[5]" not in titles


def test_key_path_targets_are_verbatim_values(engine: ReadEngine, tmp_path: Path) -> None:
    text = (tmp_path / "status.json").read_text()
    pack = engine.read("s", ReadRequest(target="status.json#$.incidents[60]"))
    item = pack.items[0]
    assert item.anchor == "$.incidents[60]" and json.loads(item.text)["id"] == 61
    assert item.text in text and text[text.index(item.text) - 1] != "{"
    assert pack.items[0].pointer.endswith("#$.incidents[60]")
    with pytest.raises(AnchorError, match="top level"):
        engine.read("s", ReadRequest(target="status.json#$.nope"))


def test_goal_finds_the_element_and_names_its_path(engine: ReadEngine) -> None:
    pack = engine.read("s", ReadRequest(target="status.json", intent=Intent(goal="disk full database incident")))
    assert pack.items[0].anchor.startswith("$.incidents[60]")
    assert "MARKER-JSON-61" in pack.items[0].text


def test_array_filters_scan_every_element_and_return_matches(engine: ReadEngine) -> None:
    pack = engine.read("s", ReadRequest(target="status.json", intent=Intent(query="$.incidents[?status=error]")))
    result = pack.result
    assert result is not None and result.value == 13 and result.rows_scanned == 120
    assert all(json.loads(str(row[1]))["status"] == "error" for row in result.rows or [])
    slow = engine.read("s", ReadRequest(target="status.json", intent=Intent(query="$.incidents[?latency_ms>350]")))
    assert slow.result is not None and slow.result.value == 4  # ids 117-120
    nested = engine.read(
        "s", ReadRequest(target="status.json", intent=Intent(query="$.incidents[?service.name=svc-1]"))
    )
    assert nested.result is not None and nested.result.value == 30
    with pytest.raises(IntentError, match="not an array"):
        engine.read("s", ReadRequest(target="status.json", intent=Intent(query="$.owner[*]")))


def test_yaml_and_toml_key_paths(engine: ReadEngine) -> None:
    yaml_pack = engine.read("s", ReadRequest(target="deploy.yaml#$.service.ports"))
    assert yaml_pack.items[0].text == "- 80\n    - 443"
    found = engine.read("s", ReadRequest(target="deploy.yaml", intent=Intent(needles=["MARKER-YAML"])))
    assert found.items[0].anchor.startswith("$.secrets")
    toml = engine.read("t", ReadRequest(target="pyproject.toml#$.project.dependencies"))
    assert toml.items[0].text.startswith("dependencies = [") and toml.items[0].text.endswith("]")
    marker = engine.read("t", ReadRequest(target="pyproject.toml", intent=Intent(needles=["MARKER-TOML"])))
    assert marker.items[0].anchor in ("$.tool.marker", "$.tool.marker.value")


def test_malformed_documents_get_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"a": [1, 2,, 3]}')
    engine = ReadEngine(Settings(roots=(tmp_path,)))
    with pytest.raises(UnsupportedArtifact, match="not valid JSON"):
        engine.preview("s", "bad.json")
