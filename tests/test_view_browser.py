"""``ir-run view`` in a real browser: Debian's chromium, headless, driven by selenium (chromedriver from the
chromium-driver package; never a browser a pip package downloads). For a model with a planted declared-vs-
inferred mismatch, a model with a planted CPU-plugin fault seen by ``crosscheck --view``, a model with a planted
f16 overflow seen by ``precision --view``, and a 1,000+-layer transformer with a mismatch planted deep in its
groups: the page loads without console errors, the layer ir-run
names is in the rendered graph (selected, its attributes in the side panel), the overlay marks it (its colour
on the canvas, its value in the panel), and a screenshot is saved in tmp/artifacts/.

The machine may have no network: the one console error allowed is Model Explorer's web font failing to load
from fonts.gstatic.com (an external resource; every local one must load).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import numpy as np
import pytest

pytest.importorskip("model_explorer", reason="the view extra is not installed (pip install 'ir-run[view]')")
pytest.importorskip("selenium", reason="selenium is not installed (the test extra has it)")
from PIL import Image  # noqa: E402  (after the skips: pillow comes with the test extra too)

from ir_runner.report import analyse, validation_data  # noqa: E402
from ir_runner.view.graph_json import group_node_id, node_namespace  # noqa: E402
from ir_runner.view.overlays import FIRST, RED  # noqa: E402
from tests.helpers import view_models  # noqa: E402

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
ARTIFACTS = Path(__file__).resolve().parent.parent / "tmp" / "artifacts"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,900")
OFFLINE_OK = ("fonts.gstatic.com", "fonts.googleapis.com")  # external web fonts: the only allowed failures

pytestmark = pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                reason="Debian's chromium is not installed (apt-get install chromium chromium-driver)")


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="ir-run-chromium-")
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def serving(*args: object) -> Iterator[str]:
    """``ir-run ARGS --no-browser --port P`` as a process; yields the address it prints, stops it after."""
    env = {k: v for k, v in os.environ.items() if k != "IR_RUN_DEBUG"}
    command = [sys.executable, "-m", "ir_runner", *map(str, args), "--no-browser", "--port", str(free_port())]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=lambda: [*map(lines.put, process.stdout), lines.put(None)], daemon=True).start()
    try:
        deadline = time.monotonic() + 120
        while (line := lines.get(timeout=max(deadline - time.monotonic(), 0))) is not None:
            if line.startswith("view: "):
                yield line.split()[1]
                return
        raise AssertionError(f"ir-run exited {process.wait()} without serving")
    except queue.Empty:
        raise AssertionError("ir-run printed no address in 120 s") from None
    finally:
        process.terminate()
        process.wait(timeout=30)


def selecting(address: str, node_id: str, namespace: str, collection: str) -> str:
    """The viewer's address with the node selected and its group expanded (Model Explorer's uiState)."""
    base, data = address.split("?data=")
    state = json.loads(unquote(data))
    state["uiState"] = {"paneStates": [{
        "deepestExpandedGroupNodeIds": [group_node_id(namespace)] if namespace else [], "selectedNodeId": node_id,
        "selectedGraphId": "main", "selectedCollectionLabel": collection, "widthFraction": 1, "selected": True}]}
    return f"{base}?data={quote(json.dumps(state))}"


def load(driver, address: str, *texts: str) -> str:
    """Open the page and wait until its text shows every one of ``texts``; return the text."""
    driver.get(address)
    deadline, text = time.monotonic() + 60, ""
    while time.monotonic() < deadline:
        text = driver.execute_script("return document.body.innerText")
        if all(t in text for t in texts):
            time.sleep(0.5)  # the canvas draws the frame after the panel
            return driver.execute_script("return document.body.innerText")
        time.sleep(0.25)
    missing = [t for t in texts if t not in text]
    raise AssertionError(f"the page never showed {missing}; it shows: {text[:2000]}")


def leave(driver) -> list[str]:
    """The page's console errors (but the offline web font's); then leave the page (before its server stops:
    the page's event stream would fail)."""
    errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"
              and not any(host in entry["message"] for host in OFFLINE_OK)]
    driver.get("about:blank")
    return errors


