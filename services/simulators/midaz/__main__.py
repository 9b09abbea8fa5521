"""`python -m services.simulators.midaz [--host H] [--port P] [--lag-s S] [--token T ...]`."""

from __future__ import annotations

import argparse

from services.simulators.midaz.app import main

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3002)
    parser.add_argument("--lag-s", type=float, default=0.0)
    parser.add_argument("--error-style", choices=["v3", "v4"], default="v3")
    parser.add_argument("--token", action="append", help="accepted bearer token (repeatable)")
    args = parser.parse_args()
    main(args.host, args.port, tokens=args.token, lag_s=args.lag_s, error_style=args.error_style)
