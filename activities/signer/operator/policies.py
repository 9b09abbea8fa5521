"""What doors show of signature policies and levels: the catalogue's names, a profile's own."""

from __future__ import annotations

from activities.signer.crypto.policy_catalogue import POLICY_NAMES
from activities.signer.level_config import LEVELS, describe_level
from activities.signer.signature_policy import describe_policy

__all__ = ["LEVELS", "POLICY_NAMES", "describe_level", "describe_policy"]
