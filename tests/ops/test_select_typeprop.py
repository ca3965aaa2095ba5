"""Select-1 type and shape inference, ported from OpenVINO's ``src/core/tests/type_prop/select.cpp``.

Every expected value was checked against the real OpenVINO 2026.4.1 reading the same IR.
Cases that OpenVINO's C++ tests build with ``element::dynamic`` inputs are ported with
concrete element types (IR Parameters of type ``dynamic`` are out of scope here).
"""

from __future__ import annotations

import re

import ml_dtypes
import numpy as np
import pytest

import ir_runner
from tests.helpers.irbuild import IRBuilder, port_dims, read_with_openvino

NUMPY = {"auto_broadcast": "numpy"}
NONE = {"auto_broadcast": "none"}
F32 = ("boolean", "f32", "f32")


def pdpd(axis: int | None = None) -> dict:
    """Attributes of a pdpd Select, with ``auto_broadcast.auto_broadcast_axis`` when given."""
    attrs = {"auto_broadcast": "pdpd"}
    if axis is not None:
        attrs["auto_broadcast.auto_broadcast_axis"] = axis
    return attrs


def build_select(
    cond,
    then,
    else_,
    attrs=NUMPY,
    ets=F32,
    out=None,
    *,
    in_specs=None,
    out_precision=None,
):
    """IR with one Select-1 layer named ``my_select`` over three Parameters; ``out`` is the declared output."""
    b = IRBuilder("select")
    params = [b.parameter(n, et, s) for n, et, s in zip(("cond", "then", "else"), ets, (cond, then, else_))]
    spec = (out_precision or ets[1], then if out is None else out)
    sel = b.layer(
        "Select",
        "opset1",
        params,
        attrs=attrs,
        out_specs=[spec],
        in_specs=in_specs,
        name="my_select",
    )
    b.result(sel)
    return b.build()


def load(built):
    """Load ``(xml, bin)`` with ir_runner."""
    xml, weights = built
    return ir_runner.load(xml, weights or None)


def expected_shape_tuple(expected: str):
    """``Model.outputs[i].shape`` expected for an OpenVINO-style partial-shape string."""
    dims = port_dims(expected)
    if dims is None:
        return None
    return tuple(None if d == -1 else d for d in dims)


def check_output(model, expected: str, element_type: str) -> None:
    """The single output has partial shape ``expected`` and ``element_type``."""
    (out,) = model.outputs
    assert str(out.partial_shape) == expected
    assert out.shape == expected_shape_tuple(expected)
    assert out.element_type == element_type


def check_error(built, *patterns: str, kind=ir_runner.IRError, type_version: bool = True) -> str:
    """Loading fails with ``kind``; the message names the layer and matches every pattern."""
    with pytest.raises(kind) as info:
        load(built)
    msg = str(info.value)
    assert "my_select" in msg, msg
    if type_version:
        assert "Select-1" in msg, msg
    for pat in patterns:
        assert re.search(pat, msg, re.IGNORECASE), f"{pat!r} not in {msg!r}"
    return msg


