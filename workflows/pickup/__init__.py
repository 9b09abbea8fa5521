"""Deterministic workflows of the pickup domain: timers, sweeps, outbox drains, the school day."""

from workflows.pickup.day_cycle import DayCycleWorkflow
from workflows.pickup.drain import DrainWorkflow
from workflows.pickup.sweep import SweepWorkflow
from workflows.pickup.timer import EntityTimerWorkflow

WORKFLOWS = [EntityTimerWorkflow, SweepWorkflow, DrainWorkflow, DayCycleWorkflow]
