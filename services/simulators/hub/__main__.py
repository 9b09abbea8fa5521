"""`python -m services.simulators.hub URL --secret whsec_… --order-id ID --revision N`."""

from __future__ import annotations

import argparse
import sys

from services.simulators.hub.sender import send_notice


def main(argv: list[str] | None = None) -> int:
    """Send one notice and print the answer; exit 0 on 2xx."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument(
        "--secret",
        action="append",
        required=True,
        help="whsec_<base64> (repeat to sign with several)",
    )
    parser.add_argument("--order-id", required=True)
    parser.add_argument("--revision", type=int, required=True)
    parser.add_argument("--msg-id", default=None, help="webhook-id (stable across retries)")
    parser.add_argument("--skew-s", type=int, default=0, help="shift webhook-timestamp")
    args = parser.parse_args(argv)
    response = send_notice(
        args.url, args.secret, args.order_id, args.revision, msg_id=args.msg_id, skew_s=args.skew_s
    )
    print(response.status_code, response.text)
    return 0 if response.is_success else 1


if __name__ == "__main__":
    sys.exit(main())