# (cond, then, else, attrs, element types, expected output partial shape)
VALID = [
    # --- ported from select.cpp ---
    pytest.param("2,4", "2,4", "2,4", NUMPY, F32, "[2,4]", id="select_deduce"),
    pytest.param("2,4", "2,4", "2,4", NONE, F32, "[2,4]", id="default_constructor_none"),
    pytest.param(
        "2..8,3..7,1..10,1..6,1..10",
        "?,?,?,?,?",
        "1..5,1..11,5,1..8",
        NUMPY,
        F32,
        "[2..8,3..7,?,5,?]",
        id="select_dynamic",
    ),
    pytest.param(
        "?,2,1,3,1,2..5,1..8,5..,..5",
        "?,2,4,1,1,1..5,2..8,5..,..5",
        "?,2,1,3,5,1..7,1..8,5..,..5",
        NUMPY,
        F32,
        "[?,2,4,3,5,2..5,2..8,5..,..5]",
        id="all_params_numpy",
    ),
    pytest.param(
        "?,2,4,3,5,2..5,2..8,5..,..5",
        "?,2,4,3,5,2..5,2..8,5..,..5",
        "?,2,4,3,5,2..5,2..8,5..,..5",
        NONE,
        F32,
        "[?,2,4,3,5,2..5,2..8,5..,..5]",
        id="all_params_none",
    ),
    pytest.param(
        "?,2,1,1,1,1..5,1..8,5..,..5",
        "?,2,4,3,5,2..5,2..8,5..,..5",
        "?,2,1,3,1,1..5,1..8,5..,..5",
        pdpd(),
        F32,
        "[?,2,4,3,5,2..5,2..8,5..,..5]",
        id="all_params_pdpd",
    ),
    pytest.param(
        "?,2,1,1,1,1..5,1..8,5..,..5",
        "?,2,4,3,5,2..5,2..8,5..,..5",
        "?,2,1,3,1,1..5,1..8,5..,..5",
        pdpd(-1),
        F32,
        "[?,2,4,3,5,2..5,2..8,5..,..5]",
        id="all_params_pdpd_axis_-1",
    ),
    pytest.param("...", "...", "...", NUMPY, F32, "[...]", id="partial_all_rank_dynamic"),
    pytest.param(
        "2,?,?",
        "?,8,?",
        "?,?,3",
        NUMPY,
        F32,
        "[2,8,3]",
        id="partial_all_rank_static_dynamic_ok",
    ),
    pytest.param("2,4", "2,4", "2,4", NONE, F32, "[2,4]", id="deduce_v1_none"),
    pytest.param("2,4", "2,4", "2,4", NUMPY, F32, "[2,4]", id="deduce_v1_numpy"),
    pytest.param("", "2,4", "2,4", NUMPY, F32, "[2,4]", id="deduce_v1_scalar_cond"),
    pytest.param("", "4", "2,4", NUMPY, F32, "[2,4]", id="deduce_v1_scalar_cond_then_1d"),
    pytest.param("", "2,4", "4", NUMPY, F32, "[2,4]", id="deduce_v1_scalar_cond_else_1d"),
    pytest.param(
        "4",
        "2,4",
        "4",
        NUMPY,
        ("boolean", "i8", "i8"),
        "[2,4]",
        id="deduce_v1_i8_then_2d",
    ),
    pytest.param(
        "4",
        "4",
        "2,4",
        NUMPY,
        ("boolean", "i8", "i8"),
        "[2,4]",
        id="deduce_v1_i8_else_2d",
    ),
    pytest.param("2,4", "2,4", "2", pdpd(0), F32, "[2,4]", id="deduce_v1_pdpd_axis0"),
    pytest.param("4", "2,4", "4", pdpd(1), F32, "[2,4]", id="deduce_v1_pdpd_axis1"),
    pytest.param("1", "2,4", "4", pdpd(1), F32, "[2,4]", id="deduce_v1_pdpd_axis1_cond_1"),
    pytest.param("4", "4,2,3,8", "4,2,3,1", pdpd(0), F32, "[4,2,3,8]", id="deduce_v1_pdpd_rank4"),
    pytest.param("...", "2,4", "2,4", NONE, F32, "[2,4]", id="v1_partial_shape_none"),
    pytest.param("?", "?", "2,?", NUMPY, F32, "[2,?]", id="v1_partial_shape_autob"),
    # --- numpy: semantics.md and measured OpenVINO behaviour ---
    pytest.param(
        "2,3,4,5",
        "4,5",
        "4,5",
        NUMPY,
        F32,
        "[2,3,4,5]",
        id="numpy_cond_broadcasts_both_ways",
    ),
    pytest.param("2,1,5", "3,1", "1,1,1", NUMPY, F32, "[2,3,5]", id="numpy_all_three_broadcast"),
    pytest.param("", "", "", NUMPY, F32, "[]", id="numpy_all_scalars"),
    pytest.param("0,1", "1,3", "1,3", NUMPY, F32, "[0,3]", id="numpy_zero_sized"),
    pytest.param("0,1", "1,3", "1,1", NUMPY, F32, "[0,3]", id="numpy_zero_sized_else_ones"),
    pytest.param(
        "2,4",
        "2,4",
        "4",
        {"auto_broadcast": "NUMPY"},
        F32,
        "[2,4]",
        id="numpy_uppercase",
    ),
    pytest.param("2,4", "2,4", "4", {}, F32, "[2,4]", id="numpy_default_attr_absent"),
    pytest.param("2,4", "2,4", "4", None, F32, "[2,4]", id="numpy_default_data_absent"),
    pytest.param("2..", "..5", "?", NUMPY, F32, "[2..]", id="numpy_interval_lower_bound"),
    pytest.param("2..,1", "..5,1", "1,3", NUMPY, F32, "[2..,3]", id="numpy_interval_with_ones"),
    pytest.param("1..3", "1..3", "5", NUMPY, F32, "[5]", id="numpy_intervals_containing_1"),
    pytest.param("...", "2,4", "2,4", NUMPY, F32, "[...]", id="numpy_cond_dynamic_rank"),
    pytest.param("2,4", "2,4", "...", NUMPY, F32, "[...]", id="numpy_else_dynamic_rank"),
    pytest.param("...", "?,?", "...", NUMPY, F32, "[...]", id="numpy_mixed_dynamic_rank"),
    pytest.param(
        "...",
        "1..3,4",
        "1,4",
        NUMPY,
        F32,
        "[...]",
        id="numpy_dynamic_rank_with_intervals",
    ),
    # --- none ---
    pytest.param(
        "2,4",
        "2,4",
        "2,4",
        {"auto_broadcast": "explicit"},
        F32,
        "[2,4]",
        id="none_spelled_explicit",
    ),
    pytest.param(
        "2,4",
        "2,4",
        "2,4",
        {"auto_broadcast": "None"},
        F32,
        "[2,4]",
        id="none_mixed_case",
    ),
    pytest.param("1..3,4", "2..5,4", "?,4", NONE, F32, "[2..3,4]", id="none_intervals_intersect"),
    pytest.param("?,4", "2,4", "2,?", NONE, F32, "[2,4]", id="none_dynamic_dims_merge"),
    pytest.param("2,4", "...", "2,4", NONE, F32, "[2,4]", id="none_then_dynamic_rank"),
    pytest.param("", "", "", NONE, F32, "[]", id="none_scalars"),
    # --- pdpd ---
    pytest.param(
        "2,4",
        "2,4",
        "2,4",
        {"auto_broadcast": "PDPD"},
        F32,
        "[2,4]",
        id="pdpd_uppercase",
    ),
    pytest.param("1,4", "2,4", "2,4", pdpd(0), F32, "[2,4]", id="pdpd_cond_leading_1"),
    pytest.param("2,1", "2,4", "2,4", pdpd(0), F32, "[2,4]", id="pdpd_cond_trailing_1"),
    pytest.param("2,4", "2,4", "1,4", pdpd(0), F32, "[2,4]", id="pdpd_else_leading_1"),
    pytest.param("4", "2,4", "4", pdpd(-1), F32, "[2,4]", id="pdpd_axis_-1_right_aligned"),
    pytest.param("2", "2,4", "2", pdpd(), F32, "[2,4]", id="pdpd_axis_absent_is_0"),
    pytest.param("1,1", "2,4", "2", pdpd(0), F32, "[2,4]", id="pdpd_cond_all_ones"),
    pytest.param("", "2,4", "", pdpd(0), F32, "[2,4]", id="pdpd_scalar_cond_else"),
    pytest.param("", "2,4", "", pdpd(-1), F32, "[2,4]", id="pdpd_scalar_cond_else_axis_-1"),
    pytest.param("4,1", "2,4,3", "4", pdpd(1), F32, "[2,4,3]", id="pdpd_middle_axis"),
    pytest.param("?", "2,4", "1..3", pdpd(1), F32, "[2,4]", id="pdpd_else_interval_with_1"),
    pytest.param("2,?", "2,4", "?", pdpd(0), F32, "[2,4]", id="pdpd_dynamic_cond_dims"),
    pytest.param("1,4", "?,4", "?,1", pdpd(0), F32, "[?,4]", id="pdpd_then_dynamic_kept"),
    pytest.param(
        "2..3,4",
        "?,4",
        "1,1",
        pdpd(0),
        F32,
        "[2..3,4]",
        id="pdpd_then_refined_by_cond_interval",
    ),
    pytest.param("2", "?,4", "?", pdpd(0), F32, "[2,4]", id="pdpd_then_refined_by_cond"),
    pytest.param("...", "2,4", "2,4", pdpd(0), F32, "[...]", id="pdpd_cond_dynamic_rank"),
    pytest.param("2,4", "...", "2,4", pdpd(0), F32, "[...]", id="pdpd_then_dynamic_rank"),
    pytest.param("0,1", "0,3", "0", pdpd(0), F32, "[0,3]", id="pdpd_zero_sized"),
    # --- element types ---
    *[
        pytest.param(
            "2,1",
            "2,4",
            "4",
            NUMPY,
            ("boolean", et, et),
            "[2,4]",
            id=f"element_type_{et}",
        )
        for et in (
            "f16",
            "bf16",
            "f64",
            "i8",
            "i16",
            "i32",
            "i64",
            "u8",
            "u16",
            "u32",
            "u64",
            "boolean",
        )
    ],
]


