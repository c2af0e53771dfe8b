"""What the child-process and sandbox environments share: preparing, launching and judging a run."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Final

from layer0 import (
    EnvironmentSpec,
    EnvVarInjection,
    FileInjection,
    StateReader,
    TurnError,
    TurnInput,
    TurnOutput,
)
from neuron_tool import ToolRegistry, requires_isolation
from neuron_turn import PluginManager, Provider
from neuron_turn.loop.hosted_tools import check_hosted_tools
from neuron_turn.loop.sampling import check_provider_sampling
from neuron_turn.loop.strict_tools import check_strict_tools
from neuron_turn.loop.thinking import check_provider_thinking

from ._code import import_root
from ._partial import vet_partial
from ._procfs import processes_of
from ._spec import check_credentials, relative_path
from ._supervisor import Launch, supervise
from ._tree import chown_tree, remove_tree
from .credentials import CredentialSource, EnvCredentials
from .errors import IsolationRequiredError, UnsafeWorkspaceError
from .limits import ProcessLimits
from .recipe import TurnRecipe

__all__ = ["ChildEnvironment", "Prepared", "owned_by", "remove_workspace", "user_processes"]

_BASE_PATH: Final = "/usr/local/bin:/usr/bin:/bin"


@dataclass(kw_only=True)
class Prepared:
    """One run's workspace, environment variables, limits and secrets, before launch."""

    workspace: Path
    env: dict[str, str] = field(repr=False)
    limits: ProcessLimits
    secrets: list[str] = field(default_factory=list, repr=False)
    credential_files: list[str] = field(default_factory=list)
    """The workspace paths the credentials were written at, removed after the run."""
    uid: int | None = None


