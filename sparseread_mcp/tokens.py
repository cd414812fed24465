"""Token counts, offline: exact o200k/cl100k (the BPE tables ship inside `bpe-openai`) or an estimate.

Other model families split text differently (Claude's counts can be 1.6-2x o200k), so a safety margin
inflates every count; budgets are then met under the stricter count too.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TypeVar

import bpe_openai
from pydantic import BaseModel

from .errors import ConfigError
from .wire import wire_blocks

TOKENIZERS = ("o200k_base", "cl100k_base", "chars")
ALIASES = {"o200k": "o200k_base", "cl100k": "cl100k_base"}
#: The estimate's characters per token: low on purpose, so estimated counts run high.
CHARS_PER_TOKEN = 3.0


class TokenCounter:
    """Counts tokens of text with one named encoding (or the `chars` estimate), plus a safety margin."""

    def __init__(self, name: str = "o200k_base", *, margin: float = 0.0) -> None:
        name = ALIASES.get(name, name)
        if name not in TOKENIZERS:
            raise ConfigError(f"unknown tokenizer {name!r}: choose one of {', '.join(TOKENIZERS)} (or o200k, cl100k)")
        if not 0.0 <= margin <= 1.0:
            raise ConfigError(f"token margin {margin} is out of range: use 0.0 to 1.0 (0.15 adds 15%)")
        self.name = name if not margin else f"{name}+{round(margin * 100)}%"
        self._margin = margin
        self._encoding = None if name == "chars" else _encoding(name)

    def count(self, text: str) -> int:
        if not text:
            return 0
        if self._encoding is None:
            raw = math.ceil(len(text) / CHARS_PER_TOKEN)
        else:
            # encode_ordinary: text that happens to contain "<|endoftext|>" is data, not a control token.
            raw = sum(len(self._encoding.encode_ordinary(chunk)) for chunk in _chunks(text))
        return math.ceil(raw * (1.0 + self._margin)) if self._margin else raw


#: The encoder refuses calls over 1M characters or 200k tokens; long texts are counted in line-aligned chunks.
_CHUNK_CHARS = 40_000  # even at 4 bytes a token-worst case, under the 200k-token call limit


def _chunks(text: str) -> list[str]:
    """Split at newlines (where BPE pre-tokenization splits anyway), so the count stays exact."""
    if len(text) <= _CHUNK_CHARS:
        return [text]
    chunks, start = [], 0
    while start < len(text):
        end = min(len(text), start + _CHUNK_CHARS)
        if end < len(text):
            newline = text.rfind("\n", start + _CHUNK_CHARS // 2, end)
            end = newline + 1 if newline != -1 else end
        chunks.append(text[start:end])
        start = end
    return chunks


@lru_cache(maxsize=4)
def _encoding(name: str) -> bpe_openai.Encoding:
    return bpe_openai.get_encoding(name)


ModelT = TypeVar("ModelT", bound=BaseModel)


def stamp_tokens(model: ModelT, counter: TokenCounter) -> ModelT:
    """The model with its `tokens` field set to the count of its own compact JSON (counted twice, since the
    number's own digits are part of what is counted)."""
    first = sum(counter.count(block) for block in wire_blocks(model))
    second = sum(counter.count(block) for block in wire_blocks(model.model_copy(update={"tokens": first})))
    return model.model_copy(update={"tokens": second})
