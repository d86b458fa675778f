"""A tiny dense ONNX text model, as `orgkit model distill` finds one in a model directory.

The graph is a transformer's embedding layer without the transformer: a
token's vector plus its token type's, masked by the attention mask
(`input_ids`, `attention_mask`, `token_type_ids` in; `last_hidden_state`,
batch x tokens x hidden, out), beside a word-level `tokenizer.json` whose
post-processor wraps a text in `[CLS] ... [SEP]` as BERT's does. What a
distilled token vector must be is then known exactly: the mean of the
`[CLS]`, token and `[SEP]` rows of `embeddings`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    import numpy as np

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")


def build_tiny_dense_model(dest: Path, words: Iterable[str], *, hidden: int = 16, seed: int = 0) -> "np.ndarray":
    """Write `model.onnx` and `tokenizer.json` into `dest`; returns the token embedding matrix."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    vocab = {token: i for i, token in enumerate(SPECIALS)}
    for word in words:
        vocab.setdefault(word.lower(), len(vocab))
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    dest.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(dest / "tokenizer.json"))

    rng = np.random.default_rng(seed)
    embeddings = rng.standard_normal((len(vocab), hidden)).astype(np.float32)
    types = np.zeros((2, hidden), dtype=np.float32)
    types[1] = rng.standard_normal(hidden)
    batch_tokens = ["batch", "sequence"]
    graph = helper.make_graph(
        [helper.make_node("Gather", ["embeddings", "input_ids"], ["words"]),
         helper.make_node("Gather", ["types", "token_type_ids"], ["type_rows"]),
         helper.make_node("Add", ["words", "type_rows"], ["summed"]),
         helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
         helper.make_node("Unsqueeze", ["mask", "last_axis"], ["mask3"]),
         helper.make_node("Mul", ["summed", "mask3"], ["last_hidden_state"])],
        "tiny-dense",
        [helper.make_tensor_value_info(name, TensorProto.INT64, batch_tokens)
         for name in ("input_ids", "attention_mask", "token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*batch_tokens, hidden])],
        [numpy_helper.from_array(embeddings, "embeddings"), numpy_helper.from_array(types, "types"),
         numpy_helper.from_array(np.array([-1], dtype=np.int64), "last_axis")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(dest / "model.onnx"))
    return embeddings