class ChildEnvironment:
    """Base of the environments that run the turn in a child process (not public)."""

    label: str = "ChildEnvironment"
    isolation: str | None = None
    default_limits: ProcessLimits = ProcessLimits()
    continues_partial_turns: Final = True
    """The child's turn is a NeuronTurn, which reads continuations (`layer0.PartialTurn`)."""

    def __init__(
        self,
        recipe: TurnRecipe | Mapping[str, Any],
        *,
        provider: Provider | None = None,
        state: StateReader | None = None,
        credentials: CredentialSource | None = None,
        limits: ProcessLimits | None = None,
        env: Mapping[str, str] | None = None,
        files: Mapping[str, str | bytes] | None = None,
        workspace: str | os.PathLike[str] | None = None,
        plugins: PluginManager | None = None,
    ) -> None:
        """Run turns built from `recipe`; see the subclass for what it isolates.

        Args:
            recipe: what the child builds its `NeuronTurn` from (or its JSON form).
            provider: the model provider, run in this process (default: the
                recipe's model, from plugins); API keys never reach the child.
            state: where the child's turn reads its session history from
                (only the input's session is served).
            credentials: where `CredentialRef`s are resolved (default: this
                process's environment variables).
            limits: OS limits of the child (default: the environment's own).
            env: plain (non-secret) variables set in the child.
            files: files written into the workspace first (relative path: content).
            workspace: a directory kept between runs (default: a new one per
                run, deleted after).
            plugins: the manager the tools and provider are looked up in here
                (default: the installed plugins and the recipe's modules).
        """
        self.recipe = (
            recipe if isinstance(recipe, TurnRecipe) else TurnRecipe.model_validate(recipe)
        )
        self._provider = provider
        self._built_provider: Provider | None = None
        self.state = state
        self.credentials = credentials if credentials is not None else EnvCredentials()
        self.limits = limits if limits is not None else self.default_limits
        self.env = dict(env or {})
        self.files = dict(files or {})
        for path in self.files:
            relative_path(path, environment=self.label, what="a file")
        self.workspace = None if workspace is None else Path(workspace)
        self._plugins = plugins

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(model={self.recipe.model!r}, tools={list(self.recipe.tools)!r})"
        )

    @property
    def plugins(self) -> PluginManager:
        """The plugin manager the recipe's tools and provider are looked up in, here."""
        if self._plugins is None:
            self._plugins = self.recipe.plugin_manager()
        return self._plugins

    async def run(self, input: TurnInput, spec: EnvironmentSpec) -> TurnOutput:
        """Run one turn on `input` in a child process, as `spec` asks.

        Raises:
            UnsupportedSpecError: `spec` asks for what this environment cannot enforce.
            IsolationRequiredError: a tool must run isolated and this does not isolate.
            neuron_turn.UnsupportedHostedToolError: the provider does not run a hosted
                tool of the recipe (or a tool of the recipe takes its name).
            neuron_turn.UnsupportedThinkingError: the recipe sets thinking and the
                provider does not take it.
            neuron_turn.UnsupportedSamplingError: the recipe sets a sampling setting the
                provider does not take.
            neuron_turn.UnsupportedStrictToolsError: a tool of the recipe is strict and the
                provider has no strict mode.
            MissingCredentialError: a credential reference resolves to nothing.
            LimitExceededError: the child overran a limit and was stopped.
            ChildFailedError: the child crashed, was killed or broke the protocol.
            layer0.TurnError: the turn itself failed.
        """
        self.check_spec(spec)
        check_credentials(spec.credentials, environment=self.label, env_vars=True, files=True)
        limits = self.limits.with_spec(spec.resources, environment=self.label)
        provider = self._get_provider()
        self._check_tools(provider)
        check_hosted_tools(
            self.recipe.hosted_tools, provider=provider, function_tools=self.recipe.tools
        )
        check_provider_thinking(self.recipe.thinking, provider)
        check_provider_sampling(self.recipe.sampling, provider)
        with self._workspace() as workspace:
            prepared = Prepared(workspace=workspace, env=self._base_env(workspace), limits=limits)
            try:
                await self._inject(prepared, spec)
                launch = self.launch(prepared, spec)
                start = {
                    "recipe": self.recipe.model_dump(mode="json"),
                    "input": input.model_dump(mode="json"),
                }
                return await supervise(
                    launch,
                    start,
                    provider=provider,
                    state=self.state,
                    session=input.session,
                    hosted_tools=self.recipe.hosted_tools,
                    thinking=self.recipe.thinking,
                )
            except TurnError as exc:
                vet_partial(exc, input, max_turns=self.recipe.max_turns)
                raise
            finally:
                # A kept workspace outlives the run: its next run, granted other credentials
                # or none, must not find this one's where the parent wrote it.
                for relative in prepared.credential_files:
                    _remove_file(workspace, relative)

    async def aclose(self) -> None:
        """Close the provider this environment built (not one it was given)."""
        provider, self._built_provider = self._built_provider, None
        for name in ("aclose", "close"):
            method = getattr(provider, name, None)
            if callable(method):
                result = method()
                if hasattr(result, "__await__"):
                    await result
                return

    def _get_provider(self) -> Provider:
        if self._provider is not None:
            return self._provider
        if self._built_provider is None:
            self._built_provider = self.plugins.get_provider(self.recipe.model)
        return self._built_provider

    # --- what subclasses decide ----------------------------------------------

    def check_spec(self, spec: EnvironmentSpec) -> None:
        """Refuse what `spec` asks that this environment cannot enforce."""
        raise NotImplementedError

    def launch(self, prepared: Prepared, spec: EnvironmentSpec) -> Launch:
        """Return how to start the child for `prepared`."""
        raise NotImplementedError

    def workspace_view(self, workspace: Path) -> str:
        """Return the path at which the child sees `workspace`."""
        return str(workspace)

    # --- shared steps --------------------------------------------------------------

    def _check_tools(self, provider: Provider) -> None:
        """Fail here, not in the child, on tools unknown, unisolated or stricter than `provider`."""
        registry = ToolRegistry(self.plugins.tools_by_name(self.recipe.tools))
        for tool in registry:  # a tool source's tools are a run's: checked in the child's run
            if self.isolation is None and requires_isolation(tool):
                raise IsolationRequiredError(tool.name, self.label)
        check_strict_tools(registry.schemas(), provider)

    @contextlib.contextmanager
    def _workspace(self) -> Iterator[Path]:
        if self.workspace is not None:
            self.workspace.mkdir(parents=True, exist_ok=True)
            yield self.workspace
            return
        path = Path(tempfile.mkdtemp(prefix="neuron-env-"))
        try:
            yield path
        finally:
            remove_workspace(path)

    def _base_env(self, workspace: Path) -> dict[str, str]:
        view = self.workspace_view(workspace)
        return {
            "PATH": _BASE_PATH,
            "HOME": view,
            "TMPDIR": "/tmp",
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            **self.env,
        }

    async def _inject(self, prepared: Prepared, spec: EnvironmentSpec) -> None:
        for name, content in self.files.items():
            self._write(prepared.workspace, name, content, mode=0o644, what=f"the file {name!r}")
        for ref in spec.credentials:
            value = await self.credentials.resolve(ref.name)
            prepared.secrets.append(value)
            if isinstance(ref.injection, EnvVarInjection):
                prepared.env[ref.injection.var_name] = value
            elif isinstance(ref.injection, FileInjection):
                what = f"credential {ref.name!r}"
                self._write(prepared.workspace, ref.injection.path, value, mode=0o600, what=what)
                prepared.credential_files.append(ref.injection.path)

    def _write(
        self, workspace: Path, relative: str, content: str | bytes, *, mode: int, what: str
    ) -> None:
        try:
            _write(workspace, relative, content, mode=mode)
        except _Unsafe as unsafe:
            raise UnsafeWorkspaceError(self.label, what, *unsafe.args) from None

    def python_argv(self, settings: str) -> list[str]:
        """Return the command line that runs the child module with `settings`."""
        return [sys.executable, "-I", "-m", "neuron_env_sandbox._child", settings]

    def sys_path(self) -> list[str]:
        """Return the import roots of the recipe's extra plugin modules, for the child."""
        return [str(import_root(module)) for module in self.recipe.plugins]


