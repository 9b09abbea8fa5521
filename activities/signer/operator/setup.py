"""First boot: the storage tree and the configured signing profiles."""

from __future__ import annotations

from activities.signer.profiles import seed_profiles
from activities.signer.storage import StorageTree
from shared.settings import Settings

__all__ = ["prepare_storage", "seed_profiles"]


def prepare_storage(settings: Settings) -> None:
    """Create input/, processing/, output/ and error/ under the storage root."""
    StorageTree(settings.storage_root).ensure()
