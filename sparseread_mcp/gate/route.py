"""Native fit: small artifacts and whole-content intents skip the protocol and get the full view."""

from __future__ import annotations

from dataclasses import dataclass

from ..models import Intent


@dataclass(frozen=True, slots=True)
class Route:
    native: bool
    reason: str


def choose_route(*, full_view_tokens: int, native_fit_tokens: int, intent: Intent | None) -> Route:
    if intent is not None and intent.need_full:
        return Route(True, "the intent needs the whole content (need_full)")
    if intent is not None and intent.want == "summary":
        return Route(True, "a summary needs a global view: the full view is the honest read")
    if intent is not None and intent.coverage == "exhaustive" and not intent.needles:
        return Route(True, "exhaustive coverage without needles needs the whole content")
    if full_view_tokens <= native_fit_tokens:
        return Route(
            True, f"small artifact: full view is {full_view_tokens} tokens (<= {native_fit_tokens} native fit)"
        )
    return Route(False, f"full view is {full_view_tokens} tokens (> {native_fit_tokens} native fit): read sparsely")
