#!/bin/sh
# Registers $NAMESPACE on $TEMPORAL_ADDRESS once the server answers (docker-compose.yml's
# temporal-namespace step, temporalio/admin-tools image); an existing namespace is kept.
set -eu
: "${TEMPORAL_ADDRESS:?}" "${NAMESPACE:?}"
tries=0
until temporal operator cluster health --address "$TEMPORAL_ADDRESS" | grep -q SERVING; do
  tries=$((tries + 1))
  [ "$tries" -lt 60 ] || { echo "Temporal at $TEMPORAL_ADDRESS never became healthy" >&2; exit 1; }
  sleep 2
done
temporal operator namespace describe --namespace "$NAMESPACE" --address "$TEMPORAL_ADDRESS" \
  >/dev/null 2>&1 \
  || temporal operator namespace create --namespace "$NAMESPACE" --address "$TEMPORAL_ADDRESS" \
       --retention 30d
echo "Namespace $NAMESPACE ready"
