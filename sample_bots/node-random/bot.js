// Sample bot `node-random`: plays a random legal move in every game, over Arena's gRPC
// protocol (proto/arena/v1/arena.proto) with no SDK: the whole protocol is in this file.
"use strict";
const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const NAME = "node-random";
const VERSION = "1";
const GAMES = ["mandala", "flowers-mandala", "flowers"];

// keepCase: field names as in the .proto (act_id, legal_moves). longs: String, because
// uint64 fields (act_id, rng_seed) do not fit a JavaScript number. oneofs: the name of the
// oneof member that is set appears as a field (message.kind is "new_match", "act" or
// "match_over"; act.observation is the game's field name).
const definition = protoLoader.loadSync("arena/v1/arena.proto", {
  includeDirs: [path.join(__dirname, "proto")],
  keepCase: true, longs: String, enums: Number, defaults: true, oneofs: true,
});
const { Arena } = grpc.loadPackageDefinition(definition).arena.v1;

// A small seeded generator (SplitMix64): the same rng_seed gives the same moves.
function generator(seedText) {
  let state = BigInt(seedText) & 0xffffffffffffffffn;
  return function below(n) {
    state = (state + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
    z ^= z >> 31n;
    return Number(z % BigInt(n));
  };
}

function main() {
  const socket = process.env.ARENA_SOCKET;
  const token = process.env.ARENA_TOKEN;
  if (!socket || !token) {
    console.error("node-random: ARENA_SOCKET and ARENA_TOKEN are not set; the arena starts " +
                  "bots (arena play mandala --bot sample_bots/node-random --bot random)");
    process.exit(2);
  }
  const client = new Arena("unix:" + socket, grpc.credentials.createInsecure());
  const hello = { token, protocol_version: 1, bot_name: NAME, bot_version: VERSION,
                  games: GAMES, games_played: 0 };
  client.Handshake(hello, (error, reply) => {
    if (error) {
      console.error(`node-random: handshake refused: ${error.details}`);
      process.exit(1);
    }
    const metadata = new grpc.Metadata();
    metadata.set("arena-session", reply.session);
    const stream = client.Play(metadata);
    let below = generator(0);
    stream.on("data", (message) => {
      if (message.kind === "new_match") {
        below = generator(message.new_match.rng_seed);
      } else if (message.kind === "act") {
        const act = message.act;
        const move = act.legal_moves[below(act.legal_moves.length)];
        stream.write({ act_id: act.act_id, move });
      } else if (message.kind === "match_over") {
        const over = message.match_over;
        console.error(`node-random: match ${over.match_id} over: ${over.end}, ` +
                      `ranks ${over.ranks.join(" ")}`);
      }
    });
    // The arena ends the stream when it no longer needs this bot: exit with it.
    stream.on("end", () => process.exit(0));
    stream.on("error", () => process.exit(0));
  });
}

main();
