"""Tools that need a person's approval: a turn that pauses, and resumes with decisions.

`ApprovalPolicy` (in `NeuronTurnConfig.approval`) says which calls need a
"yes" first: by tool name, by fnmatch pattern, or by a predicate over the
name and input; effect tools included. When a model response asks for such
calls, the loop runs the free calls of that response, runs none of the held
ones, and ends the turn:

- exit reason `{"custom": "awaiting_approval"}` (`AWAITING_APPROVAL`), a form
  the Rust reference carries;
- a `log` effect (level info) whose data is
  `{"awaiting_approval": [{"id": ..., "name": ..., "input": ...}, ...]}`, read
  back with `pending_approvals(output)`. A `log` effect, not a custom one,
  because every orchestrator dispatches logs while a custom effect type
  needs a handler registered on each; and `TurnMetadata` has no room for it;
- the history append records the assistant message with every tool_use and
  a user message with the free calls' results, so the pause is in the
  session's store, not in memory: the pending calls are the tool_use blocks
  of the last assistant message that have no result yet.

The next input on the session carries the decisions under
`TurnInput.metadata["approval_decisions"]` (`DECISIONS_KEY`; `resume_input`
builds one). That turn calls no model first: it runs the approved calls (with
the edited input where one is given), answers each denied call with
`Denied by a person: <reason>` as an error result, and then calls the model
as usual. The key is removed from the metadata the provider sees.

A delegated agent that pauses (an answered `delegate` call, see
`effect_answers`) pauses the turn with its `delegate` call unanswered: the
pending calls are then the agent's, named `<call id>/<their id>`
(`PendingCall.agent` naming it), and the resume hands their decisions to it
(`ResumedDelegation`).

A resume must decide every pending call exactly once and nothing else;
otherwise the turn fails before anything runs (`ApprovalError` subclasses,
which are `NonRetryableError`: the same input fails again). An ordinary input
on a paused session fails too (`AwaitingApprovalError`), since a model API
rejects a tool_use left without its result.
"""

from __future__ import annotations

import fnmatch
import logging
import operator
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, model_validator

from layer0 import (
    Content,
    CustomExit,
    LogEffect,
    LogLevel,
    NonRetryableError,
    SessionId,
    TurnConfig,
    TurnInput,
    TurnOutput,
)
from neuron_tool import ToolError, ToolSchema
from neuron_tool.schema import InputValidator

from ._nesting import MAX_INPUT_DEPTH, deeper_than
from .provider import ProviderMessage, ToolResultPart, ToolUsePart

_logger: Final = logging.getLogger("neuron_turn")

__all__ = [
    "AWAITING_APPROVAL",
    "DECISIONS_KEY",
    "ApprovalError",
    "ApprovalPolicy",
    "AwaitingApprovalError",
    "Decision",
    "DuplicateDecisionError",
    "ExternalCallApprovedError",
    "InvalidEditedInputError",
    "MalformedDecisionsError",
    "MissingDecisionError",
    "NotAwaitingApprovalError",
    "PendingCall",
    "ResumedDelegation",
    "UnknownDecisionError",
    "pending_approvals",
    "resume_input",
    "split_decisions",
]

# model_construct: a literal needs no validation, and validating would build the model at import.
AWAITING_APPROVAL: Final = CustomExit.model_construct(name="awaiting_approval")
"""The exit reason of a turn paused for approvals: `{"custom": "awaiting_approval"}`."""

DECISIONS_KEY: Final = "approval_decisions"
"""The `TurnInput.metadata` key holding a resume's decisions (a list of `Decision`)."""

_PENDING_KEY: Final = "awaiting_approval"


class _Frozen(BaseModel):
    # Unknown keys are an error: a misspelt "reason" must not pass as an empty one.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


ApprovalPredicate = Callable[[str, JsonValue], bool]


