"""A sentence-transformers BERT model (all-MiniLM-L6-v2 by default) run in numpy: the `semantic` extra's
encoder, without torch.

A model is a sentence-transformers folder: `config.json` (a BERT), `model.safetensors`, `tokenizer.json`
and `1_Pooling/config.json` (mean or CLS pooling). The weights are mapped read-only from the file, not
copied: the workers that encode share one copy in the page cache, and a worker's memory ceiling does not
count them. Vectors match sentence-transformers' to about 1e-7 (tests/test_bert.py holds its vectors).

Bounded by construction: a text is cut to `MAX_TEXT_CHARS` before the tokenizer sees it and to the model's
`max_seq_length` tokens after, and a batch holds at most `BATCH` texts, so one call's work and memory have a
ceiling whatever it is given.
"""

from __future__ import annotations

import json
import math
import struct
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError

#: About 512 tokens of English, past any BERT's reach; the tokenizer never sees a text whole.
MAX_TEXT_CHARS = 2_000
#: Texts per forward pass: a pass over 16 texts of 256 tokens holds about 50 MB of attention scores.
BATCH = 16
#: Tokens whose feed-forward step runs at once: its widest activations (4 x hidden a token) then stay in the
#: processor's cache through GELU's dozen passes (twice as fast as the whole batch at once, measured).
FEED_FORWARD_ROWS = 128
#: A safetensors header beyond this is not a model's (MiniLM-L6's is 9 KB).
MAX_HEADER_BYTES = 16 << 20
_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


@dataclass(frozen=True)
class Layer:
    qkv: np.ndarray  # (hidden, 3 * hidden): the three projections in one product
    qkv_bias: np.ndarray
    out: np.ndarray
    out_bias: np.ndarray
    norm1: tuple[np.ndarray, np.ndarray]
    up: np.ndarray
    up_bias: np.ndarray
    down: np.ndarray
    down_bias: np.ndarray
    norm2: tuple[np.ndarray, np.ndarray]


def check_folder(folder: Path) -> dict[str, Any]:
    """The model's configuration; a ConfigError unless `folder` holds a BERT model this module runs (read
    before any load, so a wrong setting is told at once, not on the first encoding)."""
    config = _json(folder / "config.json")
    if config.get("model_type") != "bert":
        raise ConfigError(
            f"{folder} holds a {config.get('model_type')!r} model; the semantic extra runs BERT models "
            "(all-MiniLM-L6-v2 and others of its family): give the folder of one, or use the e5 extra"
        )
    for needed in ("model.safetensors", "tokenizer.json"):
        if not (folder / needed).is_file():
            raise ConfigError(f"{folder} has no {needed}: give a sentence-transformers folder with safetensors weights")
    return config


