"""Regenerates the protocol code: `python -m arena.protogen`.

Every `proto/arena/v1/*.proto` becomes `arena/v1/<name>_pb2.py`, `<name>_pb2.pyi` and
`<name>_pb2_grpc.py`, with package imports (`from arena.v1 import mandala_pb2`). The output
is checked in and never edited by hand; tests/test_proto_generated.py fails when it is stale.
The pinned grpcio-tools of pyproject.toml is what makes the output reproducible.
"""
from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PACKAGE = "arena/v1"
SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py")


def proto_files() -> list[Path]:
    return sorted((PROTO_ROOT / PACKAGE).glob("*.proto"))


def generate(out_root: Path) -> list[Path]:
    """Writes the generated files under out_root/arena/v1; returns their paths."""
    from grpc_tools import protoc  # a build tool: imported only here

    well_known = resources.files("grpc_tools") / "_proto"
    sources = [str(path.relative_to(PROTO_ROOT)) for path in proto_files()]
    (out_root / PACKAGE).mkdir(parents=True, exist_ok=True)
    status = protoc.main(["protoc", f"-I{PROTO_ROOT}", f"-I{well_known}",
                          f"--python_out={out_root}", f"--pyi_out={out_root}",
                          f"--grpc_python_out={out_root}", *sources])
    if status != 0:
        raise SystemExit(f"protoc failed (status {status}) on {', '.join(sources)}")
    return generated_files(out_root)


def generated_files(out_root: Path) -> list[Path]:
    return sorted(path for path in (out_root / PACKAGE).iterdir()
                  if path.name.endswith(SUFFIXES))


def main() -> None:
    for path in generated_files(ROOT):   # drop output of protos that no longer exist
        path.unlink()
    for path in generate(ROOT):
        print(path.relative_to(ROOT))


if __name__ == "__main__":
    sys.exit(main())
