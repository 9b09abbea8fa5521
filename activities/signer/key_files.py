"""Where a profile's key files may be, and which variables may hold its secrets."""

from __future__ import annotations

from pathlib import Path

from activities.signer.engine import inside_directories
from activities.signer.profiles import DEV_PKI_DIR, ProfileConfig
from shared.settings import ENV_PREFIX, Settings

# Default key directories: certs/ and pki/ (the dev bundle, the image's mount) in the data
# directory and in /etc/esteira, never /etc/esteira itself (its env file holds secrets).
KEYS_DIR = "certs"
SYSTEM_CONFIG_DIR = Path("/etc/esteira")
# The profile fields that name key material on disk, and those that name a secret's variable.
KEY_FILE_FIELDS = ("pfx_path", "pfx_password_file")
SECRET_ENV_FIELDS = ("pfx_password_env", "pkcs11_pin_env")


def allowed_key_directories(settings: Settings) -> tuple[str, ...]:
    """`Signing:KeyDirectories`, or by default `certs/` and `pki/` of the data directory and
    of `/etc/esteira`."""
    configured = settings.signing.key_directories
    if configured:
        return tuple(configured)
    return tuple(str(root / sub) for root in (settings.data_dir.resolve(), SYSTEM_CONFIG_DIR)
                 for sub in (KEYS_DIR, DEV_PKI_DIR))


def key_file_problem(config: ProfileConfig, settings: Settings) -> str | None:
    """Why a profile saved through a door may not name these key files or secret variables
    (None: it may). Paths are judged on their text: nothing is read or even looked up."""
    directories = allowed_key_directories(settings)
    for field_name in KEY_FILE_FIELDS:
        value = getattr(config, field_name)
        if value is not None and not inside_directories(value, directories):
            return (f"{field_name} must name a file under one of the key directories this "
                    f"deployment allows (ESTEIRA_SIGNING__KEY_DIRECTORIES: "
                    f"{', '.join(directories)}).")
    for field_name in SECRET_ENV_FIELDS:
        value = getattr(config, field_name)
        if value is not None and _own_setting(value):
            return (f"{field_name} may not name one of this service's own settings "
                    f"({value}): they hold its database URL, API key and the like; "
                    "give the profile's secret a variable of its own.")
    return None


def _own_setting(variable: str) -> bool:
    """Whether `variable` is one of the service's settings (`ESTEIRA_<SECTION>[__…]`)."""
    name = variable.upper()
    if not name.startswith(ENV_PREFIX.upper()):
        return False
    section = name.removeprefix(ENV_PREFIX.upper()).split("__", 1)[0].lower()
    return section in Settings.model_fields
