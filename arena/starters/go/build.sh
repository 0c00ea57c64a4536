#!/bin/sh
# Builds this bot: Go code generated from proto/arena/v1/*.proto (copied into this folder by
# `arena bot new`) with protoc, compiled with Debian's Go packages only (GOPATH mode, no
# module proxy, no network) into one static binary, ./bot. Needs (Debian bookworm):
#   apt-get install golang-go golang-google-grpc-dev golang-google-protobuf-dev \
#       golang-github-golang-protobuf-1-5-dev protobuf-compiler protoc-gen-go protoc-gen-go-grpc
# The generated code and the build cache's scratch go to a temporary folder, removed at the
# end: the bot's folder (all the sandbox shows it, and what its version hash covers) keeps
# only the sources, the protos and the binary.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
protos=$here/proto
for tool in go protoc protoc-gen-go protoc-gen-go-grpc; do
    if ! command -v "$tool" >/dev/null; then
        echo "build.sh: $tool is missing: apt-get install golang-go golang-google-grpc-dev" \
             "golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev" \
             "protobuf-compiler protoc-gen-go protoc-gen-go-grpc" >&2
        exit 1
    fi
done
build=$(mktemp -d "${TMPDIR:-/tmp}/arena-go-bot.XXXXXX")
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
# /usr/share/gocode/src. No go.mod, no module proxy, nothing downloaded. CGO_ENABLED=0: a
# static binary that needs no shared library in the sandbox.
export GO111MODULE=off GOPROXY=off GOFLAGS= CGO_ENABLED=0
export GOPATH="$build:/usr/share/gocode"
export GOCACHE="${GOCACHE:-${XDG_CACHE_HOME:-${HOME:-$build}/.cache}/go-build}"
cd "$here"
# -trimpath and no VCS stamp: the same sources and toolchain give the same bytes (and so the
# same bot version hash) wherever they are built.
go build -trimpath -buildvcs=false -ldflags="-s -w" -o "$here/bot.tmp" .
mv "$here/bot.tmp" "$here/bot"
echo "build.sh: built $here/bot"
