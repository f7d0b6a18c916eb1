import '../../../examples/federation/quiet-apollo.ts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHiveGateway } from '../../../examples/federation/hive-gateway.ts';
import { RESERVATIONS_SUBGRAPH } from '../../../examples/federation/subgraph-names.ts';
import type { WebSocketTransport } from '../../../src/http/websocket.ts';
import { subgraphSdl } from '../../../src/schema/index.ts';
import { CLIENT_KEYS, licenseesEnv } from '../../auth/licensees-fixture.ts';
import { readyToCount, startGateway, type TestGateway } from '../../helpers/gateway.ts';
import { until } from '../../helpers/subscriptions.ts';

/**
 * Our subgraph behind the real Hive Gateway (its CLI, from npm) with its response cache on and
 * subscriptions to us over graphql-ws: the router keeps what we answer for as long as our
 * Cache-Control says, a mutation through it is followed by a fresh read, and a subscription through
 * it acts for the client whose credential it forwards (GATEWAY_AUTH=api-key, two licensees:
 * acme = 1001 with events 5001–5003, globex = 2002 with 6001–6002).
 */

let t: TestGateway;
let server: Server;
let sockets: WebSocketTransport;
let router: Awaited<ReturnType<typeof startHiveGateway>>;
/** The HTTP requests that reached our subgraph. */
let reached = 0;
/** The WebSocket upgrades that reached it (the router opens one per client credential, and keeps it a moment). */
let upgrades = 0;

const as = (client: keyof typeof CLIENT_KEYS) => ({ authorization: `Bearer ${CLIENT_KEYS[client]}` });

