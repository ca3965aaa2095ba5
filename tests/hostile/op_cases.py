"""Select and Gather shape/type errors, OpenVINO's three crashers, resource limits, deep graphs."""

from __future__ import annotations

import numpy as np

from ir_runner import IndexOutOfRangeError, InferenceError, ResourceLimitError, UnsupportedError
from tests.helpers.irbuild import IRBuilder

from .base import FEEDS, base_model
from .case import SIZE, Case


def _select(cond="2,3", then="2,3", other="2,3", *, cond_et="boolean", then_et="f32", else_et="f32",
            attrs=None, out="2,3", inputs=3) -> bytes:
    b = IRBuilder("select")
    params = [b.parameter("cond", cond_et, cond), b.parameter("then", then_et, then),
              b.parameter("else", else_et, other)]
    extra = [b.parameter("extra", "f32", "2,3")] if inputs > 3 else []
    sel = b.layer("Select", "opset1", (params + extra)[:inputs], attrs=attrs or {"auto_broadcast": "numpy"},
                  out_specs=[(then_et, out)], name="sel")
    b.result(sel, "out")
    return b.xml()


def _gather(data="2,3", indices="2", axis=1, *, version="opset8", batch_dims=None, idx_et="i32",
            axis_et="i64", out="2,2", inputs=3) -> tuple[bytes, bytes]:
    """``axis``: an int (a scalar Const), a list (a 1-D Const) or 'param' (a Parameter)."""
    b = IRBuilder("gather")
    d = b.parameter("data", "f32", data)
    i = b.parameter("indices", idx_et, indices)
    if axis == "param":
        a = b.parameter("axis", axis_et, "")
    else:
        a = b.const("axis", np.array(axis), axis_et)
    attrs = None if batch_dims is None else {"batch_dims": batch_dims}
    g = b.layer("Gather", version, [d, i, a][:inputs], attrs=attrs, out_specs=[("f32", out)], name="g")
    b.result(g, "out")
    return b.build()


def _select_cases() -> list[Case]:
    pdpd = {"auto_broadcast": "pdpd"}
    table = {
        "select_cond_f32": (_select(cond_et="f32"), r"'sel'.*\(cond\): cond must have element type boolean, got f32"),
        "select_cond_u8": (_select(cond_et="u8"), r"'sel'.*boolean, got u8"),
        "select_types_differ": (_select(else_et="i32"), r"'sel'.*same element type, got f32 and i32"),
        "select_numpy_inconsistent": (_select("3,5", "2,3,4,5", "2,3,4,5", out="2,3,4,5"), r"'sel'.*inconsistent"),
        "select_none_shapes_differ": (_select(other="1,3", attrs={"auto_broadcast": "none"}),
                                      r"'sel'.*inconsistent.*none"),
        "select_explicit_shapes_differ": (_select(cond="3", attrs={"auto_broadcast": "explicit"}),
                                          r"'sel'.*inconsistent"),
        "select_pdpd_else": (_select(other="4", attrs=pdpd), r"'sel'.*'Else'"),
        "select_pdpd_cond": (_select(cond="5", attrs=pdpd), r"'sel'.*'Cond'"),
        "select_pdpd_else_rank": (_select(other="1,2,3", attrs=pdpd), r"'sel'.*'Else'"),
        "select_pdpd_axis_out_of_range": (_select(other="3", attrs={**pdpd, "auto_broadcast.auto_broadcast_axis": 5}),
                                          r"'sel'.*'Else'"),
        "select_pdpd_axis_below": (_select(other="3", attrs={**pdpd, "auto_broadcast.auto_broadcast_axis": -2}),
                                   r"'sel'.*'Else'"),
        "select_two_inputs": (_select(inputs=2), r"'sel'.*takes 3 input\(s\).*has 2"),
        "select_four_inputs": (_select(inputs=4), r"'sel'.*takes 3 input\(s\).*has 4"),
    }
    return [Case(name, "select", xml, b"", InferenceError, match) for name, (xml, match) in table.items()]