@dataclass(frozen=True, slots=True)
class ApprovalPolicy:
    """Which tool calls need a person's approval before they run.

    A call needs approval when its tool's name equals or fnmatch-matches one
    of `tools`, or when `predicate(name, input)` returns true (for rules over
    the input, e.g. a path outside the workspace).
    """

    tools: frozenset[str] = frozenset()
    """Tool names or fnmatch patterns (`"shell"`, `"write_*"`, `"*"`)."""
    predicate: ApprovalPredicate | None = field(default=None, compare=False)
    """Called with the tool name and input; true means the call needs approval."""

    @classmethod
    def of(
        cls, tools: Iterable[str] = (), predicate: ApprovalPredicate | None = None
    ) -> ApprovalPolicy:
        """Return a policy holding `tools` (names or patterns) and `predicate`."""
        return cls(frozenset(tools), predicate)

    @classmethod
    def combine(cls, *policies: ApprovalPolicy | None) -> ApprovalPolicy | None:
        """Return the policy holding a call when any of `policies` does (None: none given).

        How the config's policy and the ones plugins register become the turn's one.
        """
        given = [p for p in policies if p is not None]
        if len(given) <= 1:
            return given[0] if given else None
        predicates = [p.predicate for p in given if p.predicate is not None]

        def any_predicate(name: str, input: JsonValue) -> bool:
            return any(_holds(predicate, name, input) for predicate in predicates)

        tools = frozenset().union(*(p.tools for p in given))
        return cls(tools, any_predicate if predicates else None)

    def requires(self, name: str, input: JsonValue) -> bool:
        """Return whether a call of `name` with `input` must wait for approval.

        A predicate that raises holds the call: the input is the model's, and a
        rule that cannot judge it must not let it run unasked.
        """
        if any(name == p or fnmatch.fnmatchcase(name, p) for p in self.tools):
            return True
        return self.predicate is not None and _holds(self.predicate, name, input)


def _holds(predicate: ApprovalPredicate, name: str, input: JsonValue) -> bool:
    try:
        return bool(predicate(name, input))
    except Exception:
        # Fail closed: a person sees the call instead; the operator hears why.
        _logger.exception("approval predicate raised on a call of %r; the call waits", name)
        return True


class PendingCall(_Frozen):
    """A tool call waiting for a decision: its id, tool name and input, as the model sent them."""

    id: str
    name: str
    input: JsonValue
    agent: str | None = None
    """The delegated agent whose call this is (None: the paused turn's own).

    Its id is then `<delegate call id>/<the agent's call id>`: the paused turn
    waits on its `delegate` call, whose agent waits on this call.
    """
    # Left out of the JSON unless set, as `Decision.always` is.
    external: bool = Field(default=False, exclude_if=operator.not_)
    """The call is of an external tool: the caller carries it out and answers it
    (`Decision.answer`), or denies it; there is nothing here to approve."""
    hosted: bool = Field(default=False, exclude_if=operator.not_)
    """The call is a remote MCP server's the provider asked about (`HostedMCP.require_approval`):
    approved as the model made it, the provider runs it; denied, it does not."""


def _is_none(value: object) -> bool:
    return value is None


class Decision(_Frozen):
    """The caller's answer to one pending call: approve, deny, or answer it with its output.

    An approval may edit the input; an answer is how an external tool's call
    (`neuron_tool.ExternalTool`), which the caller carried out, is resumed.
    """

    id: str
    """The id of the pending call decided."""
    decision: Literal["approve", "deny", "answer"]
    input: JsonValue = None
    """Approve only: run with this input instead of the model's (null keeps the model's)."""
    reason: str = ""
    """Deny only: why, shown to the model in the call's result."""
    # Left out of the JSON unless set: a decision reads as it did to a reader from before.
    always: bool = Field(default=False, exclude_if=operator.not_)
    """Decide the tool's later calls in this session the same way, without asking (see
    `neuron_turn.loop.standing`); an edited input is for this call only."""
    output: JsonValue = Field(default=None, exclude_if=_is_none)
    """Answer only: the call's result, which the model reads (a string as it is, else JSON)."""
    is_error: bool = Field(default=False, exclude_if=operator.not_)
    """Answer only: the call failed, and `output` says how."""

    @model_validator(mode="after")
    def _fits_the_decision(self) -> Decision:
        # A field another kind of decision takes would be dropped unseen.
        kind = self.decision
        if kind != "deny" and self.reason:
            raise ValueError(f"a reason is for a denial only, not {kind!r}")
        if kind != "approve" and self.input is not None:
            raise ValueError(f"an edited input is for an approval only, not {kind!r}")
        if kind != "answer" and (self.output is not None or self.is_error):
            raise ValueError(f"an output and is_error are for an answer only, not {kind!r}")
        if kind == "answer" and self.always:
            raise ValueError("always is for an approval or a denial, not 'answer' (one call)")
        return self

    @classmethod
    def approve(cls, id: str, input: JsonValue = None, *, always: bool = False) -> Decision:
        """Approve call `id`, with `input` replacing the model's input when given.

        `always`: approve the tool's later calls in this session too.
        """
        return cls(id=id, decision="approve", input=input, always=always)

    @classmethod
    def deny(cls, id: str, reason: str, *, always: bool = False) -> Decision:
        """Deny call `id`; the model sees `reason`. `always`: its tool's later calls too."""
        return cls(id=id, decision="deny", reason=reason, always=always)

    @classmethod
    def answer(cls, id: str, output: JsonValue, *, is_error: bool = False) -> Decision:
        """Answer call `id` with `output`, its result, unrun: how an external call is resumed.

        Why: an external tool (`neuron_tool.ExternalTool`) runs where the caller
        is; any other pending call may be answered too, by a person who did it.
        `is_error`: the call failed, and `output` says how.
        """
        return cls(id=id, decision="answer", output=output, is_error=is_error)