@pytest.mark.parametrize(("cond", "then", "else_", "attrs", "ets", "expected"), VALID)
def test_select_infers(cond, then, else_, attrs, ets, expected):
    """Select-1 infers OpenVINO's output partial shape and element type."""
    model = load(build_select(cond, then, else_, attrs, ets, out=expected))
    check_output(model, expected, ets[1])


@pytest.mark.parametrize(
    ("ets", "dtype"),
    [
        (("boolean", "f32", "f32"), np.dtype(np.float32)),
        (("boolean", "f16", "f16"), np.dtype(np.float16)),
        (("boolean", "bf16", "bf16"), np.dtype(ml_dtypes.bfloat16)),
        (("boolean", "i64", "i64"), np.dtype(np.int64)),
        (("boolean", "u64", "u64"), np.dtype(np.uint64)),
        (("boolean", "boolean", "boolean"), np.dtype(np.bool_)),
    ],
)
def test_select_output_dtype(ets, dtype):
    """The output's numpy dtype matches then/else's element type exactly."""
    model = load(build_select("2", "2", "2", NUMPY, ets, out="[2]"))
    assert model.outputs[0].dtype == dtype
    assert model.inputs[0].element_type == "boolean"
    assert model.inputs[0].dtype == np.dtype(np.bool_)


