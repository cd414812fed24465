"""Table projections share one disk quota: the least recently written are removed to make room, and one
that alone would pass the quota is refused with its size and the limit, leaving nothing behind."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from flow import answer_record
from mcp import Client

from sparseread_mcp import Settings
from sparseread_mcp.serve.server import create_server

pytest.importorskip("duckdb")

QUOTA_MB = 1


def table(path: Path, rows: int) -> None:
    """A CSV whose projection is about 100 bytes a row."""
    path.write_text("id,note\n" + "".join(f"{i},{'n' * 90}\n" for i in range(rows)))


def used(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir()) if folder.exists() else 0


def test_projections_beyond_the_quota_prune_the_oldest_and_stay_under_it(tmp_path: Path) -> None:
    root, cache = tmp_path / "root", tmp_path / "cache"
    root.mkdir()
    names = [f"t{n}.csv" for n in range(4)]
    for name in names:
        table(root / name, 3_300)  # about 310 KB projected: three fit in 1 MiB, four do not
    table(root / "huge.csv", 15_000)  # about 1.4 MB projected: alone over the quota
    folder = cache / "projections"
    quota = QUOTA_MB * 2**20

    async def run() -> tuple[list[tuple[str, int]], str]:
        written, refusal = [], ""
        settings = Settings(roots=(root,), cache_dir=cache, projection_quota_mb=QUOTA_MB)
        async with Client(create_server(settings)) as client:
            with anyio.fail_after(120):  # a hang guard only
                for name in names:
                    result = await client.call_tool("sro_read", {"target": name, "view": "projection"})
                    assert not result.is_error and answer_record(result) is not None
                    written.append((str(answer_record(result)["result"]["value"]), used(folder)))
                huge = await client.call_tool("sro_read", {"target": "huge.csv", "view": "projection"})
                assert huge.is_error
                refusal = str(huge.content[0].text)  # type: ignore[union-attr]
        return written, refusal

    written, refusal = anyio.run(run)
    assert all(disk <= quota for _, disk in written)  # after every projection, the folder fits the quota
    assert not Path(written[0][0]).exists()  # the oldest made room for the fourth
    assert all(Path(path).exists() for path, _ in written[1:])
    assert "quota of 1.0 MiB" in refusal and "about 1.4 MiB for all 15,000 rows" in refusal  # the limit, the size
    assert "internal error" not in refusal
    assert used(folder) <= quota and not [p for p in folder.iterdir() if p.name.endswith(".partial")]
    assert all(Path(path).exists() for path, _ in written[1:])  # the refused one removed no other projection
