"""Broken models in well-formed XML: Const data, dims and shapes, edges and graph shape, types, attributes."""

from __future__ import annotations

import copy

import numpy as np

from ir_runner import DeclaredMismatchError, GraphError, InferenceError, ModelFormatError, UnsupportedError

from .base import FEEDS, add_edge, base_model, data, edge_to, edit, layer, port, set_attr
from .case import Case

XML, BIN = base_model()
EXPECTED = {"out": np.array([[2, 0], [-5, -3]], dtype=np.float32)}


def _cases(category: str, error, table: dict[str, tuple]) -> list[Case]:
    return [Case(name, category, edit(XML, change), BIN, error, match) for name, (change, match) in table.items()]


def _const_cases() -> list[Case]:
    def idx(key: str, value: str):
        return set_attr("indices", key, value)

    def drop(key: str):
        return lambda root: data(root, "indices").attrib.pop(key)

    fmt = {
        "const_offset_outside": (idx("offset", "16"), r"'indices'.*offset=16.*outside"),
        "const_offset_huge": (idx("offset", str(2**64)), r"'indices'.*outside"),
        "const_offset_negative": (idx("offset", "-8"), r"'indices'.*offset='-8'"),
        "const_offset_text": (idx("offset", "zero"), r"'indices'.*offset='zero'"),
        "const_offset_missing": (drop("offset"), r"'indices'.*offset"),
        "const_size_too_small": (idx("size", "4"), r"'indices'.*size=4.*needs 8 bytes"),
        "const_size_text": (idx("size", "8.0"), r"'indices'.*size='8.0'"),
        "const_size_overflows_file": (
            lambda root: (idx("shape", "4000000000")(root), idx("size", "16000000000")(root)),
            r"'indices'.*outside",
        ),
        "const_shape_huge_size_small": (idx("shape", "1000000000000, 1000000000000"), r"'indices'.*too small"),
        "const_shape_negative": (idx("shape", "-2"), r"'indices'.*shape"),
        "const_shape_text": (idx("shape", "two"), r"'indices'.*shape='two'"),
        "const_shape_dynamic": (idx("shape", "?"), r"'indices'.*static shape"),
        "const_shape_missing": (drop("shape"), r"'indices'.*'shape'"),
        "const_element_type_missing": (drop("element_type"), r"'indices'.*'element_type'"),
        "const_element_type_dynamic": (idx("element_type", "dynamic"), r"'indices'.*dynamic"),
        "const_element_type_string": (idx("element_type", "string"), r"'indices'.*string\[2\].*cannot hold the count"),
    }
    cases = _cases("const", ModelFormatError, fmt)
    unaligned = edit(XML, lambda root: [data(root, name).set("offset", str(int(data(root, name).get("offset")) + 1))
                                        for name in ("indices", "axis")])
    cases.append(Case("const_unaligned_offsets", "const", unaligned, b"\x00" + BIN, feeds=FEEDS, expected=EXPECTED,
                      notes="Const data at odd offsets: unaligned views must compute the same values"))
    cases += _cases("const", UnsupportedError, {
        "const_element_type_unknown": (idx("element_type", "f33"), r"'indices'.*'f33'"),
    })
    return cases