def screenshot(driver, name: str) -> Image.Image:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return Image.open(path).convert("RGB")


def pixels_of(image: Image.Image, colour: str) -> int:
    """How many pixels of the screenshot have ``colour`` (#rrggbb, within 8 per channel: antialiasing)."""
    want = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(np.asarray(image, dtype=np.int16) - want).max(axis=2) <= 8).sum())


def named_by_validate(path: Path) -> tuple[str, str, str, Any]:
    """The layer (name, id, namespace in the viewer) that validation names in its one error, and the analysis."""
    analysis = analyse(str(path))
    errors = validation_data(analysis)["errors"]
    assert len(errors) == 1, errors
    layer = errors[0]["layer"]
    return layer["name"], layer["id"], node_namespace(layer["name"]), analysis


def test_validated_model_with_a_planted_mismatch(browser, tmp_path: Path) -> None:
    path = view_models.planted_mismatch(tmp_path)
    name, layer_id, namespace, _ = named_by_validate(path)
    assert name == view_models.MISMATCH_LAYER
    with serving("view", path, "--overlay", "validate") as address:
        text = load(browser, selecting(address, layer_id, namespace, path.name), "NODE DATA PROVIDERS", name,
                    "mismatch: out 0")
        image = screenshot(browser, "view-validate-mismatch")
        assert leave(browser) == []
    assert "declared FP32[5] but inferred f32[4]" in text
    assert pixels_of(image, RED) > 500  # the node's fill (and the panel's value chip)


def test_crosschecked_model_with_a_planted_device_fault(browser, tmp_path: Path) -> None:
    pytest.importorskip("openvino")
    from tests.helpers.crosscheck_models import negative_gather

    builder, feeds, faulty, _ = negative_gather()
    path = builder.write(tmp_path, "fault")
    np.savez(tmp_path / "feeds.npz", **feeds)
    with serving("crosscheck", path, "--input", tmp_path / "feeds.npz", "--view") as address:
        text = load(browser, address, "NODE DATA PROVIDERS", faulty, "first divergence (diverges)")
        image = screenshot(browser, "view-crosscheck-fault")
        assert leave(browser) == []
    assert "crosscheck status vs CPU f32" in text and "crosscheck log10 max abs error vs CPU f32" in text
    assert pixels_of(image, FIRST) > 500


def test_precision_view_of_a_model_with_a_planted_f16_overflow(browser) -> None:
    examples = Path(__file__).resolve().parent.parent / "examples" / "precision"
    with serving("precision", examples / "overflow.xml", "--input", examples / "overflow.npz", "--view") as address:
        text = load(browser, address, "NODE DATA PROVIDERS", "amplify", "first divergence (overflow: 91 of 256)")
        image = screenshot(browser, "view-precision-overflow")
        assert leave(browser) == []
    assert "precision status in f16 as GPU" in text and "precision headroom bits in f16 as GPU" in text
    assert pixels_of(image, FIRST) > 500


def test_a_transformer_of_over_1000_layers(browser, tmp_path: Path) -> None:
    path = view_models.transformer(tmp_path)
    planted = "__module.encoder.layer.23.attention.self/aten::softmax/Softmax"
    view_models.declare_wrong_dim(path, planted)
    name, node, namespace, analysis = named_by_validate(path)
    assert name == planted and len(analysis.graph.layers) > 1000
    with serving("view", path, "--overlay", "validate") as address:
        load(browser, address, "NODE DATA PROVIDERS", "encoder")  # the root: the input, the output and a group
        screenshot(browser, "view-transformer-collapsed")
        text = load(browser, selecting(address, node, namespace, path.name), name, "mismatch: out 0")
        image = screenshot(browser, "view-transformer-planted")
        assert leave(browser) == []
    assert "layer.23" in text
    assert pixels_of(image, RED) > 500
