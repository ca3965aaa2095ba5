"""Real bash and zsh sessions in tmux, with ir-run's completion loaded, for completion tests."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

END = "#END"


def available(shell: str) -> bool:
    return shutil.which(shell) is not None and shutil.which("tmux") is not None and shutil.which("ir-run",
                                                                                               path=_path())


def _path() -> str:
    return os.pathsep.join([str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin"])


class Session:
    """One interactive shell in a private tmux server; ``complete(text)`` types text, Tab, and returns the
    command line as it then reads."""

    def __init__(self, shell: str, cwd: Path, home: Path) -> None:
        self.socket = f"ir-run-test-{uuid.uuid4().hex[:12]}"
        command = {"bash": "bash --norc --noprofile", "zsh": "zsh -f"}[shell]
        env = f"env -i PATH={_path()} HOME={home} TERM=xterm LANG=C.UTF-8"
        self._tmux("new-session", "-d", "-x", "250", "-y", "50", "-c", str(cwd), f"{env} {command}")
        setup = {"bash": 'PS1="$ "; eval "$(ir-run completion bash)"',
                 "zsh": 'PS1="$ "; autoload -Uz compinit && compinit -u; eval "$(ir-run completion zsh)"'}[shell]
        self._tmux("send-keys", "-t", "0", setup, "Enter")
        self._tmux("send-keys", "-t", "0", "clear", "Enter")
        self._wait(lambda screen: screen.strip() == "$", "the prompt")

    def complete(self, text: str) -> str:
        self._count = getattr(self, "_count", 0) + 1
        end = f"{END}{self._count}"  # unique, so that no earlier line can be taken for this one
        self._tmux("send-keys", "-t", "0", "-l", text)
        self._tmux("send-keys", "-t", "0", "Tab")
        self._tmux("send-keys", "-t", "0", "-l", end)
        line = self._wait(lambda screen: end in screen, "the completion", end)
        self._tmux("send-keys", "-t", "0", "C-u")
        self._tmux("send-keys", "-t", "0", "clear", "Enter")
        self._wait(lambda screen: screen.strip() == "$", "the prompt")
        return line

    def _wait(self, done, what: str, end: str = END, limit: float = 30.0) -> str:
        deadline = time.monotonic() + limit
        while True:
            screen = self._tmux("capture-pane", "-p", "-t", "0").stdout
            if done(screen):
                lines = [line for line in screen.splitlines() if end in line]
                return lines[-1].split(end)[0].removeprefix("$ ") if lines else screen
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} in the {self.socket} session:\n{screen}")
            time.sleep(0.05)

    def _tmux(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
