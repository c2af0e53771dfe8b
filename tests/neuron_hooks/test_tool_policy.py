from __future__ import annotations

from typing import Any

import pytest

import layer0
from layer0 import Continue, HookContext, HookPoint, SkipTool, usd
from neuron_hooks import HookConfigError, HookRegistry, ToolPolicyHook


def _ctx(tool_name: str | None, point: HookPoint = HookPoint.PRE_TOOL_USE) -> HookContext:
    base: dict[str, Any] = {"tokens_used": 0, "cost": usd("0"), "turns_completed": 0, "elapsed": 0}
    return HookContext(point=point, tool_name=tool_name, **base)


def test_tool_policy_hook_is_a_layer0_hook() -> None:
    assert isinstance(ToolPolicyHook(deny=["x"]), layer0.Hook)


def test_tool_policy_listens_at_pre_tool_use_only() -> None:
    assert ToolPolicyHook().points == {HookPoint.PRE_TOOL_USE}


async def test_denied_tool_is_skipped_naming_the_rule() -> None:
    hook = ToolPolicyHook(deny=["rm", "shell_*"])

    action = await hook.on_event(_ctx("shell_exec"))

    assert action == SkipTool(reason="tool 'shell_exec' denied by rule 'shell_*'")


async def test_the_first_matching_deny_rule_is_named() -> None:
    hook = ToolPolicyHook(deny=["*_exec", "shell_*"])

    assert await hook.on_event(_ctx("shell_exec")) == SkipTool(
        reason="tool 'shell_exec' denied by rule '*_exec'"
    )


async def test_deny_wins_over_allow() -> None:
    hook = ToolPolicyHook(allow=["*"], deny=["shell_*"])

    action = await hook.on_event(_ctx("shell_exec"))

    assert action == SkipTool(reason="tool 'shell_exec' denied by rule 'shell_*'")


async def test_tool_outside_the_allow_list_is_skipped_naming_the_list() -> None:
    hook = ToolPolicyHook(allow=["read_*"])

    action = await hook.on_event(_ctx("write_file"))

    assert action == SkipTool(reason="tool 'write_file' not in allow list ['read_*']")


async def test_tool_in_the_allow_list_and_not_denied_continues() -> None:
    hook = ToolPolicyHook(allow=["read_*", "search"], deny=["read_secrets"])

    assert await hook.on_event(_ctx("read_file")) == Continue()
    assert await hook.on_event(_ctx("search")) == Continue()
    assert isinstance(await hook.on_event(_ctx("read_secrets")), SkipTool)


async def test_without_lists_every_tool_may_run() -> None:
    assert await ToolPolicyHook().on_event(_ctx("anything")) == Continue()


async def test_an_empty_allow_list_denies_every_tool() -> None:
    action = await ToolPolicyHook(allow=[]).on_event(_ctx("read_file"))

    assert action == SkipTool(reason="tool 'read_file' not in allow list []")


async def test_patterns_match_case_sensitively() -> None:
    hook = ToolPolicyHook(deny=["Shell_*"])

    assert await hook.on_event(_ctx("shell_exec")) == Continue()
    assert isinstance(await hook.on_event(_ctx("Shell_exec")), SkipTool)


async def test_glob_character_classes_and_single_wildcards_work() -> None:
    hook = ToolPolicyHook(allow=["fs_[rl]?"])

    assert await hook.on_event(_ctx("fs_ls")) == Continue()
    assert await hook.on_event(_ctx("fs_rm")) == Continue()
    assert isinstance(await hook.on_event(_ctx("fs_mv")), SkipTool)


async def test_context_without_a_tool_name_continues() -> None:
    assert await ToolPolicyHook(allow=[]).on_event(_ctx(None)) == Continue()


async def test_policy_skips_through_the_registry() -> None:
    registry = HookRegistry()
    registry.add(ToolPolicyHook(deny=["shell_*"]))

    assert await registry.dispatch(_ctx("shell_exec")) == SkipTool(
        reason="tool 'shell_exec' denied by rule 'shell_*'"
    )
    assert await registry.dispatch(_ctx("shell_exec", HookPoint.POST_TOOL_USE)) == Continue()


@pytest.mark.parametrize("field", ["allow", "deny"])
def test_a_single_string_instead_of_a_list_is_rejected(field: str) -> None:
    with pytest.raises(HookConfigError, match=f"{field} takes a sequence of patterns"):
        ToolPolicyHook(**{field: "shell_*"})


def test_non_string_patterns_are_rejected() -> None:
    with pytest.raises(HookConfigError, match="must be strings"):
        ToolPolicyHook(deny=["ok", 3])  # type: ignore[list-item]


def test_refusal_explains_without_a_context() -> None:
    hook = ToolPolicyHook(allow=["read_*"], deny=["read_secrets"])

    assert hook.refusal("read_file") is None
    assert hook.refusal("read_secrets") == "tool 'read_secrets' denied by rule 'read_secrets'"