class ApprovalError(NonRetryableError):
    """A resume's decisions do not fit the session's pending calls (base of the approval errors)."""


class MalformedDecisionsError(ApprovalError):
    """The decisions under `DECISIONS_KEY` are not a list of decisions."""


class MissingDecisionError(ApprovalError):
    """A pending call has no decision."""


class UnknownDecisionError(ApprovalError):
    """A decision names a call that is not pending."""


class DuplicateDecisionError(ApprovalError):
    """A call is decided more than once."""


class InvalidEditedInputError(ApprovalError):
    """An approval's edited input fails the checks a model's input meets (schema, nesting)."""


class ExternalCallApprovedError(ApprovalError):
    """A pending call of an external tool was approved: nothing in the turn can run it."""


class NotAwaitingApprovalError(ApprovalError):
    """Decisions came for a session (or a turn without one) that is not paused."""


class AwaitingApprovalError(ApprovalError):
    """An ordinary input came for a session paused on pending calls."""


def resume_input(
    session: SessionId,
    decisions: Sequence[Decision],
    *,
    config: TurnConfig | None = None,
) -> TurnInput:
    """Return the input that resumes paused `session` with `decisions`.

    Its message is empty: a resume adds the decided calls' results, not a new user message.
    """
    return TurnInput(
        message=Content(""),
        trigger="user",
        session=session,
        config=config,
        metadata={DECISIONS_KEY: [d.model_dump(mode="json") for d in decisions]},
    )


def pending_approvals(output: TurnOutput) -> list[PendingCall]:
    """Return the calls a paused turn's `output` waits on (empty if it did not pause)."""
    for effect in output.effects:
        if isinstance(effect, LogEffect) and isinstance(effect.data, dict):
            pending = effect.data.get(_PENDING_KEY)
            if isinstance(pending, list):
                return [PendingCall.model_validate(p) for p in pending]
    return []


def pending_effect(
    calls: Sequence[ToolUsePart],
    delegated: Sequence[PendingCall] = (),
    external: Collection[str] = (),
    hosted: Collection[str] = (),
) -> LogEffect:
    """Return the `log` effect announcing the pause and carrying the pending calls.

    `calls` are the turn's own; `delegated` the calls its delegated agents wait
    on; `external` names the external tools and `hosted` the hosted calls
    (`hosted_approvals`), whose calls are marked so.
    """
    listed: list[JsonValue] = [
        _listed(c.id, c.name, c.input, c.name in external, c.name in hosted) for c in calls
    ]
    listed.extend(
        {**_listed(c.id, c.name, c.input, c.external, c.hosted), "agent": c.agent}
        for c in delegated
    )
    names = ", ".join([*(c.name for c in calls), *(c.name for c in delegated)])
    answered = any(isinstance(c, dict) and c.get("external") for c in listed)
    waits = "an answer or approval" if answered else "approval"
    return LogEffect(
        level=LogLevel.INFO,
        message=f"awaiting {waits} of {len(listed)} tool call(s): {names}",
        data={_PENDING_KEY: listed},
    )


