"""Write the files the console examples in README.md and docs/ use, into examples/ (they are committed;
this script remakes them). Run from the repository root: ``python scripts/make_examples.py``.

- cond.npy, then.npy, else.npy: the stored inputs of models/select_gather.xml, one file each
- ref.npz: that model's expected output with one value off by 0.5 (40 -> 40.5), for --ref and compare
- idx64.npy (int64 [4, 2, 0]) and idxf.npy (float64 [4, 2.5, 0]): indices of the wrong type, for --cast
- picker.xml/.bin: Gather-7 with Const indices [0, 4, -1] on an axis of 4 (a validate warning)
- edited.xml/.bin: models/select_gather.xml with the Gather's first output <dim> changed from 2 to 3

Only numpy is needed (the IR is written as text); nothing is imported from tests/.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
PICKER = """<?xml version='1.0' encoding='UTF-8'?>
<net name="picker" version="11">
  <layers>
    <layer id="0" name="data" type="Parameter" version="opset1">
      <data shape="2,4" element_type="f32"/>
      <output>
        <port id="0" precision="FP32" names="data">
          <dim>2</dim>
          <dim>4</dim>
        </port>
      </output>
    </layer>
    <layer id="1" name="indices" type="Const" version="opset1">
      <data element_type="i64" shape="3" offset="0" size="24"/>
      <output>
        <port id="0" precision="I64">
          <dim>3</dim>
        </port>
      </output>
    </layer>
    <layer id="2" name="axis" type="Const" version="opset1">
      <data element_type="i64" shape="" offset="24" size="8"/>
      <output>
        <port id="0" precision="I64"/>
      </output>
    </layer>
    <layer id="3" name="pick" type="Gather" version="opset7">
      <data batch_dims="0"/>
      <input>
        <port id="0" precision="FP32">
          <dim>2</dim>
          <dim>4</dim>
        </port>
        <port id="1" precision="I64">
          <dim>3</dim>
        </port>
        <port id="2" precision="I64"/>
      </input>
      <output>
        <port id="3" precision="FP32">
          <dim>2</dim>
          <dim>3</dim>
        </port>
      </output>
    </layer>
    <layer id="4" name="out" type="Result" version="opset1">
      <input>
        <port id="0" precision="FP32">
          <dim>2</dim>
          <dim>3</dim>
        </port>
      </input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="3" to-port="0"/>
    <edge from-layer="1" from-port="0" to-layer="3" to-port="1"/>
    <edge from-layer="2" from-port="0" to-layer="3" to-port="2"/>
    <edge from-layer="3" from-port="3" to-layer="4" to-port="0"/>
  </edges>
</net>
"""


def edited_select_gather(xml: str) -> str:
    """The sample's XML with the first output <dim> of the layer named 'gather' changed from 2 to 3."""
    layer = re.search(r'<layer [^>]*name="gather".*?</layer>', xml, re.S)
    output = xml.index("<output>", layer.start())
    first_dim = re.compile(r"<dim>2</dim>").search(xml, output)
    assert first_dim is not None and first_dim.end() < layer.end()
    return xml[:first_dim.start()] + "<dim>3</dim>" + xml[first_dim.end():]


def main(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    models = ROOT / "models"
    with np.load(models / "select_gather.inputs.npz") as inputs:
        for name in inputs:
            np.save(folder / f"{name}.npy", inputs[name])
    np.savez(folder / "ref.npz", out=np.array([[3.0, 1.0], [60.0, 40.5]], np.float32))
    np.save(folder / "idx64.npy", np.array([4, 2, 0], np.int64))
    np.save(folder / "idxf.npy", np.array([4.0, 2.5, 0.0]))
    (folder / "picker.xml").write_text(PICKER, encoding="utf-8")
    (folder / "picker.bin").write_bytes(np.array([0, 4, -1, 1], "<i8").tobytes())
    xml = (models / "select_gather.xml").read_text(encoding="utf-8")
    (folder / "edited.xml").write_text(edited_select_gather(xml), encoding="utf-8")
    shutil.copyfile(models / "select_gather.bin", folder / "edited.bin")
    print(f"wrote the example files to {folder}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "examples")