beforeAll(async () => {
  t = await startGateway({ rateLimit: false }, { ...licenseesEnv(), CHANGES_POLL_INTERVAL_MS: '3000' });
  server = createServer((req, res) => {
    reached++;
    void t.gateway.yoga(req, res);
  });
  server.on('upgrade', () => void upgrades++);
  sockets = t.gateway.acceptWebSockets(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const composed = composeServices([
    { name: RESERVATIONS_SUBGRAPH, url: `http://127.0.0.1:${port}/graphql`, typeDefs: parse(subgraphSdl()) },
  ]);
  if (composed.errors) throw new Error(composed.errors.map((e) => e.message).join('\n'));
  router = await startHiveGateway(composed.supergraphSdl, { responseCache: true, subscriptionsOverWebSocket: true });
}, 60_000);

afterAll(async () => {
  await router?.close();
  await sockets?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await t?.close();
});

beforeEach(async () => {
  await readyToCount(t);
  reached = 0;
});

type Answer = {
  data?: Record<string, unknown> | null;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
};

async function through(query: string, headers: Record<string, string>, variables?: unknown): Promise<Answer> {
  const res = await fetch(router.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return (await res.json()) as Answer;
}

describe('Hive Gateway’s response cache in front', () => {
  const EVENT_PAGE = '{ event(eventId: 5001) { name startDate hotels { name } } }';

  it('answers a repeated event page itself within its lifetime, per client credential', async () => {
    const first = await through(EVENT_PAGE, as('acme-web'));
    expect(first.errors).toBeUndefined();
    expect(first.data?.event).toMatchObject({ name: expect.any(String) });
    expect(reached).toBe(1);

    const again = await through(EVENT_PAGE, as('acme-web'));
    expect(again).toEqual(first);
    expect(reached).toBe(1);

    // Another licensee's client is never served acme's answer: the router asks us, and we answer for globex.
    const globex = await through(EVENT_PAGE, as('globex-web'));
    expect(reached).toBe(2);
    expect(globex.data?.event ?? null).toBeNull();
  });

  it('keeps nothing we say may not be kept: an answer with errors is asked again', async () => {
    const failing = '{ event(eventId: 5001) { name } missing: event(eventId: -5) { name } }';
    expect((await through(failing, as('acme-web'))).errors?.length).toBeGreaterThan(0);
    expect((await through(failing, as('acme-web'))).errors?.length).toBeGreaterThan(0);
    expect(reached).toBe(2);
  });

  it('a mutation through the router is followed by a fresh read', async () => {
    const QUESTIONS =
      '{ event(eventId: 5001) { questions { id questionId question type enabled options { value label } } } }';
    const before = await through(QUESTIONS, as('acme-ops'));
    expect(before.errors).toBeUndefined();
    const questions = (
      before.data!.event as {
        questions: { questionId: number; question: string; type: string; enabled: boolean; options: unknown }[];
      }
    ).questions;
    expect(questions.length).toBeGreaterThan(0);
    await through(QUESTIONS, as('acme-ops'));
    expect(reached).toBe(1);

    const target = questions[0]!;
    const changed = `${target.question} (edited through the router)`;
    const saved = await through(
      `mutation ($input: SaveEventQuestionInput!) { saveEventQuestion(input: $input) { question { id questionId question } } }`,
      as('acme-ops'),
      {
        input: {
          eventId: 5001,
          questionId: target.questionId,
          question: changed,
          type: target.type,
          options: target.options,
          enabled: target.enabled,
        },
      },
    );
    expect(saved.errors).toBeUndefined();
    expect(reached).toBe(2);

    const after = await through(QUESTIONS, as('acme-ops'));
    expect(reached).toBe(3);
    const edited = (after.data!.event as { questions: { questionId: number; question: string }[] }).questions.find(
      (q) => q.questionId === target.questionId,
    );
    expect(edited?.question).toBe(changed);
  });
});

/** The first payload of a subscription through the router over SSE (then the stream is dropped). */
async function firstPayload(query: string, headers: Record<string, string>): Promise<Answer> {
  const controller = new AbortController();
  const res = await fetch(router.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query }),
    signal: controller.signal,
  });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended with no payload: ${text}`);
      text += value;
      const data = /^data: (.+)$/m.exec(text);
      if (data) return JSON.parse(data[1]!) as Answer;
    }
  } finally {
    controller.abort();
  }
}

/** Opens a subscription through the router over SSE and keeps reading it until `close`. */
async function openSubscription(query: string, headers: Record<string, string>) {
  const controller = new AbortController();
  const res = await fetch(router.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query }),
    signal: controller.signal,
  });
  let text = '';
  const reading = (async () => {
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += value;
    }
  })().catch(() => undefined);
  return {
    status: res.status,
    text: () => text,
    async close() {
      controller.abort();
      await reading;
    },
  };
}

/** The change feeds polling an event for a licensee (by its system identifier: 1001 acme, 2002 globex). */
const feedsOf = (licenseeId: string, eventId: number) =>
  t.gateway.changeFeeds.active().filter((feed) => feed.licenseeId === licenseeId && feed.eventId === eventId);

describe('subscriptions through the router over graphql-ws', () => {
  const CHANGES = (eventId: number) => `subscription { reservationChanged(eventId: ${eventId}) { kind } }`;

  it('keep the client’s identity: globex’s client cannot subscribe to acme’s event, and nothing polls it for globex', async () => {
    const refused = await firstPayload(CHANGES(5001), as('globex-web'));
    expect(refused.data ?? null).toBeNull();
    expect(refused.errors?.length).toBeGreaterThan(0);
    expect(JSON.stringify(refused.errors)).toContain('5001');
    expect(feedsOf('2002', 5001)).toEqual([]);
    // Nothing of event 5001 was read with globex's account beyond the one check that it is not globex's.
    const globexReads = t.emulator.state.log.filter(
      (entry) => entry.licensee === '2002' && entry.params.eventId === 5001,
    );
    expect(globexReads.length).toBeLessThanOrEqual(1);
    expect(feedsOf('1001', 5001)).toEqual([]);
  });

  it('its own event works: globex’s feed of 6001 polls for it, through the socket the router opened', async () => {
    const own = await openSubscription(CHANGES(6001), as('globex-web'));
    expect(own.status).toBe(200);
    await until(() => feedsOf('2002', 6001).length === 1, 20_000);
    // Over graphql-ws: the router opened a socket to us, and sent no subscription over HTTP.
    expect(upgrades).toBeGreaterThan(0);
    expect(reached).toBe(0);
    expect(own.text()).not.toContain('errors');
    await own.close();
  });
});
