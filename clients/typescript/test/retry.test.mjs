// Retries and request shapes, on a `fetch` that answers from a script (no server): a real
// server cannot be made to drop a connection on cue.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  ConnectionFailed,
  Forbidden,
  Gone,
  MemoryConsole,
  MemoryConsoleError,
  NotFound,
  RateLimited,
  ServerError,
  Unauthorized,
  ValidationError,
} from "../dist/index.js";

const HEALTHY = { status: "ok", database: "ok" };
const DOWN = new TypeError("fetch failed");

/** A fetch answering from `answers`: a status, or an error to throw. */
function scripted(answers, body = {}) {
  const requests = [];
  const fetch = async (url, init) => {
    requests.push({ url: new URL(url), init });
    const answer = answers.shift();
    if (answer instanceof Error) throw answer;
    const headers = { "Content-Type": "application/json" };
    if (answer === 503) headers["Retry-After"] = "0";
    if (answer === 204) return new Response(null, { status: 204 });
    const json = answer < 400 ? body : { detail: `answer ${answer}` };
    return new Response(JSON.stringify(json), { status: answer, headers });
  };
  const client = (retries = 2) =>
    new MemoryConsole({ baseUrl: "http://memory.test/", apiKey: "mc_key", retries, fetch });
  return { client, requests };
}

test("a read is retried after a connection failure and a 5xx", async () => {
  const { client, requests } = scripted([DOWN, 503, 200], HEALTHY);
  assert.deepEqual(await client().health(), HEALTHY);
  assert.deepEqual(
    requests.map((r) => r.url.href),
    Array(3).fill("http://memory.test/api/v1/health"),
  );
});

test("retries stop at the limit and throw the last failure", async () => {
  const failing = scripted([500, 502, 503]);
  await assert.rejects(failing.client().getActor("u1"), (error) => {
    assert.ok(error instanceof ServerError);
    assert.equal(error.status, 503);
    assert.equal(error.detail, "answer 503");
    return true;
  });
  assert.equal(failing.requests.length, 3);

  const unreachable = scripted([DOWN, DOWN]);
  await assert.rejects(unreachable.client(1).listMemories("u1"), (error) => {
    assert.ok(error instanceof ConnectionFailed);
    assert.equal(error.status, null);
    return true;
  });
  assert.equal(unreachable.requests.length, 2);
});

test("writes the API makes idempotent are retried", async () => {
  const turn = scripted([DOWN, 500, 200], { run_id: "run-1" });
  assert.equal((await turn.client().turn("u1", "run-1")).run_id, "run-1");
  assert.equal(turn.requests.length, 3);

  const remember = scripted([DOWN, 200], { id: "mem_1" });
  const options = { run_id: "r1", tool_call_id: "c1" };
  assert.equal((await remember.client().remember("u1", "tone", "formal", options)).id, "mem_1");
  assert.equal(remember.requests.length, 2);
});

test("writes that would repeat are never retried", async () => {
  const calls = [
    (c) => c.remember("u1", "tone", "formal"),
    (c) => c.remember("u1", "tone", "formal", { run_id: "r1" }),
    (c) => c.recordMessage("t1", "u1", "user", "hello", { run_id: "r1" }),
    (c) => c.forget("mem_1", "u1"),
  ];
  for (const call of calls) {
    const down = scripted([DOWN, 200]);
    await assert.rejects(call(down.client()), ConnectionFailed);
    const failing = scripted([503, 200]);
    await assert.rejects(call(failing.client()), ServerError);
    assert.equal(failing.requests.length, 1);
  }
});

test("a refusal is never retried, and each status has its class", async () => {
  const classes = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: MemoryConsoleError,
    410: Gone,
    422: ValidationError,
    429: RateLimited,
  };
  for (const [status, Class] of Object.entries(classes)) {
    const { client, requests } = scripted([Number(status), 200], HEALTHY);
    await assert.rejects(client().health(), (error) => {
      assert.equal(error.constructor, Class);
      assert.equal(error.status, Number(status));
      return true;
    });
    assert.equal(requests.length, 1);
  }
});

test("requests carry the key, the API path and only the fields given", async () => {
  const { client, requests } = scripted([201, 200, 201, 204], {});
  await client().remember("acme/u1", "tone", "formal", { run_id: "r1", thread_id: null });
  await client().putActor("acme/u1", ["team:ops"]);
  await client().recordMessage("a/b?c", "u1", "user", "hi");
  await client().forget("mem_1", "acme/u1");

  const [remember, put, message, forget] = requests;
  assert.equal(remember.init.headers.Authorization, "Bearer mc_key");
  assert.equal(remember.init.method, "POST");
  assert.equal(remember.url.pathname, "/api/v1/memories");
  assert.deepEqual(JSON.parse(remember.init.body), {
    actor: "acme/u1",
    key: "tone",
    fact: "formal",
    run_id: "r1",
  });
  assert.equal(put.url.pathname, "/api/v1/actors/acme/u1");
  assert.deepEqual(JSON.parse(put.init.body), { scopes: ["team:ops"] });
  assert.equal(message.url.pathname, "/api/v1/threads/a%2Fb%3Fc/messages");
  assert.equal(forget.init.method, "DELETE");
  assert.equal(forget.url.search, "?actor=acme%2Fu1");
});