def _gather_cases() -> list[Case]:
    table = {
        "gather_axis_out_of_range": (_gather(axis=2), r"'g'.*\(axis\): axis=2 is out of the range \[-2, 1\]"),
        "gather_axis_negative_out_of_range": (_gather(axis=-3), r"'g'.*axis=-3 is out of the range"),
        "gather_axis_huge": (_gather(axis=2**62), rf"'g'.*axis={2**62} is out of the range"),
        "gather_axis_float": (_gather(axis=1, axis_et="f32"), r"'g'.*axis must have an integer element type"),
        "gather_axis_two_elements": (_gather(axis=[1, 0]), r"'g'.*axis must be a scalar or have 1 element"),
        "gather7_indices_float": (_gather(version="opset7", idx_et="f32"), r"'g'.*indices must have an integer"),
        "gather1_indices_boolean": (_gather(version="opset1", idx_et="boolean"), r"'g'.*indices must have a numeric"),
        "gather_batch_dims_above_axis": (_gather("2,3,4", "2,3", 1, batch_dims=2, out="2,3,4"),
                                         r"'g'.*batch_dims must be <= axis"),
        "gather_batch_dims_above_indices_rank": (_gather("2,3,4", "2", 2, batch_dims=2, out="2,3"),
                                                 r"'g'.*batch_dims=2 must be <= rank\(indices\)=1"),
        "gather_batch_dims_below_minus_rank": (_gather("2,3", "2,2", 1, batch_dims=-3, out="2,2,2"),
                                               r"'g'.*batch_dims=-3 is below -rank\(indices\)=-2"),
        "gather_batch_dims_mismatch": (_gather("2,3", "3,1", 1, batch_dims=1, out="2,1"),
                                       r"'g'.*differ in batch dim 0"),
        "gather_data_scalar": (_gather("", "2", 0, out="2"), r"'g'.*axis=0 is out of the range"),
        "gather_two_inputs": (_gather(inputs=2), r"'g'.*takes 3 input\(s\).*has 2"),
    }
    cases = [Case(name, "gather", xml, bin_, InferenceError, match) for name, ((xml, bin_), match) in table.items()]
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    indices = np.array([2, 0], np.int32)
    cases.append(Case("gather_axis_parameter", "gather", *_gather(axis="param"),
                      feeds={"data": data, "indices": indices, "axis": np.array(1, np.int64)},
                      expected={"out": data[:, [2, 0]]}, notes="an axis fed at run time: planned per axis value"))
    return cases


def _crasher_cases() -> list[Case]:
    """The three models that crash OpenVINO (SIGFPE, SIGSEGV, SIGSEGV): ir-run runs or refuses them cleanly."""
    def zero_sized(data: str, indices, axis: int, out: str) -> tuple[bytes, bytes]:
        b = IRBuilder("zero")
        d = b.parameter("data", "f32", data)
        i = b.const("indices", np.array(indices, np.int32).reshape(-1))
        a = b.const("axis", np.array(axis, np.int64))
        g = b.layer("Gather", "opset8", [d, i, a], attrs={"batch_dims": 0}, out_specs=[("f32", out)], name="g")
        b.result(g, "out")
        return b.build()

    def zeros(*shape: int) -> dict[str, np.ndarray]:
        return {"out": np.zeros(shape, np.float32)}

    def constant_axis() -> tuple[bytes, bytes]:
        xml, bin_ = _gather(axis=1)
        return xml.replace(b'name="axis" type="Const"', b'name="axis" type="Constant"'), bin_

    cases = []
    for name, (data, indices, axis, out, shape) in {
        "zero_sized_data_gather": ("0,3", [0, 1], 0, "2,3", (2, 3)),
        "zero_sized_axis_gather": ("2,0", [0], 1, "2,1", (2, 1)),
        "zero_sized_inner_gather": ("2,0", [1], 0, "1,0", (1, 0)),
        "zero_sized_indices_gather": ("2,3", [], 0, "0,3", (0, 3)),
    }.items():
        xml, bin_ = zero_sized(data, indices, axis, out)
        feeds = {"data": np.zeros(tuple(int(d) for d in data.split(",")), np.float32)}
        cases.append(Case(name, "openvino_crashers", xml, bin_, feeds=feeds, expected=zeros(*shape)))
    xml, bin_ = _gather(axis="param", version="opset1")
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    cases.append(Case("gather1_non_constant_axis", "openvino_crashers", xml, bin_,
                      feeds={"data": data, "indices": np.array([1, 0], np.int32), "axis": np.array(1, np.int64)},
                      expected={"out": data[:, [1, 0]]}, notes="OpenVINO crashes on it; ir-run plans per axis value"))
    xml, bin_ = constant_axis()
    cases.append(Case("constant_type_axis", "openvino_crashers", xml, bin_, UnsupportedError,
                      r"'axis' \(Constant opset1.*hint: .*'Const'"))
    return cases


