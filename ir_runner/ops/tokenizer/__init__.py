"""openvino-tokenizers' operations (the ``extension`` opset of tokenizer and detokenizer IRs), one module per
sub-family: regular expressions, normalization, the byte-level alphabet, vocabulary models, assembly of the
model's inputs, decoding, TensorFlow Text's ragged forms and
string hashing.
The tensors they pass are described in :mod:`.ragged`; docs/tokenizers.md says what differs from the C++."""

from . import assembly, bytelevel, decoding, hashing, models, normalization, regex_ops, tf_ops

OPS = (*regex_ops.OPS, *normalization.OPS, *bytelevel.OPS, *models.OPS, *assembly.OPS, *decoding.OPS, *tf_ops.OPS,
       *hashing.OPS)
