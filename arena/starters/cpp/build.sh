#!/bin/sh
# Builds this bot: C++ code generated from proto/arena/v1/*.proto (copied into this folder by
# `arena bot new`) with protoc and grpc_cpp_plugin, compiled with Debian's gRPC and protobuf
# into one binary, ./bot. Needs (Debian bookworm):
#   apt-get install g++ pkg-config libgrpc++-dev libprotobuf-dev protobuf-compiler \
#       protobuf-compiler-grpc
# The binary is linked dynamically against the system's libgrpc++ and libprotobuf: the sandbox
# shows the bot the system's /usr (read-only) and the dynamic loader's cache, so they load
# there as they do here. (Debian ships no static libgrpc++.) The generated code and objects go
# to a temporary folder, removed at the end: the bot's folder (all the sandbox shows it, and
# what its version hash covers) keeps only the sources, the protos and the binary.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
for tool in g++ pkg-config protoc grpc_cpp_plugin; do
    if ! command -v "$tool" >/dev/null; then
        echo "build.sh: $tool is missing: apt-get install g++ pkg-config libgrpc++-dev" \
             "libprotobuf-dev protobuf-compiler protobuf-compiler-grpc" >&2
        exit 1
    fi
done
if ! pkg-config --exists grpc++ protobuf; then
    echo "build.sh: pkg-config knows no grpc++ or protobuf: apt-get install libgrpc++-dev" \
         "libprotobuf-dev" >&2
    exit 1
fi
build=$(mktemp -d "${TMPDIR:-/tmp}/arena-cpp-bot.XXXXXX")
trap 'rm -rf "$build"' EXIT

protoc -I "$here/proto" --cpp_out="$build" --grpc_out="$build" \
    --plugin=protoc-gen-grpc="$(command -v grpc_cpp_plugin)" "$here"/proto/arena/v1/*.proto

# One compiler run per file, in parallel where there are cores: the generated files are the
# slow part. -ffile-prefix-map: no build folder in the binary, so the same sources and
# packages give the same bytes (and so the same bot version hash). $CXXFLAGS comes last, so
# its -O0 (a quicker build of a slower bot) or -g wins over these.
flags="-std=c++17 -O2 -I$build -ffile-prefix-map=$build=. -ffile-prefix-map=$here=. $(pkg-config --cflags grpc++ protobuf) ${CXXFLAGS:-}"
pids=""
for source in "$here/main.cc" "$build"/arena/v1/*.cc; do
    object="$build/$(basename "$source" .cc).o"
    # shellcheck disable=SC2086  # $flags is a list of words
    g++ $flags -c "$source" -o "$object" &
    pids="$pids $!"
done
status=0
for pid in $pids; do wait "$pid" || status=1; done
if [ "$status" -ne 0 ]; then
    echo "build.sh: compiling failed (messages above)" >&2
    exit 1
fi
# shellcheck disable=SC2046  # pkg-config prints a list of words
g++ -o "$here/bot.tmp" "$build"/*.o -s $(pkg-config --libs grpc++ protobuf)
mv "$here/bot.tmp" "$here/bot"
echo "build.sh: built $here/bot"
