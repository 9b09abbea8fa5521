"""Development-only OAuth client the `esteira dev` simulators and the executor agree on."""

from __future__ import annotations

# The OAuth client the `esteira dev` simulators register and the executor uses there when no
# client credentials are configured (Development only; `check_credentials` refuses elsewhere).
DEV_M2M_CLIENT_ID = "esteira-dev"
DEV_M2M_CLIENT_SECRET = "esteira-dev-client-secret"
DEV_M2M_SUBJECT = "esteira/esteira-executor"
