"""The chat template the embedded server renders prompts with (`tool_calling.jinja`)."""

from __future__ import annotations

import functools
from importlib.resources import files
from typing import Final

__all__ = ["TEMPLATE_FILE", "tool_calling_template"]

TEMPLATE_FILE: Final = "tool_calling.jinja"
"""The template's file name inside this package (for `llama-server --chat-template-file`)."""


@functools.cache
def tool_calling_template() -> str:
    """Return the tool-calling chat template: ChatML, bare-JSON calls, results as instructions.

    Render it as every chat template is rendered (Jinja with `trim_blocks` and
    `lstrip_blocks`), with `messages` and `tools` in Chat Completions form and
    `add_generation_prompt`.
    """
    return files("neuron_provider_local").joinpath(TEMPLATE_FILE).read_text(encoding="utf-8")
