"""Turning operators' launch scripts into profiles: the shell script someone starts vLLM with today (its
exports and its one `vllm serve` command) is read without running it, so the settings it holds can become an
ascendctl profile instead of being retyped by hand.
"""
