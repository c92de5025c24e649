"""docs/intent-to-flags.md is generated from the era adapters and must not be stale."""

from __future__ import annotations

from pathlib import Path

from ascendctl.outputs.intent_doc import COMMAND, generate

DOC = Path(__file__).resolve().parent.parent / "docs" / "intent-to-flags.md"


def test_intent_to_flags_doc_is_current() -> None:
    expected = generate()
    assert DOC.read_text(encoding="utf-8") == expected, f"docs/intent-to-flags.md is stale: run `{COMMAND}`"


def test_doc_shows_era_differences() -> None:
    text = generate()
    assert "`--task embed`" in text and "`--runner pooling`" in text
    assert "`--disable-prefix-caching`" in text and "`--no-enable-prefix-caching`" in text
    assert "torchair_graph_config.enabled=true" in text and 'cudagraph_mode="FULL_DECODE_ONLY"' in text
    assert "### eplb" in text and "✗ unsupported" in text
