from __future__ import annotations

import pytest

from neuron_provider_ollama._host import DEFAULT_BASE_URL, parse_host, resolve_base_url


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("1.2.3.4", "http://1.2.3.4:11434"),
        ("1.2.3.4:56789", "http://1.2.3.4:56789"),
        (":56789", "http://localhost:56789"),
        ("0.0.0.0", "http://0.0.0.0:11434"),
        ("gpu-box", "http://gpu-box:11434"),
        ("gpu-box:8080/", "http://gpu-box:8080"),
        ("gpu-box/ollama", "http://gpu-box:11434/ollama"),
        ("http://gpu-box", "http://gpu-box:80"),
        ("https://ollama.com", "https://ollama.com:443"),
        ("HTTPS://ollama.com:8443/", "https://ollama.com:8443"),
        ("[::1]", "http://[::1]:11434"),
        ("[::1]:9000", "http://[::1]:9000"),
    ],
)
def test_parse_host_accepts_the_forms_ollama_accepts(host: str, expected: str) -> None:
    assert parse_host(host) == expected


@pytest.mark.parametrize("host", ["ftp://box", "box:notaport"])
def test_parse_host_rejects_bad_scheme_or_port(host: str) -> None:
    with pytest.raises(ValueError, match="Ollama host"):
        parse_host(host)


def test_explicit_base_url_wins_over_ollama_host() -> None:
    url = resolve_base_url("http://127.0.0.1:11434/", {"OLLAMA_HOST": "gpu-box"})
    assert url == "http://127.0.0.1:11434"


def test_base_url_without_scheme_is_parsed_like_ollama_host() -> None:
    assert resolve_base_url("gpu-box:9000", {}) == "http://gpu-box:9000"


def test_ollama_host_is_used_when_no_base_url() -> None:
    assert resolve_base_url(None, {"OLLAMA_HOST": "gpu-box:9000"}) == "http://gpu-box:9000"


def test_default_is_localhost_11434() -> None:
    assert resolve_base_url(None, {}) == DEFAULT_BASE_URL == "http://localhost:11434"
    assert resolve_base_url(None, {"OLLAMA_HOST": "  "}) == DEFAULT_BASE_URL
