"""How one turn ends: step 6 of the loop, with the output type and the tool choice.

Without an output type a text answer ends the turn. With one, the answer
must validate: a text answer (native and prompted modes) or a call of the
final-answer tool (tool mode). A failed validation goes back to the model as
a correction (a user message, or the final-answer call's error result) while
the retry budget lasts; past it the turn exits `{"custom": "output_invalid"}`.

It also decides, per model call, which tools are offered and the tool choice
sent: a forced choice (`required`, a named tool) holds until the model has
called a tool, then reverts to `auto` (else the model could never answer);
tool mode makes the model call some tool (`required`), or `final_answer`
itself when no other tool may be called; a native-mode correction is sent
with `tool_choice: none`, which lets grammar-constrained providers (Ollama,
the local server) apply the schema to it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, get_args

from pydantic import JsonValue

from layer0 import Content, CustomExit, ExitReason, ModelError, NonRetryableError
from neuron_tool import ExternalTool, ToolSchema

from .external_tools import external_tools_of
from .limits import UsageLimits
from .model_settings import ModelSettings
from .output import (
    TEXT_KIND,
    OutputMode,
    OutputSchema,
    OutputSpec,
    OutputTypeError,
    OutputValidationError,
    output_content,
)
from .output_functions import OutputCall
from .provider import (
    ContentPart,
    ProviderMessage,
    ProviderResponse,
    TextPart,
    ToolResultPart,
    ToolUsePart,
)
from .run_result import RunArgumentsError
from .tool_choice import ToolChoice

CALL_OPTIONS_KEY: Final = "neuron_turn"
"""The `TurnInput.metadata` key holding one call's options, which TurnConfig has no field for:
`{"tool_choice": "required", "output_schema": {...JSON Schema...}, "output_name": "...",
"output_mode": "tool", "output_strict": true, "output_text": true (a plain text answer too),
(a choice: "output_schema": [{"name": "refund", "schema": {...}}, ...]),
(or an output type the turn knows by name: "output_type": "refund", with "output_text" alone),
"usage_limits": {"tool_calls": 20, "total_tokens": 50000}, "stop_at_tools": ["lookup"],
"model_settings": {"temperature": 0.2, "thinking": "low", "sampling": {"seed": 7}},
"external_tools": [{"name": "...", "description": "...", "input_schema": {...}}]}`."""

# model_construct: a literal needs no validation, and validating would build the model at import.
OUTPUT_INVALID: Final = CustomExit.model_construct(name="output_invalid")
"""The exit of a turn whose answer never validated within the retry budget."""

# `pin` is read by the context step (see `turn._pinned`), `record` by `turn._run` (see
# `layer0.turn_record`) and `continue` by `continuation.continues`; they are listed so they
# are not refused here.
_OPTION_KEYS: Final = frozenset(
    {
        "tool_choice",
        "output_schema",
        "output_type",
        "output_name",
        "output_mode",
        "output_strict",
        "output_text",
        "usage_limits",
        "model_settings",
        "stop_at_tools",
        "external_tools",
        "pin",
        "record",
        "continue",
    }
)
_OUTPUT_MODES: Final[tuple[OutputMode, ...]] = get_args(OutputMode)
_CHOICE_ITEM: Final = frozenset({"name", "schema"})
_ACCEPTED: Final = "Final answer received."
_NOT_RUN: Final = "Not run: the turn ended with the final answer."
_NOT_RUN_BESIDE: Final = "Not run: it came beside an answer, which was sent back."


@dataclass(frozen=True, slots=True)
class CallOptions:
    """The options one call's input carries under `CALL_OPTIONS_KEY`."""

    tool_choice: ToolChoice | None = None
    output: OutputSpec[Any] | None = None
    usage_limits: UsageLimits | None = None
    stop_at_tools: frozenset[str] = frozenset()
    external_tools: tuple[ExternalTool, ...] = ()
    """Tools the caller offers for this call and carries out itself (`with_external_tools`)."""
    model_settings: ModelSettings | None = None
    """This call's own model settings, over the turn's (`ModelSettings`)."""


