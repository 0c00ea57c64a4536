// Copies Arena's protocol files into this bot's folder (run by `npm install`).
// A sandboxed bot sees only its own folder, so it carries the .proto files it loads.
// ARENA_PROTO_DIR names the Arena repository's proto/ folder when this bot lives elsewhere.
const fs = require("fs");
const path = require("path");

const source = process.env.ARENA_PROTO_DIR || path.join(__dirname, "..", "..", "proto");
const target = path.join(__dirname, "proto");
if (!fs.existsSync(path.join(source, "arena", "v1", "arena.proto"))) {
  console.error(`copy-protos: no arena/v1/arena.proto under ${source}; ` +
                "set ARENA_PROTO_DIR to the proto/ folder of the Arena repository");
  process.exit(1);
}
fs.rmSync(target, { recursive: true, force: true });
fs.cpSync(source, target, { recursive: true });
console.log(`copy-protos: ${source} -> ${target}`);