def test_select_const_inputs():
    """Select over Const inputs (cond from a boolean Const) infers like over Parameters."""
    b = IRBuilder("select_const")
    cond = b.const("cond", np.array([True, False, True]))
    then = b.parameter("then", "i32", "2,3")
    other = b.const("else", np.arange(3, dtype=np.int32))
    sel = b.layer(
        "Select",
        "opset1",
        [cond, then, other],
        attrs=NUMPY,
        out_specs=[("i32", "2,3")],
        name="my_select",
    )
    b.result(sel)
    check_output(load(b.build()), "[2,3]", "i32")


SHAPE = r"shape|broadcast|inconsistent|incompatib"
ET_WORDS = r"type"

# (cond, then, else, attrs, element types, patterns the message must match)
INVALID = [
    # --- ported from select.cpp ---
    pytest.param("3,5", "2,4", "2,4", NUMPY, F32, (SHAPE,), id="shape_mismatch_a"),
    pytest.param("2,4", "3,5", "2,4", NUMPY, F32, (SHAPE,), id="shape_mismatch_b"),
    pytest.param("2,4", "2,4", "3,5", NUMPY, F32, (SHAPE,), id="shape_mismatch_c"),
    pytest.param(
        "2,4",
        "2,4",
        "2,4",
        NUMPY,
        ("f32", "f32", "f32"),
        (r"bool", r"f32"),
        id="elem_mismatch_a",
    ),
    pytest.param(
        "2,4",
        "2,4",
        "2,4",
        NUMPY,
        ("boolean", "f32", "i32"),
        (ET_WORDS, r"f32", r"i32"),
        id="elem_mismatch_bc",
    ),
    pytest.param(
        "...",
        "...",
        "...",
        NUMPY,
        ("boolean", "f32", "i32"),
        (ET_WORDS, r"f32", r"i32"),
        id="partial_all_rank_dynamic_et_mismatch",
    ),
    pytest.param(
        "2,?,?",
        "?,8,?",
        "3,?,3",
        NUMPY,
        F32,
        (SHAPE,),
        id="intransitive_incompatibility",
    ),
    pytest.param(
        "2,4",
        "2,4",
        "2,4",
        NUMPY,
        ("i8", "f32", "f32"),
        (r"bool", r"i8"),
        id="v1_wrong_et",
    ),
    pytest.param(
        "2,4",
        "2,4",
        "2,4",
        NUMPY,
        ("boolean", "f32", "i8"),
        (ET_WORDS, r"f32", r"i8"),
        id="v1_et_mismatch",
    ),
    pytest.param("2,4", "2,3", "2,4", NUMPY, F32, (SHAPE,), id="v1_shape_mismatch"),
    pytest.param("3,?", "2,?", "2,4", NUMPY, F32, (SHAPE,), id="v1_partial_shape_mismatch"),
    # --- more element type errors ---
    pytest.param("2,4", "2,4", "2,4", NUMPY, ("u8", "f32", "f32"), (r"bool", r"u8"), id="cond_u8"),
    pytest.param(
        "2,4",
        "2,4",
        "2,4",
        NUMPY,
        ("boolean", "f32", "f16"),
        (ET_WORDS, r"f32", r"f16"),
        id="then_else_f32_f16",
    ),
    pytest.param(
        "2,4",
        "2,4",
        "2,4",
        NUMPY,
        ("boolean", "i64", "u64"),
        (ET_WORDS, r"i64", r"u64"),
        id="then_else_i64_u64",
    ),
    # --- numpy ---
    pytest.param("3,5", "2,3,4,5", "2,3,4,5", NUMPY, F32, (SHAPE,), id="numpy_cond_inconsistent"),
    pytest.param("2..3", "4..6", "?", NUMPY, F32, (SHAPE,), id="numpy_disjoint_intervals"),
    pytest.param(
        "2,4",
        "2,4",
        "2,4",
        {"auto_broadcast": "bogus"},
        F32,
        (r"auto_broadcast|bogus",),
        id="unknown_auto_broadcast",
    ),
    # --- none ---
    pytest.param("2,4", "2,4", "4", NONE, F32, (SHAPE,), id="none_needs_equal_shapes"),
    pytest.param(
        "2,4",
        "2,4",
        "4",
        {"auto_broadcast": "explicit"},
        F32,
        (SHAPE,),
        id="explicit_needs_equal_shapes",
    ),
    pytest.param("1,4", "2,4", "2,4", NONE, F32, (SHAPE,), id="none_cond_not_broadcast"),
    pytest.param("1..3,4", "4..5,4", "?,4", NONE, F32, (SHAPE,), id="none_disjoint_intervals"),
    # --- pdpd ---
    pytest.param("2,4", "1,4", "2,4", pdpd(0), F32, (r"else",), id="pdpd_then_never_broadcast"),
    pytest.param("4", "2,4", "4", pdpd(), F32, (r"else",), id="pdpd_axis_absent_is_not_-1"),
    pytest.param("2,4", "2,4", "3", pdpd(0), F32, (r"else",), id="pdpd_else_wrong_dim"),
    pytest.param("2,4", "2,4", "2,4,1", pdpd(0), F32, (r"else",), id="pdpd_else_rank_too_big"),
    pytest.param("1,4", "2,4", "4", pdpd(0), F32, (r"else",), id="pdpd_else_misplaced"),
    pytest.param(
        "?",
        "2,4",
        "5..6",
        pdpd(1),
        F32,
        (r"else",),
        id="pdpd_else_interval_without_dim",
    ),
    pytest.param("2,4,5", "2,4", "2,4", pdpd(0), F32, (r"cond",), id="pdpd_cond_rank_too_big"),
    pytest.param(
        "2",
        "2,4",
        "4",
        pdpd(-1),
        F32,
        (r"cond",),
        id="pdpd_cond_right_aligned_mismatch",
    ),
    pytest.param("3", "2,4", "2", pdpd(0), F32, (r"cond",), id="pdpd_cond_wrong_dim"),
    pytest.param("2,4", "2,4", "2,4", pdpd(-2), F32, (r"axis|broadcast",), id="pdpd_axis_-2"),
    pytest.param("4", "2,4", "4", pdpd(2), F32, (r"axis|broadcast",), id="pdpd_axis_past_rank"),
]


