#!/usr/bin/env bash
# Builds the hexir-serve OCI image offline with buildah, from scratch (no base image, nothing
# downloaded): the portable runtime-only hexir-serve (-DHEXIR_RUNTIME_ONLY=ON
# -DHEXIR_PORTABLE_BINARIES=ON: libstdc++, libgcc and xxhash linked in), libhexir_runtime.so,
# the shared objects they load from this machine (glibc 2.36; with gRPC, Debian's gRPC,
# protobuf, abseil and OpenSSL), and, with --models DIR, a model folder at /mnt/models. It serves the Open Inference Protocol on port 8080 from the
# models in /mnt/models (where KServe mounts them: deploy/kserve/), and its gRPC form on 8081
# where the server was built with gRPC.
#
#   scripts/build-image.sh [--tag hexir-serve:latest] [--models DIR]
#
# Needs buildah (Debian's); tests/serve/image_test.py runs the image with podman.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tag="hexir-serve:latest"
models=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag="$2"; shift 2 ;;
    --models) models="$(cd "$2" && pwd)"; shift 2 ;;
    *) echo "usage: $0 [--tag NAME:TAG] [--models DIR]" >&2; exit 2 ;;
  esac
done
command -v buildah >/dev/null || { echo "build-image.sh: needs buildah (apt-get install buildah)" >&2; exit 1; }
step() { echo "build-image.sh: $*" >&2; }
# The device check's portable runtime-only build, with the server.
build="${HEXIR_BUILD_DIR:-$root/build}-device"
step "[1/4] configuring the portable runtime-only build in $build"
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DHEXIR_RUNTIME_ONLY=ON \
  -DHEXIR_PORTABLE_BINARIES=ON -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
step "[2/4] building hexir-serve (ninja's progress below)"
cmake --build "$build" -j 2 --target hexir-serve >&2
step "[3/4] collecting the server, its runtime and the shared objects they load"
rootfs="$(mktemp -d)"
trap 'rm -rf "$rootfs"' EXIT
mkdir -p "$rootfs/usr/bin" "$rootfs/usr/lib/hexir" "$rootfs/mnt/models" "$rootfs/tmp"
chmod 1777 "$rootfs/tmp"
cp "$build/tools/hexir-serve" "$rootfs/usr/bin/"
cp -P "$build"/vm/libhexir_runtime.so* "$rootfs/usr/lib/hexir/"
# The shared objects the server and the runtime load (the C library, its loader), where the
# binaries look for them; the runtime beside the server's RUNPATH is found by LD_LIBRARY_PATH.
for lib in $(LD_LIBRARY_PATH="$build/vm" ldd "$build/tools/hexir-serve" "$build"/vm/libhexir_runtime.so | \
             awk '/=> \// {print $3} /^\t\/[^ ]+ \(/ {print $1}' | sort -u); do
  case "$lib" in "$build"/*) continue ;; esac
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
if [ -n "$models" ]; then cp -r "$models"/. "$rootfs/mnt/models/"; fi
# REST on 8080, and gRPC on 8081 where the server has it.
cmd='["--host", "0.0.0.0", "--port", "8080", "--model-repository", "/mnt/models"]'
ports="--port 8080"
if ldd "$build/tools/hexir-serve" | grep -q libgrpc; then
  cmd='["--host", "0.0.0.0", "--port", "8080", "--grpc-port", "8081", "--model-repository", "/mnt/models"]'
  ports="--port 8080 --port 8081"
fi
step "[4/4] making the image $tag with buildah"
ctr="$(buildah from scratch)"
buildah copy --quiet "$ctr" "$rootfs" / >/dev/null
# An unprivileged user (nobody: a scratch image has no /etc/passwd, so by number).
buildah config --user 65534:65534 --env LD_LIBRARY_PATH=/usr/lib/hexir --entrypoint '["/usr/bin/hexir-serve"]' \
  --cmd "$cmd" $ports --stop-signal SIGTERM --workingdir / \
  --label org.opencontainers.image.title=hexir-serve \
  --label org.opencontainers.image.description="Hexir executables over the Open Inference Protocol" "$ctr"
buildah commit --quiet "$ctr" "$tag" >/dev/null
buildah rm "$ctr" >/dev/null
echo "built $tag: $(buildah images --format '{{.Size}}' "$tag" | head -1)"
