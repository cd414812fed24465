"""Argument errors a model can act on: one line per wrong argument, saying what was wrong and the values
allowed, instead of pydantic's report (several lines per error and a documentation URL)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from ..models import Intent, Slot

#: At most this many wrong arguments are explained (the rest are counted).
MAX_EXPLAINED = 3
#: The models an argument's nested fields belong to, by the name of the field that holds them.
_NESTED: dict[str, type[BaseModel]] = {"intent": Intent, "slots": Slot}
_KINDS = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
}


def explain(exc: ValidationError, tool: str, schema: dict[str, Any] | None = None) -> str:
    """`exc` as one line per wrong argument of `tool` (its input schema gives ranges), at most
    MAX_EXPLAINED of them."""
    errors = exc.errors(include_url=False)
    lines = [_one(error, schema or {}) for error in errors[:MAX_EXPLAINED]]
    more = f"; and {len(errors) - MAX_EXPLAINED} more" if len(errors) > MAX_EXPLAINED else ""
    return f"{tool}: " + "; ".join(lines) + more


def _one(error: ErrorDetails, schema: dict[str, Any]) -> str:
    loc = [str(part) for part in error["loc"]]
    name = _dotted(error["loc"]) or "the arguments"
    value = _shown(error.get("input"))
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "extra_forbidden":
        return f"`{_dotted(error['loc'][:-1]) or 'the call'}` has no field {loc[-1][:40]!r}: use {_fields_of(loc)}"
    if kind == "missing":
        return f"`{name}` is required"
    if kind in ("literal_error", "enum"):
        return f"{name}={value} is not allowed: use one of {ctx.get('expected', '')}"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        return f"{name}={value} is out of range: {_range(loc, ctx, schema)}"
    if kind in ("string_too_long", "too_long"):
        return f"`{name}` is too long: at most {ctx.get('max_length')} {_unit(kind)}"
    if kind in ("string_too_short", "too_short"):
        least = ctx.get("min_length")
        return f"`{name}` must not be empty" if least == 1 else f"`{name}` is too short: at least {least} {_unit(kind)}"
    if kind in _KINDS:
        example = ', e.g. {"goal": "the question in words"}' if loc and loc[-1] == "intent" else ""
        return f"`{name}` must be {_KINDS[kind]}, not {_type_of(error.get('input'))}{example}"
    return f"`{name}`: {error['msg']}"


def _dotted(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _fields_of(loc: list[str]) -> str:
    """The valid field names of the object that holds the last part of `loc`."""
    holder = next((_NESTED[part] for part in reversed(loc[:-1]) if part in _NESTED), None)
    return ", ".join(holder.model_fields) if holder is not None else "only the documented fields"


def _range(loc: list[str], ctx: dict[str, Any], schema: dict[str, Any]) -> str:
    prop = schema.get("properties", {}).get(loc[0], {}) if len(loc) == 1 else {}
    prop = next((p for p in prop.get("anyOf", []) if "minimum" in p or "maximum" in p), prop)
    low = prop.get("minimum", ctx.get("ge", ctx.get("gt")))
    high = prop.get("maximum", ctx.get("le", ctx.get("lt")))
    if low is not None and high is not None:
        return f"use {low}..{high}"
    return f"use at least {low}" if low is not None else f"use at most {high}"


def _unit(kind: str) -> str:
    return "characters" if kind.startswith("string") else "entries"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _type_of(value: object) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "a list"}.get(
        type(value), "null" if value is None else "an object"
    )