@pytest.mark.parametrize(("cond", "then", "else_", "attrs", "ets", "patterns"), INVALID)
def test_select_rejects(cond, then, else_, attrs, ets, patterns):
    """Invalid Select-1 inputs raise IRError naming the layer and the problem."""
    check_error(build_select(cond, then, else_, attrs, ets), *patterns)


# --- declared port specs against inferred ones ---------------------------------------


@pytest.mark.parametrize(
    ("declared", "precision"),
    [
        pytest.param("2,5", None, id="wrong_dim"),
        pytest.param("2,4,1", None, id="wrong_rank"),
        pytest.param("4", None, id="rank_too_small"),
        pytest.param([], None, id="no_dims_for_static"),
        pytest.param("2,4", "FP16", id="wrong_precision"),
        pytest.param("2,4", "I32", id="integer_precision"),
    ],
)
def test_select_declared_output_mismatch(declared, precision):
    """A declared output spec that contradicts inference raises DeclaredMismatchError."""
    built = build_select("2,4", "2,4", "4", NUMPY, F32, out=declared, out_precision=precision)
    check_error(built, r"declared", kind=ir_runner.DeclaredMismatchError)


def test_select_declared_dim_below_minus_one():
    """A port dim below -1 is malformed IR."""
    built = build_select("2,4", "2,4", "2,4", out=[2, -2])
    check_error(built, r"-2", r"dim", type_version=False)


