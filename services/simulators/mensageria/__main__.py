"""`python -m services.simulators.mensageria [--host H] [--port P]`."""

from __future__ import annotations

import argparse

from services.simulators.mensageria.app import main
from services.simulators.oauth import parse_client

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3010)
    parser.add_argument("--client", action="append", type=parse_client, default=None,
                        help="OAuth client ID:SECRET[:SUBJECT] (repeatable; default: the dev one)")
    args = parser.parse_args()
    main(args.host, args.port,
         clients=dict(args.client) if args.client else None)