def _listed(
    id: str, name: str, input: JsonValue, external: bool, hosted: bool
) -> dict[str, JsonValue]:
    listed: dict[str, JsonValue] = {"id": id, "name": name, "input": input}
    if external:
        listed["external"] = True
    if hosted:
        listed["hosted"] = True
    return listed


@dataclass(frozen=True, slots=True)
class ResumedDelegation(ToolUsePart):
    """A `delegate` call whose agent waits on calls of its own: a resume hands it `decisions`.

    Their ids are the agent's (the `<call id>/` prefix removed).
    """

    decisions: tuple[Decision, ...] = ()


def pending_in(history: Sequence[ProviderMessage]) -> list[ToolUsePart]:
    """Return the tool calls of the last assistant message in `history` that have no result."""
    index = last_assistant(history)
    if index is None:
        return []
    answered = {
        part.tool_use_id
        for message in history[index + 1 :]
        for part in message.content
        if isinstance(part, ToolResultPart)
    }
    uses = (p for p in history[index].content if isinstance(p, ToolUsePart))
    return [use for use in uses if use.id not in answered]


def last_assistant(history: Sequence[ProviderMessage]) -> int | None:
    """Return the index of the last assistant message in `history` (None: there is none)."""
    for index in range(len(history) - 1, -1, -1):
        if history[index].role == "assistant":
            return index
    return None


def split_decisions(metadata: JsonValue) -> tuple[list[Decision] | None, JsonValue]:
    """Return the decisions in `metadata` (None: not a resume) and the metadata without them.

    Raises:
        MalformedDecisionsError: the decisions are not a list of `Decision` objects.
    """
    if not isinstance(metadata, dict) or DECISIONS_KEY not in metadata:
        return None, metadata
    rest = {k: v for k, v in metadata.items() if k != DECISIONS_KEY}
    raw = metadata[DECISIONS_KEY]
    if not isinstance(raw, list):
        raise MalformedDecisionsError(
            f"metadata[{DECISIONS_KEY!r}] must be a list of decisions, not {type(raw).__name__}"
        )
    try:
        decisions = [Decision.model_validate(item) for item in raw]
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'decision'}: {e['msg']}" for e in exc.errors()
        )
        raise MalformedDecisionsError(f"a decision does not parse: {problems}") from None
    return decisions, rest or None


def match_decisions(
    pending: Sequence[ToolUsePart],
    decisions: Sequence[Decision],
    session: str | None,
    delegated: Mapping[str, Sequence[str]] | None = None,
) -> Mapping[str, Decision | tuple[Decision, ...]]:
    """Return each pending call's decision by id, checking that every one is decided once.

    `delegated` maps each pending `delegate` call held for its agent to the ids
    of the calls that agent waits on, as the agent names them. Such a call is
    decided by the decisions of those calls, named `<call id>/<their id>`; it
    maps to them, named as the agent names them. An agent's call that waits on
    an agent of its own is decided the same way, one level down (`<id>/<id>/...`),
    which that agent checks. `session` None: the calls are those of a message
    history given to `run`. An agent that waits on nothing any more (it went on
    without this turn) takes whatever decisions name it, none included: its end
    answers the call.

    Raises:
        NotAwaitingApprovalError: nothing is pending on `session`.
        DuplicateDecisionError: a call is decided twice.
        UnknownDecisionError: a decision names no pending call.
        MissingDecisionError: a pending call has no decision.
    """
    where = "the message history" if session is None else f"session {session!r}"
    if not pending:
        raise NotAwaitingApprovalError(
            f"{where} is not awaiting approval; decisions have nothing to decide"
        )
    delegated = delegated or {}
    own = [c.id for c in pending if c.id not in delegated]
    ids = pending_ids(pending, delegated)
    seen: set[str] = set()
    by_id: dict[str, Decision] = {}
    passed: dict[str, list[Decision]] = {}
    for decision in decisions:
        if decision.id in seen:
            raise DuplicateDecisionError(f"call {decision.id!r} is decided more than once")
        seen.add(decision.id)
        if decision.id in own:
            by_id[decision.id] = decision
            continue
        waiting = _delegated_to(decision.id, delegated)
        if waiting is None:
            raise UnknownDecisionError(
                f"call {decision.id!r} is not pending on {where}; pending: " + ", ".join(ids)
            )
        theirs = decision.model_copy(update={"id": decision.id[len(waiting) + 1 :]})
        passed.setdefault(waiting, []).append(theirs)
    missing = [i for i in ids if not _decided(i, seen)]
    if missing:
        raise MissingDecisionError(
            f"{where} has pending call(s) without a decision: {', '.join(missing)}"
        )
    return {**by_id, **{call: tuple(passed.get(call, ())) for call in delegated}}