@pytest.mark.parametrize(
    ("then", "declared", "expected"),
    [
        pytest.param("2,4", [-1, -1], "[2,4]", id="minus_one_matches_static"),
        pytest.param("2,4", [2, -1], "[2,4]", id="partly_minus_one"),
        pytest.param("1..3,4", [-1, 4], "[1..3,4]", id="minus_one_for_interval"),
        pytest.param("...", None, "[...]", id="no_dims_for_dynamic_rank"),
    ],
)
def test_select_declared_output_accepted(then, declared, expected):
    """Declared -1 dims match anything; no dims match a dynamic-rank inference."""
    model = load(build_select("", then, "", NUMPY, F32, out=declared))
    check_output(model, expected, "f32")


@pytest.mark.parametrize(
    "in_specs",
    [
        pytest.param([None, ("FP32", [2, 5]), None], id="then_port_wrong_dims"),
        pytest.param([("BOOL", [4]), None, None], id="cond_port_wrong_rank"),
        pytest.param([None, None, ("FP16", [2, 4])], id="else_port_wrong_precision"),
    ],
)
def test_select_declared_input_mismatch(in_specs):
    """Input port dims/precision that differ from the producer's raise DeclaredMismatchError."""
    built = build_select("2,4", "2,4", "2,4", NUMPY, F32, in_specs=in_specs)
    check_error(built, r"declared", kind=ir_runner.DeclaredMismatchError)


def test_select_declared_input_minus_one_accepted():
    """Input ports may declare -1 for a static producer dim."""
    built = build_select("2,4", "2,4", "2,4", NUMPY, F32, in_specs=[None, ("FP32", [-1, 4]), None])
    check_output(load(built), "[2,4]", "f32")


# --- the tables above are OpenVINO's behaviour -----------------------------------------


@pytest.mark.parametrize(("cond", "then", "else_", "attrs", "ets", "expected"), VALID)
def test_valid_table_matches_openvino(cond, then, else_, attrs, ets, expected):
    """The real OpenVINO reads the same IR and infers the expected shape and type."""
    pytest.importorskip("openvino")
    out = read_with_openvino(*build_select(cond, then, else_, attrs, ets, out=expected)).outputs[0]
    assert (str(out.get_partial_shape()), out.get_element_type().get_type_name()) == (expected, ets[1])


@pytest.mark.parametrize(("cond", "then", "else_", "attrs", "ets", "patterns"), INVALID)
def test_invalid_table_rejected_by_openvino(cond, then, else_, attrs, ets, patterns):
    """The real OpenVINO refuses every IR in the invalid table too."""
    pytest.importorskip("openvino")
    with pytest.raises(RuntimeError):
        read_with_openvino(*build_select(cond, then, else_, attrs, ets))
