// The client against a live server. The server and its data come from outside: the
// Python suite (tests/test_client_typescript.py) starts the server, makes a tenant `acme`
// with actors u1 and u2, a tenant policy `units` and a key, and passes them in:
//
//   MEMORY_CONSOLE_URL        the server's root
//   MEMORY_CONSOLE_KEY        a key whose reach is tenant:acme
//   MEMORY_CONSOLE_POLICY_ID  the id of the tenant policy (held wider than u1)
//
// Without MEMORY_CONSOLE_URL these tests are skipped.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  Forbidden,
  MemoryConsole,
  MemoryConsoleError,
  NotFound,
  Unauthorized,
  ValidationError,
} from "../dist/index.js";

const baseUrl = process.env.MEMORY_CONSOLE_URL;
const apiKey = process.env.MEMORY_CONSOLE_KEY;
const policyId = process.env.MEMORY_CONSOLE_POLICY_ID;
const skip = baseUrl ? false : "no server: set MEMORY_CONSOLE_URL and MEMORY_CONSOLE_KEY";
const memory = () => new MemoryConsole({ baseUrl, apiKey });

test("every operation round-trips", { skip }, async () => {
  const client = memory();
  assert.deepEqual(await client.health(), { status: "ok", database: "ok" });

  const actor = await client.putActor("ts1", ["team:ops"], { display_name: "TS One" });
  assert.deepEqual(actor, {
    ref: "ts1",
    display_name: "TS One",
    scopes: ["actor:acme/ts1", "team:acme/ops", "tenant:acme", "global"],
  });
  assert.deepEqual(await client.getActor("ts1"), actor);

  const written = await client.remember("ts1", "tone", "prefers short answers", {
    run_id: "r1",
    tool_call_id: "c1",
    thread_id: "t1",
  });
  assert.equal(written.scope, "actor:acme/ts1");
  assert.equal(written.author, "agent");
  assert.deepEqual(written.similar, []);
  const again = await client.remember("ts1", "tone", "prefers short answers", {
    run_id: "r1",
    tool_call_id: "c1",
  });
  assert.equal(again.id, written.id);

  const turn = await client.turn("ts1", "run-1", { query: "answers", max_memories: 5 });
  assert.match(turn.block, /- \[actor:acme\/ts1\] tone: prefers short answers/);
  assert.match(turn.block, /- \[tenant:acme\] units: report distances in kilometres/);
  assert.deepEqual(new Set(turn.lines.map((line) => line.memory_id)), new Set([written.id, policyId]));
  assert.deepEqual(await client.turn("ts1", "run-1", { query: "answers" }), turn);

  const page = await client.listMemories("ts1", { limit: 1 });
  assert.equal(page.count, 2);
  assert.equal(page.items.length, 1);
  const inThread = await client.listMemories("ts1", { thread_id: "t1" });
  assert.deepEqual(inThread.items.map((m) => m.key), ["tone"]);
  const policy = await client.getMemory(policyId, "ts1");
  assert.equal(policy.scope, "tenant:acme");
  assert.equal(policy.author, "human");

  const found = await client.search("ts1", "short answers", { limit: 3 });
  assert.equal(found.items[0].id, written.id);

  const message = await client.recordMessage("t1", "ts1", "user", "call me Sam", { run_id: "run-1" });
  assert.equal(message.thread_id, "t1");
  assert.equal(message.role, "user");

  assert.equal(await client.forget(written.id, "ts1"), undefined);
  await assert.rejects(client.getMemory(written.id, "ts1"), NotFound);
});

test("refusals throw their class with status and detail", { skip }, async () => {
  const client = memory();
  const stranger = new MemoryConsole({ baseUrl, apiKey: "mc_not-a-key" });
  await assert.rejects(stranger.turn("u1", "run-1"), (error) => {
    assert.ok(error instanceof Unauthorized && error instanceof MemoryConsoleError);
    assert.equal(error.status, 401);
    assert.equal(error.detail, "Unauthorized");
    return true;
  });
  await assert.rejects(client.listMemories("globex/x9"), (error) => {
    assert.ok(error instanceof NotFound);
    assert.equal(error.detail, "actor 'globex/x9' not found");
    return true;
  });
  await assert.rejects(client.remember("u1", "tone", "x".repeat(241)), (error) => {
    assert.ok(error instanceof ValidationError);
    assert.equal(error.status, 422);
    assert.equal(error.detail, "fact is 241 characters; the limit is 240 characters");
    return true;
  });
  await assert.rejects(client.forget(policyId, "u1"), (error) => {
    assert.ok(error instanceof Forbidden);
    assert.equal(error.status, 403);
    return true;
  });
});

test("extract is refused with 409 while extraction is off", { skip }, async (t) => {
  const client = memory();
  await client.recordMessage("t2", "u2", "user", "I report on the calendar year");
  try {
    await client.extract("t2", "u2");
    assert.fail("extract answered 2xx while extraction is off");
  } catch (error) {
    if (error instanceof NotFound && error.detail === "Not Found") {
      t.skip("the server has no POST /threads/{thread_id}/extract route yet");
      return;
    }
    assert.ok(error instanceof MemoryConsoleError);
    assert.equal(error.status, 409);
  }
});
