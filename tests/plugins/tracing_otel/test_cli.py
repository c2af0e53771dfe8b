"""`neuron-turn run --trace`: spans and metrics reach the OTLP endpoint; no plugin, an error."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from .receiver import Received, ReceivedPoint, otlp_receiver

_PLUGINS = "fixture-plugin,state-sqlite,orch-local"


def _run(tmp_path: Path, *flags: str, **environ: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "NEURON_"))}
    settings = {
        "NEURON_LOAD_PLUGINS": f"{_PLUGINS},tracing-otel",
        "NEURON_STATE_PATH": str(tmp_path / "state.db"),
        **environ,
    }
    command = [sys.executable, "-m", "neuron_turn", "run", "hello there", "--model", "fixture:echo"]
    return subprocess.run(
        [*command, *flags],
        env={**clean, **settings},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _traced(tmp_path: Path, **environ: str) -> tuple[subprocess.CompletedProcess[str], Received]:
    """`run --trace` exporting to a loopback OTLP receiver (with its token); what it received."""
    token = secrets.token_urlsafe()
    with otlp_receiver(token) as received:
        done = _run(
            tmp_path,
            "--trace",
            OTEL_EXPORTER_OTLP_ENDPOINT=received.url,
            OTEL_EXPORTER_OTLP_HEADERS=f"authorization=Bearer%20{token}",
            **environ,
        )
    return done, received


def test_run_trace_sends_the_runs_spans_to_the_otlp_endpoint(tmp_path: Path) -> None:
    done, received = _traced(tmp_path)

    assert done.returncode == 0, done.stderr
    assert done.stdout == "echo: hello there\n"
    names = sorted(s.name for s in received.spans)
    assert names == ["chat echo", "invoke_agent neuron_turn"]
    (chat,) = [s for s in received.spans if s.name == "chat echo"]
    assert chat.attributes["gen_ai.provider.name"] == "fixture"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 12
    assert chat.service == "neuron-turn"


def _latest(points: list[ReceivedPoint]) -> dict[tuple[str, object], ReceivedPoint]:
    """Each metric's point per token type (None: duration) from the last export that had it."""
    return {(p.metric, p.attributes.get("gen_ai.token.type")): p for p in points}


def test_run_trace_sends_the_model_calls_metrics_to_the_otlp_endpoint(tmp_path: Path) -> None:
    done, received = _traced(tmp_path)

    assert done.returncode == 0, done.stderr
    assert received.refused == 0
    points = _latest(received.points)
    assert sorted(points, key=str) == [
        ("gen_ai.client.operation.duration", None),
        ("gen_ai.client.token.usage", "input"),
        ("gen_ai.client.token.usage", "output"),
    ]
    duration = points["gen_ai.client.operation.duration", None]
    assert duration.unit == "s"
    assert duration.count == 1
    assert duration.sum > 0
    assert duration.explicit_bounds[:3] == (0.01, 0.02, 0.04)
    assert duration.attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "fixture",
        "gen_ai.request.model": "echo",
        "gen_ai.response.model": "echo",
    }
    assert duration.service == "neuron-turn"
    tokens_in = points["gen_ai.client.token.usage", "input"]
    assert (tokens_in.unit, tokens_in.count, tokens_in.sum) == ("{token}", 1, 12)
    assert tokens_in.explicit_bounds[:3] == (1, 4, 16)


def test_run_trace_with_metrics_turned_off_sends_only_spans(tmp_path: Path) -> None:
    done, received = _traced(tmp_path, OTEL_METRICS_EXPORTER="none")

    assert done.returncode == 0, done.stderr
    assert len(received.spans) == 2
    assert received.points == []


def test_run_without_trace_sends_nothing(tmp_path: Path) -> None:
    token = secrets.token_urlsafe()
    with otlp_receiver(token) as received:
        done = _run(tmp_path, OTEL_EXPORTER_OTLP_ENDPOINT=received.url)

    assert done.returncode == 0, done.stderr
    assert (received.spans, received.points, received.refused) == ([], [], 0)


def test_run_trace_without_the_plugin_fails_saying_what_to_install(tmp_path: Path) -> None:
    done = _run(tmp_path, "--trace", NEURON_LOAD_PLUGINS=_PLUGINS)

    assert done.returncode == 3
    assert "--trace needs the plugin 'tracing-otel'" in done.stderr
    assert "pip install ./plugins/neuron-tracing-otel" in done.stderr
    assert done.stdout == ""


def test_run_trace_with_a_bad_setting_fails_naming_it(tmp_path: Path) -> None:
    done = _run(tmp_path, "--trace", OTEL_TRACES_EXPORTER="zipkin")

    assert done.returncode == 3
    assert "OTEL_TRACES_EXPORTER='zipkin' is not valid" in done.stderr


def test_run_trace_with_a_bad_metrics_setting_fails_naming_it(tmp_path: Path) -> None:
    done = _run(tmp_path, "--trace", OTEL_METRIC_EXPORT_INTERVAL="1m")

    assert done.returncode == 3
    assert "OTEL_METRIC_EXPORT_INTERVAL='1m' is not valid" in done.stderr
    assert "a positive number of milliseconds" in done.stderr
    assert done.stdout == ""
