"""Save a finished workflow's history as JSON for the replay tests (tests/workflows/histories)."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from shared.settings import load_settings
from shared.temporal import connect


async def _save(workflow_id: str, out: Path) -> None:
    client = await connect(load_settings())
    history = await client.get_workflow_handle(workflow_id).fetch_history()
    out.write_text(json.dumps(history.to_json_dict(), indent=1) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("workflow_id")
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    asyncio.run(_save(args.workflow_id, args.out))
