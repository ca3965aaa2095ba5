"""Einsum-7: equations (explicit and implicit outputs, ellipsis with broadcasting, repeated labels/diagonals),
shapes as OpenVINO infers them, values within the stated bound (K·eps·sum|products| of the exact result) and
close to the CPU plugin (Einsum has no reference evaluate), seeded differential runs."""

from __future__ import annotations

import numpy as np
import pytest

ov = pytest.importorskip("openvino")
from openvino import opset13  # noqa: E402

import ir_runner  # noqa: E402
from ir_runner.errors import IRError  # noqa: E402
from ir_runner.ops.linalg.einsum import parse_equation  # noqa: E402
from tests.helpers.optest import check_inference, check_output_shapes, check_run, cpu_outputs, write_ir  # noqa: E402
from tests.helpers.ov_random import parameter  # noqa: E402


def _params(shapes, et=ov.Type.f32):
    def shape(s):
        if s is None:
            return ov.PartialShape.dynamic()
        return ov.PartialShape([ov.Dimension(*d) if isinstance(d, tuple) else d for d in s])

    return [opset13.parameter(shape(s), et, name=f"x{i}") for i, s in enumerate(shapes)]


CASES = [
    ("ab,bc->ac", [[2, 3], [3, 4]]), ("ij->ji", [[2, 5]]), ("ii->i", [[3, 3]]), ("ij,jk", [[2, 3], [3, 4]]),
    ("...ij,...jk->...ik", [[2, 1, 3, 4], [5, 4, 2]]), ("a...->...a", [[2, 3, 4]]),
    ("abc,abd->cd", [[2, 3, 4], [2, 3, 5]]), ("i,i->", [[7], [7]]), ("bij,bjk->bik", [[-1, 2, 3], [-1, 3, 4]]),
    ("iij->ji", [[3, 3, 2]]), ("aA,Ab->ab", [[2, 3], [3, 4]]),
    ("...", [[2, 3]]), ("ab...,b->a...", [[2, 3, 4, 5], [3]]), ("i,j->ij", [[3], [4]]), ("ijk", [[2, -1, 3]]),
    # dynamic ranks and dims labelled alike that broadcast, as OpenVINO 2026 infers them (found by the fuzzer)
    ("ij,jk", [[3, 2], None]), ("i,j->ij", [None, [-1]]), ("ii->i", [None]), ("...,i", [None, [3]]),
    ("ij,ij->ij", [[1, (0, 3)], [1, 1]]), ("ij,ij->ij", [[1, 1], [1, (0, 3)]]), ("ij,jk->ik", [[2, 1], [3, 4]]),
    ("ij,ij->ij", [[(2, 5), -1], [(3, 7), 3]]), ("ii->i", [[(2, 5), (3, 7)]]),
    ("aab->ab", [[-1, (1, 5), (0, 3)]]), ("aab->ab", [[1, (0, 4), (2, 4)]]),  # (within one input: merged)
]


@pytest.mark.parametrize("equation, shapes", CASES)
def test_einsum_shapes(equation, shapes, tmp_path):
    params = _params(shapes)
    node = opset13.einsum(params, equation)
    path = write_ir(node, params, tmp_path)
    check_inference(path)
    check_output_shapes(path, node)


def test_implicit_output_is_ellipsis_then_single_labels_sorted():
    assert parse_equation("ba,Ac", 2) == ([["b", "a"], ["A", "c"]], ["A", "a", "b", "c"])
    assert parse_equation("b...a,ab", 2) == ([["b", "...", "a"], ["a", "b"]], ["..."])
    assert parse_equation("i i -> i", 1) == ([["i", "i"]], ["i"])
    for bad in ("ab,bc->ad", "a..b", "a1->a", "ab->aa", "a->b->c"):
        assert isinstance(parse_equation(bad, bad.count(",") + 1), str), bad


@pytest.mark.parametrize("equation, shapes", [("ab,bc->ac", [[2, 3], [4, 4]]), ("ii->i", [[2, 3]]),
                                              ("ab,b->a", [[2, 3]] * 2)])
