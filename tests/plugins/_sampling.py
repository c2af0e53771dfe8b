"""A sampling setting with every field set, for the providers' sampling tests."""

from __future__ import annotations

from neuron_turn import Sampling

EVERY = Sampling(
    top_p=0.8,
    top_k=20,
    stop_sequences=("END", "STOP"),
    seed=7,
    presence_penalty=0.5,
    frequency_penalty=-0.25,
)
"""Every setting, each with a value no API default has."""
