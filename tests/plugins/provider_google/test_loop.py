"""A whole `NeuronTurn` tool loop over the Google provider: in Python and from the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from moneyed import Money

from layer0 import Content, TextBlock, TurnInput
from neuron_provider_google import GoogleProvider
from neuron_tool import tool
from neuron_turn import NeuronTurn, document_block

from ._support import KEY, Recorder, call, json_response, response, text, usage

SCRIPTS = Path(sys.executable).parent
WAV = b"RIFF\x24\x00\x00\x00WAVEfmt "


@tool
def get_weather(city: str) -> str:
    """Return the current weather in a city."""
    return f"Sunny in {city}"


async def test_audio_and_a_video_by_url_reach_gemini_and_the_audio_is_priced_as_audio() -> None:
    metadata = usage(prompt=1000, candidates=100)
    metadata["promptTokensDetails"] = [
        {"modality": "TEXT", "tokenCount": 200},
        {"modality": "AUDIO", "tokenCount": 800},
    ]
    recorder = Recorder(
        json_response(response(text("She asks for Friday."), usageMetadata=metadata))
    )
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    provider = GoogleProvider("gemini-2.5-flash", api_key=KEY, client=client)
    message = Content(
        [
            TextBlock(text="What does the caller ask, and does the video show it?"),
            document_block(
                b"RIFF\x24\x00\x00\x00WAVEfmt ", media_type="audio/wav", name="call.wav"
            ),
            document_block(url="https://www.youtube.com/watch?v=abc", media_type="video/mp4"),
        ]
    )

    output = await NeuronTurn(provider).execute(TurnInput(message=message, trigger="user"))

    assert output.message.as_text() == "She asks for Friday."
    (sent,) = json.loads(recorder.requests[0].content)["contents"]
    assert sent["parts"][1:] == [
        {"inlineData": {"mimeType": "audio/wav", "data": "UklGRiQAAABXQVZFZm10IA=="}},
        {"fileData": {"mimeType": "video/mp4", "fileUri": "https://www.youtube.com/watch?v=abc"}},
    ]
    # 200 text tokens at $0.30 and 800 audio tokens at $1 per million, 100 out at $2.50.
    assert output.metadata.cost == Money("0.00111", "USD")


async def test_a_tool_loop_sends_the_call_with_its_signature_and_the_named_response_back() -> None:
    recorder = Recorder(
        json_response(
            response(
                text("Checking the sky.", thought=True),
                call("get_weather", {"city": "Paris"}, thoughtSignature="CiQB/sig+=="),
            )
        ),
        json_response(response(text("It is sunny in Paris."))),
    )
    client = httpx.AsyncClient(transport=httpx.MockTransport(recorder))
    provider = GoogleProvider("gemini-3-flash-preview", api_key=KEY, client=client)
    turn = NeuronTurn(provider, tools=[get_weather])
    output = await turn.execute(TurnInput(message="Weather in Paris?", trigger="user"))
    assert turn.output_value(output) == "It is sunny in Paris."
    first, second = (json.loads(sent.content) for sent in recorder.requests)
    assert first["tools"][0]["functionDeclarations"][0]["name"] == "get_weather"
    user, model, answer = second["contents"]
    assert user == {"role": "user", "parts": [{"text": "Weather in Paris?"}]}
    (sent_call,) = model["parts"]  # the unsigned thought is not sent back
    assert sent_call["thoughtSignature"] == "CiQB/sig+=="
    call_id = sent_call["functionCall"]["id"]
    assert answer["parts"] == [
        {
            "functionResponse": {
                "id": call_id,
                "name": "get_weather",
                "response": {"output": "Sunny in Paris"},
            }
        }
    ]
    await client.aclose()


class _Gemini(BaseHTTPRequestHandler):
    """Answers every call with one text (an event stream when asked), and keeps what it got."""

    seen: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        length = int(self.headers["content-length"])
        self.seen.append(
            {
                "path": self.path,
                "key": self.headers.get("x-goog-api-key"),
                "body": json.loads(self.rfile.read(length)),
            }
        )
        streamed = self.path.endswith("alt=sse")
        answer = json.dumps(response(text("Bonjour !")))
        body = (f"data: {answer}\r\n\r\n" if streamed else answer).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream" if streamed else "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def gemini_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Gemini)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Gemini.seen = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1beta"
    server.shutdown()
    server.server_close()


def test_the_command_line_runs_a_turn_on_google_model(gemini_server: str, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "GEMINI_API_KEY": KEY,
        "NEURON_LOAD_PLUGINS": "neuron-provider-google,neuron-state-sqlite,neuron-orch-local",
    }
    done = subprocess.run(
        [
            str(SCRIPTS / "neuron-turn"),
            "run",
            "--model",
            "google:gemini-2.5-flash",
            "--option",
            f"base_url={gemini_server}",
            "--option",
            "require_api_key=true",
            "--state",
            str(tmp_path / "state.db"),
            "Say hello in French.",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Bonjour !"
    (seen,) = _Gemini.seen
    # The command streams the answer as it arrives.
    assert seen["path"] == "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    assert seen["key"] == KEY
    assert seen["body"]["contents"][-1]["parts"] == [{"text": "Say hello in French."}]
    assert KEY not in done.stdout + done.stderr
