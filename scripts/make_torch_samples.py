"""Write the small torch-converted IRs the tests read (``tests/data/<family>/``), with torch's own outputs for
their test inputs, so that the tests need neither torch nor a conversion.

    pip install torch openvino && python scripts/make_torch_samples.py

- ``embedding/torch_bags.{xml,bin}``: ``torch.nn.EmbeddingBag`` (sum with per_sample_weights, mean, a 2-D input)
  as ``openvino.convert_model`` writes it (three EmbeddingBagOffsets-15), and ``torch_bags_expected.npz``: the
  feeds of two cases (``case<i>_<input>``) and torch's outputs (``case<i>_out<j>``).
- ``search/torch_search.{xml,bin}``: ``torch.bucketize`` (left, and right with int32 output) and
  ``torch.searchsorted`` (left and right, one sequence per row), and ``torch_search_expected.npz``: the feeds
  (``x``, ``boundaries``, ``rows``) and torch's outputs (``out<j>``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import openvino as ov
import torch

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"


class Bags(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sum = torch.nn.EmbeddingBag(10, 3, mode="sum")
        self.mean = torch.nn.EmbeddingBag(10, 3, mode="mean")

    def forward(self, idx, off, w):
        return self.sum(idx, off, per_sample_weights=w), self.mean(idx, off), self.sum(idx.reshape(2, -1))


def embedding_bags() -> None:
    torch.manual_seed(0)
    module = Bags().eval()
    example = (torch.tensor([1, 2, 4, 5, 4, 3]), torch.tensor([0, 2, 2, 5]), torch.rand(6))
    model = ov.convert_model(module, example_input=example)
    folder = DATA / "embedding"
    folder.mkdir(parents=True, exist_ok=True)
    ov.save_model(model, str(folder / "torch_bags.xml"), compress_to_fp16=False)
    names = [p.output(0).get_any_name() for p in model.get_parameters()]
    arrays = {}
    for case, (idx, off) in enumerate((([1, 2, 4, 5, 4, 3], [0, 2, 2, 5]), ([0, 9, 9, 9, 1, 7, 7, 2], [0, 1, 1, 6]))):
        inputs = (torch.tensor(idx), torch.tensor(off), torch.rand(len(idx)))
        arrays.update({f"case{case}_{name}": t.numpy() for name, t in zip(names, inputs)})
        with torch.no_grad():
            arrays.update({f"case{case}_out{j}": t.numpy() for j, t in enumerate(module(*inputs))})
    np.savez(folder / "torch_bags_expected.npz", **arrays)


class Searches(torch.nn.Module):
    def forward(self, x, boundaries, rows):
        return (torch.bucketize(x, boundaries), torch.bucketize(x, boundaries, right=True, out_int32=True),
                torch.searchsorted(rows, x), torch.searchsorted(rows, x, right=True))


def searches() -> None:
    x = torch.tensor([[0.5, 2.0, 7.0], [-1.0, 3.0, 3.5]])
    boundaries = torch.tensor([0.0, 2.0, 3.0, 5.0])
    rows = torch.tensor([[0.0, 1.0, 2.0, 4.0], [3.0, 3.0, 3.0, 9.0]])
    model = ov.convert_model(Searches(), example_input=(x, boundaries, rows))
    folder = DATA / "search"
    folder.mkdir(parents=True, exist_ok=True)
    ov.save_model(model, str(folder / "torch_search.xml"), compress_to_fp16=False)
    names = [p.output(0).get_any_name() for p in model.get_parameters()]
    arrays = {name: t.numpy() for name, t in zip(names, (x, boundaries, rows))}
    arrays.update({f"out{j}": t.numpy() for j, t in enumerate(Searches()(x, boundaries, rows))})
    np.savez(folder / "torch_search_expected.npz", **arrays)


if __name__ == "__main__":
    embedding_bags()
    searches()
