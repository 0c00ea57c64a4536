#!/bin/sh
# Builds the go-random sample bot: Go code generated from Arena's proto/arena/v1/*.proto with
# protoc, compiled with Debian's Go packages only (GOPATH mode, no module proxy, no network)
# into one static binary, ./go-random, beside this script. Needs (Debian bookworm):
#   apt-get install golang-go golang-google-grpc-dev golang-google-protobuf-dev \
#       golang-github-golang-protobuf-1-5-dev protobuf-compiler protoc-gen-go protoc-gen-go-grpc
# ARENA_PROTO_DIR names the Arena repository's proto/ folder when this bot lives elsewhere.
# The generated code and the build cache go to a temporary folder, removed at the end: the
# bot's folder (all the sandbox shows it, and what its version hash covers) holds only the
# sources and the binary.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
protos=${ARENA_PROTO_DIR:-$here/../../proto}
if [ ! -f "$protos/arena/v1/arena.proto" ]; then
    echo "build.sh: no arena/v1/arena.proto under $protos; set ARENA_PROTO_DIR to the" \
         "proto/ folder of the Arena repository" >&2
    exit 1
fi
for tool in go protoc protoc-gen-go protoc-gen-go-grpc; do
    if ! command -v "$tool" >/dev/null; then
        echo "build.sh: $tool is missing: apt-get install golang-go golang-google-grpc-dev" \
             "golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev" \
             "protobuf-compiler protoc-gen-go protoc-gen-go-grpc" >&2
        exit 1
    fi
done
build=$(mktemp -d "${TMPDIR:-/tmp}/go-random-build.XXXXXX")
trap 'rm -rf "$build"' EXIT

# The .proto files name no go_package (they are a contract shared by every language): map
# each one to the Go package "arena/v1" (package name arenav1) on the command line instead.
mappings=""
for file in "$protos"/arena/v1/*.proto; do
    mappings="$mappings,Marena/v1/$(basename "$file")=arena/v1;arenav1"
done
mkdir -p "$build/src"
protoc -I "$protos" --go_out="$build/src" --go_opt="paths=import$mappings" \
    --go-grpc_out="$build/src" --go-grpc_opt="paths=import$mappings" \
    "$protos"/arena/v1/*.proto

# GOPATH mode: the generated package under $build/src, Debian's Go libraries under
# /usr/share/gocode/src. No go.mod, no module proxy, nothing downloaded.
export GO111MODULE=off GOPROXY=off GOFLAGS= CGO_ENABLED=0
export GOPATH="$build:/usr/share/gocode"
export GOCACHE="${GOCACHE:-${XDG_CACHE_HOME:-${HOME:-$build}/.cache}/go-build}"
cd "$here"
# -trimpath and no VCS stamp: the same sources and toolchain give the same bytes (and so the
# same bot version hash) wherever they are built.
go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$here/go-random.tmp" .
mv "$here/go-random.tmp" "$here/go-random"
echo "build.sh: built $here/go-random"
