"""What goes on the wire: the one serialization every answer is sent and counted in, so a budget measured
here is the budget the agent pays."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


def wire_json(model: BaseModel) -> str:
    """The compact JSON text of `model`, exactly as a tool answer carries it."""
    return model.model_dump_json(exclude_none=True)


def wire_dict(model: BaseModel) -> dict[str, Any]:
    """`model` as the structured copy a tool answer carries beside its text (every field, as the output
    schema declares it)."""
    return model.model_dump(mode="json")
