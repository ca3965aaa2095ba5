"""``ir-run generate MODEL``: greedy generation with a stateful language model, step by step on one state."""

from __future__ import annotations

from typing import Any

import click

from .common import EXIT_CODES_HELP, json_option, quiet_option
from .options import model_options


def _ids(_ctx, _param, value: str | None) -> list[int] | None:
    if value is None:
        return None
    try:
        ids = [int(part) for part in value.replace(" ", "").split(",") if part]
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a list of token ids such as 1,2,3") from None
    if not ids or min(ids) < 0:
        raise click.BadParameter(f"{value!r}: give one or more token ids >= 0, such as 1,2,3")
    return ids


@click.command(epilog=EXIT_CODES_HELP)
@model_options
@click.option("--input-ids", callback=_ids, metavar="ID,ID,...", help="The prompt's token ids.")
@click.option("--prompt", metavar="TEXT", help="The prompt as text, tokenized by the folder's openvino_tokenizer.xml;"
              " the generated ids are detokenized by its openvino_detokenizer.xml and printed as text.")
@click.option("-i", "--input", "inputs", multiple=True, metavar="NAME=FILE",
              help="Another input's value (.npy, .npz:key, .json), fed unchanged at every step: a seq2seq"
                   " decoder's encoder_hidden_states.")
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many tokens to choose (the prefill chooses the first).")
@click.option("--ref", type=click.Choice(["openvino"]), help="Run the same steps in OpenVINO and compare the"
              " logits of every step.")
@click.option("--device", default="CPU", show_default=True, help="The OpenVINO device of --ref.")
@click.option("--precision", type=click.Choice(["f32", "f16", "bf16"]), default="f32", show_default=True,
              help="The device's INFERENCE_PRECISION_HINT (and KV_CACHE_PRECISION on the CPU).")
@click.option("--no-crosscheck", is_flag=True, help="With --ref: do not crosscheck the first differing step"
              " layer by layer.")
@json_option
@quiet_option
def generate(**kw: Any) -> None:
    """Prefill MODEL (a stateful LLM IR, or its folder) with --input-ids, then choose tokens greedily, one step
    at a time on one state; print the token ids of each step.

    With --prompt TEXT instead, the folder's tokenizer IRs (openvino_tokenizer.xml, openvino_detokenizer.xml,
    as openvino-tokenizers writes them) turn the text into ids and the generated ids into text, all in ir-run;
    generation stops at the tokenizer's end-of-sequence id.

    With --ref openvino, OpenVINO runs the same steps (fed the same tokens) and the logits of each step are
    compared within 1e-4 + 1e-3 * max|OpenVINO's|; the first step whose logits or chosen token differ is
    named, then crosschecked layer by layer. With --prompt, the text is also compared with openvino-genai's
    LLMPipeline greedy output when openvino-genai is installed. Exit 1 when a step or the text differs.
    """
    from .generation import GenerateOptions, generate_command

    generate_command(GenerateOptions(**kw))