def test_einsum_bad_shapes_are_inference_errors(equation, shapes, tmp_path):
    params = _params([[2, 3], [3, 4]][:len(shapes)] if equation != "ii->i" else [[3, 3]])
    path = write_ir(opset13.einsum(params, equation if equation != "ab,b->a" else "ab,bc->ac"), params, tmp_path)
    text = path.read_text()
    if equation == "ii->i":
        text = text.replace("<dim>3</dim>\n\t\t\t\t\t<dim>3</dim>", "<dim>2</dim>\n\t\t\t\t\t<dim>3</dim>", 1)
    elif equation == "ab,b->a":
        text = text.replace('equation="ab,bc->ac"', 'equation="ab,b->a"')
    else:
        text = text.replace('<dim>3</dim>\n\t\t\t\t\t<dim>4</dim>', "<dim>4</dim>\n\t\t\t\t\t<dim>4</dim>", 1)
    path.write_text(text)
    with pytest.raises(IRError):
        ir_runner.load(str(path))


def _check_bound(equation, arrays, got, dtype):
    """|got - exact| <= 2·K·eps·sum|products| element-wise (K: the products summed per output element)."""
    exact = np.einsum(equation, *[a.astype(np.float64) for a in arrays])
    magnitude = np.einsum(equation, *[np.abs(a.astype(np.float64)) for a in arrays])
    labels, output = parse_equation(equation, len(arrays))
    k = max(1, int(np.prod([n for a, lab in zip(arrays, labels) for n, x in zip(a.shape, lab) if x not in output])))
    eps = float(np.finfo(dtype).eps)
    assert np.all(np.abs(got.astype(np.float64) - exact) <= 2 * k * eps * magnitude + np.finfo(dtype).tiny)


STATIC_CASES = [c for c in CASES if all(s is not None and all(isinstance(d, int) and d >= 0 for d in s) for s in c[1])]


@pytest.mark.parametrize("equation, shapes", STATIC_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_einsum_values_within_bound_and_near_cpu(equation, shapes, dtype, tmp_path):
    rng = np.random.default_rng(len(equation))
    params = _params(shapes, ov.Type(np.dtype(dtype)))
    path = write_ir(opset13.einsum(params, equation), params, tmp_path)
    feeds = {f"x{i}": rng.standard_normal(s).astype(dtype) for i, s in enumerate(shapes)}
    got = next(iter(ir_runner.load(str(path)).run(feeds).values()))
    assert got.dtype == dtype
    _check_bound(equation, list(feeds.values()), got, dtype)
    if dtype == np.float32:
        want = cpu_outputs(path, feeds)[0]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_einsum_integers_are_exact_and_wrap(tmp_path):
    params = _params([[2, 3], [3, 2]], ov.Type.i32)
    path = write_ir(opset13.einsum(params, "ab,bc->ac"), params, tmp_path)
    a = np.full((2, 3), 2**30, np.int32)
    got = next(iter(ir_runner.load(str(path)).run({"x0": a, "x1": np.full((3, 2), 3, np.int32)}).values()))
    wrapped = int(np.array(9 * 2**30, np.int64).astype(np.int32))
    assert got.dtype == np.int32 and got.tolist() == [[wrapped] * 2] * 2


@pytest.mark.parametrize("seed", range(20))
def test_einsum_differential(seed, tmp_path):
    rng = np.random.default_rng(seed)
    letters = "abcde"
    sizes = {c: int(rng.integers(1, 4)) for c in letters}
    inputs = []
    for _ in range(int(rng.integers(1, 3))):
        inputs.append("".join(rng.choice(list(letters), size=int(rng.integers(1, 4)), replace=False)))
    used = sorted(set("".join(inputs)))
    output = "".join(c for c in used if rng.random() < 0.5)
    equation = ",".join(inputs) + "->" + output
    shapes = [[sizes[c] for c in s] for s in inputs]
    params = _params(shapes)
    node = opset13.einsum(params, equation)
    path = write_ir(node, params, tmp_path)
    check_inference(path)
    feeds = {f"x{i}": rng.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    got = next(iter(ir_runner.load(str(path)).run(feeds).values()))
    _check_bound(equation, list(feeds.values()), got, np.float32)
    np.testing.assert_allclose(got, cpu_outputs(path, feeds)[0], rtol=1e-5, atol=1e-5)


# -- empty and scalar tensors --------------------------------------------------------------------------------

def test_empty_sum(tmp_path):
    a, b = parameter("a", "f32", [2, 0]), parameter("b", "f32", [0, 3])
    path = write_ir(opset13.einsum([a, b], "ab,bc->ac"), [a, b], tmp_path)
    check_run(path, {"a": np.zeros((2, 0), np.float32), "b": np.zeros((0, 3), np.float32)}, oracle=cpu_outputs)
