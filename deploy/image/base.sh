#!/usr/bin/env bash
# Builds Vigil's local Java base image without a registry: a runtime trimmed by jlink from this
# machine's JDK 17 (only the modules the operator needs, no javac, no jshell) on a rootfs holding
# only the shared libraries it loads (libc6, libstdc++6, libgcc-s1, zlib1g, extracted from Debian
# bookworm's packages by mmdebstrap: no shell, no package manager, no coreutils), an /etc/passwd
# with the non-root user 10001, imported with `podman import`. Prints the image name.
#
#   deploy/image/base.sh          # build when missing (cached: the name carries a key of the inputs)
#
# Needs root, podman, runc, mmdebstrap and a JDK 17 with jmods (Debian: openjdk-17-jdk-headless);
# deploy/image/build.sh installs the packages with apt-get when missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$here/containers.conf}"
podman() { command podman --runtime runc --cgroup-manager cgroupfs "$@"; }

java_home="${VIGIL_BASE_JDK:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}"
suite=bookworm
# jdeps --print-module-deps on the operator jar, plus jdk.crypto.ec (TLS with EC keys: a service
# provider that jdeps cannot see).
modules=java.base,java.compiler,java.desktop,java.naming,java.net.http,java.sql,jdk.jfr,jdk.management,jdk.unsupported,jdk.crypto.ec
libs=libc6,libstdc++6,libgcc-s1,zlib1g

jdk_version="$("$java_home/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.runtime.version = //p')"
key="$(printf '%s\n' "$jdk_version" "$suite" "$modules" "$libs" "$(cat "$0")" | sha256sum | cut -c1-12)"
image="localhost/vigil-java-base:17-$key"
if podman image exists "$image"; then
  echo "$image"
  exit 0
fi

work="$(mktemp -d -t vigil-base.XXXXXX)"
trap 'rm -rf "$work"' EXIT
echo "base: jlink $modules from $java_home ($jdk_version)" >&2
"$java_home/bin/jlink" --add-modules "$modules" --strip-debug --no-header-files --no-man-pages \
  --compress=2 --generate-cds-archive --output "$work/jre" >&2
echo "base: mmdebstrap --variant=extract --include=$libs $suite" >&2
mmdebstrap --quiet --variant=extract --include="$libs" "$suite" "$work/rootfs" >&2
root="$work/rootfs"
# What the extract leaves beyond the libraries: documentation, locales, iconv's charset modules
# (the JVM has its own), apt's and dpkg's state.
rm -rf "$root"/usr/share/doc "$root"/usr/share/lintian "$root"/usr/share/locale "$root"/var/cache/* \
  "$root"/var/lib/apt "$root"/var/lib/dpkg "$root"/var/log/* "$root"/usr/lib/x86_64-linux-gnu/gconv
mkdir -p "$root/usr/lib/jvm" "$root/usr/bin" "$root/tmp" "$root/app" "$root/etc"
chmod 1777 "$root/tmp"
cp -a "$work/jre" "$root/usr/lib/jvm/java-17"
# The class-data archive for heaps of 32 GiB and more (uncompressed oops): never used at 512 MiB.
rm -f "$root/usr/lib/jvm/java-17/lib/server/classes_nocoops.jsa"
ln -s ../lib/jvm/java-17/bin/java "$root/usr/bin/java"
# The jlink'd runtime's trust store is the JDK's link to Debian's store: put a real file in place.
if [ -L "$root/usr/lib/jvm/java-17/lib/security/cacerts" ] || [ ! -e "$root/usr/lib/jvm/java-17/lib/security/cacerts" ]; then
  rm -f "$root/usr/lib/jvm/java-17/lib/security/cacerts"
  cp -L "$java_home/lib/security/cacerts" "$root/usr/lib/jvm/java-17/lib/security/cacerts"
fi
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nvigil:x:10001:10001:vigil:/app:/usr/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nvigil:x:10001:\n' >"$root/etc/group"
tar -C "$root" --numeric-owner -cf "$work/rootfs.tar" .
podman import \
  --change 'ENV=PATH=/usr/bin:/bin' \
  --change 'ENV=JAVA_HOME=/usr/lib/jvm/java-17' \
  --change 'USER=10001:10001' \
  --change 'WORKDIR=/app' \
  --message "Vigil's local Java base: jlink $jdk_version ($modules), $suite $libs" \
  "$work/rootfs.tar" "$image" >&2
echo "$image"