def read_call_options(
    metadata: JsonValue, named: Mapping[str, OutputSpec[Any]] | None = None
) -> CallOptions:
    """Read the loop's options from an input's metadata (absent: none).

    `named` are the output types an input may name (`"output_type": "refund"`),
    the turn's `named_outputs`; None for a reader of the other options only, which
    leaves a named one unresolved (`CallOptions.output` None) rather than refused.

    Raises:
        NonRetryableError: the options are malformed, or name an output type not in
            `named` (what is wrong is named).
    """
    if not isinstance(metadata, dict) or metadata.get(CALL_OPTIONS_KEY) is None:
        return CallOptions()
    where = f"TurnInput.metadata[{CALL_OPTIONS_KEY!r}]"
    options = metadata[CALL_OPTIONS_KEY]
    if not isinstance(options, dict):
        raise NonRetryableError(f"{where} must be an object, not {options!r}")
    unknown = sorted(set(options) - _OPTION_KEYS)
    if unknown:
        raise NonRetryableError(
            f"{where} has unknown keys {unknown}; known: {sorted(_OPTION_KEYS)}"
        )
    try:
        return CallOptions(
            _choice(options.get("tool_choice")),
            _output(options, named),
            _usage(options),
            _stops(options.get("stop_at_tools")),
            external_tools_of(options.get("external_tools")),
            _model_settings(options.get("model_settings")),
        )
    except (ValueError, TypeError) as exc:
        raise NonRetryableError(f"{where}: {exc}") from exc


def _choice(value: JsonValue) -> ToolChoice | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"tool_choice must be a string, not {value!r}")
    return ToolChoice.parse(value)


def _usage(options: dict[str, JsonValue]) -> UsageLimits | None:
    value = options.get("usage_limits")
    return None if value is None else UsageLimits.from_json(value)


def _model_settings(value: JsonValue) -> ModelSettings | None:
    return None if value is None else ModelSettings.from_json(value)


def _stops(value: JsonValue) -> frozenset[str]:
    if value is None:
        return frozenset()
    names = [name for name in value if isinstance(name, str)] if isinstance(value, list) else []
    if not isinstance(value, list) or len(names) != len(value):
        raise ValueError(f"stop_at_tools must be a list of tool names, not {value!r}")
    return frozenset(names)


def _output(
    options: dict[str, JsonValue], named: Mapping[str, OutputSpec[Any]] | None
) -> OutputSpec[Any] | None:
    schema = options.get("output_schema")
    shaping = ("output_mode", "output_strict", "output_text")
    if options.get("output_type") is not None:
        return _named_output(options, named)
    if schema is None:
        given = [key for key in shaping if options.get(key) is not None]
        if given:
            raise ValueError(f"{' and '.join(given)} given without an output_schema")
        return None
    name = options.get("output_name", "output")
    if not isinstance(name, str):
        raise ValueError(f"output_name must be a string, not {name!r}")
    mode = options.get("output_mode")
    if mode is not None and mode not in _OUTPUT_MODES:
        raise ValueError(f"output_mode must be one of {', '.join(_OUTPUT_MODES)}, not {mode!r}")
    strict, text = _flag(options, "output_strict"), _flag(options, "output_text")
    if isinstance(schema, list):
        choice = _choice_schemas(schema)
        if text:
            # Each kind a raw schema of its own, text beside them (`OutputSpec([..., str])`).
            kinds = [OutputSpec.json_schema(s, name=k, strict=strict) for k, s in choice.items()]
            return OutputSpec([*kinds, str], name=name, strict=strict, mode=mode)
        return OutputSpec.json_schema_choice(choice, name=name, strict=strict, mode=mode)
    if not isinstance(schema, dict):
        raise ValueError(
            "output_schema must be a JSON Schema object, or a list of "
            f'{{"name": ..., "schema": {{...}}}} to choose between, not {schema!r}'
        )
    spec = OutputSpec.json_schema(schema, name=name, strict=strict, mode=mode)
    return OutputSpec([spec, str], name=name, strict=strict, mode=mode) if text else spec


