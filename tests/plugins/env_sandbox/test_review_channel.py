"""Hostile children on the channel: what they send is refused with a clear error, never a crash."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import JsonValue

from layer0 import RetryableError
from neuron_env_sandbox import ChildFailedError, LimitExceededError
from neuron_env_sandbox._supervisor import MAX_CALLS, Launch, _Server, supervise
from neuron_env_sandbox._wire import decode_error, encode_request
from neuron_turn import ProviderRequest, ProviderResponse
from neuron_turn.loop.provider_errors import MAX_RETRY_AFTER
from neuron_turn.testing import FunctionProvider, ScriptedProvider, text_response

from ._helpers import running


def _child(script: str) -> Launch:
    """A child that reads the start line, then runs `script` (its stdout is the channel)."""
    code = f"import sys\nsys.stdin.readline()\n{script}"
    return Launch(
        argv=[sys.executable, "-I", "-c", code],
        env={},
        cwd="/",
        label="TestChild",
        wall_clock=30,
        cpu_seconds=None,
        memory_bytes=None,
    )


async def _supervise(launch: Launch) -> object:
    return await supervise(launch, {}, provider=ScriptedProvider([]), state=None, session=None)


async def test_a_message_nested_too_deep_to_read_is_a_broken_channel_not_a_crash() -> None:
    deep = "sys.stdout.write('{\"call\": ' + '[' * 200000 + '\\n'); sys.stdout.flush()"
    with pytest.raises(ChildFailedError, match="broke the channel: a message is nested too deep"):
        await _supervise(_child(deep + "\nsys.stdin.read()"))


@pytest.mark.parametrize(
    "extra",
    [
        {"tools": [{"type": "web_search_20250305", "name": "web_search"}]},
        {"model": "claude-opus-4-1"},
        {"max_tokens": 64000},
        {"thinking": {"type": "enabled", "budget_tokens": 32000}},
    ],
)
async def test_the_parent_makes_no_model_call_whose_extra_would_override_the_request(
    extra: dict[str, JsonValue],
) -> None:
    calls: list[ProviderRequest] = []
    server = _Server(FunctionProvider(lambda r: calls.append(r) or text_response("ok")), None, None)
    request = ProviderRequest(model="m", messages=[], extra={"metadata": {"trace": "t"}, **extra})
    params = json.loads(json.dumps(encode_request(request)))
    with pytest.raises(PermissionError, match=f"sets {next(iter(extra))!r} in extra"):
        await server._call("complete", params)
    assert calls == []


async def test_the_childs_trace_metadata_still_reaches_the_provider() -> None:
    calls: list[ProviderRequest] = []
    server = _Server(FunctionProvider(lambda r: calls.append(r) or text_response("ok")), None, None)
    request = ProviderRequest(model="m", messages=[], extra={"metadata": {"trace": "t"}})
    await server._call("complete", json.loads(json.dumps(encode_request(request))))
    assert [call.extra for call in calls] == [{"metadata": {"trace": "t"}}]


SECRET = "sk-live-0123456789abcdef"


@pytest.mark.parametrize("cut", [1, 5, len(SECRET) - 1])
async def test_a_secret_cut_by_the_stderr_tail_leaves_no_piece_of_itself(cut: int) -> None:
    # The kept tail (4000 bytes) starts `cut` characters before the secret's end.
    script = (
        f"sys.stderr.write('x' * 100 + {SECRET!r} + 'y' * {4000 - cut}); sys.stderr.flush()\n"
        "sys.exit(3)"
    )
    launch = replace(_child(script), secrets=(SECRET,))
    with pytest.raises(ChildFailedError) as caught:
        await _supervise(launch)
    assert caught.value.stderr.endswith("y" * (4000 - cut))
    assert SECRET[-cut:] not in caught.value.stderr.rstrip("y")
    assert "[REDACTED]" in caught.value.stderr


async def test_a_longer_secret_is_blanked_whole_where_a_shorter_one_is_part_of_it() -> None:
    script = f"sys.stderr.write('token: ' + {SECRET!r}); sys.exit(3)"
    launch = replace(_child(script), secrets=(SECRET[:6], SECRET))
    with pytest.raises(ChildFailedError) as caught:
        await _supervise(launch)
    assert caught.value.stderr == "token: [REDACTED]"


async def test_an_output_that_does_not_read_names_no_secret_it_quotes() -> None:
    output = {"output": {"message": "done", "exit_reason": SECRET}}
    script = f"print(json.dumps({output!r})); sys.stdout.flush(); sys.stdin.read()"
    launch = replace(_child("import json\n" + script), secrets=(SECRET,))
    with pytest.raises(ChildFailedError, match="not a layer0 TurnOutput") as caught:
        await _supervise(launch)
    assert SECRET not in str(caught.value)
    assert "[REDACTED]" in str(caught.value)


@pytest.mark.parametrize(
    ("wait", "kept"),
    [
        ("NaN", None),
        ("Infinity", None),
        ("-Infinity", None),
        ("true", None),
        ('"5"', None),
        ("-1", 0.0),
        ("1e300", MAX_RETRY_AFTER),
        ("2", 2.0),
    ],
)
def test_a_childs_retry_after_is_a_wait_a_retry_timer_can_schedule(
    wait: str, kept: float | None
) -> None:
    body = json.loads(f'{{"type": "RetryableError", "message": "later", "retry_after": {wait}}}')
    error = decode_error(body, fallback=ChildFailedError)
    assert isinstance(error, RetryableError)
    assert error.retry_after == kept
    # As a provider error keeps it.
    provider_error = decode_error({**body, "type": "RateLimitError"}, fallback=ChildFailedError)
    assert getattr(provider_error, "retry_after", "none") == kept


async def test_a_child_killed_by_sigxcpu_without_a_cpu_limit_is_a_clear_failure() -> None:
    # Code the turn starts can send its child SIGXCPU (`kill -XCPU $PPID`) with no limit set.
    script = "import os, signal\nos.kill(os.getpid(), signal.SIGXCPU)"
    with pytest.raises(ChildFailedError, match="was killed by SIGXCPU before it sent a result"):
        await _supervise(_child(script))


async def test_a_memory_error_without_a_memory_limit_is_a_failure_not_a_limit() -> None:
    script = "raise MemoryError('the machine is out of memory')"
    with pytest.raises(ChildFailedError, match=r"exited \(1\)") as caught:
        await _supervise(_child(script))
    assert "MemoryError" in caught.value.stderr


async def test_a_child_flooding_calls_has_at_most_max_calls_served_at_once() -> None:
    # Each call served holds its answer (a model call's, a session's history) until the
    # child reads it: a child that sends calls and reads no reply must not make the
    # parent hold thousands.
    running: list[int] = []
    in_flight = 0

    async def complete(request: ProviderRequest) -> ProviderResponse:
        nonlocal in_flight
        in_flight += 1
        running.append(in_flight)
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    sent = MAX_CALLS * 3
    request = json.dumps(encode_request(ProviderRequest(model="m", messages=[])))
    script = (
        f"for n in range({sent}):\n"
        f'    sys.stdout.write(\'{{"call": {{"id": %d, "method": "complete", '
        f'"params": {request}}}}}\\n\' % n)\n'
        "sys.stdout.flush(); sys.stdin.read()"
    )
    launch = replace(_child(script), wall_clock=1.0)
    with pytest.raises(LimitExceededError):
        await supervise(launch, {}, provider=FunctionProvider(complete), state=None, session=None)
    assert max(running) == MAX_CALLS


async def test_a_process_that_escaped_the_sweep_holding_stderr_is_killed_not_waited_for(
    tmp_path: Path,
) -> None:
    # Orphaned before the sweep (its parent gone), a process is no descendant of the child any
    # more; it still holds the child's stderr, whose end the parent waited for, forever.
    pid_file = tmp_path / "escaped.pid"
    script = (
        "import subprocess\n"
        f"subprocess.run(['sh', '-c', 'setsid sleep 1000 >/dev/null & echo $! > {pid_file}'])\n"
        "sys.exit(5)"
    )
    try:
        async with asyncio.timeout(20):
            with pytest.raises(ChildFailedError, match=r"exited \(5\)"):
                await _supervise(_child(script))
        assert not running(int(pid_file.read_text()))
    finally:
        with contextlib.suppress(ProcessLookupError, FileNotFoundError, ValueError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
