"""Hostile files generated at run time (nothing committed): each is small on disk and makes a parser, a
matcher or a diff slow, huge or wrong."""

from __future__ import annotations

import io
import os
import random
import zipfile
from pathlib import Path


def pdf(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1; the first is the catalog) with a correct xref table."""
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _stream(content: bytes, extra: bytes = b"") -> bytes:
    return b"<< %s /Length %d >>\nstream\n%s\nendstream" % (extra, len(content), content)


def fan_out_pdf(width: int = 10, depth: int = 8) -> bytes:
    """One page whose content draws a Form XObject that draws the next `width` times, `depth` levels
    deep: `width ** depth` text draws from a few KB."""
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
    first_form = 6
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /XObject << /X %d 0 R >> /Font << /F1 5 0 R >> >> >>" % first_form,
        _stream(b"/X Do"),
        font,
    ]
    for level in range(depth):
        text = b"BT /F1 9 Tf 10 10 Td (level %d) Tj ET" % level
        if level < depth - 1:
            body = b" ".join([b"/X Do"] * width) + b" " + text
            resources = b"/Resources << /XObject << /X %d 0 R >> /Font << /F1 5 0 R >> >>" % (first_form + level + 1)
        else:
            body, resources = text, b"/Resources << /Font << /F1 5 0 R >> >>"
        objects.append(_stream(body, b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] " + resources))
    return pdf(objects)


def page_tree_cycle_pdf() -> bytes:
    """A page tree whose Pages node lists itself among its kids."""
    return pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
            _stream(b"BT /F1 9 Tf (cycle) Tj ET"),
        ]
    )


def minified_js(size: int = 3 * 1024 * 1024) -> str:
    """A one-line script of `size` characters: many statements, nested calls, no newline."""
    unit = "a=f(g(h(1,[2,{k:3}])),x?y:z);"
    return (unit * (size // len(unit) + 1))[:size]


def backtracking_gitignore(groups: int = 16) -> str:
    return "*a" * groups + "\n"


def every_other_line_edited(lines: int = 60_000) -> tuple[str, str]:
    before = "".join(f"line {n} of the original text\n" for n in range(lines))
    after = "".join(
        f"line {n} of the original text\n" if n % 2 else f"line {n} was edited here\n" for n in range(lines)
    )
    return before, after


def sparse_file(path: Path, size: int = 100 * 1024**3) -> None:
    """`size` bytes of holes: a few KB on disk."""
    with path.open("wb") as handle:
        handle.truncate(size)
    os.utime(path)


# -- fuzz campaign generators: one hostile file per (format, seed), deterministic --------------------------
def fuzz_pdf(rng: random.Random) -> bytes:
    kind = rng.choice(["fanout", "cycle", "garbage", "xref", "nested", "flipped", "parent-loop"])
    if kind == "fanout":
        width = rng.randint(2, 12)
        depth = rng.randint(2, 9)
        while width**depth > 10**9:
            depth -= 1
        return fan_out_pdf(width, depth)
    if kind == "cycle":
        return page_tree_cycle_pdf()
    if kind == "garbage":
        return b"%PDF-1.7\n" + rng.randbytes(rng.randint(10, 4000))
    if kind == "xref":
        good = bytearray(fan_out_pdf(2, 2))
        at = good.rfind(b"startxref")
        good[at + 10 : at + 14] = str(rng.randint(0, 10**9)).encode()[:4]
        return bytes(good)
    if kind == "nested":
        depth = rng.randint(1000, 60000)
        return pdf([b"<< /Type /Catalog /Pages 2 0 R /X " + b"[" * depth + b"]" * depth + b" >>"])
    if kind == "parent-loop":
        return pdf(
            [
                b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [3 0 R] /Count 1 /Parent 3 0 R >>",
                b"<< /Type /Page /Parent 2 0 R /Kids [2 0 R] /MediaBox [0 0 9 9] >>",
            ]
        )
    good = bytearray(fan_out_pdf(3, 3))
    for _ in range(rng.randint(1, 40)):
        good[rng.randrange(len(good))] = rng.randrange(256)
    return bytes(good)


def fuzz_html(rng: random.Random) -> bytes:
    depth = rng.randint(10, 60000)
    kind = rng.choice(["nest", "unclosed", "attribute", "comment", "garbage", "entities", "script"])
    if kind == "nest":
        tag = rng.choice(["div", "ul", "table", "b", "h1", "pre"])
        return (f"<html><body>{f'<{tag}>' * depth}deep{f'</{tag}>' * rng.randint(0, depth)}").encode()
    if kind == "unclosed":
        return ("<p>" + "<li><a href=x>" * depth).encode()
    if kind == "attribute":
        return f'<div title="{"a" * depth * 20}">x</div>'.encode()
    if kind == "comment":
        return ("<!--" + "-" * depth + "<p>after").encode()
    if kind == "entities":
        return ("<p>" + "&amp;&#x10FFFF;&#99999999;&unknown;" * (depth // 10)).encode()
    if kind == "script":
        return ("<script>" + "var a='</scr'+'ipt>';" * (depth // 10)).encode()
    return b"<html>" + rng.randbytes(rng.randint(10, 20000))


def fuzz_code(rng: random.Random) -> tuple[str, bytes]:
    depth = rng.randint(100, 50000)
    suffix = rng.choice([".py", ".js", ".c", ".rs", ".go", ".java", ".ts"])
    kind = rng.choice(["parens", "braces", "long-line", "garbage", "strings"])
    if kind == "parens":
        text = "x = " + "(" * depth + "1" + ")" * rng.randint(0, depth)
    elif kind == "braces":
        text = "fn f() " + "{" * depth + "}" * rng.randint(0, depth)
    elif kind == "long-line":
        text = minified_js(rng.randint(10_000, 2_000_000))
    elif kind == "strings":
        text = '"' + "\\" * depth + "'''" * rng.randint(1, 100)
    else:
        return suffix, rng.randbytes(rng.randint(10, 20000))
    return suffix, text.encode()


def fuzz_structured(rng: random.Random) -> tuple[str, bytes]:
    suffix = rng.choice([".json", ".yaml", ".toml"])
    depth = rng.randint(10, 100000)
    kind = rng.choice(["deep", "aliases", "keys", "garbage"])
    if kind == "deep":
        body = {".json": "[" * depth + "]" * depth, ".yaml": "- " * min(depth, 5000) + "x", ".toml": "a=" + "[" * depth}
        return suffix, body[suffix].encode()
    if kind == "aliases" and suffix == ".yaml":
        fan = rng.randint(2, 12)
        lines = ["a0: &a0 [" + ", ".join(["x"] * fan) + "]"]
        lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * fan) + "]" for i in range(1, rng.randint(2, 12))]
        return suffix, "\n".join(lines).encode()
    if kind == "keys":
        key = "k" * rng.randint(1, 100000)
        return ".json", ('{"' + key + '": 1, "' + key + '": 2}').encode()
    return suffix, rng.randbytes(rng.randint(10, 20000))


def fuzz_table(rng: random.Random) -> tuple[str, bytes]:
    kind = rng.choice(["ragged", "quotes", "huge-field", "garbage", "parquet", "xlsx"])
    if kind == "ragged":
        rows = [",".join(str(rng.random()) for _ in range(rng.randint(0, 50))) for _ in range(rng.randint(1, 3000))]
        return ".csv", "\n".join(rows).encode()
    if kind == "quotes":
        return ".csv", ('a,b\n"' + '""' * rng.randint(1, 50000) + ",1\n").encode()
    if kind == "huge-field":
        return ".tsv", ("a\tb\n" + "x" * rng.randint(1000, 3_000_000) + "\t1\n").encode()
    if kind == "parquet":
        return ".parquet", b"PAR1" + rng.randbytes(rng.randint(10, 5000)) + b"PAR1"
    if kind == "xlsx":
        return ".xlsx", xlsx_bomb(rng)
    return rng.choice([".csv", ".jsonl"]), rng.randbytes(rng.randint(10, 20000))


def xlsx_bomb(rng: random.Random) -> bytes:
    """A workbook whose sheet is mostly one compressible run, or random XML: a zip that is small on disk."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr(
            "xl/workbook.xml", "<workbook><sheets><sheet name='s' sheetId='1' r:id='rId1'/></sheets></workbook>"
        )
        cells = "<c><v>1</v></c>" * rng.randint(1, 200_000)
        archive.writestr(
            "xl/worksheets/sheet1.xml", f"<worksheet><sheetData><row>{cells}</row></sheetData></worksheet>"
        )
    return buffer.getvalue()


def fuzz_ignore(rng: random.Random) -> tuple[str, list[str]]:
    """A .gitignore of random rules (stars, classes, escapes, `**`, negations) and names to walk beside it."""
    alphabet = "a*?[]!/\\-b.**"
    rules = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))) for _ in range(rng.randint(1, 30))]
    rules.append("*a" * rng.randint(1, 40))
    names = ["a" * rng.randint(1, 200) + rng.choice(["", "b", ".txt", "!"]) for _ in range(rng.randint(1, 20))]
    return "\n".join(rules) + "\n", names