def _named_output(
    options: dict[str, JsonValue], named: Mapping[str, OutputSpec[Any]] | None
) -> OutputSpec[Any] | None:
    """The output type an input names, with a text answer beside it when it asks for one.

    A named type keeps the mode, strictness and name it was made with: changing them
    per call would make another type than the one its owner checked and named.
    """
    name = options["output_type"]
    if not isinstance(name, str):
        raise ValueError(f"output_type must be the name of an output type, not {name!r}")
    fixed = ("output_schema", "output_name", "output_mode", "output_strict")
    others = [key for key in fixed if options.get(key) is not None]
    if others:
        raise ValueError(
            f"output_type names an output type made with its own schema, name, mode and "
            f"strictness; {' and '.join(others)} cannot be given with it"
        )
    if named is None:
        return None
    spec = named.get(name)
    if spec is None:
        raise ValueError(unknown_output_type(name, named))
    if not _flag(options, "output_text"):
        return spec
    try:
        return OutputSpec([spec, str], name=spec.name, mode=spec.mode, strict=spec.strict)
    except OutputTypeError as exc:
        raise ValueError(f"output_type {name!r} with output_text: {exc}") from exc


def with_output_type(metadata: JsonValue, name: str | None) -> JsonValue:
    """`metadata` with its call options naming the output type `name` (None: unchanged).

    Raises:
        OutputTypeError: `metadata` asks for an output of its own (`run(output_type=...)`
            and metadata naming one would leave it unclear which answers), or is not an
            object.
    """
    if metadata is not None and not isinstance(metadata, dict):
        raise OutputTypeError(f"output_type= needs metadata to be an object, not {metadata!r}")
    options = (metadata or {}).get(CALL_OPTIONS_KEY) or {}
    if not isinstance(options, dict):
        raise OutputTypeError(f"metadata[{CALL_OPTIONS_KEY!r}] must be an object, not {options!r}")
    asked = [key for key in ("output_schema", "output_type") if options.get(key) is not None]
    if asked:
        raise OutputTypeError(
            f"output_type= given while metadata[{CALL_OPTIONS_KEY!r}] has {' and '.join(asked)}; "
            "ask for the output one way"
        )
    if name is None:
        return metadata
    return {**(metadata or {}), CALL_OPTIONS_KEY: {**options, "output_type": name}}


def with_usage_limits(metadata: JsonValue, limits: UsageLimits | None) -> JsonValue:
    """`metadata` with its call options holding `limits` (None: unchanged).

    Raises:
        RunArgumentsError: `metadata` is not an object, or its call options ask for limits too
            (which to keep would be unclear).
    """
    return _with_option(metadata, "usage_limits", None if limits is None else limits.to_json())


def with_model_settings(metadata: JsonValue, settings: ModelSettings | None) -> JsonValue:
    """`metadata` with its call options holding `settings` (None: unchanged).

    Raises:
        RunArgumentsError: `metadata` is not an object, or its call options hold model
            settings too (which to keep would be unclear).
    """
    return _with_option(
        metadata, "model_settings", None if settings is None else settings.to_json()
    )


def _with_option(metadata: JsonValue, key: str, value: JsonValue) -> JsonValue:
    """`metadata` with its call options holding `value` under `key` (None: unchanged)."""
    if value is None:
        return metadata
    if metadata is not None and not isinstance(metadata, dict):
        raise RunArgumentsError(f"{key}= needs metadata to be an object, not {metadata!r}")
    options = (metadata or {}).get(CALL_OPTIONS_KEY) or {}
    if not isinstance(options, dict):
        raise RunArgumentsError(
            f"metadata[{CALL_OPTIONS_KEY!r}] must be an object, not {options!r}"
        )
    if options.get(key) is not None:
        raise RunArgumentsError(
            f"{key}= given while metadata[{CALL_OPTIONS_KEY!r}] has {key}; give them one way"
        )
    return {**(metadata or {}), CALL_OPTIONS_KEY: {**options, key: value}}