class _Unsafe(Exception):
    """A path to write in the workspace, and what makes it unsafe to write."""


_LINK: Final = "is a symbolic link, which could lead outside it"


def _write(workspace: Path, relative: str, content: str | bytes, *, mode: int) -> None:
    """Write `content` at `relative` in `workspace`, through no symbolic link, into a file only.

    A kept workspace holds what the child left there: a link on the path would
    make the parent write (and create directories) wherever it points, outside;
    a FIFO would hold the open (and the parent's event loop) forever.
    """
    parts = PurePosixPath(relative).parts
    data = content.encode() if isinstance(content, str) else content
    directory = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for depth, part in enumerate(parts):
            if _is_link(part, directory):
                raise _Unsafe(str(PurePosixPath(*parts[: depth + 1])), _LINK)
            if depth == len(parts) - 1:
                break
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=directory)
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory)
            os.close(directory)
            directory = inner
        # Non-blocking: a FIFO without a reader fails (ENXIO) instead of waiting for one.
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            descriptor = os.open(parts[-1], flags, mode, dir_fd=directory)
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
            raise _Unsafe(relative, "is a FIFO or socket, not a file") from None
    finally:
        os.close(directory)
    with os.fdopen(descriptor, "wb") as file:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise _Unsafe(relative, "is not a regular file")
        os.set_blocking(descriptor, True)
        # A file already there keeps its mode through O_CREAT: a credential must not.
        os.fchmod(descriptor, mode)
        file.truncate()
        file.write(data)


def _remove_file(workspace: Path, relative: str) -> None:
    """Remove the file at `relative` in `workspace`, through no symbolic link.

    Best effort: the child may have moved or replaced it (it held the credential
    and could copy it anyway); nothing outside the workspace is touched.
    """
    parts = PurePosixPath(relative).parts
    with contextlib.suppress(OSError):
        directory = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for part in parts[:-1]:
                inner = os.open(
                    part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=directory
                )
                os.close(directory)
                directory = inner
            os.unlink(parts[-1], dir_fd=directory)
        finally:
            os.close(directory)


def _is_link(name: str, directory: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
    except FileNotFoundError:
        return False


def remove_workspace(path: Path) -> None:
    """Delete a run's workspace, however its child left it.

    Run as a user, the child owns what it made there: a directory of mode 000 or
    500 is opened up; a tree nested deeper than Python recurses is walked level
    by level (`_tree`); a link is removed, never followed. What still cannot be
    removed is left (as `shutil.rmtree(ignore_errors=True)` would).
    """
    with contextlib.suppress(OSError):
        remove_tree(path)


def owned_by(workspace: Path, uid: int) -> None:
    """Give `workspace` and everything in it to `uid` (the sandbox's unprivileged user)."""
    chown_tree(workspace, uid)
    # Others may only pass through: bubblewrap, root without capabilities, must enter it.
    workspace.chmod(0o711)


def user_processes() -> int:
    """Return how many processes this process's real uid has now (RLIMIT_NPROC counts them)."""
    return len(processes_of(os.getuid()))
