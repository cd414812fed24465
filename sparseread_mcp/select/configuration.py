"""A configuration: one way to answer a read, a method and an exposure form, written `bm25 x windows`.

The selector chooses among configurations, calibration measures them, readers declare theirs, previews
list them and packs name the one that answered. The value is its own text (a `str`, as a `StrEnum`
member is), so the calibration table, the CLI and the wire carry `bm25 x windows` unchanged; this module
is the one place that text is written and read. The full view has no method: its text is `full_view`.
"""

from __future__ import annotations

from typing import Literal, cast, get_args

from ..errors import ConfigError
from ..vocabulary import ExposureForm, LocationMethod

#: What a reader runs on its own besides the location methods (structure, its query engine, exact needles,
#: or `any` method before one of its own forms).
ReaderMethod = Literal[
    "any",
    "needles",
    "section",
    "page",
    "row",
    "sql",
    "symbol",
    "bm25+symbols",
    "key_path",
    "bm25+key_paths",
    "array_filter",
    "signatures",
]
Method = Literal[LocationMethod, ReaderMethod]
#: What a reader shows beside the exposure forms: pages, log records, rows, values, query results, an
#: outline, a compact view, or the whole text.
ReaderForm = Literal[
    "page_snippets", "records_in_context", "rows", "values", "result", "outline", "compact", "full_view"
]
Form = Literal[ExposureForm, ReaderForm]

METHODS: frozenset[str] = frozenset(get_args(Method))
FORMS: frozenset[str] = frozenset(get_args(Form))
_EXPOSURE_FORMS: frozenset[str] = frozenset(get_args(ExposureForm))
_BETWEEN = " x "


class Configuration(str):
    """A method and an exposure form, frozen; equal to (and hashed as) its text `method x form`."""

    __slots__ = ()

    def __new__(cls, method: Method | None, form: Form) -> Configuration:
        if method is not None and method not in METHODS:
            raise ConfigError(
                f"unknown method {method!r} in a configuration: choose one of {', '.join(sorted(METHODS))}"
            )
        if form not in FORMS:
            raise ConfigError(
                f"unknown exposure form {form!r} in a configuration: choose one of {', '.join(sorted(FORMS))}"
            )
        return super().__new__(cls, form if method is None else f"{method}{_BETWEEN}{form}")

    @classmethod
    def parse(cls, text: str) -> Configuration:
        """The configuration `text` names (`bm25 x windows`, or a form alone such as `full_view`); a
        Configuration is returned as it is. ConfigError names the valid methods or forms."""
        if isinstance(text, Configuration):
            return text
        method, form = _parts(text)
        return cls(cast("Method | None", method), cast(Form, form))

    @classmethod
    def named(cls, method: str, form: str) -> Configuration:
        """The configuration of a method and form named at run time (the location the settings fix): checked
        like `parse`."""
        return cls(cast(Method, method), cast(Form, form))

    @property
    def method(self) -> Method | None:
        """How passages are found; None for a form that needs no method (the full view)."""
        return cast("Method | None", _parts(self)[0])

    @property
    def form(self) -> Form:
        return cast(Form, _parts(self)[1])

    @property
    def location(self) -> str:
        """The location method a sparse read ranks with (a ConfigError for a form alone, such as the full
        view: nothing is ranked there)."""
        if self.method is None:
            raise ConfigError(f"configuration {str(self)!r} ranks nothing: it has no location method")
        return self.method

    @property
    def exposure(self) -> ExposureForm:
        """The exposure form a sparse read plans with: this form when it is one, else snippets."""
        return cast(ExposureForm, self.form) if self.form in _EXPOSURE_FORMS else "snippets"

    def qualified(self, owner: str) -> str:
        """The text naming it for a reader or an artifact type: `markdown x bm25 x windows`."""
        return f"{owner}{_BETWEEN}{self}"

    def __getnewargs__(self) -> tuple[Method | None, Form]:  # type: ignore[override]
        # Copies and pickles rebuild it from its parts, not from its text.
        return self.method, self.form


def _parts(text: str) -> tuple[str | None, str]:
    method, between, form = text.partition(_BETWEEN)
    # Plain strings, never the Configuration itself: a copy rebuilt from its own parts would recurse.
    return (method, form) if between else (None, str.__str__(text))


#: The faithful full view: the whole text, paged; chosen when no sparse configuration is reliable enough.
FULL_VIEW = Configuration(None, "full_view")
