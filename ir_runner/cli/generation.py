"""``generate``: the greedy loop of ``ir_runner.generation``, optionally against OpenVINO step by step."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..context import context_length
from ..errors import InputError, ModelFileNotFoundError
from ..generation import GenerationStep, find_roles, generate, state_from
from ..record import Record
from ..text import load_codec
from .common import EXIT_COMPARISON, emit, info
from .files import read_arrays
from .formats import table
from .run import load_model

ATOL, RTOL = 1e-4, 1e-3  # logits agree when |ours - theirs| <= ATOL + RTOL * max|theirs| (the bound)


class GenerateOptions(Record):
    """What ``generate`` was asked to do, as given on the command line."""

    __slots__ = ("model", "weights", "strict", "memory_limit", "input_ids", "prompt", "inputs", "max_new_tokens",
                 "ref", "device", "precision", "no_crosscheck")

    def __init__(self, model: str, input_ids: list[int] | None = None, weights: str | None = None,
                 strict: bool = False, memory_limit: int | None = None, inputs: tuple[str, ...] = (),
                 max_new_tokens: int = 20, ref: str | None = None, device: str = "CPU", precision: str = "f32",
                 no_crosscheck: bool = False, prompt: str | None = None) -> None:
        self.model = model
        self.prompt = prompt
        self.weights = weights
        self.strict = strict
        self.memory_limit = memory_limit
        self.input_ids = input_ids
        self.inputs = inputs
        self.max_new_tokens = max_new_tokens
        self.ref = ref
        self.device = device
        self.precision = precision
        self.no_crosscheck = no_crosscheck


def model_file(path: str) -> str:
    """The IR of MODEL: the path itself, or in a folder, ``openvino_model.xml`` (optimum-intel's name) or its one
    ``.xml``. A path that does not exist is a ModelFileNotFoundError (exit 3, as ``run`` gives), before anything
    looks for the tokenizers next to it."""
    folder = Path(path)
    if not folder.exists():
        if folder.suffix.lower() == ".xml":
            raise ModelFileNotFoundError(f"model file '{path}' does not exist")
        named = Path(f"{path}.xml")
        raise ModelFileNotFoundError(f"model folder '{path}' does not exist",
                                     hint=f"did you mean '{named}'?" if named.is_file() else
                                     "give the model's folder (holding openvino_model.xml) or its .xml")
    if not folder.is_dir():
        return path
    if (folder / "openvino_model.xml").is_file():
        return str(folder / "openvino_model.xml")
    found = sorted(folder.glob("*.xml"))
    if len(found) != 1:
        raise InputError(f"the folder '{path}' holds {len(found)} .xml files and no openvino_model.xml",
                         hint="give the model's .xml")
    return str(found[0])


def generate_command(options: GenerateOptions) -> None:
    reference = None
    if (options.prompt is None) == (options.input_ids is None):
        raise InputError("give the prompt as --input-ids or as --prompt (one of them)",
                         hint="--prompt needs the tokenizer IRs in the model's folder")
    xml = model_file(options.model)
    codec = load_codec(Path(xml).parent) if options.prompt is not None else None
    prompt_ids = codec.encode(options.prompt) if codec is not None else options.input_ids
    if not prompt_ids:
        raise InputError(f"the tokenizer gives no token for the prompt {options.prompt!r}", hint="give more text")
    model = load_model(xml, options.weights, options.strict, options.memory_limit)
    given = _given(options.inputs)
    roles = find_roles(model, given)
    context = context_length(model, roles.input_ids)
    if context is None:
        info(f"the model declares no context length (no config.json beside it naming max_position_embeddings, no"
             f" position table in the graph): the prompt's {len(prompt_ids)} tokens are not checked against one")
    if options.ref:
        from ..device import DeviceRequest

        reference = DeviceRequest(model.source, model.weights_source, options.device, options.precision, True)
    rows: list[dict[str, Any]] = []
    first: dict[str, Any] | None = None

    def compare(step: GenerationStep) -> None:
        nonlocal first
        row: dict[str, Any] = {"step": step.index, "fed": step.fed, "token": step.token, "seconds": step.seconds}
        if reference is not None:
            row.update(_agreement(step.logits, reference.infer(step.feeds)[roles.logits]))
            if first is None and not row["agree"]:
                first = row
        rows.append(row)
        info(f"step {step.index}: fed {_ids(step.fed)} -> {step.token}")

    stop = () if codec is None or codec.eos_token_id is None else (codec.eos_token_id,)
    steps = generate(model, prompt_ids, options.max_new_tokens, on_step=compare, given=given, stop=stop)
    result: dict[str, Any] = {"model": {"path": xml, "weights": options.weights},
                              "inputs": {"input_ids": roles.input_ids, "attention_mask": roles.attention_mask,
                                         "position_ids": roles.position_ids, "cache_position": roles.cache_position,
                                         "beam_idx": roles.beam_idx, **{name: "given" for name in given}},
                              "logits": roles.logits, "prompt": prompt_ids,
                              "generated": [step.token for step in steps], "steps": rows,
                              "context": None if context is None else {
                                  "positions": context.positions, "source": context.source,
                                  "full": len(steps) < options.max_new_tokens and steps[-1].token not in stop}}
    if codec is not None:
        result["text"] = {"prompt": options.prompt, "eos_token_id": codec.eos_token_id,
                          "generated": codec.decode([t for t in result["generated"] if t not in stop])}
    if reference is not None:
        result["reference"] = {"device": options.device, "precision": options.precision,
                               "openvino_version": reference.version, "atol": ATOL, "rtol": RTOL,
                               "first_difference": None if first is None else first["step"]}
        if codec is not None:
            genai = _genai_text(Path(xml).parent, options)
            result["reference"]["text"] = genai
            if genai is not None and genai != result["text"]["generated"]:
                result["exit_code"] = EXIT_COMPARISON
        if first is not None:
            result["exit_code"] = EXIT_COMPARISON
            if not options.no_crosscheck:
                result["crosscheck"] = _crosscheck(model, steps[first["step"]], options)
    emit("generate", result, render_generate)


def _genai_text(folder: Path, options: GenerateOptions) -> str | None:
    """openvino-genai's LLMPipeline greedy text for the prompt (the same device, precision and token budget),
    None when openvino-genai is not installed."""
    try:
        import openvino_genai
    except ImportError:
        return None
    from ..device import device_config

    pipeline = openvino_genai.LLMPipeline(str(folder), options.device,
                                          **device_config(options.device, options.precision, True))
    config = openvino_genai.GenerationConfig()
    config.max_new_tokens = options.max_new_tokens
    config.do_sample = False
    return str(pipeline.generate(options.prompt, config))


def _given(tokens: tuple[str, ...]) -> dict[str, np.ndarray]:
    """``--input NAME=FILE`` values by name."""
    given = {}
    for token in tokens:
        name, _, source = token.partition("=")
        if not name or not source:
            raise InputError(f"--input {token!r}: write NAME=FILE, e.g. encoder_hidden_states=encoded.npy")
        value = read_arrays(source)
        if not isinstance(value, np.ndarray):
            raise InputError(f"--input {token!r}: '{source}' holds several arrays", hint="pick one: FILE.npz:KEY")
        given[name] = value
    return given


def _agreement(ours: np.ndarray, want: np.ndarray) -> dict[str, Any]:
    if ours.shape != want.shape:
        return {"agree": False, "max_abs": None, "bound": None, "ref_token": None,
                "note": f"shapes differ: ir-run {list(ours.shape)}, OpenVINO {list(want.shape)}"}
    error = float(np.max(np.abs(ours.astype(np.float64) - want.astype(np.float64)))) if ours.size else 0.0
    bound = ATOL + RTOL * (float(np.max(np.abs(want.astype(np.float64)))) if want.size else 0.0)
    token = int(np.argmax(want[0, -1]))
    same_token = token == int(np.argmax(ours[0, -1]))
    return {"agree": bool(error <= bound and same_token), "max_abs": error, "bound": bound, "ref_token": token,
            "note": None if same_token else "OpenVINO chooses another token"}


def _crosscheck(model, step: GenerationStep, options: GenerateOptions) -> dict[str, Any]:
    from ..divergence import crosscheck, report_data

    report = crosscheck(model, step.feeds, options.device, options.precision, state=state_from(model, step.before))
    return report_data(report)


def _ids(ids: list[int]) -> str:
    return ",".join(map(str, ids)) if len(ids) <= 12 else ",".join(map(str, ids[:12])) + f",... ({len(ids)} ids)"


def render_generate(result: dict[str, Any]) -> str:
    roles = ", ".join(f"{role}={name}" for role, name in result["inputs"].items() if name)
    parts = [f"inputs: {roles}; logits: {result['logits']}"]
    reference = result.get("reference")
    header = ["step", "fed", "token", "ms"]
    if reference:
        header += ["max |ir-run - OpenVINO|", "bound", "OpenVINO token", "agree"]
    rows = [tuple(header)]
    for row in result["steps"]:
        cells = [row["step"], _ids(row["fed"]), row["token"], f"{row['seconds'] * 1e3:.1f}"]
        if reference:
            cells += ["-" if row["max_abs"] is None else f"{row['max_abs']:.3g}",
                      "-" if row["bound"] is None else f"{row['bound']:.3g}", row["ref_token"],
                      "yes" if row["agree"] else "NO" + (f" ({row['note']})" if row["note"] else "")]
        rows.append(tuple(cells))
    parts.append(table(rows))
    parts.append(f"generated: {_ids(result['generated'])}")
    context = result["context"]
    if context is not None and context["full"]:
        parts.append(f"stopped: the context is full ({context['positions']} positions: {context['source']})")
    text = result.get("text")
    if text is not None:
        parts.append(f"prompt: {text['prompt']!r}")
        parts.append(f"text: {text['generated']!r}")
    if reference:
        where = f"OpenVINO {reference['openvino_version'].split('-')[0]} on {reference['device']}" \
                f" ({reference['precision']})"
        if text is not None:
            genai = reference.get("text")
            parts.append("openvino-genai is not installed: the text is not compared" if genai is None else
                         "ok: the text equals openvino-genai's LLMPipeline greedy output" if genai == text["generated"]
                         else f"the text differs from openvino-genai's LLMPipeline greedy output {genai!r}")
        if reference["first_difference"] is None:
            parts.append(f"ok: every step's logits agree with {where} within {ATOL:g} + {RTOL:g} * max|logits|")
        else:
            parts.append(f"step {reference['first_difference']} is the first whose logits or token differ from {where}")
            check = result.get("crosscheck")
            if check is not None:
                first = check["first_divergence"]
                parts.append("crosscheck of that step: " + (
                    "every observable layer output agrees" if first is None else
                    f"first divergence at layer '{first['layer']}' ({first['type']}, id {first['id']}), output port"
                    f" {first['port']}"))
    return "\n".join(parts)
