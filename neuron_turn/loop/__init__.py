"""The loop: `NeuronTurn` and everything one turn needs, and nothing about plugins or the CLI.

Holds the ReAct loop (`turn`, its per-run state `_run` and tool rounds
`_tool_round`), the conversion between layer0 content and provider messages
(`_convert`), effect tools, the configuration and limits, the Provider and
ContextStrategy contracts with their errors and the shared HTTP error
mapping, and the built-in context strategies.

May import layer0, neuron_hooks and neuron_tool; never `neuron_turn.plugins`
or `neuron_turn.cli`, which sit above it (`tests/test_layering.py`).
"""
