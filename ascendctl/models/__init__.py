"""Typed data: what users write (profiles) and what ascendctl knows (matrix, host facts, plans)."""
