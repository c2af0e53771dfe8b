"""The loop: `NeuronTurn` and everything one turn needs, and nothing about plugins or the CLI.

Holds the ReAct loop (`turn`, its per-run state `_run` and tool rounds
`_tool_round`, how a turn ends `_output_round`), typed results (`output`) and
the tool choice (`tool_choice`), the conversion between layer0 content and
provider messages (`_convert`), effect tools and memory read tools
(`memory_tools`), the configuration and limits, the Provider and
ContextStrategy contracts with their errors and the shared HTTP error
mapping, and the built-in context strategies.

Effect tools are tools to the hook pipeline: every tool call, effect tools
included, meets the `pre_tool_use` hooks before anything else (a departure
from the Phase 6 bridge order, which checked effect tools first and so let a
model slip effects past every policy hook; see `_tool_round`), and an effect
is declared only inside the caller's `layer0.EffectPolicy`. A turn's history
leaves as one `append_history` effect holding only its new messages
(`layer0.history`).

May import layer0, neuron_hooks and neuron_tool; never `neuron_turn.plugins`
or `neuron_turn.cli`, which sit above it (`tests/test_layering.py`).
"""
