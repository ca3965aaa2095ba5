"""The README's quick-start commands, read as fresh-clone-check and .ci/run read them."""

import re

from tests.conftest import ROOT


def quickstart_commands() -> list[str]:
    """The non-blank, non-comment lines of the first fenced block after `<!-- quickstart -->` in README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    after = text.split("<!-- quickstart -->", 1)[1]
    block = re.search(r"^```[^\n]*\n(.*?)^```", after, re.S | re.M).group(1)
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]
