// TypeScript (or JavaScript) quickstart: one agent turn for the user u1.
import { MemoryConsole, NotFound } from "memory-console-client";

const memory = new MemoryConsole({
  baseUrl: process.env.MEMORY_CONSOLE_URL,
  apiKey: process.env.MEMORY_CONSOLE_KEY,
});

// At the start of the turn: what is on file about u1, ready for the system prompt.
const turn = await memory.turn("u1", "run-1", { query: "meetings" });
console.log(turn.block);

// During the turn the agent learns something durable about u1.
const note = await memory.remember("u1", "meeting-hours", "prefers meetings before noon", {
  run_id: "run-1",
  tool_call_id: "call-1",
});
console.log(`remembered ${note.key} at ${note.scope} (${note.id})`);

const { items } = await memory.search("u1", "noon");
console.log(items.map((m) => m.key));

// u1 asks to be forgotten: every version of the note is erased.
await memory.forget(note.id, "u1");
try {
  await memory.getMemory(note.id, "u1");
} catch (error) {
  if (!(error instanceof NotFound)) throw error;
  console.log(error.status, error.detail);
}
