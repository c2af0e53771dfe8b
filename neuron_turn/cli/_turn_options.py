"""Turn options the command line checks or reads beyond argparse: `--option`, `--allow-tool`.

`--option KEY=VALUE` passes a keyword argument to the provider's factory
(`base_url=http://127.0.0.1:8000/v1` for an OpenAI-compatible server or a
proxy, `timeout=30`, `stream=true`), as `provider_options=` does in Python.
`--allow-tool` limits the tools the model may call; a `--tool` it leaves out
would be offered to nobody, which is a mistake to report, not to carry out.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from ._errors import UsageError
from ._reading import TooDeepJSONError, json_value


def add_option_argument(parser: argparse.ArgumentParser) -> None:
    """Add the repeatable `--option KEY=VALUE` (the provider's options) to `parser`."""
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        type=key_value,
        metavar="KEY=VALUE",
        help="an option of the provider, e.g. base_url=http://127.0.0.1:8000/v1 for an "
        "OpenAI-compatible server or a proxy (repeat; VALUE is read as JSON when it "
        "parses, else as text)",
    )


def key_value(text: str) -> tuple[str, object]:
    """Read `KEY=VALUE`: VALUE as JSON when it parses (5, 0.5, true), else as text."""
    key, sep, raw = text.partition("=")
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(
            f"expected KEY=VALUE with KEY a Python name, e.g. base_url=http://...; got {text!r}"
        )
    try:
        value: object = json_value(raw)
    except TooDeepJSONError as exc:
        raise argparse.ArgumentTypeError(f"{key}: {exc}") from None
    except json.JSONDecodeError:
        value = raw
    return key, value


def check_allowed_tools(tools: Sequence[str], allowed: Sequence[str] | None) -> None:
    """Refuse a `--tool` that `--allow-tool` leaves out: the model could never call it.

    Raises:
        UsageError: naming each such tool and the two ways to fix it.
    """
    if allowed is None:
        return
    left_out = [name for name in dict.fromkeys(tools) if name not in allowed]
    if not left_out:
        return
    names = ", ".join(left_out)
    adds = " ".join(f"--allow-tool {name}" for name in left_out)
    raise UsageError(
        f"--tool {names} is offered but not allowed (--allow-tool {', '.join(allowed)}); "
        f"add {adds}, or drop --tool {names}"
    )
