#!/usr/bin/env bash
# Generate the gRPC stubs from proto/ into services/grpc_server/gen (never edit those by hand).
set -euo pipefail
cd "$(dirname "$0")/.."
out=services/grpc_server/gen
rm -rf "$out"
mkdir -p "$out"
python -m grpc_tools.protoc -I proto --python_out="$out" --pyi_out="$out" \
  --grpc_python_out="$out" $(find proto -name '*.proto' | sort)
# protoc writes absolute `esteira.…` imports; make them relative to our package.
find "$out" -name '*.py' -exec sed -i -E \
  's/^from esteira\.([a-z0-9_.]+) import/from services.grpc_server.gen.esteira.\1 import/' {} +
find "$out" -type d -exec touch {}/__init__.py \;
