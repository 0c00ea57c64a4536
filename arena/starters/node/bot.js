// Arena bot `__BOT_NAME__` (made by `arena bot new`): plays a random legal move in every game,
// over Arena's gRPC protocol (proto/arena/v1/arena.proto, copied into this folder) with no
// SDK: the whole protocol is in this file. Edit choose() to play better.
"use strict";
const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const NAME = "__BOT_NAME__";
const VERSION = "1";
const GAMES = ["mandala", "flowers-mandala", "flowers"];

// keepCase: field names as in the .proto (act_id, legal_moves). longs: String, because the
// uint64 fields (act_id, rng_seed) do not fit a JavaScript number. oneofs: the name of the
// member that is set appears as a field (message.kind, act.observation).
const definition = protoLoader.loadSync("arena/v1/arena.proto", {
  includeDirs: [path.join(__dirname, "proto")],
  keepCase: true, longs: String, enums: Number, defaults: true, oneofs: true,
});
const { Arena } = grpc.loadPackageDefinition(definition).arena.v1;

// A small seeded generator (SplitMix64): the same rng_seed gives the same moves.
let state = 0n;
function randomBelow(n) {
  state = (state + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
  let z = state;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
  z ^= z >> 31n;
  return Number(z % BigInt(n));
}

// One decision. match: the NewMatch (game, seat, players, rng_seed ...). act: the ActRequest;
// act[act.observation] is this seat's view (fields per game in Arena's docs/observations.md),
// act.legal_moves the sorted legal moves, act.clock.allowed_ms the time this move may take
// (0: no limit). Return one of the legal moves.
function choose(match, act) {
  const moves = act.legal_moves;
  return moves[randomBelow(moves.length)];
}

function main() {
  const socket = process.env.ARENA_SOCKET;
  const token = process.env.ARENA_TOKEN;
  if (!socket || !token) {
    console.error(`${NAME}: ARENA_SOCKET and ARENA_TOKEN are not set; the arena starts bots ` +
                  "(README.md says how to try this bot)");
    process.exit(2);
  }
  // The arena serves this process alone on a Unix socket, in plain (insecure) gRPC.
  const client = new Arena("unix:" + socket, grpc.credentials.createInsecure());
  const hello = { token, protocol_version: 1, bot_name: NAME, bot_version: VERSION,
                  games: GAMES, games_played: 0 };
  client.Handshake(hello, (error, reply) => {
    if (error) {
      console.error(`${NAME}: handshake refused: ${error.details}`);
      process.exit(1);
    }
    const metadata = new grpc.Metadata();
    metadata.set("arena-session", reply.session);
    const stream = client.Play(metadata);
    let match = null;
    stream.on("data", (message) => {
      if (message.kind === "new_match") {
        match = message.new_match;
        state = BigInt(match.rng_seed);
        console.error(`${match.match_id}: ${match.game}, seat ${match.seat} of ${match.players}`);
      } else if (message.kind === "act") {
        stream.write({ act_id: message.act.act_id, move: choose(match, message.act) });
      } else if (message.kind === "match_over") {
        const over = message.match_over;
        console.error(`${over.match_id} over: ${over.end}, ranks ${over.ranks.join(" ")}`);
      }
    });
    // The arena ends the stream when it no longer needs this bot: exit with it.
    stream.on("end", () => process.exit(0));
    stream.on("error", () => process.exit(0));
  });
}

main();
