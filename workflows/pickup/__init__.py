"""Deterministic workflows of the pickup domain: timers, sweeps, outbox drains."""

from workflows.pickup.drain import DrainWorkflow
from workflows.pickup.sweep import SweepWorkflow
from workflows.pickup.timer import EntityTimerWorkflow

WORKFLOWS = [EntityTimerWorkflow, SweepWorkflow, DrainWorkflow]
