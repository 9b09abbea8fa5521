"""The profile settings of a catalogue signature policy: Policy, PolicyDocument, PolicyDigest."""

from __future__ import annotations

from typing import Any

from activities.signer.crypto.policy_catalogue import POLICY_NAMES
from activities.signer.crypto.policy_document import expected_digest

POLICY_KEYS = ("policy_name", "policy_document", "policy_digest")


def policy_name_alias(data: Any) -> Any:
    """`policy: "AD-RB"` names a catalogue policy (an object is a policy given by hand)."""
    if not isinstance(data, dict):
        return data
    data = {**data, **{k: None for k in POLICY_KEYS if data.get(k) == ""}}
    if isinstance(data.get("policy"), str):
        if data.get("policy_name"):
            raise ValueError("give the catalogue policy as policy or as policy_name, not both")
        data["policy_name"] = data.pop("policy")
    return data


def check_catalogue_policy(*, name: str | None, document: str | None, digest: str | None,
                           fmt: str, explicit: bool) -> None:
    """Refuse a catalogue policy the worker could never honour, naming what is missing."""
    if name is None:
        if document or digest:
            raise ValueError("policy_document and policy_digest need a catalogue policy "
                             "(policy_name)")
        return
    if name not in POLICY_NAMES:
        raise ValueError(f"policy {name!r} is not in the catalogue ({', '.join(POLICY_NAMES)})")
    if explicit:
        raise ValueError("a profile has either a catalogue policy or a policy object, not both")
    if fmt == "auto":
        # One policy document per profile, and each format has its own document.
        raise ValueError(f"policy {name} needs a fixed format (pades, cades or xades): "
                         "each format has its own policy document")
    if not document or not digest:
        raise ValueError(f"policy {name} needs policy_document (the policy file) and "
                         "policy_digest (its published SHA-256)")
    expected_digest(digest)