def _resource_cases() -> list[Case]:
    big = IRBuilder("terabytes")
    big.result(big.parameter("x", "f32", "100000,100000,100"), "out")
    overflow = IRBuilder("overflow")
    overflow.result(overflow.parameter("x", "f32", f"{2**40},{2**40},{2**40}"), "out")
    dynamic = _select("?,?", "?,?", "?")
    run_feeds = {"cond": np.ones((1, 100_000), bool), "then": np.zeros((100_000, 1), np.float32),
                 "else": np.zeros(1, np.float32)}
    strict_xml, strict_bin = _gather(indices="2", idx_et="i64")
    return [
        Case("terabyte_select", "resource", _select("1,1000000", "1000000,1", "1", out="1000000,1000000"), b"",
             ResourceLimitError, rf"'sel'.*{SIZE}.*memory limit"),
        Case("terabyte_parameter", "resource", big.xml(), b"", ResourceLimitError, r"'x'.*3\.6 TiB.*memory limit"),
        Case("dims_beyond_int64", "resource", overflow.xml(), b"", ResourceLimitError, rf"'x'.*{SIZE}"),
        Case("memory_limit_small", "resource", base_model()[0], base_model()[1], ResourceLimitError,
             r"94 bytes.*memory limit of 64 bytes", memory_limit=64, cli=False),
        Case("dynamic_run_too_big", "resource", dynamic, b"", ResourceLimitError, r"'sel'.*37\.3 GiB.*memory limit",
             stage="run", feeds=run_feeds),
        Case("fold_bomb", "resource", *_fold_bomb(300_000), InferenceError,
             r"'g' \(Gather-8.*\(axis\): axis is not constant.*folding limit of 1048576 bytes", isolated=True,
             notes="an axis computed from Consts through an 84 GiB Select: not folded, so not constant"),
        Case("strict_index_out_of_range", "run", strict_xml, strict_bin, IndexOutOfRangeError,
             r"'g'.*index 7 at position \[1\]", stage="run", strict=True, cli=False,
             feeds={"data": FEEDS["then"], "indices": np.array([0, 7])}),
    ]


def _fold_bomb(n: int) -> tuple[bytes, bytes]:
    """A Gather whose axis is folded from Consts through an [n, n] Select: tiny files, n*n bytes to fold."""
    b = IRBuilder("fold_bomb")
    data, indices = b.parameter("data", "f32", "2,3"), b.parameter("indices", "i32", "2")
    sel = b.layer("Select", "opset1", [b.const("c", np.ones((1, n), bool)), b.const("t", np.ones((n, 1), np.uint8)),
                                       b.const("e", np.zeros(1, np.uint8))], out_specs=[("u8", [n, n])], name="sel")
    zero, axis0 = b.const("zero", np.array(0, np.int64)), b.const("axis0", np.array(0, np.int64))
    row = b.layer("Gather", "opset8", [sel, zero, axis0], attrs={"batch_dims": 0}, out_specs=[("u8", [n])])
    axis = b.layer("Gather", "opset8", [row, zero, axis0], attrs={"batch_dims": 0}, out_specs=[("u8", [])])
    out = b.layer("Gather", "opset8", [data, indices, axis], attrs={"batch_dims": 0}, out_specs=[("f32", "2,2")],
                  name="g")
    b.result(out, "out")
    return b.build()


def fold_bomb(n: int) -> tuple[bytes, bytes]:
    """The fold bomb with an [n, n] intermediate (for measuring what loading allocates)."""
    return _fold_bomb(n)


def _deep_cases() -> list[Case]:
    chain = IRBuilder("deep_axis")
    data, indices = chain.parameter("data", "f32", "2,3"), chain.parameter("indices", "i32", "2")
    axis = chain.const("axis", np.array(1, np.int64))
    for k in range(400):
        axis = chain.convert(axis, "i32" if k % 2 else "i64")
    chain.result(chain.layer("Gather", "opset8", [data, indices, axis], attrs={"batch_dims": 0},
                             out_specs=[("f32", "2,2")], name="g"), "out")
    converts = IRBuilder("deep_chain")
    x = converts.parameter("x", "f32", "2,3")
    y = x
    for _ in range(2000):
        y = converts.convert(y, "f32")
    converts.result(y, "out")
    data_value = np.arange(6, dtype=np.float32).reshape(2, 3)
    return [
        Case("deep_constant_axis_chain", "deep", *chain.build(), feeds={"data": data_value,
             "indices": np.array([2, 0], np.int32)}, expected={"out": data_value[:, [2, 0]]},
             notes="400 Converts between the axis Const and the Gather: folding must not recurse per layer"),
        Case("deep_convert_chain", "deep", *converts.build(), feeds={"x": data_value}, expected={"out": data_value}),
    ]


def op_cases() -> list[Case]:
    """Every case about operation semantics, resources and graph depth."""
    return _select_cases() + _gather_cases() + _crasher_cases() + _resource_cases() + _deep_cases()
