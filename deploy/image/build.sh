#!/usr/bin/env bash
# One command from the sources to Vigil's image, with podman on this machine:
#
#   deploy/image/build.sh                 # prints the image: localhost/vigil-operator:<version>
#   VIGIL_IMAGE=name:tag deploy/image/build.sh
#   BASE=eclipse-temurin:17-jre deploy/image/build.sh    # a registry base instead of the local one
#   deploy/image/build.sh base            # only the tools and the local base (.ci/run, in the background)
#
# It builds the jar when it is missing or stale (the ./vigil launcher), the local base when it is
# missing (deploy/image/base.sh, cached), then the repository's Dockerfile with --build-arg BASE.
# Installs podman, runc and mmdebstrap with apt-get when they are missing (root). Podman runs with
# runc and cgroupfs, and CONTAINERS_CONF=deploy/image/containers.conf (no default ulimits): crun
# and podman's default ulimits are refused by this machine's cgroup and rlimit setup.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"

missing=()
for tool in podman runc mmdebstrap; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "image: apt-get install ${missing[*]}" >&2
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2
fi

if [ "${1:-}" = base ]; then
  "$here/base.sh"
  exit 0
fi
version="$("$repo/vigil" --version | awk '{print $2}')"   # builds the jar when missing or stale
base="${BASE:-$("$here/base.sh")}"
image="${VIGIL_IMAGE:-localhost/vigil-operator:$version}"
echo "image: podman build -t $image --build-arg BASE=$base" >&2
podman --runtime runc --cgroup-manager cgroupfs build --quiet --network host \
  --build-arg "BASE=$base" -t "$image" -f "$repo/Dockerfile" "$repo" >&2
echo "$image"
