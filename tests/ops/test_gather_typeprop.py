"""Gather-1/7/8 type and shape inference, ported from OpenVINO's ``src/core/tests/type_prop/gather.cpp``.

Every expected value was checked against the real OpenVINO 2026.4.1 reading the same IR,
except where ir-run deliberately differs (marked below): a non-constant axis and
``batch_dims < -rank(indices)`` are rejected. OpenVINO's rank-interval cases
(``PartialShape::dynamic(Rank(3, 5))``) are ported with a fully dynamic rank, which IR can express.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import ir_runner
from tests.helpers.irbuild import IRBuilder, port_dims, read_with_openvino

ALL = ("opset1", "opset7", "opset8")
V78 = ("opset7", "opset8")
TYPE_VERSION = {"opset1": "Gather-1", "opset7": "Gather-7", "opset8": "Gather-8"}


def build_gather(
    data,
    indices,
    axis,
    version="opset8",
    batch_dims=None,
    *,
    data_et="f32",
    idx_et="i32",
    axis_et="i64",
    axis_shape=(),
    axis_from=None,
    indices_value=None,
    out=None,
):
    """IR with one Gather layer named ``my_gather``.

    ``axis`` is an int (a Const of ``axis_et`` and ``axis_shape``; with ``axis_from`` the
    Const has that type and a Convert to ``axis_et`` follows) or ``"param"`` (a Parameter).
    ``indices_value`` makes the indices a Const instead of a Parameter.
    """
    b = IRBuilder("gather")
    d = b.parameter("data", data_et, data)
    if indices_value is None:
        i = b.parameter("indices", idx_et, indices)
    else:
        i = b.const("indices", np.asarray(indices_value), idx_et)
    if axis == "param":
        a = b.parameter("axis", axis_et, ",".join(map(str, axis_shape)))
    elif axis_from is None:
        a = b.const("axis", np.full(axis_shape, axis), axis_et)
    else:
        a = b.convert(b.const("axis", np.full(axis_shape, axis), axis_from), axis_et)
    if version == "opset1":
        attrs = None
    else:
        attrs = {} if batch_dims is None else {"batch_dims": batch_dims}
    spec = (data_et, [] if out is None else out)
    g = b.layer("Gather", version, [d, i, a], attrs=attrs, out_specs=[spec], name="my_gather")
    b.result(g)
    return b.build()


def load(built):
    """Load ``(xml, bin)`` with ir_runner."""
    xml, weights = built
    return ir_runner.load(xml, weights or None)


def check_output(model, expected: str, element_type: str) -> None:
    """The single output has partial shape ``expected`` and ``element_type``."""
    (out,) = model.outputs
    assert str(out.partial_shape) == expected
    dims = port_dims(expected)
    shape = None if dims is None else tuple(None if d == -1 else d for d in dims)
    assert out.shape == shape
    assert out.element_type == element_type


def check_error(built, version, *patterns: str) -> str:
    """Loading fails with IRError naming layer ``my_gather``, its Type-version and every pattern."""
    with pytest.raises(ir_runner.IRError) as info:
        load(built)
    msg = str(info.value)
    assert "my_gather" in msg, msg
    assert TYPE_VERSION[version] in msg, msg
    for pat in patterns:
        assert re.search(pat, msg, re.IGNORECASE), f"{pat!r} not in {msg!r}"
    return msg


def cases(rows):
    """Expand ``(id, versions, args...)`` rows into one pytest.param per version."""
    return [
        pytest.param(version, *args, id=f"{name}-{version}") for name, versions, *args in rows for version in versions
    ]


# (name, versions, data, indices, axis, batch_dims, expected output)
VALID = [
    # --- ported from gather.cpp ---
    ("axis_0", ALL, "3,2", "2,2", 0, None, "[2,2,2]"),
    ("axis_1", ALL, "3,3", "1,2", 1, None, "[3,1,2]"),
    ("negative_axis", ALL, "5,6,7", "4", -2, None, "[5,4,7]"),
    (
        "dynamic_pshape_batch_dims_1_axis_1",
        V78,
        "1..7,20,20",
        "7..10,3,8",
        1,
        1,
        "[7,3,8,20]",
    ),
    (
        "dynamic_pshape_batch_dims_1_axis_3",
        V78,
        "1..7,1..3,200,400",
        "7..10,2..10,3,8",
        3,
        1,
        "[7,1..3,200,2..10,3,8]",
    ),
    (
        "dynamic_2d_pshape_batch_dim",
        V78,
        "1..7,1..3,200,400",
        "7..10,2..10,3,8",
        2,
        2,
        "[7,2..3,3,8,400]",
    ),
    (
        "dynamic_2d_pshape_batch_dim_axis_3",
        V78,
        "1..7,1..3,200,400",
        "7..10,2..10,3,8",
        3,
        2,
        "[7,2..3,200,3,8]",
    ),
    ("dynamic_rank", V78, "1..7,1..3,200,400", "...", 3, 2, "[...]"),
    ("axis_boundcheck_for_dynamic_data_rank", V78, "...", "7,3,8", 3, 2, "[...]"),
    (
        "dynamic_rank_negative_batch_dims",
        V78,
        "1..7,1..3,200,400",
        "...",
        3,
        -2,
        "[...]",
    ),
    (
        "dim_no_bound_pshape_batch_dims_1_axis_3",
        ("opset8",),
        "7..,..3,200,400",
        "7..10,2..10,3,8",
        3,
        1,
        "[7..10,..3,200,2..10,3,8]",
    ),
    ("use_default_ctor", ("opset8",), "2,1,200,400", "2,2", -1, 1, "[2,1,200,2]"),
    # --- 0-D indices remove the axis ---
    ("scalar_indices_axis_0", ALL, "3,4", "", 0, None, "[4]"),
    ("scalar_indices_axis_1", ALL, "3,4", "", 1, None, "[3]"),
    ("scalar_indices_axis_-1", ALL, "3,4", "", -1, None, "[3]"),
    ("scalar_indices_dynamic_data", ALL, "?,4", "", 0, None, "[4]"),
    ("scalar_indices_1d_data", ALL, "5", "", 0, None, "[]"),
    # --- dynamic dims and ranks ---
    ("dynamic_dim_kept", ALL, "?,1..10,3", "2", 1, None, "[?,2,3]"),
    ("intervals_around_axis", ALL, "2..,..5,3", "?,4", -1, None, "[2..,..5,?,4]"),
    ("indices_dynamic_rank", ALL, "3,4", "...", 1, None, "[...]"),
    ("indices_dynamic_rank_negative_axis", ALL, "3,4", "...", -1, None, "[...]"),
    ("data_dynamic_rank_negative_axis", ALL, "...", "2,2", -1, None, "[...]"),
    ("data_dynamic_rank_large_axis", ALL, "...", "2,2", 5, None, "[...]"),
    ("zero_sized_data", ALL, "0,3", "2", 1, None, "[0,2]"),
    ("zero_sized_indices", ALL, "0,3", "0", 0, None, "[0,3]"),
    # --- batch_dims ---
    ("spec_example_2", V78, "2,5", "2,3", 1, 1, "[2,3]"),
    ("spec_example_3", V78, "2,2,5", "2,2,3", 2, 2, "[2,2,3]"),
    ("spec_example_4_axis_gt_batch_dims", V78, "2,1,5,4", "2,3", 2, 1, "[2,1,3,4]"),
    ("spec_example_5_negative_batch_dims", V78, "2,5", "2,3", 1, -1, "[2,3]"),
    ("batch_dims_minus_indices_rank_is_0", V78, "2,3", "2,3", 1, -2, "[2,2,3]"),
    ("batch_dims_equals_axis_and_indices_rank", V78, "2,3,4", "2,3", 2, 2, "[2,3]"),
    ("batch_dims_explicit_0", V78, "3,2", "2,2", 0, 0, "[2,2,2]"),
    ("batch_dim_dynamic_data_takes_indices", V78, "?,5", "3,2", 1, 1, "[3,2]"),
    ("batch_dim_intervals_intersect", V78, "2..4,5", "3..6,2", 1, 1, "[3..4,2]"),
    ("batch_dims_dynamic_indices_rank", V78, "2,3", "...", 1, 1, "[...]"),
]


@pytest.mark.parametrize(("version", "data", "indices", "axis", "batch_dims", "expected"), cases(VALID))
def test_gather_infers(version, data, indices, axis, batch_dims, expected):
    """Gather infers OpenVINO's output partial shape; the element type is data's."""
    model = load(build_gather(data, indices, axis, version, batch_dims, out=expected))
    check_output(model, expected, "f32")


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("data_et", ["f16", "bf16", "f64", "i8", "i32", "i64", "u8", "u64", "boolean"])
def test_gather_output_element_type(version, data_et):
    """The output element type is data's, whatever it is."""
    built = build_gather("3,2", "2", 0, version, data_et=data_et, out="2,2")
    check_output(load(built), "[2,2]", data_et)


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("idx_et", ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"])
def test_gather_integer_indices(version, idx_et):
    """Any integer indices type is accepted (ported: gather_v1_uint8)."""
    built = build_gather("3,2", "2,2", 0, version, idx_et=idx_et, out="2,2,2")
    check_output(load(built), "[2,2,2]", "f32")


def test_gather_1_float_indices():
    """Gather-1 accepts float indices at construction (ported: gather_v1_float32)."""
    built = build_gather("3,2", "2,2", 0, "opset1", idx_et="f32", out="2,2,2")
    check_output(load(built), "[2,2,2]", "f32")


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize(
    ("axis_et", "axis_shape"),
    [("i64", ()), ("i64", (1,)), ("i32", ()), ("i32", (1,)), ("u8", ()), ("i8", (1,))],
)
def test_gather_axis_const_types(version, axis_et, axis_shape):
    """The axis may be any integer Const, scalar or of shape [1]."""
    built = build_gather(
        "5,6,7",
        "4",
        -2 if axis_et[0] == "i" else 1,
        version,
        axis_et=axis_et,
        axis_shape=axis_shape,
        out="5,4,7",
    )
    check_output(load(built), "[5,4,7]", "f32")


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize(
    ("axis_from", "axis_et", "axis_shape"),
    [("i32", "i64", ()), ("i64", "i32", (1,)), ("u8", "i64", ())],
)
def test_gather_axis_behind_convert(version, axis_from, axis_et, axis_shape):
    """A Const axis seen through a Convert still counts as constant."""
    built = build_gather(
        "5,6,7",
        "4",
        2,
        version,
        axis_et=axis_et,
        axis_from=axis_from,
        axis_shape=axis_shape,
        out="5,6,4",
    )
    check_output(load(built), "[5,6,4]", "f32")


@pytest.mark.parametrize("version", ALL)
def test_gather_const_indices(version):
    """Indices from a Const infer like indices from a Parameter."""
    built = build_gather("3,4", None, 1, version, idx_et="i64", indices_value=[[0, 3, -1]], out="3,1,3")
    check_output(load(built), "[3,1,3]", "f32")


# (name, versions, data, indices, axis, batch_dims, keyword patterns)
AXIS_RANGE = (r"axis", r"range|rank|bound")
BATCH = (r"batch.?dims",)
OV_ACCEPTS = "batch_dims_below_minus_indices_rank"  # OpenVINO builds it; ir-run refuses
INVALID = [
    # --- ported from gather.cpp ---
    ("axis_out_of_input_rank", ALL, "5,6", "4", 2, None, AXIS_RANGE),
    ("negative_axis_out_of_input_rank", ALL, "5,6", "4", -3, None, AXIS_RANGE),
    ("dynamic_batch_dims_inconsistent", V78, "1..7,20,20", "8..10,3,8", 1, 1, BATCH),
    ("batch_dims_less_check", V78, "1,3,20", "1,3,8", 1, 2, (*BATCH, r"axis")),
    (
        "batch_dims_less_indices_rank_check",
        V78,
        "1,20,20,22,22",
        "1,3",
        4,
        3,
        (*BATCH, r"indices|rank"),
    ),
    # --- more ---
    ("scalar_data", ALL, "", "2", 0, None, (r"axis",)),
    ("batch_dims_static_mismatch", V78, "2,5", "3,3", 1, -1, BATCH),
    ("batch_dims_greater_than_axis_0", V78, "2,1,200,400", "2,2", 0, 1, BATCH),
    ("batch_dims_greater_than_negative_axis", V78, "2,1,200,400", "2,2", -4, 1, BATCH),
    (
        "batch_dims_greater_than_axis_dynamic_data_rank",
        V78,
        "...",
        "7,3,8",
        1,
        2,
        BATCH,
    ),
    ("batch_dims_greater_than_data_rank", V78, "2", "2,3", 0, 1, BATCH),
    # ir-run rejects what OpenVINO accepts (and then computes garbage with):
    (OV_ACCEPTS, V78, "2,5", "2,3", 1, -3, BATCH),
    ("batch_dims_far_below_minus_indices_rank", V78, "2,3,4", "2,3", 2, -5, BATCH),
]


@pytest.mark.parametrize(("version", "data", "indices", "axis", "batch_dims", "patterns"), cases(INVALID))
def test_gather_rejects(version, data, indices, axis, batch_dims, patterns):
    """Invalid Gather inputs raise IRError naming the layer and the problem."""
    check_error(build_gather(data, indices, axis, version, batch_dims), version, *patterns)


@pytest.mark.parametrize("version", V78)
@pytest.mark.parametrize("idx_et", ["f32", "f16", "bf16", "f64", "boolean"])
def test_gather_7_8_reject_non_integer_indices(version, idx_et):
    """Gather-7/8 indices must be integers (ported: gather_7/8_indices_type_check)."""
    built = build_gather("1,20,20,22,22", "1,3", 4, version, idx_et=idx_et)
    check_error(built, version, r"indices", r"integ|type")


@pytest.mark.parametrize("version", V78)
@pytest.mark.parametrize("axis_et", ["f32", "f16"])
def test_gather_7_8_reject_float_axis(version, axis_et):
    """Gather-7/8 axis must be an integer (ported: gather_7/8_axis_type_check)."""
    built = build_gather("1,20,20,22,22", "1,3", 4, version, axis_et=axis_et)
    check_error(built, version, r"axis", r"integ|type")


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("axis_shape", [(2,), (1, 2)])
def test_gather_reject_axis_with_several_elements(version, axis_shape):
    """The axis must be a scalar or have one element (ported: incorrect_axis_shape)."""
    built = build_gather("5,6", "4", 0, version, axis_shape=axis_shape)
    check_error(built, version, r"axis", r"scalar|element|shape")


@pytest.mark.parametrize("version", ALL)
@pytest.mark.parametrize("axis_shape", [(), (1,)])
def test_gather_axis_fed_at_run_time_infers_the_rank_and_runs(version, axis_shape):
    """An axis fed by a Parameter: inference knows the rank only (as OpenVINO's axis_not_set), and each run
    is planned for the axis value it is given."""
    built = build_gather("2,3,4", "2,2", "param", version, axis_et="i32", axis_shape=axis_shape,
                         out="-1,-1,-1,-1")
    model = load(built)
    check_output(model, "[?,?,?,?]", "f32")
    data = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    indices = np.array([[1, 0], [0, 1]], dtype=np.int32)
    for axis in (0, 1, 2, -1):
        got = model.run({"data": data, "indices": indices, "axis": np.full(axis_shape, axis, np.int32)})
        np.testing.assert_array_equal(next(iter(got.values())), np.take(data, indices, axis=axis))
    with pytest.raises(ir_runner.InputError, match=r"my_gather.*axis=3 is out of the range"):
        model.run({"data": data, "indices": indices, "axis": np.full(axis_shape, 3, np.int32)})


def test_gather_axis_fed_at_run_time_shape_agrees_with_openvino():
    """OpenVINO infers the same dynamic shape of known rank for a Gather whose axis is a Parameter."""
    pytest.importorskip("openvino")
    built = build_gather("2,3,4", "2,2", "param", "opset8", axis_et="i32", out="-1,-1,-1,-1")
    out = read_with_openvino(*built).outputs[0]
    assert str(out.get_partial_shape()) == str(load(built).outputs[0].partial_shape)


# --- the tables above are OpenVINO's behaviour -----------------------------------------


@pytest.mark.parametrize(("version", "data", "indices", "axis", "batch_dims", "expected"), cases(VALID))
def test_valid_table_matches_openvino(version, data, indices, axis, batch_dims, expected):
    """The real OpenVINO reads the same IR and infers the expected shape and type."""
    pytest.importorskip("openvino")
    out = read_with_openvino(*build_gather(data, indices, axis, version, batch_dims, out=expected)).outputs[0]
    assert (str(out.get_partial_shape()), out.get_element_type().get_type_name()) == (expected, "f32")


@pytest.mark.parametrize(("version", "data", "indices", "axis", "batch_dims", "patterns"), cases(INVALID))
def test_invalid_table_rejected_by_openvino(request, version, data, indices, axis, batch_dims, patterns):
    """The real OpenVINO refuses the invalid IRs too, except the one ir-run rejects on purpose."""
    pytest.importorskip("openvino")
    built = build_gather(data, indices, axis, version, batch_dims)
    if request.node.callspec.id.startswith(OV_ACCEPTS + "-"):
        read_with_openvino(*built)  # OpenVINO accepts batch_dims < -rank(indices); ir-run does not
    else:
        with pytest.raises(RuntimeError):
            read_with_openvino(*built)
