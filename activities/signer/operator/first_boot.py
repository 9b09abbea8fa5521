"""First boot: the storage tree and the configured signing profiles."""

from __future__ import annotations

from activities.signer.profiles import seed_profiles
from activities.signer.storage import StorageTree
from shared.db.engine import Sessions
from shared.settings import Settings


class SignerSetup:
    """What bootstrap does for the signer after the migrations."""

    def __init__(self, settings: Settings, sessions: Sessions, storage: StorageTree) -> None:
        self._settings = settings
        self._sessions = sessions
        self._storage = storage

    def prepare_storage(self) -> None:
        """Create input/, processing/, output/ and error/ under the storage root, and each
        configured folder under it (a missing explicit path is a mount problem readiness
        must show, not something to paper over)."""
        self._storage.ensure()
        for folder in self._settings.effective_inputs:
            if folder.path is None:
                self._settings.input_folder_path(folder).mkdir(parents=True, exist_ok=True)

    async def seed_profiles(self) -> list[str]:
        """Seed `Signing:Profiles[]` on the first boot (empty table); the warnings to show."""
        return await seed_profiles(self._sessions, self._settings)
