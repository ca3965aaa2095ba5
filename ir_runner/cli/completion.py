"""ir-run's bash and zsh completion: click's, plus three things click's scripts cannot do.

- ``NAME=`` and ``folder/`` are completed without a trailing space, so the value or the file follows.
- bash splits ``cond=file`` into three words at the ``=`` (COMP_WORDBREAKS); the script sends the line up to
  the cursor instead (COMP_LINE, COMP_POINT), so ``--input cond=exa<TAB>`` completes files after the ``=``,
  and each reply is cut to the part after the last word break, which is what bash replaces.
- The group completes the model path of the default command (``ir-run mod<TAB>``): see commands.py.
"""

from __future__ import annotations

import os

from click.shell_completion import BashComplete, CompletionItem, ZshComplete, add_completion_class, split_arg_string

_BASH = """\
%(complete_func)s() {
    local IFS=$'\\n'
    local response completion type value
    response=$(env COMP_WORDS="${COMP_WORDS[*]}" COMP_CWORD=$COMP_CWORD COMP_LINE="$COMP_LINE" \\
COMP_POINT=$COMP_POINT IR_RUN_WORDBREAKS="$COMP_WORDBREAKS" %(complete_var)s=bash_complete $1)
    COMPREPLY=()
    for completion in $response; do
        IFS=',' read -r type value <<< "$completion"
        if [[ $type == 'dir' ]]; then
            compopt -o dirnames
        elif [[ $type == 'file' ]]; then
            compopt -o default
        elif [[ $type == 'plain' ]]; then
            COMPREPLY+=("$value")
            [[ $value == *= || $value == */ ]] && compopt -o nospace
        fi
    done
    return 0
}

%(complete_func)s_setup() {
    complete -o nosort -F %(complete_func)s %(prog_name)s
}

%(complete_func)s_setup;
"""

_ZSH = """\
#compdef %(prog_name)s

%(complete_func)s() {
    local -a completions completions_open completions_with_descriptions response
    (( ! $+commands[%(prog_name)s] )) && return 1
    response=("${(@f)$(env COMP_WORDS="${words[*]}" COMP_CWORD=$((CURRENT-1)) \\
%(complete_var)s=zsh_complete %(prog_name)s)}")
    for type key descr in ${response}; do
        if [[ "$type" == "plain" ]]; then
            if [[ "$key" == *= || "$key" == */ ]]; then
                completions_open+=("$key")
            elif [[ "$descr" == "_" ]]; then
                completions+=("$key")
            else
                completions_with_descriptions+=("$key":"$descr")
            fi
        elif [[ "$type" == "dir" ]]; then
            _path_files -/
        elif [[ "$type" == "file" ]]; then
            _path_files -f
        fi
    done
    if [ -n "$completions_with_descriptions" ]; then
        _describe -V unsorted completions_with_descriptions -U
    fi
    if [ -n "$completions_open" ]; then
        compadd -U -S '' -V unsorted_open -a completions_open
    fi
    if [ -n "$completions" ]; then
        compadd -U -V unsorted -a completions
    fi
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    %(complete_func)s "$@"
else
    compdef %(complete_func)s %(prog_name)s
fi
"""

_DEFAULT_WORDBREAKS = "\"'><=;|&(:"


class Bash(BashComplete):
    """Completes from the line up to the cursor; replies are cut at bash's last word break."""

    source_template = _BASH

    def get_completion_args(self) -> tuple[list[str], str]:
        line, point = os.environ.get("COMP_LINE"), os.environ.get("COMP_POINT")
        if line is None or point is None or not point.isdigit():
            return super().get_completion_args()
        text = line[:int(point)]
        words = split_arg_string(text)
        incomplete = words.pop() if words and text and not text[-1].isspace() else ""
        cut = _after_last_break(incomplete, os.environ.get("IR_RUN_WORDBREAKS", _DEFAULT_WORDBREAKS))
        self._head = incomplete[:cut]  # what bash keeps before the word it replaces
        return words[1:], incomplete

    def format_completion(self, item: CompletionItem) -> str:
        head = getattr(self, "_head", "")
        value = item.value[len(head):] if head and item.value.startswith(head) else item.value
        return f"{item.type},{value}"


def _after_last_break(word: str, breaks: str) -> int:
    """How many characters of ``word`` lie before bash's current word (after its last word-break character,
    spaces aside)."""
    positions = [word.rfind(char) for char in breaks if not char.isspace()]
    return max(positions, default=-1) + 1


class Zsh(ZshComplete):
    """``NAME=`` and ``folder/`` get no trailing space."""

    source_template = _ZSH


def register() -> None:
    """Use these classes for ``bash`` and ``zsh`` (click's fish script is kept)."""
    add_completion_class(Bash, "bash")
    add_completion_class(Zsh, "zsh")