def unknown_output_type(name: str, named: Mapping[str, OutputSpec[Any]]) -> str:
    """The message for an output type name the turn does not know, naming the ones it does."""
    import difflib  # only to word this error

    known = sorted(named)
    if not known:
        return (
            f"output_type {name!r}: this turn knows no output types by name (give them as "
            "NeuronTurn(named_output_types={...}), or from plugins' register_output_types)"
        )
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return f"output_type {name!r} is not one this turn knows; it knows {known}{hint}"


def _flag(options: dict[str, JsonValue], key: str) -> bool | None:
    flag = options.get(key)
    if flag is not None and not isinstance(flag, bool):
        raise ValueError(f"{key} must be true or false, not {flag!r}")
    return flag


def _choice_schemas(given: list[JsonValue]) -> dict[str, Mapping[str, JsonValue]]:
    """A choice's schemas by kind, from `[{"name": kind, "schema": {...}}, ...]`."""
    schemas: dict[str, Mapping[str, JsonValue]] = {}
    for index, item in enumerate(given):
        fields = item if isinstance(item, dict) else {}
        kind, schema = fields.get("name"), fields.get("schema")
        if not isinstance(kind, str) or not isinstance(schema, dict) or set(fields) != _CHOICE_ITEM:
            raise ValueError(
                f'output_schema[{index}] must be {{"name": <a kind>, "schema": {{...}}}}, '
                f"not {item!r}"
            )
        if kind in schemas:
            raise ValueError(f"output_schema names the kind {kind!r} twice")
        schemas[kind] = schema
    return schemas


@dataclass(frozen=True, slots=True)
class Calls:
    """Run these tool calls; add `pending` (final-answer errors) to the round's results."""

    calls: Sequence[ToolUsePart]
    pending: Sequence[ToolResultPart] = ()
    order: Sequence[str] = ()
    """Every call id of the response, in the model's order (to place `pending`)."""


@dataclass(frozen=True, slots=True)
class Finish:
    """End the turn; `closing` answers the response's tool calls, so history stays valid."""

    reason: ExitReason
    closing: Sequence[ToolResultPart] = ()
    beside: Sequence[ToolUsePart] = ()
    """Ending gracefully (`end_strategy`): the calls that came beside the final answer, to
    run before the turn ends; `closing` then answers the final-answer calls alone."""
    order: Sequence[str] = ()
    """With `beside`: every call id of the response, in the model's order."""


Step: TypeAlias = Calls | Finish


