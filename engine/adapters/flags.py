"""Re-export of `ascendctl_engine.flags` (argv token helpers), where the adapters have always imported them."""

from __future__ import annotations

from ascendctl_engine.flags import canonical_flag, flag_tokens

__all__ = ["canonical_flag", "flag_tokens"]