class BertEncoder:
    """One model folder: `encode(texts)` gives L2-normalised float32 rows, as sentence-transformers would."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        config = check_folder(folder)
        try:
            self.heads = int(config["num_attention_heads"])
            self.eps = float(config.get("layer_norm_eps", 1e-12))
            positions, depth = int(config["max_position_embeddings"]), int(config["num_hidden_layers"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{folder / 'config.json'} has no usable {exc}: not a BERT configuration") from None
        pooling = _optional_json(folder / "1_Pooling" / "config.json")
        self.cls_pooling = bool(pooling.get("pooling_mode_cls_token")) and not pooling.get("pooling_mode_mean_tokens")
        settings = _optional_json(folder / "sentence_bert_config.json")
        self.max_tokens = min(int(settings.get("max_seq_length") or 512), positions)
        prompts = _optional_json(folder / "config_sentence_transformers.json").get("prompts") or {}
        self.prompts = {k: v for k, v in prompts.items() if isinstance(k, str) and isinstance(v, str)}
        self.tokenizer = _tokenizer(folder / "tokenizer.json", self.max_tokens)
        weights = _mapped_safetensors(folder / "model.safetensors")
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
        self._weights = weights
        self._prefix = prefix
        self.words = self._w("embeddings.word_embeddings.weight")
        self.positions = self._w("embeddings.position_embeddings.weight")
        self.types = self._w("embeddings.token_type_embeddings.weight")
        self.embedding_norm = (self._w("embeddings.LayerNorm.weight"), self._w("embeddings.LayerNorm.bias"))
        hidden = self.words.shape[-1]
        if self.words.ndim != 2 or hidden % self.heads or self.positions.shape != (positions, hidden):
            raise ConfigError(f"{folder}: the embeddings' shapes are unlike its config.json: not one BERT model")
        if self.tokenizer.get_vocab_size() > len(self.words):
            raise ConfigError(f"{folder}: tokenizer.json has more tokens than the model has embeddings")
        self.layers = [self._layer(i, hidden) for i in range(depth)]

    def encode(self, texts: list[str], kind: str = "passage") -> np.ndarray:
        """Rows for `texts`, batched by length so that padding costs little; a query or a passage takes the
        prompt the model's folder names for it (none for MiniLM-L6)."""
        if not texts:
            return np.zeros((0, self.words.shape[1]), dtype=np.float32)
        prompt = self.prompts.get(kind) or (self.prompts.get("document", "") if kind == "passage" else "")
        encodings = self.tokenizer.encode_batch([prompt + text[:MAX_TEXT_CHARS] for text in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(texts), self.words.shape[1]), dtype=np.float32)
        for first in range(0, len(order), BATCH):
            batch = order[first : first + BATCH]
            out[batch] = self._forward([encodings[i].ids for i in batch], [encodings[i].type_ids for i in batch])
        return out

    def _forward(self, ids: list[list[int]], type_ids: list[list[int]]) -> np.ndarray:
        width = max(len(row) for row in ids)
        tokens = np.zeros((len(ids), width), dtype=np.int64)
        segments = np.zeros_like(tokens)
        mask = np.zeros((len(ids), width), dtype=np.float32)
        for row, (these, kinds) in enumerate(zip(ids, type_ids, strict=True)):
            tokens[row, : len(these)], segments[row, : len(kinds)], mask[row, : len(these)] = these, kinds, 1.0
        x = self.words[tokens] + self.positions[:width][None] + self.types[segments]
        x = _layer_norm(x.astype(np.float32), *self.embedding_norm, self.eps)
        masked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in self.layers:
            x = self._block(x, layer, masked)
        if self.cls_pooling:
            pooled = x[:, 0]
        else:
            pooled = (x * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        rows: np.ndarray = (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
        return rows

    def _block(self, x: np.ndarray, layer: Layer, masked: np.ndarray) -> np.ndarray:
        batch, width, hidden = x.shape
        size = hidden // self.heads
        flat = x.reshape(batch * width, hidden)
        # 2-D products: numpy hands them to BLAS whole (3-D ones ran 2.5 times slower, measured).
        qkv = flat @ layer.qkv
        qkv += layer.qkv_bias
        q, k, v = (qkv.reshape(batch, width, 3, self.heads, size)[:, :, i].transpose(0, 2, 1, 3) for i in range(3))
        scores = np.ascontiguousarray(q) @ np.ascontiguousarray(k.transpose(0, 1, 3, 2))  # q comes pre-scaled
        scores += masked  # in place from here: the scores are the largest array of a pass
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * width, hidden)
        flat = _layer_norm(_affine(context, layer.out, layer.out_bias, flat), *layer.norm1, self.eps)
        out = np.empty_like(flat)
        for first in range(0, len(flat), FEED_FORWARD_ROWS):
            rows = flat[first : first + FEED_FORWARD_ROWS]
            up = _gelu(_affine(rows, layer.up, layer.up_bias))
            out[first : first + FEED_FORWARD_ROWS] = _affine(up, layer.down, layer.down_bias, rows)
        flat = _layer_norm(out, *layer.norm2, self.eps)
        return flat.reshape(batch, width, hidden)

    def _w(self, name: str) -> np.ndarray:
        try:
            weight = self._weights[self._prefix + name]
        except KeyError:
            raise ConfigError(f"{self.folder / 'model.safetensors'} lacks {name}: not a BERT model's weights") from None
        return weight.astype(np.float32, copy=False)  # a float16 file is widened; a float32 one stays mapped

    def _layer(self, i: int, hidden: int) -> Layer:
        p = f"encoder.layer.{i}."
        inner = self._w(f"{p}intermediate.dense.weight").shape[0]
        shapes = {
            **{f"{p}attention.self.{part}.weight": (hidden, hidden) for part in ("query", "key", "value")},
            f"{p}attention.output.dense.weight": (hidden, hidden),
            f"{p}intermediate.dense.weight": (inner, hidden),
            f"{p}output.dense.weight": (hidden, inner),
            **{f"{p}attention.self.{part}.bias": (hidden,) for part in ("query", "key", "value")},
            f"{p}intermediate.dense.bias": (inner,),
            **{f"{p}{part}": (hidden,) for part in ("attention.output.dense.bias", "output.dense.bias")},
            **{f"{p}{n}.LayerNorm.{w}": (hidden,) for n in ("attention.output", "output") for w in ("weight", "bias")},
        }
        for name, shape in shapes.items():
            if self._w(name).shape != shape:
                raise ConfigError(f"{self.folder}: {name} is {self._w(name).shape}, not {shape}: not one BERT model")
        attention = [self._w(f"{p}attention.self.{part}.weight") for part in ("query", "key", "value")]
        biases = [self._w(f"{p}attention.self.{part}.bias") for part in ("query", "key", "value")]
        # The query's half of the score scale, 1 / sqrt(head size), folded into its weights once.
        scale = np.float32(1.0 / math.sqrt(attention[0].shape[0] // self.heads))
        attention[0], biases[0] = attention[0] * scale, biases[0] * scale
        return Layer(
            qkv=np.ascontiguousarray(np.concatenate(attention).T, dtype=np.float32),
            qkv_bias=np.concatenate(biases).astype(np.float32),
            out=self._w(f"{p}attention.output.dense.weight").T,
            out_bias=self._w(f"{p}attention.output.dense.bias"),
            norm1=(self._w(f"{p}attention.output.LayerNorm.weight"), self._w(f"{p}attention.output.LayerNorm.bias")),
            up=self._w(f"{p}intermediate.dense.weight").T,
            up_bias=self._w(f"{p}intermediate.dense.bias"),
            down=self._w(f"{p}output.dense.weight").T,
            down_bias=self._w(f"{p}output.dense.bias"),
            norm2=(self._w(f"{p}output.LayerNorm.weight"), self._w(f"{p}output.LayerNorm.bias")),
        )


_encoders: dict[Path, BertEncoder] = {}
_lock = threading.Lock()


def bert_encoder(folder: Path) -> BertEncoder:
    """The encoder of a model folder, loaded once per process."""
    with _lock:
        encoder = _encoders.get(folder)
        if encoder is None:
            encoder = _encoders[folder] = BertEncoder(folder)
        return encoder


def encode_with_bert(model: str, kind: str, texts: tuple[str, ...]) -> np.ndarray:
    """Encode in this process (a worker, or a library caller); `model` is the model's folder."""
    return bert_encoder(Path(model)).encode(list(texts), kind)


def _affine(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, residual: np.ndarray | None = None) -> np.ndarray:
    """x @ weight + bias (+ residual), adding in place into the product."""
    out: np.ndarray = x @ weight
    out += bias
    if residual is not None:
        out += residual
    return out


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """In place: `x` is a fresh sum that nothing else holds."""
    x -= x.mean(axis=-1, keepdims=True)
    variance = np.square(x).mean(axis=-1, keepdims=True)
    variance += np.float32(eps)
    x /= np.sqrt(variance)
    x *= weight
    x += bias
    return x


# Abramowitz and Stegun 7.1.26: erf within 1.5e-7, float32's own precision, without scipy.
_ERF_P = np.float32(0.3275911)
_ERF_A = [np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)]


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * (1 + erf(x / sqrt 2)) / 2, in place (a quarter of the forward pass's time when
    written as plain expressions, each making a temporary of the widest activation)."""
    z = np.abs(x)
    z *= np.float32(1.0 / math.sqrt(2.0))
    t = z * _ERF_P
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    tail = t * _ERF_A[0]  # 1 - erf(z) = poly(t) * t * exp(-z^2)
    for a in _ERF_A[1:]:
        tail += a
        tail *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    tail *= z
    tail *= np.float32(0.5)
    tail *= x  # x * (1 - erf(|x| / sqrt 2)) / 2: GELU of a negative x; x minus it for a positive one
    out: np.ndarray = np.maximum(x, np.float32(0.0))
    tail *= np.sign(x)  # not np.where: it took a third of the forward pass
    out -= tail
    return out


def _json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path} is not a readable model file ({exc}): give a sentence-transformers folder") from exc
    if not isinstance(value, dict):
        raise ConfigError(f"{path} is not a model configuration (a JSON object)")
    return value


def _optional_json(path: Path) -> dict[str, Any]:
    return _json(path) if path.is_file() else {}


def _tokenizer(path: Path, max_tokens: int) -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        from ..commands.install import extra_hint

        raise ConfigError(f"dense and hybrid location need the semantic extra: {extra_hint('semantic')}") from exc
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the Rust side raises its own exception type
        raise ConfigError(f"{path} is not a readable tokenizer ({exc}): the model folder needs tokenizer.json") from exc
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_tokens)
    return tokenizer


def _mapped_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as a read-only view of one mapping of it (opened once)."""
    try:
        with path.open("rb") as file:
            head = file.read(8)
            size = struct.unpack("<Q", head)[0] if len(head) == 8 else -1
            if not 0 < size <= MAX_HEADER_BYTES:
                raise ValueError(f"a header of {size} bytes")
            header = json.loads(file.read(size))
            mapped = np.memmap(file, dtype=np.uint8, mode="r")
    except (OSError, ValueError, struct.error) as exc:
        raise ConfigError(f"{path} is not a readable safetensors file ({exc})") from exc
    start, tensors = 8 + size, {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = np.dtype(_DTYPES[spec["dtype"]]).newbyteorder("<")
            shape = tuple(int(n) for n in spec["shape"])
            first, last = (start + int(n) for n in spec["data_offsets"])
            if not start <= first <= last <= mapped.size or last - first != math.prod(shape) * dtype.itemsize:
                raise ValueError("offsets outside the file or unlike the shape")
            tensors[name] = mapped[first:last].view(dtype).reshape(shape)
        except (KeyError, TypeError, ValueError) as exc:
            raise ConfigError(f"{path}: tensor {name!r} is not readable ({exc})") from exc
    return tensors
