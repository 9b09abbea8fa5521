"""`python -m services.simulators.lacuna [--host H] [--port P]`."""

import argparse

from services.simulators.lacuna.app import main

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Lacuna Signer simulator")
    parser.add_argument("--host", default=None)
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args()
    main(args.host, args.port)