class OutputRound:
    """One turn's output type, mode, tool choice and retry count."""

    def __init__(
        self,
        spec: OutputSpec[Any] | None,
        mode: OutputMode,
        *,
        retries: int,
        choice: ToolChoice | None,
        reset_choice: bool,
        infer_strict: bool = False,
        graceful: bool = False,
    ) -> None:
        self.spec = spec
        self.mode = mode
        self.graceful = graceful
        """Whether calls beside an accepted final answer still run (`end_strategy`)."""
        self.infer_strict = infer_strict
        """Whether the provider infers strict tools (`OutputSpec.tool_schema`'s `infer_strict`)."""
        self.retries = retries
        self.choice = choice
        self.reset_choice = reset_choice
        self.failures = 0
        self.tool_called = False
        self.correcting = False
        self.value: JsonValue = None
        self.typed: Any = None
        self.kind: str | None = None
        """The type of a choice the accepted answer is (`OutputSpec.members`)."""
        self.accepted = False
        self.call: OutputCall | None = None
        """An output function's answer, its arguments valid, to run before the answer is taken."""
        self._final: tuple[ToolUsePart, list[ToolUsePart]] | None = None
        """The final-answer call accepted and the response's calls, in tool mode."""
        self._beside: list[ToolUsePart] = []
        """The calls a text answer came with (a server stopping `end_turn` beside them)."""
        self.answer_calls: frozenset[str] = frozenset()
        """Ending gracefully with calls beside the answer (`Finish.beside`): the ids of its
        final-answer calls, so an output guardrail withholding it keeps the others."""
        self.prompted_output: OutputSchema | None = (
            None
            if spec is None or mode != "prompted" or spec.text_only
            else OutputSchema(spec.name, spec.schema, spec.description)
        )
        """The schema a prompted-mode request's system prompt asks for (once per run)."""

    # --- the request --------------------------------------------------------

    def check_choice(self, tools: Sequence[ToolSchema], *, in_force: bool = False) -> None:
        """Refuse a named tool choice this turn does not offer.

        With `in_force`, only a choice the next call still makes: one that a called
        tool reverted to `auto` (`reset_choice`) forces nothing any more.

        Raises:
            NonRetryableError: the named tool is not offered (unknown or not allowed).
        """
        choice = self._user_choice() if in_force else self.choice
        if choice is None or choice.name is None:
            return
        names = [tool.name for tool in tools]
        if choice.name not in names:
            offered = ", ".join(names) or "none"
            raise NonRetryableError(
                f"tool_choice names {choice.name!r}, which this turn does not offer "
                f"(offered: {offered})"
            )

    def offer(self, tools: list[ToolSchema]) -> tuple[list[ToolSchema], ToolChoice | None]:
        """Return the tools and the tool choice for the next model call.

        Raises:
            NonRetryableError: in tool mode, a tool already has the final-answer tool's name.
        """
        choice = self._user_choice()
        finals = self.final_tools()
        if not finals:
            if self.mode == "native" and self.correcting and tools:
                return tools, ToolChoice.NONE
            return tools, choice
        for final in finals:
            if any(tool.name == final.name for tool in tools):
                raise NonRetryableError(
                    f"a tool is named {final.name!r}, the final-answer tool's name; "
                    "rename it or give the output spec another tool_name"
                )
        assert self.spec is not None
        if self.spec.allows_text:
            return [*tools, *finals], choice  # a text answer is one: no call is forced
        if not tools or (choice is not None and choice.mode == "none"):
            only = ToolChoice.tool(finals[0].name) if len(finals) == 1 else ToolChoice.REQUIRED
            return list(finals), only
        if choice is not None and choice.forces_call:
            return [*tools, *finals], choice
        return [*tools, *finals], ToolChoice.REQUIRED

    def final_tools(self) -> tuple[ToolSchema, ...]:
        """The final-answer tools of `tool` mode: one, one per type of a choice; else none."""
        if not self._tool_mode():
            return ()
        assert self.spec is not None
        return self.spec.tool_schemas(infer_strict=self.infer_strict)

    def system(self, base: str | None) -> str | None:
        """Return the system prompt, with the schema added in prompted mode."""
        if self.spec is None or self.mode != "prompted" or self.spec.text_only:
            return base
        schema = json.dumps(self.spec.schema, ensure_ascii=False, separators=(",", ":"))
        if self.spec.prompt_template is not None:
            # Not `format`: a template may hold other braces (a JSON example).
            instruction = self.spec.prompt_template.replace("{schema}", schema)
        elif self.spec.allows_text:
            instruction = (
                "Give your final answer as plain text, or, for a structured answer, as only "
                "a JSON object matching this JSON Schema, with no other text and no code "
                f"fence:\n{schema}"
            )
        else:
            instruction = (
                "Give your final answer as only a JSON object matching this JSON Schema, "
                f"with no other text and no code fence:\n{schema}"
            )
        return f"{base}\n{instruction}" if base else instruction

    def provider_output(self) -> OutputSchema | None:
        """Return the schema a native-mode request carries."""
        if self.spec is None or self.mode != "native":
            return None
        return self.spec.provider_schema()

    # --- the response -------------------------------------------------------

    def judge(self, response: ProviderResponse, messages: list[ProviderMessage]) -> Step:
        """Decide what the response means; a correction is appended to `messages`.

        Raises:
            ModelError: the answer was truncated or filtered, or a tool stop named no tool.
        """
        self.correcting = False
        self._beside = []
        stop = response.stop_reason
        calls = [part for part in response.content if isinstance(part, ToolUsePart)]
        if stop == "end_turn":
            if self._final_calls(calls):
                # A forced final-answer call, whatever stop reason the API gave it.
                return self._calls(calls)
            self._beside = calls
            if self.spec is None:
                return Finish("complete")
            return self._text_answer(_text(response), messages)
        if stop == "max_tokens":
            raise ModelError("output truncated (max_tokens)")
        if stop == "content_filter":
            raise ModelError("content filtered")
        if not calls:
            raise ModelError("the model stopped for tool use but asked for no tool")
        return self._calls(calls)

    def ran_tools(self) -> None:
        """Note that the model called a tool (a forced tool choice is used up)."""
        self.tool_called = True

    def message(self) -> Content | None:
        """Return the output message holding the validated value, once there is one."""
        if not self.accepted or self.spec is None:
            return None
        return output_content(self.spec, self.value, self.kind)

    def answer(self, content: Sequence[ContentPart]) -> Any:
        """The final answer, as an output guardrail reads it: the typed value, else the text."""
        if self.accepted:
            return self.typed
        return "".join(part.text for part in content if isinstance(part, TextPart))

    def send_back(self, hint: str, messages: list[ProviderMessage]) -> Step:
        """Take back the answer `judge` accepted, sending `hint` back as a failed answer's errors.

        It counts against the retries as any failed answer does.
        """
        self.accepted = False
        self.typed = self.value = self.kind = self.call = None
        self.answer_calls = frozenset()
        final, self._final = self._final, None
        if final is not None:
            return self._bad_final_call(*final, hint)
        return self._send_text_back(hint, messages)

    def tool_answer(self, text: str) -> None:
        """Take a stop tool's result as the final answer (`NeuronTurnConfig.stop_at_tools`).

        Text a `TextOutput` takes is held as the `call` of its function, to run.

        Raises:
            OutputValidationError: a typed turn's result is not of its output type.
        """
        if self.spec is not None:
            self._take(self.spec.validate_tool_result(text))

    def replace(self, value: Any) -> None:
        """Make `value` (of the output type, already validated) the accepted answer."""
        self._accept(value)

    def called(self, result: Any) -> None:
        """Take what the output function of the pending `call` returned as the answer."""
        call, self.call = self.call, None
        assert call is not None
        self._accept(result, call.kind)

    def _final_spec(self, call: ToolUsePart) -> OutputSpec[Any] | None:
        """The spec `call` answers by, when it calls a final-answer tool in `tool` mode."""
        if self.spec is None or self.mode != "tool":
            return None
        return self.spec.final_spec(call.name)

    def _final_calls(self, calls: list[ToolUsePart]) -> list[ToolUsePart]:
        if self.spec is None or self.mode != "tool":
            return []  # asked once a step, not once a call: most turns are untyped
        return [call for call in calls if self.spec.final_spec(call.name) is not None]

    def _calls(self, calls: list[ToolUsePart]) -> Step:
        finals = self._final_calls(calls)
        if not finals:
            return Calls(calls)
        first = finals[0]
        answered = self._final_spec(first)
        assert answered is not None
        try:
            value = answered.validate_json(first.input)
        except OutputValidationError as exc:
            return self._bad_final_call(first, calls, str(exc))
        self._take(value, answered.name if answered is not self.spec else None)
        self._final = (first, calls)
        if self.graceful and len(finals) < len(calls):
            self.answer_calls = frozenset(c.id for c in finals)
            closing = [ToolResultPart(c.id, _ACCEPTED if c is first else _NOT_RUN) for c in finals]
            others = [c for c in calls if c not in finals]
            return Finish("complete", closing, beside=others, order=[c.id for c in calls])
        closing = [ToolResultPart(c.id, _ACCEPTED if c is first else _NOT_RUN) for c in calls]
        return Finish("complete", closing)

    def _bad_final_call(self, first: ToolUsePart, calls: list[ToolUsePart], errors: str) -> Step:
        text = (
            f"Error: invalid final answer, {errors}. "
            f"Call {first.name} again with a corrected input."
        )
        error = ToolResultPart(first.id, text, is_error=True)
        finals = self._final_calls(calls)
        others = [c for c in calls if c not in finals]
        extra = [ToolResultPart(c.id, _NOT_RUN, is_error=True) for c in finals if c is not first]
        if self._spend_retry():
            return Calls(others, pending=[error, *extra], order=[c.id for c in calls])
        closing = [error if c is first else ToolResultPart(c.id, _NOT_RUN, True) for c in calls]
        return Finish(OUTPUT_INVALID, closing)

    def _text_answer(self, text: str, messages: list[ProviderMessage]) -> Step:
        assert self.spec is not None
        try:
            if self.spec.allows_text and self.mode == "tool":
                # Structured answers come through the final-answer tools: text is text.
                self._take(self.spec.text_answer(text), TEXT_KIND)
                return Finish("complete")
            value = self.spec.validate_text(text)
        except OutputValidationError as exc:
            return self._send_text_back(str(exc), messages)
        self._take(value)
        return Finish("complete")

    def _send_text_back(self, errors: str, messages: list[ProviderMessage]) -> Step:
        """Ask again for a text answer, answering the calls it came with so history stays valid."""
        if not self._spend_retry():
            return Finish(OUTPUT_INVALID)
        unrun = [ToolResultPart(c.id, _NOT_RUN_BESIDE, is_error=True) for c in self._beside]
        messages.append(ProviderMessage("user", [*unrun, TextPart(self._correction(errors))]))
        self.correcting = True
        return Calls(())

    def _correction(self, errors: str) -> str:
        if self.spec is None or self.spec.text_only:
            return f"Your answer was not accepted: {errors}. Answer again."
        if self._tool_mode():
            names = [tool.name for tool in self.final_tools()]
            which = f"the {names[0]} tool" if len(names) == 1 else f"one of {', '.join(names)}"
            return (
                f"Your answer is not a valid final answer ({errors}). Give it by calling {which}."
            )
        return (
            f"Your answer does not match the required output: {errors}. "
            "Reply with only the corrected JSON, nothing else."
        )

    def _take(self, value: Any, kind: str | None = None) -> None:
        """Accept a valid answer, or hold an output function's call until it has run."""
        if isinstance(value, OutputCall):
            self.call = value if kind is None else value.of_kind(kind)
        else:
            self._accept(value, kind)

    def _accept(self, value: Any, kind: str | None = None) -> None:
        """Take `value` as the answer; `kind`: the type of a choice the model answered as."""
        assert self.spec is not None
        self.value = self.spec.dump(value)
        self.typed = value
        self.kind = kind or self.spec.kind_of(value)
        self.accepted = True

    def _spend_retry(self) -> bool:
        """Count a failed answer; return whether the budget allows another try."""
        self.failures += 1
        return self.failures <= self.retries

    def _tool_mode(self) -> bool:
        return self.spec is not None and self.mode == "tool"

    def _user_choice(self) -> ToolChoice | None:
        choice = self.choice
        if choice is not None and choice.forces_call and self.tool_called and self.reset_choice:
            return ToolChoice.AUTO
        return choice


def merge_results(messages: list[ProviderMessage], step: Calls) -> None:
    """Add a step's pending results to its round's result message, in the model's order.

    A round whose calls all wait on a delegated agent left no result message: the
    pending results make one of their own.
    """
    if not step.pending:
        return
    ran = list(messages.pop().content) if step.calls and messages[-1].role == "user" else []
    position = {call_id: index for index, call_id in enumerate(step.order)}
    last = len(position)

    def rank(part: object) -> int:
        return position.get(part.tool_use_id, last) if isinstance(part, ToolResultPart) else last

    messages.append(ProviderMessage("user", sorted([*ran, *step.pending], key=rank)))


def _text(response: ProviderResponse) -> str:
    return "".join(part.text for part in response.content if isinstance(part, TextPart))
