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
        return len(self._encoding.encode_ordinary(text))


@lru_cache(maxsize=4)
def _encoding(name: str) -> bpe_openai.Encoding:
    return bpe_openai.get_encoding(name)
