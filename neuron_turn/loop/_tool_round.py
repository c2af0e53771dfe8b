"""One round of tool calls: step 7 of the loop.

Calls run in the model's order, or concurrently when enabled; either way
results go back in the model's order as one user message. When the round is
cut short (a hook halts, the deadline passes) every call without a result is
answered with a cancellation note, so the stored history never holds a
tool_use without its tool_result, which every model API rejects.

Every call goes through the `pre_tool_use` hooks first, effect tools
included, and then `post_tool_use`. The Phase 6 bridge document checks
effect tools before the hooks; that let a model slip `write_memory` or
`handoff` past every policy hook (`ToolPolicyHook(deny=["*"])` included), so
here the hooks come first and an effect is declared only after they let the
call through (with the input they may have modified), and only inside the
caller's grant.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

from pydantic import JsonValue
from pydantic_core import to_jsonable_python

from layer0 import (
    Effect,
    Halt,
    HandoffEffect,
    HookPoint,
    ModifyToolInput,
    SessionId,
    SkipTool,
    ToolCallRecord,
)
from neuron_hooks import HookRegistry, ToolProgress
from neuron_tool import ModelRetry, RunContext, ToolError, ToolRegistry
from neuron_tool.files import ToolReturn

from ._convert import file_parts, json_text
from ._run import RunState, tool_call_record
from ._tool_input import CALLER_ANSWERED, UNRUN, AnsweredCall, RefusedCall
from ._well_formed import well_formed, well_formed_part
from .approval import PendingCall
from .effect_answers import answered_form, current_answerer, delegation_sessions
from .effect_tools import EFFECT_TOOL_NAMES, EffectToolError, declare_effect, effect_tool_schemas
from .events import ToolResult, ToolStart
from .memory_tools import MEMORY_TOOL_NAMES, MemoryReader, MemoryToolError, memory_tool_schemas
from .provider import DocumentPart, ImagePart, ProviderMessage, ToolResultPart, ToolUsePart
from .tool_files import describe_file

_CANCELLED: Final = "Cancelled: the turn ended before this tool call finished."


class TurnHalted(Exception):
    """A hook halted the turn during a tool call."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True)
class _Done:
    result: ToolResultPart
    record: ToolCallRecord
    input: JsonValue
    answered: Sequence[Effect] = ()
    """Effects an answerer gave for the call (effect_answers), declared at the round's end."""
    held: Sequence[PendingCall] = ()
    """The calls the call's delegated agent waits on (named for this turn): no result yet."""


