"""String tensors: StringTensorPack, StringTensorUnpack."""
