"""No error, log line or repr of the store holds the password, however the connection fails."""

from __future__ import annotations

import logging
import traceback
from pathlib import Path

import pytest

from layer0 import StateError
from neuron_state_postgres import (
    AuthenticationError,
    ConnectFailedError,
    ConninfoError,
    PostgresStore,
    redact,
)

from ._server import Server, free_port

WRONG = "Wr0ng-pa55word-that-must-not-leak"


def everything_said(exc: BaseException, caplog: pytest.LogCaptureFixture) -> str:
    """The error's message, its whole traceback (chained causes too) and every log line."""
    text = "".join(traceback.format_exception(exc))
    return text + str(exc) + repr(exc) + "\n".join(r.getMessage() for r in caplog.records)


async def failure(store: PostgresStore) -> StateError:
    with pytest.raises(StateError) as raised:
        async with store:
            pass
    return raised.value


async def test_a_wrong_password_is_an_authentication_error_without_the_password(
    postgres_server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    store = PostgresStore(postgres_server.conninfo(password=WRONG))
    error = await failure(store)
    assert isinstance(error, AuthenticationError)
    assert "password authentication failed" in str(error)
    assert f"127.0.0.1:{postgres_server.port}" in str(error)
    assert "$PGPASSWORD or ~/.pgpass" in str(error)
    assert WRONG not in everything_said(error, caplog) + repr(store)


async def test_an_unreachable_host_is_a_connect_error_naming_it_without_the_password(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    port = free_port()
    error = await failure(PostgresStore(f"postgresql://u:{WRONG}@127.0.0.1:{port}/db"))
    assert isinstance(error, ConnectFailedError)
    assert not isinstance(error, AuthenticationError)
    assert f"u@127.0.0.1:{port}/db" in str(error)
    assert "Connection refused" in str(error)
    assert WRONG not in everything_said(error, caplog)


@pytest.mark.parametrize(
    "conninfo",
    [
        f"host=127.0.0.1 password={WRONG} junk",
        f"host=127.0.0.1 password='{WRONG}' port=notaport",
        f"postgresql://u:{WRONG}@127.0.0.1:notaport/db",
        f"postgresql://u:{WRONG}@127.0.0.1/db?nosuchoption=1",
        f"password={WRONG} sslmode=nonsense host=127.0.0.1",
        f"postgresql://u:{WRONG}@[127.0.0.1/db",  # libpq quotes this one whole
    ],
)
async def test_a_bad_connection_string_is_a_conninfo_error_without_the_password(
    conninfo: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    store = PostgresStore(conninfo)
    error = await failure(store)
    assert isinstance(error, ConninfoError)
    assert WRONG not in everything_said(error, caplog) + repr(store)


async def test_the_password_may_come_from_pgpassword_and_a_wrong_one_is_not_shown(
    postgres_server: Server,
    schema: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("PGPASSWORD", postgres_server.password)
    async with PostgresStore(postgres_server.conninfo_without_password(), schema=schema) as store:
        await store.write("global", "k", 1)
    monkeypatch.setenv("PGPASSWORD", WRONG)
    error = await failure(PostgresStore(postgres_server.conninfo_without_password()))
    assert isinstance(error, AuthenticationError)
    assert WRONG not in everything_said(error, caplog)


async def test_the_password_may_come_from_a_pgpass_file(
    postgres_server: Server, schema: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pgpass = tmp_path / "pgpass"
    pgpass.write_text(f"127.0.0.1:{postgres_server.port}:*:neuron:{postgres_server.password}\n")
    pgpass.chmod(0o600)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", str(pgpass))
    async with PostgresStore(postgres_server.conninfo_without_password(), schema=schema) as store:
        await store.write("global", "k", 1)
        assert await store.read("global", "k") == 1


async def test_repr_and_where_name_the_server_but_never_the_password(
    postgres_server: Server, schema: str
) -> None:
    async with PostgresStore(postgres_server.conninfo(), schema=schema) as store:
        assert postgres_server.password not in repr(store) + store.where
        assert repr(store) == (
            f"PostgresStore('neuron@127.0.0.1:{postgres_server.port}/postgres', schema={schema!r})"
        )


def test_redact_hides_passwords_in_urls_and_keyword_strings() -> None:
    assert redact("postgresql://u:s3cret@h/db") == "postgresql://u:***@h/db"
    assert redact("host=h password=s3cret user=u") == "host=h password=*** user=u"
    assert redact("host=h password='s 3cret' user=u") == "host=h password=*** user=u"
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"