@dataclass(slots=True)
class ToolRound:
    """Runs the tool calls of one model response against the registry and the hooks."""

    tools: ToolRegistry
    hooks: HookRegistry
    run: RunState
    parallel: bool
    effect_tools: bool
    """Whether effect-tool calls are intercepted (else they are unknown tools); what they
    may declare is the run's `effect_policy`."""
    memory: MemoryReader | None = None
    """Answers the memory read tools; None when the turn does not offer them."""
    resumable: bool = False
    """Whether the turn reads its session's history, so that its resume finds a call held
    for a delegated agent: only then does a delegation get a session it can pause in."""
    held: list[PendingCall] = field(default_factory=list)
    """The calls delegated agents wait on, in the model's order (see `take_held`)."""
    sessions: Mapping[str, SessionId] | None = None
    """The sessions the round's delegations run in, by call id (`delegation_sessions`);
    None: worked out from the model's message, the last so far, when first needed."""

    def take_held(self) -> list[PendingCall]:
        """Return the calls delegated agents wait on since the last call, and forget them.

        Their `delegate` calls have no result: the turn pauses on them.
        """
        held, self.held = self.held, []
        return held

    async def execute(
        self, calls: Sequence[ToolUsePart], sessions: Mapping[str, SessionId] | None = None
    ) -> None:
        """Run `calls`, append their results as one user message, update the records.

        `sessions`: where their delegations run, when the calls are not those of
        the last message (a resume's, from the stored history).

        Raises:
            TurnHalted: a `pre_tool_use` or `post_tool_use` hook halted the turn.
        """
        self.sessions = sessions
        done: list[_Done | None] = [None] * len(calls)
        try:
            if self.parallel and len(calls) > 1 and not self._holds_sequential(calls):
                async with asyncio.TaskGroup() as group:
                    for index, call in enumerate(calls):
                        group.create_task(self._into(done, index, call))
            elif self.run.sink is None:
                # `_into` without its frame: nothing to emit around the call.
                for index, call in enumerate(calls):
                    done[index] = await self._call(call)
            else:
                for index, call in enumerate(calls):
                    await self._into(done, index, call)
        except* TurnHalted as halted:
            raise halted.exceptions[0] from None
        finally:
            self._close_round(calls, done)

    def _holds_sequential(self, calls: Sequence[ToolUsePart]) -> bool:
        """Whether a call is to a tool that runs alone (`sequential`): then none runs beside it."""
        names = self.tools.sequential_names
        return bool(names) and any(call.name in names for call in calls)

    async def _into(self, done: list[_Done | None], index: int, call: ToolUsePart) -> None:
        run = self.run
        if run.sink is None:
            done[index] = await self._call(call)
            return
        run.emit(ToolStart(call.id, call.name, call.input))
        finished = done[index] = await self._call(call)
        if finished.held:
            return  # not finished: its agent waits for a person
        result = finished.result
        files = tuple(describe_file(file) for file in result.files) if result.files else ()
        duration = finished.record.duration
        run.emit(ToolResult(call.id, call.name, result.content, result.is_error, duration, files))

    def _close_round(self, calls: Sequence[ToolUsePart], done: Sequence[_Done | None]) -> None:
        results: list[ToolResultPart] = []
        for call, finished in zip(calls, done, strict=True):
            if finished is None:
                results.append(ToolResultPart(call.id, _CANCELLED, is_error=True))
                self.run.cut_off += 1
                continue
            # In the model's order, not the order concurrent answers came back in.
            self.run.effects.extend(finished.answered)
            if finished.held:
                # Left without a result: the pause this turn ends in waits on it.
                self.held.extend(finished.held)
                continue
            results.append(finished.result)
            self.run.records.append(finished.record)
            self.run.note_call(call.name, finished.input, success=finished.record.success)
        if results:
            self.run.messages.append(ProviderMessage("user", results))

    async def _call(self, call: ToolUsePart) -> _Done:
        # Every call meets the pre_tool_use hooks first, effect tools included:
        # a policy hook must be able to stop an effect before it is declared.
        started = time.monotonic()
        if isinstance(call, UNRUN):
            if isinstance(call, AnsweredCall):
                done = _finish(call, call.input, call.answer, True, started)
            else:
                done = _finish(call, call.input, call.refusal, False, started)
            # The caller ran an external call: the hooks see its result as a tool's.
            if isinstance(call, CALLER_ANSWERED) and self.hooks.has_hooks(HookPoint.POST_TOOL_USE):
                await self._after(call.name, done.result.content)
            return done
        tool_input = call.input
        if self.hooks.has_hooks(HookPoint.PRE_TOOL_USE):
            ctx = self.run.hook_context(
                HookPoint.PRE_TOOL_USE, tool_name=call.name, tool_input=tool_input
            )
            action = await self.hooks.dispatch(ctx)
            if isinstance(action, Halt):
                raise TurnHalted(action.reason)
            if isinstance(action, SkipTool):
                return _finish(call, tool_input, f"Skipped: {action.reason}", False, started)
            if isinstance(action, ModifyToolInput):
                tool_input = action.new_input
        answered: Sequence[Effect] = ()
        held: Sequence[PendingCall] = ()
        files: tuple[ImagePart | DocumentPart, ...] = ()
        name = call.name
        if self._is_effect_tool(name):
            text, ok, answered, held = await self._declare(call, tool_input)
        elif self.memory is not None and name in MEMORY_TOOL_NAMES:
            text, ok = await self._read_memory(self.memory, name, tool_input)
        elif (refusal := self._refusal(name)) is not None:
            text, ok = refusal, False
        else:
            # The registry call inline, not in a helper: one coroutine frame less per call.
            tools = self.tools
            try:
                if tools.any_takes_context and tools.takes_context(name):
                    # A context is built only for a tool that asks for one.
                    context = self._context(name, call.id)
                    value = await tools.call(name, tool_input, context=context)
                else:
                    value = await tools.call(name, tool_input)
                if isinstance(value, ToolReturn):
                    files = file_parts(value.files)
                    text, ok = json_text(value.value), True
                else:
                    text, ok = json_text(value), True
            except ModelRetry as retry:
                text, ok = retry.hint, False
            except ToolError as exc:
                text, ok = str(exc), False
        # A call held for its delegated agent has no result yet for the hooks to see.
        if not held and self.hooks.has_hooks(HookPoint.POST_TOOL_USE):
            await self._after(call.name, text)
        done = _finish(call, tool_input, text, ok, started, files)
        done.answered, done.held = answered, held
        return done

    async def _after(self, name: str, text: str) -> None:
        """Show the `post_tool_use` hooks a call's result; raise `TurnHalted` if one halts."""
        ctx = self.run.hook_context(HookPoint.POST_TOOL_USE, tool_name=name, tool_result=text)
        action = await self.hooks.dispatch(ctx)
        if isinstance(action, Halt):
            raise TurnHalted(action.reason)

    async def hand_out(
        self, calls: Sequence[ToolUsePart], screen: Callable[[ToolUsePart], ToolUsePart]
    ) -> list[ToolUsePart]:
        """`calls` with the external ones as the `pre_tool_use` hooks leave them.

        Why: the caller carries those out, so the hooks meet them now, before they
        are handed out, as they meet a call before it runs: skipped, it is answered
        unrun with the reason; given a new input, that input is handed out once
        `screen` (the external tools' schema check) passes it.

        Raises:
            TurnHalted: a hook halted the turn.
        """
        external = self.tools.external_names
        out: list[ToolUsePart] = []
        for call in calls:
            if call.name not in external or isinstance(call, UNRUN):
                out.append(call)
                continue
            ctx = self.run.hook_context(
                HookPoint.PRE_TOOL_USE, tool_name=call.name, tool_input=call.input
            )
            action = await self.hooks.dispatch(ctx)
            if isinstance(action, Halt):
                raise TurnHalted(action.reason)
            if isinstance(action, SkipTool):
                call = RefusedCall(call.id, call.name, call.input, f"Skipped: {action.reason}")
            elif isinstance(action, ModifyToolInput):
                call = screen(ToolUsePart(call.id, call.name, action.new_input))
            out.append(call)
        return out

    async def _declare(
        self, call: ToolUsePart, tool_input: JsonValue
    ) -> tuple[str, bool, Sequence[Effect], Sequence[PendingCall]]:
        """Declare the effect of effect-tool `call`, or have the answerer carry it out.

        Returns the result's text, whether it is no error, the effects to declare
        in place of the one carried out, and the calls its agent waits on.
        """
        name = call.name
        settings = self.run.settings
        if not settings.allows(name):
            return f"Error: the tool {name!r} is not allowed in this turn", False, (), ()
        session = self.run.session
        try:
            effect, confirmation = declare_effect(
                name, tool_input, policy=settings.effect_policy, session=session
            )
        except EffectToolError as exc:
            return str(exc), False, (), ()
        answerer = current_answerer()
        if answerer is None:
            answer = None
        else:
            own = self._session_of(call) if self.resumable and session is not None else None
            answer = await answerer(answered_form(effect, call, own))
        if answer is None:
            handing_off = (
                _handoff_in(self.run.effects) if isinstance(effect, HandoffEffect) else None
            )
            if handing_off is not None:
                # An orchestrator refuses a turn handing off twice, all its effects with it.
                return (
                    f"Refused: this turn already hands the conversation to agent "
                    f"{handing_off.agent!r}, and a turn hands off once; nothing was done",
                    False,
                    (),
                    (),
                )
            self.run.effects.append(effect)
            return confirmation, True, (), ()
        # The orchestrator carried the effect out while the turn waited (effect_answers).
        self.run.tokens_in += answer.tokens_in
        self.run.tokens_out += answer.tokens_out
        self.run.cost = self.run.cost + answer.cost
        held = [held.model_copy(update={"id": f"{call.id}/{held.id}"}) for held in answer.held]
        return answer.text, not answer.is_error, tuple(answer.effects), held

    def _session_of(self, call: ToolUsePart) -> SessionId | None:
        """The session the delegation of `call` runs in (None: `call` delegates nothing)."""
        if call.name != "delegate":
            return None
        sessions = self.sessions
        if sessions is None:
            run = self.run
            assert run.session is not None
            last = len(run.messages) - 1
            sessions = self.sessions = delegation_sessions(
                run.session, run.stored_position(last), run.messages[last].content
            )
        return sessions.get(call.id)

    async def _read_memory(
        self, memory: MemoryReader, name: str, tool_input: JsonValue
    ) -> tuple[str, bool]:
        if not self.run.settings.allows(name):
            return f"Error: the tool {name!r} is not allowed in this turn", False
        try:
            return await memory.answer(name, tool_input), True
        except MemoryToolError as exc:
            return str(exc), False

    def _context(self, name: str, call_id: str) -> RunContext[Any]:
        run = self.run
        listening = run.sink is not None or self.hooks.has_progress_observers()
        return run.tool_context(
            name,
            call_id,
            reporter=functools.partial(self._report, call_id, name) if listening else None,
            loop=asyncio.get_running_loop() if listening else None,
        )

    async def _report(
        self, call_id: str, name: str, message: str, fraction: float | None, data: JsonValue
    ) -> None:
        # JSON now: a stream may cross a process boundary (--jsonl, Temporal).
        event = ToolProgress(call_id, name, message, fraction, to_jsonable_python(data))
        run = self.run
        if run.sink is not None:
            run.emit(event)
        if self.hooks.has_progress_observers():
            await self.hooks.notify_progress(event)

    def _is_effect_tool(self, name: str) -> bool:
        return self.effect_tools and name in EFFECT_TOOL_NAMES

    def _refusal(self, name: str) -> str | None:
        settings = self.run.settings
        if name not in self.tools and not self._is_effect_tool(name):
            session = self.run.session
            effect_names = (
                [s.name for s in effect_tool_schemas(settings.effect_policy, session)]
                if self.effect_tools
                else []
            )
            memory = self.memory
            memory_names = (
                []
                if memory is None
                else [s.name for s in memory_tool_schemas(memory.policy, session, memory.limits)]
            )
            names = (*self.tools.names(), *effect_names, *memory_names)
            offered = [n for n in names if settings.allows(n)]
            return f"Error: there is no tool named {name!r}; available: {', '.join(offered)}"
        if not settings.allows(name):
            return f"Error: the tool {name!r} is not allowed in this turn"
        return None


def _handoff_in(effects: Sequence[Effect]) -> HandoffEffect | None:
    """The handoff among `effects` (a turn declares one at most), if any."""
    return next((e for e in effects if isinstance(e, HandoffEffect)), None)


def _finish(
    call: ToolUsePart,
    used: JsonValue,
    text: str,
    ok: bool,
    started: float,
    files: tuple[ImagePart | DocumentPart, ...] = (),
) -> _Done:
    duration = int((time.monotonic() - started) * 1000)
    record = tool_call_record(call.name, duration, ok)
    # A tool's text may hold lone surrogates (bytes decoded with surrogateescape).
    result = ToolResultPart(call.id, well_formed(text), not ok, files)
    if files:
        # A document's name may hold them too.
        result = cast(ToolResultPart, well_formed_part(result))
    return _Done(result, record, used)
