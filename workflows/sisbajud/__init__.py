"""Deterministic workflows of the SISBAJUD executor: one per order, and the tick."""