def _dim_cases() -> list[Case]:
    def dim(name: str, port_id: str, text: str):
        return lambda root: setattr(port(root, name, port_id).find("dim"), "text", text)

    def param(key: str, value: str):
        return set_attr("cond", key, value)

    cases = _cases("dims", ModelFormatError, {
        "port_dim_negative": (dim("sel", "0", "-2"), r"'sel'.*<dim>-2</dim>"),
        "port_dim_text": (dim("sel", "0", "two"), r"'sel'.*<dim>two</dim>"),
        "port_dim_float": (dim("sel", "0", "2.0"), r"'sel'.*<dim>2.0</dim>"),
        "port_dim_empty": (dim("sel", "0", ""), r"'sel'.*<dim></dim>"),
        "parameter_shape_negative": (param("shape", "-2,3"), r"'cond'.*shape='-2,3'"),
        "parameter_shape_text": (param("shape", "a,3"), r"'cond'.*shape='a,3'"),
        "parameter_shape_empty_interval": (param("shape", "5..2,3"), r"'cond'.*shape='5..2,3'"),
        "parameter_element_type_missing": (lambda root: data(root, "cond").attrib.pop("element_type"),
                                           r"'cond'.*'element_type'"),
    })
    cases += _cases("dims", UnsupportedError, {
        "parameter_element_type_unknown": (param("element_type", "f33"), r"'cond'.*'f33'"),
    })
    cases += _cases("dims", DeclaredMismatchError, {
        "parameter_element_type_string": (param("element_type", "string"), r"'cond'.*declared BOOL.*inferred string"),
        "declared_dim_wrong": (dim("sel", "3", "4"), r"'sel'.*output port 0 \(id 3\).*declared.*inferred"),
        "declared_input_dim_wrong": (dim("gather", "0", "7"), r"'gather'.*input port 0 \(id 0\).*declared"),
        "declared_rank_wrong": (lambda root: port(root, "sel", "3").remove(port(root, "sel", "3").find("dim")),
                                r"'sel'.*1 dims declared, inferred rank is 2"),
        "declared_precision_wrong": (lambda root: port(root, "sel", "3").set("precision", "FP16"),
                                     r"'sel'.*precision FP16"),
        "declared_precision_unknown": (lambda root: port(root, "sel", "3").set("precision", "FP33"),
                                       r"'sel'.*'FP33'"),
    })
    return cases


def _graph_cases() -> list[Case]:
    def edge_attr(to_layer: str, to_port: str, key: str, value: str | None):
        def change(root) -> None:
            edge = edge_to(root, to_layer, to_port)
            if value is None:
                del edge.attrib[key]
            else:
                edge.set(key, value)

        return change

    def rewire(to_layer: str, to_port: str, from_layer: str, from_port: str):
        def change(root) -> None:
            edge_attr(to_layer, to_port, "from-layer", from_layer)(root)
            edge_attr(to_layer, to_port, "from-port", from_port)(root)

        return change

    def duplicate_port(root) -> None:
        port(root, "sel", "1").set("id", "0")

    def remove_edge(to_layer: str, to_port: str):
        return lambda root: root.find("edges").remove(edge_to(root, to_layer, to_port))

    def drop_attr(name: str, key: str):
        return lambda root: layer(root, name).attrib.pop(key)

    def drop_port_id(root) -> None:
        del port(root, "sel", "3").attrib["id"]

    def result_second_input(root) -> None:
        second = copy.deepcopy(port(root, "out", "0"))
        second.set("id", "1")
        port(root, "out", "0").addnext(second)
        add_edge(root, "6", "3", "7", "1")

    def extra_output(root) -> None:
        second = copy.deepcopy(port(root, "sel", "3"))
        second.set("id", "4")
        port(root, "sel", "3").addnext(second)

    def extra_output_consumed(root) -> None:
        extra_output(root)
        edge_to(root, "6", "0").set("from-port", "4")

    def drop_output(root) -> None:
        layer(root, "sel").remove(layer(root, "sel").find("output"))

    cases = _cases("graph", GraphError, {
        "edge_from_missing_layer": (edge_attr("3", "1", "from-layer", "99"), r"from-layer=99.*layer id 99.*not exist"),
        "edge_to_missing_layer": (edge_attr("3", "1", "to-layer", "99"), r"layer id 99.*not exist"),
        "edge_to_missing_port": (edge_attr("3", "1", "to-port", "9"), r"'sel'.*input port id 9"),
        "edge_from_input_port": (edge_attr("6", "0", "from-port", "0"), r"'sel'.*output port id 0"),
        "edge_into_parameter": (lambda root: add_edge(root, "0", "0", "1", "0"), r"'then'.*input port id 0"),
        "edge_from_result": (edge_attr("3", "1", "from-layer", "7"), r"'out'.*output port id 0"),
        "duplicate_layer_id": (lambda root: layer(root, "gather").set("id", "3"), r"two layers have id 3.*'sel'"),
        "duplicate_port_id": (duplicate_port, r"'sel'.*two input ports have id 0"),
        "duplicate_edge": (lambda root: add_edge(root, "1", "0", "3", "1"), r"'sel'.*two producers"),
        "two_producers": (lambda root: add_edge(root, "2", "0", "3", "1"), r"'sel'.*two producers.*'then'.*'else'"),
        "unconnected_input": (remove_edge("3", "2"), r"'sel'.*input port 2 \(id 2\).*not connected"),
        "no_edges": (lambda root: root.remove(root.find("edges")), r"not connected"),
        "cycle": (rewire("3", "1", "6", "3"), r"cycle: .*'sel'.*'gather'"),
        "self_loop": (rewire("3", "0", "3", "3"), r"cycle: .*'sel'.* -> .*'sel'"),
        "missing_output_ports": (drop_output, r"'sel'.*output port id 3"),
    })
    cases += _cases("graph", ModelFormatError, {
        "edge_missing_attribute": (edge_attr("3", "1", "to-port", None), r"<edge> at line \d+ needs"),
        "layer_missing_id": (drop_attr("sel", "id"), r"<layer> at line \d+ has no id"),
        "layer_missing_type": (drop_attr("sel", "type"), r"<layer> at line \d+ has no type"),
        "port_missing_id": (drop_port_id, r"'sel'.*has no id"),
        "extra_output_port": (extra_output, r"'sel'.*1 output\(s\), the layer declares 2"),
        "extra_output_port_consumed": (extra_output_consumed, r"'sel'.*1 output\(s\), the layer declares 2"),
    })
    cases += _cases("graph", InferenceError, {
        "result_two_inputs": (result_second_input, r"'out'.*takes 1 input"),
    })
    return cases


