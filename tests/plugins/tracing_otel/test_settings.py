"""Off until turned on: the plugin alone does nothing, and bad settings are named."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from neuron_tracing_otel import TracingSettingError, capture_content, tracing_enabled


def _python(program: str, **environ: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "NEURON_OTEL"))}
    return subprocess.run(
        [sys.executable, "-c", program],
        env={**clean, **environ},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_installed_but_not_turned_on_the_plugin_registers_nothing_and_imports_no_sdk() -> None:
    program = (
        "import sys\n"
        "from neuron_turn import get_plugin_manager, turn_observers\n"
        "(info,) = [p for p in get_plugin_manager().plugins() if p.name == 'tracing-otel']\n"
        "print(len(turn_observers()), sum(map(len, info.registered.values())),"
        " 'neuron_tracing_otel.instrumentation' in sys.modules)\n"
    )
    done = _python(program)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "0", "False"]


def test_neuron_otel_turns_it_on_when_plugins_load() -> None:
    program = (
        "from neuron_turn import get_plugin_manager, turn_observers\n"
        "get_plugin_manager()\n"
        "print([type(o).__name__ for o in turn_observers()])\n"
    )
    done = _python(program, NEURON_OTEL="1", OTEL_TRACES_EXPORTER="none")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['TracingObserver']"


@pytest.mark.parametrize(
    ("variable", "value", "expected"),
    [
        ("OTEL_TRACES_EXPORTER", "zipkin", "otlp, console or none"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "http/protobuf"),
        ("NEURON_OTEL_CAPTURE_CONTENT", "maybe", "1 or 0"),
        ("OTEL_METRICS_EXPORTER", "prometheus", "otlp, console or none"),
        ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "grpc", "http/protobuf"),
        ("OTEL_METRIC_EXPORT_INTERVAL", "soon", "a positive number of milliseconds"),
        ("OTEL_METRIC_EXPORT_TIMEOUT", "-5", "a positive number of milliseconds"),
        ("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "sometimes", "cumulative, delta"),
    ],
)
def test_a_setting_tracing_cannot_use_fails_naming_it(
    variable: str, value: str, expected: str
) -> None:
    program = "from neuron_tracing_otel import instrument\ninstrument()\n"
    done = _python(program, **{variable: value})
    assert done.returncode != 0
    assert "TracingSettingError" in done.stderr
    assert f"{variable}={value!r} is not valid" in done.stderr
    assert expected in done.stderr


def test_flags_read_yes_and_no_and_refuse_anything_else() -> None:
    assert tracing_enabled({"NEURON_OTEL": "1"}) and tracing_enabled({"NEURON_OTEL": "True"})
    assert not tracing_enabled({}) and not tracing_enabled({"NEURON_OTEL": "off"})
    assert capture_content({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})
    assert not capture_content({"NEURON_OTEL_CAPTURE_CONTENT": "0"})
    with pytest.raises(TracingSettingError) as raised:
        tracing_enabled({"NEURON_OTEL": "sometimes"})
    assert raised.value.variable == "NEURON_OTEL"
    assert "NEURON_OTEL='sometimes' is not valid" in str(raised.value)


def test_a_bad_metrics_setting_sets_nothing_up_not_even_the_spans() -> None:
    program = (
        "from opentelemetry import trace\n"
        "from neuron_tracing_otel import TracingSettingError, instrument\n"
        "from neuron_turn import turn_observers\n"
        "try:\n"
        "    instrument()\n"
        "except TracingSettingError as error:\n"
        "    print(error.variable)\n"
        "print(type(trace.get_tracer_provider()).__name__, len(turn_observers()))\n"
    )
    done = _python(program, OTEL_METRICS_EXPORTER="statsd")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["OTEL_METRICS_EXPORTER", "ProxyTracerProvider", "0"]


def test_the_applications_global_meter_provider_gets_the_metrics() -> None:
    program = (
        "import asyncio\n"
        "from opentelemetry import metrics\n"
        "from opentelemetry.sdk.metrics import MeterProvider\n"
        "from opentelemetry.sdk.metrics.export import InMemoryMetricReader\n"
        "from layer0 import TurnInput\n"
        "from neuron_tracing_otel import instrument\n"
        "from neuron_turn import NeuronTurn\n"
        "from neuron_turn.testing import ScriptedProvider, text_response\n"
        "reader = InMemoryMetricReader()\n"
        "metrics.set_meter_provider(MeterProvider([reader]))\n"
        "instrument()\n"
        "turn = NeuronTurn(ScriptedProvider([text_response('hi')]))\n"
        "asyncio.run(turn.execute(TurnInput(message='hello', trigger='user')))\n"
        "data = reader.get_metrics_data()\n"
        "assert data is not None\n"
        "for resource in data.resource_metrics:\n"
        "    for scope in resource.scope_metrics:\n"
        "        print(*sorted(m.name for m in scope.metrics))\n"
    )
    # Traces to nowhere: this test is about where the metrics go.
    done = _python(program, OTEL_TRACES_EXPORTER="none")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["gen_ai.client.operation.duration", "gen_ai.client.token.usage"]


def test_an_application_with_its_own_tracer_provider_gets_no_metric_export_it_did_not_ask_for() -> (
    None
):
    program = (
        "import asyncio\n"
        "from opentelemetry import metrics\n"
        "from opentelemetry.sdk.metrics import MeterProvider\n"
        "from opentelemetry.sdk.metrics.export import InMemoryMetricReader\n"
        "from opentelemetry.sdk.trace import TracerProvider\n"
        "from layer0 import TurnInput\n"
        "from neuron_tracing_otel import instrument\n"
        "from neuron_turn import NeuronTurn\n"
        "from neuron_turn.testing import ScriptedProvider, text_response\n"
        "instrument(tracer_provider=TracerProvider())\n"
        "print(type(metrics.get_meter_provider()).__name__)\n"
        "turn = NeuronTurn(ScriptedProvider([text_response('hi'), text_response('again')]))\n"
        "asyncio.run(turn.execute(TurnInput(message='hello', trigger='user')))\n"
        # Set later, the application's provider still gets what comes next (the API's proxy).
        "reader = InMemoryMetricReader()\n"
        "metrics.set_meter_provider(MeterProvider([reader]))\n"
        "asyncio.run(turn.execute(TurnInput(message='hello', trigger='user')))\n"
        "data = reader.get_metrics_data()\n"
        "print(sorted(m.name for r in data.resource_metrics for s in r.scope_metrics"
        " for m in s.metrics))\n"
    )
    # Nothing listens on localhost:4318 here: an OTLP metric export would be tried at exit.
    done = _python(program)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first == "_ProxyMeterProvider"  # nothing installed, no export thread
    assert second == "['gen_ai.client.operation.duration', 'gen_ai.client.token.usage']"
    assert "Failed to export" not in done.stderr
