"""A recipe is plain JSON, hosted tools and their limits included, checked when it is made."""

from __future__ import annotations

import json
from typing import cast

import pytest
from pydantic import ValidationError

from neuron_env_sandbox import TurnRecipe
from neuron_env_sandbox._child import _Parent, _ParentProvider
from neuron_turn import (
    CodeExecution,
    HostedMCP,
    ImageGeneration,
    NeuronTurn,
    NeuronTurnConfig,
    UserLocation,
    WebFetch,
    WebSearch,
)


def test_hosted_tools_and_their_limits_survive_the_recipes_json() -> None:
    recipe = TurnRecipe(
        model="anthropic:claude-haiku-4-5",
        hosted_tools=(
            WebSearch(
                max_uses=3, blocked_domains=["ads.example"], user_location=UserLocation(city="Oslo")
            ),
            WebFetch(allowed_domains=["docs.python.org"]),
            CodeExecution(),
        ),
    )
    data = json.loads(recipe.model_dump_json())
    assert [tool["name"] for tool in data["hosted_tools"]] == [
        "web_search",
        "web_fetch",
        "code_execution",
    ]
    assert TurnRecipe.model_validate(data) == recipe


def test_a_recipe_written_as_json_takes_hosted_tools_by_name() -> None:
    recipe = TurnRecipe.model_validate_json(
        '{"model": "openai-responses:gpt-5", "hosted_tools": [{"name": "code_execution"}]}'
    )
    assert recipe.hosted_tools == (CodeExecution(),)


@pytest.mark.parametrize(
    ("hosted", "named"),
    [
        ([{"name": "web_search", "max_uses": -1}], "max_uses"),
        (
            [{"name": "web_search", "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}],
            "not both",
        ),
        ([{"name": "browser"}], "unknown hosted tool 'browser'"),
        ([{"name": "code_execution", "max_uses": 1}], "no field 'max_uses'"),
        ([CodeExecution(), CodeExecution()], "two code_execution tools"),
    ],
)
def test_a_recipe_with_a_bad_hosted_tool_is_refused_naming_it(hosted: object, named: str) -> None:
    with pytest.raises(ValidationError, match=named) as caught:
        TurnRecipe.model_validate({"model": "m:m", "hosted_tools": hosted})
    assert caught.value.errors()[0]["loc"][0] == "hosted_tools"


def test_a_recipe_takes_image_and_remote_mcp_tools_as_objects_and_the_child_takes_them() -> None:
    image = ImageGeneration(quality="high", output_format="webp", model="gpt-image-1-mini")
    mcp = HostedMCP("docs", "https://mcp.example/sse")
    recipe = TurnRecipe(model="openai-responses:gpt-5", hosted_tools=(image, mcp))

    assert TurnRecipe.model_validate_json(recipe.model_dump_json()) == recipe
    # The child's stand-in for the parent's provider takes every setting the parent checked.
    child = NeuronTurn(
        _ParentProvider(cast(_Parent, None), recipe),
        config=NeuronTurnConfig(hosted_tools=recipe.hosted_tools),
    )
    assert child.config.hosted_tools == (image, mcp)


def test_a_remote_mcp_server_with_a_token_is_refused_since_the_recipe_enters_the_sandbox() -> None:
    granted = HostedMCP("docs", "https://mcp.example/sse", authorization="tok-123")
    with pytest.raises(ValidationError, match="carries an authorization token") as refused:
        TurnRecipe(model="openai-responses:gpt-5", hosted_tools=(granted,))
    assert "tok-123" not in str(refused.value)
