"""`python -m services.simulators.mensageria [--host H] [--port P] [--token T ...]`."""

from __future__ import annotations

import argparse

from services.simulators.mensageria.app import main

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3010)
    parser.add_argument("--token", action="append", help="accepted bearer token (repeatable)")
    args = parser.parse_args()
    main(args.host, args.port, tokens=args.token)