def _type_cases() -> list[Case]:
    def retype(name: str, type_: str | None = None, version: str | None = None):
        def change(root) -> None:
            if type_ is not None:
                layer(root, name).set("type", type_)
            if version is not None:
                layer(root, name).set("version", version)

        return change

    return _cases("types", UnsupportedError, {
        "unknown_type": (retype("sel", "Frobnicate"), r"^(?=.*not implement).*'sel' \(Frobnicate opset1"),
        "constant_type_name": (retype("indices", "Constant"), r"'indices'.*hint: .*'Const'"),
        "empty_opset": (retype("gather", version=""), r"'gather'.*version"),
        "experimental_opset": (retype("gather", version="experimental"), r"'gather'.*experimental"),
    }) + _cases("types", ModelFormatError, {  # (opsets OpenVINO does not define: it refuses the file)
        "unknown_opset": (retype("sel", version="opset99"), r"'sel'.*OpenVINO has no opset99"),
        "gather_opset0": (retype("gather", version="opset0"), r"'gather'.*OpenVINO has no opset0"),
    })


def _attribute_cases() -> list[Case]:
    cases = _cases("attributes", ModelFormatError, {
        "gather_batch_dims_text": (set_attr("gather", "batch_dims", "x"), r"'gather'.*batch_dims='x'"),
        "gather_batch_dims_empty": (set_attr("gather", "batch_dims", ""), r"'gather'.*batch_dims=''"),
        "gather_batch_dims_float": (set_attr("gather", "batch_dims", "0.5"), r"'gather'.*batch_dims='0.5'"),
        "select_auto_broadcast_unknown": (set_attr("sel", "auto_broadcast", "numpyy"),
                                          r"'sel'.*auto_broadcast='numpyy'"),
        "select_auto_broadcast_empty": (set_attr("sel", "auto_broadcast", ""), r"'sel'.*auto_broadcast=''"),
        "select_pdpd_axis_text": (
            lambda root: (set_attr("sel", "auto_broadcast", "pdpd")(root),
                          set_attr("sel", "auto_broadcast.auto_broadcast_axis", "one")(root)),
            r"'sel'.*auto_broadcast_axis='one'",
        ),
    })
    return cases


def model_cases() -> list[Case]:
    """Every case about the model a well-formed document describes, up to and excluding op semantics."""
    return _const_cases() + _dim_cases() + _graph_cases() + _type_cases() + _attribute_cases()
