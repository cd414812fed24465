"""Exact token counts, offline: the BPE tables ship inside `bpe-openai`."""

from __future__ import annotations

from functools import lru_cache

import bpe_openai

from .errors import ConfigError

TOKENIZERS = ("o200k_base", "cl100k_base")


class TokenCounter:
    """Counts tokens of text with one named encoding."""

    def __init__(self, name: str = "o200k_base") -> None:
        if name not in TOKENIZERS:
            raise ConfigError(f"unknown tokenizer {name!r}: choose one of {', '.join(TOKENIZERS)}")
        self.name = name
        self._encoding = _encoding(name)

    def count(self, text: str) -> int:
        if not text:
            return 0
        # encode_ordinary: text that happens to contain "<|endoftext|>" is data, not a control token.
        return sum(len(self._encoding.encode_ordinary(chunk)) for chunk in _chunks(text))


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
