#!/bin/sh
# Entrypoint of the seaweedfs service: SeaweedFS in one process (master, volume, filer and the S3 gateway on
# :8333) with a single S3 identity whose keys come from the environment (S3_ACCESS_KEY_ID,
# S3_SECRET_ACCESS_KEY). SeaweedFS reads identities only from a JSON file (-s3.config), so this writes one
# into the container's /tmp (mode 600, rewritten at every start, never in the image or the repository) and
# then hands over to the image's own entrypoint, which keeps its defaults for `server` (-dir=/data,
# -volume.max=0, 1 GiB volumes) and drops root for its `seaweed` user.
set -eu
: "${S3_ACCESS_KEY_ID:?set S3_ACCESS_KEY_ID}"
: "${S3_SECRET_ACCESS_KEY:?set S3_SECRET_ACCESS_KEY}"
case "$S3_ACCESS_KEY_ID$S3_SECRET_ACCESS_KEY" in
  *[!A-Za-z0-9+/=_.-]*)
    echo "seaweedfs: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY may hold only letters, digits and + / = _ . -" >&2
    exit 1
    ;;
esac

config=/tmp/s3-identities.json
umask 077
cat > "$config" <<JSON
{
  "identities": [
    {
      "name": "assay",
      "credentials": [{ "accessKey": "$S3_ACCESS_KEY_ID", "secretKey": "$S3_SECRET_ACCESS_KEY" }],
      "actions": ["Admin", "Read", "Write", "List", "Tagging"]
    }
  ]
}
JSON
if [ "$(id -u)" = 0 ] && id seaweed >/dev/null 2>&1; then
  chown seaweed "$config"
fi

# -ip: the address the parts advertise to each other; -ip.bind: listen on every interface (the S3 port is
# published). -master.telemetry=false: send no usage statistics.
exec /entrypoint.sh server \
  -ip=seaweedfs \
  -ip.bind=0.0.0.0 \
  -master.telemetry=false \
  -s3 \
  -s3.port=8333 \
  -s3.config="$config" \
  "$@"