def pending_ids(
    pending: Sequence[ToolUsePart], delegated: Mapping[str, Sequence[str]]
) -> list[str]:
    """The ids a resume decides: a pending call's, or for one whose agent waits, its agent's.

    `delegated` is as for `match_decisions`; those are named `<call id>/<their id>`.
    """
    ids: list[str] = []
    for call in pending:
        if call.id in delegated:
            ids.extend(f"{call.id}/{theirs}" for theirs in delegated[call.id])
        else:
            ids.append(call.id)
    return ids


def _delegated_to(decided: str, delegated: Mapping[str, Sequence[str]]) -> str | None:
    """The pending call whose agent waits on call `decided` (None: no agent does).

    An agent that went on waits on nothing, and takes any decision named for it.
    """
    for call, theirs in delegated.items():
        if not theirs and decided.startswith(f"{call}/"):
            return call
        for their in theirs:
            waits = f"{call}/{their}"
            if decided == waits or decided.startswith(f"{waits}/"):
                return call
    return None


def _decided(pending: str, decided: set[str]) -> bool:
    """Whether pending call `pending` has a decision, or its agent's calls have some."""
    return pending in decided or any(d.startswith(f"{pending}/") for d in decided)


def check_edited(call: ToolUsePart, input: JsonValue, schema: ToolSchema | None) -> None:
    """Check an approval's edited `input` for `call` as a model's input is checked.

    A model's input nested too deep is refused on arrival and one not matching
    the tool's schema fails as the call's result; an edited one fails the
    resume instead, before anything runs, since the person is there to fix it.
    `schema` is None for a tool the turn does not offer (the call then fails
    as any call of an unknown tool does).

    Raises:
        InvalidEditedInputError: `input` nests too deep or does not match `schema`.
    """
    where = f"the edited input of call {call.id!r} ({call.name})"
    if deeper_than(input, MAX_INPUT_DEPTH):
        raise InvalidEditedInputError(
            f"{where} nests deeper than {MAX_INPUT_DEPTH} levels of objects and arrays"
        )
    if schema is None:
        return
    try:
        InputValidator(schema.input_schema).check(call.name, input)
    except ToolError as exc:
        raise InvalidEditedInputError(f"{where} does not match the tool's schema: {exc}") from None


def merge_results(messages: Sequence[ProviderMessage]) -> list[ProviderMessage]:
    """Return `messages` with adjacent user messages holding only tool results joined.

    A paused turn stores the free calls' results and its resume the decided
    ones, as two messages; model APIs want every result of one assistant
    message in the one user message that follows it.
    """
    merged: list[ProviderMessage] = []
    for message in messages:
        merge_into(merged, message)
    return merged


def merge_into(merged: list[ProviderMessage], message: ProviderMessage) -> None:
    """Add `message` to the end of `merged` as `merge_results` would (one step of it)."""
    # Roles first: in a running turn an assistant message is on one side or the other.
    if (
        merged
        and message.role == "user"
        and merged[-1].role == "user"
        and _results_only(message)
        and _results_only(merged[-1])
    ):
        merged[-1] = ProviderMessage("user", [*merged[-1].content, *message.content])
    else:
        merged.append(message)


def _results_only(message: ProviderMessage) -> bool:
    return (
        message.role == "user"
        and bool(message.content)
        and all(isinstance(p, ToolResultPart) for p in message.content)
    )
