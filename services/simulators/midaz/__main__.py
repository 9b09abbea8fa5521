"""`python -m services.simulators.midaz [--host H] [--port P] [--lag-s S]`."""

from __future__ import annotations

import argparse

from services.simulators.midaz.app import main
from services.simulators.oauth import parse_client

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3002)
    parser.add_argument("--lag-s", type=float, default=0.0)
    parser.add_argument("--error-style", choices=["v3", "v4"], default="v4")
    parser.add_argument("--client", action="append", type=parse_client, default=None,
                        help="OAuth client ID:SECRET[:SUBJECT] (repeatable; default: the dev one)")
    args = parser.parse_args()
    main(args.host, args.port, lag_s=args.lag_s, error_style=args.error_style,
         clients=dict(args.client) if args.client else None)
