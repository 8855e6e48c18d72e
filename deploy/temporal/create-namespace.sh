#!/bin/sh
# One-shot (temporal-create-namespace service, temporalio/admin-tools image): waits until the Temporal
# frontend answers, then creates the namespace unless it exists. The server image (unlike the old auto-setup
# image) creates no namespace of its own.
set -eu
address="${TEMPORAL_ADDRESS:-temporal:7233}"
namespace="${NAMESPACE:-default}"
retention="${NAMESPACE_RETENTION:-7d}"

tries=0
until temporal operator cluster health --address "$address" >/dev/null 2>&1; do
  tries=$((tries + 1))
  if [ "$tries" -ge 90 ]; then
    echo "temporal-create-namespace: Temporal at $address is not healthy after 3 minutes" >&2
    exit 1
  fi
  sleep 2
done

exists() {
  temporal operator namespace describe --namespace "$namespace" --address "$address" >/dev/null 2>&1
}

if exists; then
  echo "temporal-create-namespace: namespace $namespace exists"
elif temporal operator namespace create --namespace "$namespace" --retention "$retention" --address "$address" || exists; then
  echo "temporal-create-namespace: namespace $namespace ready (retention $retention)"
else
  exit 1
fi

# Assay's search attributes (workflows/definitions.ts), so that the Temporal UI filters workflows by
# experiment, sweep, variation, run and owner. Creating one that exists fails; what counts is that it is
# listed afterwards.
for attribute in AssayExperimentId=Keyword AssaySweepId=Keyword AssayVariation=Int AssayRun=Int AssayOwner=Keyword; do
  name="${attribute%%=*}"
  temporal operator search-attribute create --namespace "$namespace" --name "$name" --type "${attribute#*=}" \
    --address "$address" >/dev/null 2>&1 || true
  if ! temporal operator search-attribute list --namespace "$namespace" --address "$address" | grep -q "$name"; then
    echo "temporal-create-namespace: could not register search attribute $name" >&2
    exit 1
  fi
done
echo "temporal-create-namespace: search attributes registered"
