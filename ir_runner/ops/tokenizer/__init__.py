"""openvino-tokenizers' operations (the ``extension`` opset of tokenizer and detokenizer IRs), one module per
sub-family: regular expressions (``regex_ops``), normalization, the byte-level alphabet (``bytelevel``),
vocabulary models (``models``), assembly of the model's inputs, decoding, TensorFlow Text's ragged forms
(``tf_ops``) and string hashing. The tensors they pass are described in :mod:`._ragged`; docs/tokenizers.md says
what differs from the C++."""
