"""Hostile files generated at run time (nothing committed): each is small on disk and makes a parser, a
matcher or a diff slow, huge or wrong."""

from __future__ import annotations

import os
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
