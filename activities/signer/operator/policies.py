"""What doors show of signature policies: the catalogue's names, a profile's effective policy."""

from __future__ import annotations

from activities.signer.crypto.policy_catalogue import POLICY_NAMES
from activities.signer.signature_policy import describe_policy

__all__ = ["POLICY_NAMES", "describe_policy"]
