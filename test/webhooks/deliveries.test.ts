import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChangeKind, ReservationChange } from '../../src/changes/change.ts';
import { AddressPolicy, AddressRefusedError } from '../../src/deliveries/address-policy.ts';
import { OutboundError } from '../../src/deliveries/outbound.ts';
import type { ReservationModel } from '../../src/upstream/records.ts';
import { DISABLE_AFTER_MS, type Send, WebhookDeliveries } from '../../src/webhooks/deliveries.ts';
import { MemoryDeliveryStore } from '../../src/webhooks/delivery-store.ts';
import { MemoryEndpointStore, type WebhookEndpoint } from '../../src/webhooks/endpoint-store.ts';
import { WebhookManagement } from '../../src/webhooks/management.ts';
import { RETRY_SCHEDULE_MS } from '../../src/webhooks/retry.ts';
import { newSecret } from '../../src/webhooks/signature.ts';
import { verifies } from './standard-webhooks.ts';

/*
 * The delivery queue on a fake clock: who gets a change, the retry schedule with its jitter,
 * Retry-After, 410, 3xx, per-reservation order, disabling after failing for days, the signature
 * on every attempt, and changes told while the stores fail, kept and queued once they answer. The
 * sender is a script (no sockets): what it was sent, and when.
 */

const T0 = Date.parse('2027-01-15T12:00:00Z');
const SECOND = 1_000;

interface Sent {
  at: number;
  url: string;
  body: string;
  headers: Record<string, string>;
}

/** A sender answering with `answer(sent, n)` (n: 0-based count of requests so far), recording every request. */
function scripted(answer: (sent: Sent, n: number) => { status: number; retryAfter?: string } | Error) {
  const sent: Sent[] = [];
  const send: Send = async (url, body, headers) => {
    const request = { at: Date.now(), url, body, headers };
    sent.push(request);
    const result = answer(request, sent.length - 1);
    if (result instanceof Error) throw result;
    return { ...result, body: '', latencyMs: 3 };
  };
  return { send, sent };
}

let changeNumber = 0;
function change(reservationNumber: number, kind: ChangeKind = 'CHANGED', eventId = 5003): ReservationChange {
  changeNumber++;
  const modifiedAt = new Date(T0 + changeNumber * 60_000).toISOString();
  const reservation = { eventId, reservationNumber, status: 'accepted', modifiedDate: modifiedAt };
  return {
    kind,
    modifiedAt,
    reservation: reservation as unknown as ReservationModel,
    key: `${reservationNumber}:h${changeNumber}`,
  };
}

function endpoint(fields: Partial<WebhookEndpoint> = {}): WebhookEndpoint {
  return {
    id: `ep_${Math.random().toString(36).slice(2)}`,
    licenseeId: '1001',
    url: 'https://receiver.example/hooks',
    eventIds: [5003],
    kinds: ['CREATED', 'CHANGED', 'CANCELLED'],
    description: null,
    secrets: [{ value: newSecret() }],
    enabled: true,
    disabledReason: null,
    failingSince: null,
    createdAt: T0,
    ...fields,
  };
}

describe('webhook deliveries', () => {
  let endpoints: MemoryEndpointStore;
  let queue: MemoryDeliveryStore;
  let running: WebhookDeliveries[];
  beforeEach(() => {
    vi.useFakeTimers({ now: T0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    endpoints = new MemoryEndpointStore();
    queue = new MemoryDeliveryStore();
    running = [];
  });
  afterEach(async () => {
    await Promise.all(running.map((deliveries) => deliveries.close()));
    vi.useRealTimers();
  });

  function start(send: Send, options: { random?: () => number; disableAfterMs?: number } = {}) {
    const deliveries = new WebhookDeliveries({
      endpoints,
      queue,
      send,
      random: options.random ?? (() => 0),
      ...options,
    });
    running.push(deliveries);
    return deliveries;
  }

  /** Lets the clock run `ms`, attempts and their follow-ups included. */
  const elapse = (ms: number) => vi.advanceTimersByTimeAsync(ms);

  it('sends a change at once to each enabled endpoint of its event and kind, signed, and to no other', async () => {
    const wanted = endpoint();
    const others = [
      endpoint({ eventIds: [5004] }),
      endpoint({ kinds: ['CANCELLED'] }),
      endpoint({ enabled: false, disabledReason: 'disabled by its client' }),
      endpoint({ licenseeId: '1002' }),
    ];
    for (const each of [wanted, ...others]) await endpoints.save(each);
    const { send, sent } = scripted(() => ({ status: 204 }));
    const deliveries = start(send);

    await deliveries.tell('1001', [change(700001, 'CHANGED')]);
    await elapse(0);

    expect(sent).toHaveLength(1);
    const [request] = sent as [Sent];
    expect(request.at).toBe(T0);
    expect(request.url).toBe(wanted.url);
    expect(verifies(wanted.secrets[0]!.value, request.headers, request.body)).toBe(true);
    expect(JSON.parse(request.body)).toMatchObject({
      type: 'reservation.changed',
      data: { eventId: 5003, reservationNumber: 700001, status: 'ACCEPTED', sequence: 1 },
    });
    const [listed] = await queue.list(wanted.id, { first: 10 });
    expect(listed).toMatchObject({ status: 'SUCCEEDED', attempts: [{ at: T0, status: 204, latencyMs: 3 }] });
  });

  it('tries a failing delivery on the schedule (immediately, 5 s, 5 min, … 24 h), the same webhook-id each time, then keeps it as FAILED', async () => {
    const target = endpoint();
    await endpoints.save(target);
    const { send, sent } = scripted(() => ({ status: 500 }));
    const deliveries = start(send, { disableAfterMs: Infinity });

    await deliveries.tell('1001', [change(700001)]);
    await elapse(4 * 24 * 3_600 * SECOND);

    let at = T0;
    expect(sent.map((request) => request.at)).toEqual(RETRY_SCHEDULE_MS.map((pause) => (at += pause)));
    expect(new Set(sent.map((request) => request.headers['webhook-id'])).size).toBe(1);
    expect(new Set(sent.map((request) => request.body)).size).toBe(1);
    const [kept] = await queue.list(target.id, { first: 10 });
    expect(kept?.status).toBe('FAILED');
    expect(kept?.attempts).toHaveLength(10);
    // Signed afresh on each attempt: the timestamp is the attempt's.
    expect(sent[1]?.headers['webhook-timestamp']).toBe(String((T0 + 5 * SECOND) / 1_000));
  });

  it('stretches each pause by up to a tenth at random', async () => {
    await endpoints.save(endpoint());
    const { send, sent } = scripted(() => ({ status: 500 }));
    const deliveries = start(send, { random: () => 0.5, disableAfterMs: Infinity });
    await deliveries.tell('1001', [change(700001)]);
    await elapse(10 * 60 * SECOND);
    expect(sent.map((request) => request.at - T0)).toEqual([0, 5_250, 5_250 + 315_000]);
  });

  it('holds back the later changes of a failing reservation only: after three 500s and a 200, the next change follows', async () => {
    const target = endpoint();
    await endpoints.save(target);
    let failuresLeft = 3;
    const { send, sent } = scripted((request) => {
      const { data } = JSON.parse(request.body) as { data: { reservationNumber: number } };
      if (data.reservationNumber === 700001 && failuresLeft > 0) {
        failuresLeft--;
        return { status: 500 };
      }
      return { status: 200 };
    });
    const deliveries = start(send);

    await deliveries.tell('1001', [change(700001), change(700002)]);
    await deliveries.tell('1001', [change(700001, 'CANCELLED')]);
    await elapse(0);
    // The other reservation is not held back.
    expect(sent.map((request) => JSON.parse(request.body).data.reservationNumber)).toEqual([700001, 700002]);

    await elapse(5 * SECOND + 5 * 60 * SECOND + 30 * 60 * SECOND);
    const told = sent.map((request) => {
      const { type, data } = JSON.parse(request.body) as {
        type: string;
        data: { reservationNumber: number; sequence: number };
      };
      return `${data.reservationNumber} ${type} #${data.sequence} ${request.headers['webhook-id']}`;
    });
    const first = told[0]!;
    expect(told).toEqual([first, expect.stringMatching(/^700002 /), first, first, first, expect.any(String)]);
    expect(told[5]).toMatch(/^700001 reservation\.cancelled #2 msg_/);
    expect(told[5]).not.toContain(first.split(' ')[3]);
    expect(sent[5]?.at).toBe(sent[4]?.at);
  });

  it('honours Retry-After on 429 and 503 (seconds or a date), not on other statuses', async () => {
    await endpoints.save(endpoint());
    const answers = [
      { status: 429, retryAfter: '120' },
      { status: 503, retryAfter: new Date(T0 + 3_600 * SECOND).toUTCString() },
      { status: 500, retryAfter: '86400' },
      { status: 204 },
    ];
    const { send, sent } = scripted((_, n) => answers[n] ?? { status: 204 });
    const deliveries = start(send);
    await deliveries.tell('1001', [change(700001)]);
    await elapse(2 * 3_600 * SECOND);
    expect(sent.map((request) => request.at - T0)).toEqual([
      0,
      120 * SECOND,
      3_600 * SECOND,
      // 500 with Retry-After: the schedule's 30 min.
      3_600 * SECOND + 30 * 60 * SECOND,
    ]);
  });

  it('disables the endpoint on 410, says why, and sends it nothing more', async () => {
    const target = endpoint();
    await endpoints.save(target);
    const { send, sent } = scripted(() => ({ status: 410 }));
    const deliveries = start(send);
    await deliveries.tell('1001', [change(700001)]);
    await elapse(0);
    expect(await endpoints.get('1001', target.id)).toMatchObject({
      enabled: false,
      disabledReason: 'the endpoint answered 410 Gone',
    });
    const [gone] = await queue.list(target.id, { first: 1 });
    expect(gone?.status).toBe('FAILED');

    await deliveries.tell('1001', [change(700002)]);
    await elapse(24 * 3_600 * SECOND);
    expect(sent).toHaveLength(1);
  });

  it('counts a redirect as a failure (it is not followed) and a refused address or no answer as attempts without a status', async () => {
    await endpoints.save(endpoint());
    const answers = [
      { status: 302 },
      new AddressRefusedError('the host name resolves to an address that is not public unicast'),
      new OutboundError('no answer: connect ECONNREFUSED'),
      { status: 200 },
    ];
    const { send } = scripted((_, n) => answers[n] ?? { status: 200 });
    const deliveries = start(send);
    const target = (await endpoints.list('1001'))[0]!;
    await deliveries.tell('1001', [change(700001)]);
    await elapse(40 * 60 * SECOND);
    const [delivery] = await queue.list(target.id, { first: 1 });
    expect(delivery?.status).toBe('SUCCEEDED');
    expect(delivery?.attempts.map(({ status, error }) => ({ status, error }))).toEqual([
      { status: 302, error: undefined },
      { status: null, error: 'refused: the host name resolves to an address that is not public unicast' },
      { status: null, error: 'no answer (the connection failed)' },
      { status: 200, error: undefined },
    ]);
  });

  it('disables an endpoint failing without a success for the set time, saying since when; a success in between starts the count again', async () => {
    const target = endpoint();
    await endpoints.save(target);
    let failing = true;
    const { send } = scripted(() => ({ status: failing ? 500 : 204 }));
    const deliveries = start(send, { disableAfterMs: 2 * 3_600 * SECOND });

    await deliveries.tell('1001', [change(700001)]);
    await elapse(60 * SECOND);
    expect((await endpoints.get('1001', target.id))?.failingSince).toBe(T0);
    failing = false;
    await elapse(30 * 60 * SECOND);
    expect((await endpoints.get('1001', target.id))?.failingSince).toBeNull();

    failing = true;
    const since = Date.now();
    await deliveries.tell('1001', [change(700002)]);
    await elapse(3 * 3_600 * SECOND);
    const disabled = await endpoints.get('1001', target.id);
    expect(disabled?.enabled).toBe(false);
    expect(disabled?.disabledReason).toBe(`every attempt failed since ${new Date(since).toISOString()} (2 h)`);
    expect(DISABLE_AFTER_MS).toBe(3 * 24 * 3_600 * SECOND);
  });

  it('holds a disabled endpoint’s deliveries and sends them once it is enabled again', async () => {
    const target = endpoint();
    await endpoints.save(target);
    const { send, sent } = scripted(() => ({ status: 204 }));
    const deliveries = start(send);
    await deliveries.tell('1001', [change(700001)]);
    await endpoints.save({ ...target, enabled: false, disabledReason: 'disabled by its client' });
    await deliveries.pause(target.id);
    await elapse(60 * SECOND);
    expect(sent).toHaveLength(0);
    await endpoints.save(target);
    await deliveries.resume(target.id);
    await elapse(0);
    expect(sent).toHaveLength(1);
  });

  it('signs with both secrets while the previous one is valid, then with the current one only', async () => {
    const [current, previous] = [newSecret(), newSecret()];
    await endpoints.save(endpoint({ secrets: [{ value: current }, { value: previous, until: T0 + 60 * SECOND }] }));
    const { send, sent } = scripted(() => ({ status: 204 }));
    const deliveries = start(send);
    await deliveries.tell('1001', [change(700001)]);
    await elapse(120 * SECOND);
    await deliveries.tell('1001', [change(700002)]);
    await elapse(0);
    const [before, after] = sent as [Sent, Sent];
    expect(verifies(previous, before.headers, before.body)).toBe(true);
    expect(verifies(current, before.headers, before.body)).toBe(true);
    expect(after.headers['webhook-signature']?.split(' ')).toHaveLength(1);
    expect(verifies(previous, after.headers, after.body)).toBe(false);
    expect(verifies(current, after.headers, after.body)).toBe(true);
  });

  it('queues a change once however often it is told, and a redelivery with the same webhook-id', async () => {
    const target = endpoint();
    await endpoints.save(target);
    const { send, sent } = scripted(() => ({ status: 204 }));
    const deliveries = start(send);
    const once = change(700001);
    await deliveries.tell('1001', [once]);
    await deliveries.tell('1001', [once]);
    await elapse(0);
    expect(sent).toHaveLength(1);

    const [delivered] = await queue.list(target.id, { first: 1 });
    expect(await deliveries.redeliver('1002', delivered!.id)).toBeUndefined();
    const again = await deliveries.redeliver('1001', delivered!.id);
    expect(again?.id).not.toBe(delivered?.id);
    await elapse(0);
    expect(sent).toHaveLength(2);
    expect(sent[1]?.headers['webhook-id']).toBe(sent[0]?.headers['webhook-id']);
    expect(sent[1]?.body).toBe(sent[0]?.body);
  });

  it('pings an endpoint of the licensee with a signed webhook.test, and no other licensee’s', async () => {
    const target = endpoint();
    await endpoints.save(target);
    const { send, sent } = scripted(() => ({ status: 204 }));
    const deliveries = start(send);
    expect(await deliveries.ping('1002', target.id)).toBeUndefined();
    expect(await deliveries.ping('1001', target.id)).toMatchObject({ type: 'webhook.test', status: 'PENDING' });
    await elapse(0);
    expect(sent).toHaveLength(1);
    expect(JSON.parse(sent[0]!.body)).toEqual({
      type: 'webhook.test',
      timestamp: new Date(T0).toISOString(),
      data: { endpointId: target.id },
    });
    expect(verifies(target.secrets[0]!.value, sent[0]!.headers, sent[0]!.body)).toBe(true);
  });

  it('recovers an endpoint disabled by a 410: what failed is sent again (same webhook-id), what it missed is sent, nothing it had', async () => {
    const target = endpoint();
    await endpoints.save(target);
    let status = 204;
    const { send, sent } = scripted(() => ({ status }));
    const deliveries = start(send);
    const management = new WebhookManagement({ endpoints, queue, deliveries, policy: new AddressPolicy() });
    const [had, failed, missed] = [change(700003), change(700001), change(700002)];
    await deliveries.tell('1001', [had]);
    await elapse(0);
    status = 410;
    await deliveries.tell('1001', [failed]);
    await elapse(0);
    expect((await endpoints.get('1001', target.id))?.enabled).toBe(false);
    await deliveries.tell('1001', [missed]);
    await elapse(60 * SECOND);
    expect(sent).toHaveLength(2);
    const failedId = sent[1]!.headers['webhook-id'];

    status = 204;
    // The service answers the current state of what was modified since: all three.
    const changesSince = vi.fn(async () => [had, failed, missed]);
    const notYours = await management.recover('1002', target.id, T0, changesSince, 'other');
    expect(notYours.userErrors).toEqual([{ field: ['id'], message: 'No webhook endpoint of yours has this id.' }]);
    expect(changesSince).not.toHaveBeenCalled();
    const recovered = await management.recover('1001', target.id, T0, changesSince, 'crm');
    expect(recovered).toMatchObject({ endpoint: { enabled: true, disabledReason: null }, queued: 2, userErrors: [] });
    expect(changesSince).toHaveBeenCalledWith(5003, T0);
    await elapse(0);
    const after = sent.slice(2).map((request) => JSON.parse(request.body).data.reservationNumber);
    expect(after.sort()).toEqual([700001, 700002]);
    expect(
      sent.slice(2).find((request) => JSON.parse(request.body).data.reservationNumber === 700001)?.headers[
        'webhook-id'
      ],
    ).toBe(failedId);

    // Everything is had now: a second recovery queues nothing.
    expect(await management.recover('1001', target.id, T0, changesSince, 'crm')).toMatchObject({ queued: 0 });
    await elapse(0);
    expect(sent).toHaveLength(4);
  });

  it('gives each reservation’s changes a growing sequence, shared by the endpoints', async () => {
    const [one, two] = [endpoint(), endpoint()];
    await endpoints.save(one);
    await endpoints.save(two);
    const { send, sent } = scripted(() => ({ status: 204 }));
    const deliveries = start(send);
    await deliveries.tell('1001', [change(700001, 'CREATED'), change(700002, 'CREATED')]);
    await deliveries.tell('1001', [change(700001, 'CHANGED')]);
    await elapse(0);
    const seen = sent.map((request) => {
      const { data } = JSON.parse(request.body) as { data: { reservationNumber: number; sequence: number } };
      return `${request.url === one.url ? 'same url' : '?'} ${data.reservationNumber}#${data.sequence}`;
    });
    expect(seen.sort()).toEqual([
      'same url 700001#1',
      'same url 700001#1',
      'same url 700001#2',
      'same url 700001#2',
      'same url 700002#1',
      'same url 700002#1',
    ]);
  });

  it('logs the loss of its store once and its return once, however often it polls meanwhile', async () => {
    const target = endpoint();
    await endpoints.save(target);
    // The queue's store away (Redis stopped): every look at it fails as ioredis fails it.
    let away = false;
    const unreachable = () =>
      Promise.reject(new Error("Stream isn't writeable and enableOfflineQueue options is false"));
    const store = new MemoryDeliveryStore();
    const flaky = Object.assign(Object.create(store) as MemoryDeliveryStore, {
      due: (now: number, limit: number) => (away ? unreachable() : store.due(now, limit)),
      nextDue: () => (away ? unreachable() : store.nextDue()),
    });
    const lines: { level: string; details: object; message: string }[] = [];
    const logger = {
      info: (details: object, message: string) => void lines.push({ level: 'info', details, message }),
      warn: (details: object, message: string) => void lines.push({ level: 'warn', details, message }),
    };
    const { send, sent } = scripted(() => ({ status: 204 }));
    const deliveries = new WebhookDeliveries({ endpoints, queue: flaky, send, pollMs: SECOND, logger });
    running.push(deliveries);
    deliveries.wake();
    await elapse(2 * SECOND);

    for (let outage = 0; outage < 2; outage++) {
      away = true;
      await elapse(15 * SECOND);
      away = false;
      await elapse(2 * SECOND);
    }
    expect(lines.map((line) => `${line.level} ${line.message}`)).toEqual([
      'warn webhook queue unreachable: deliveries wait until it answers again',
      'info webhook queue reachable again: deliveries go on',
      'warn webhook queue unreachable: deliveries wait until it answers again',
      'info webhook queue reachable again: deliveries go on',
    ]);
    // No stack: the failure's message only.
    expect(lines[0]?.details).toEqual({ error: "Stream isn't writeable and enableOfflineQueue options is false" });
    // Back: it delivers again.
    await deliveries.ping('1001', target.id);
    await elapse(0);
    expect(sent).toHaveLength(1);
  });
});

/** How ioredis fails a command while Redis is away (no offline queue). */
const unreachable = () => Promise.reject(new Error("Stream isn't writeable and enableOfflineQueue options is false"));

/** `store` with `methods` failing as ioredis fails them while `away()`; everything else as the store does. */
function flaky<T extends object>(store: T, away: () => boolean, ...methods: (keyof T & string)[]): T {
  const wrapper = Object.create(store) as Record<string, unknown>;
  for (const method of methods) {
    const real = (store[method] as (...args: unknown[]) => Promise<unknown>).bind(store);
    wrapper[method] = (...args: unknown[]) => (away() ? unreachable() : real(...args));
  }
  return wrapper as T;
}

/** What a request told: reservation, type, sequence. */
const told = (request: Sent) => {
  const { type, data } = JSON.parse(request.body) as {
    type: string;
    data: { reservationNumber: number; sequence: number };
  };
  return `${data.reservationNumber} ${type} #${data.sequence}`;
};

describe('changes told while the stores fail (Redis away)', () => {
  let endpoints: MemoryEndpointStore;
  let queue: MemoryDeliveryStore;
  let away: boolean;
  let lines: string[];
  let running: WebhookDeliveries[];
  const logger = {
    info: (_: object, message: string) => void lines.push(`info ${message}`),
    warn: (_: object, message: string) => void lines.push(`warn ${message}`),
  };
  beforeEach(() => {
    vi.useFakeTimers({ now: T0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    endpoints = new MemoryEndpointStore();
    queue = new MemoryDeliveryStore();
    away = false;
    lines = [];
    running = [];
  });
  afterEach(async () => {
    await Promise.all(running.map((deliveries) => deliveries.close()));
    vi.useRealTimers();
  });

  /** A replica's deliveries over the shared stores; `flakyStores`: its stores fail while `away`. */
  function start(
    send: Send,
    options: { flakyStores?: boolean; maxKept?: number; dropped?: (l: string, n: number) => void } = {},
  ) {
    const { flakyStores = true, ...rest } = options;
    const deliveries = new WebhookDeliveries({
      endpoints: flakyStores ? flaky(endpoints, () => away, 'forEvent', 'sequenceOf') : endpoints,
      queue: flakyStores ? flaky(queue, () => away, 'add', 'due', 'nextDue') : queue,
      send,
      random: () => 0,
      logger,
      ...rest,
    });
    running.push(deliveries);
    return deliveries;
  }
  const elapse = (ms: number) => vi.advanceTimersByTimeAsync(ms);

  it('keeps them, in order, and queues them once the stores answer, each with its sequence given then and the time it was told', async () => {
    await endpoints.save(endpoint());
    const { send, sent } = scripted(() => ({ status: 204 }));
    const deliveries = start(send);
    await deliveries.tell('1001', [change(700001, 'CREATED')]);
    await elapse(0);
    expect(sent.map(told)).toEqual(['700001 reservation.created #1']);

    away = true;
    // Never rejects: the feed's listener has nothing to do with a failure.
    await deliveries.tell('1001', [change(700002, 'CREATED'), change(700001, 'CHANGED')]);
    await elapse(5 * SECOND);
    await deliveries.tell('1001', [change(700002, 'CANCELLED')]);
    await elapse(15 * SECOND);
    expect(sent).toHaveLength(1);

    away = false;
    await elapse(SECOND);
    expect(sent.map(told)).toEqual([
      '700001 reservation.created #1',
      '700002 reservation.created #1',
      '700001 reservation.changed #2',
      '700002 reservation.cancelled #2',
    ]);
    // Its timestamp is when the change was told, not when it was queued.
    expect(JSON.parse(sent[1]!.body).timestamp).toBe(new Date(T0).toISOString());
    expect(JSON.parse(sent[3]!.body).timestamp).toBe(new Date(T0 + 5 * SECOND).toISOString());
    // Told once each, the loss and the return, however many tries between.
    expect(lines.filter((line) => /changes/.test(line))).toEqual([
      'warn webhook queue unreachable: changes are kept until it answers again',
      'info webhook queue reachable again: the changes kept meanwhile are queued',
    ]);
  });

  it('queues a change partly queued when the store failed once, to each endpoint once, with one sequence', async () => {
    const [one, two] = [endpoint(), endpoint({ url: 'https://other.example/hooks' })];
    await endpoints.save(one);
    await endpoints.save(two);
    const { send, sent } = scripted(() => ({ status: 204 }));
    const deliveries = start(send, { flakyStores: false });
    // The second add fails once (the endpoints come in no set order): the first endpoint had the change already.
    let adds = 0;
    const add = queue.add.bind(queue);
    queue.add = (input, now, again) => (++adds === 2 ? unreachable() : add(input, now, again));

    await deliveries.tell('1001', [change(700001, 'CREATED')]);
    await elapse(0);
    expect(sent).toHaveLength(1);
    await deliveries.tell('1001', [change(700001, 'CHANGED')]);
    await elapse(SECOND);
    const byUrl = (url: string) => sent.filter((request) => request.url === url).map(told);
    expect(byUrl(one.url)).toEqual(['700001 reservation.created #1', '700001 reservation.changed #2']);
    expect(byUrl(two.url)).toEqual(['700001 reservation.created #1', '700001 reservation.changed #2']);
  });

  it('past the bound drops the oldest, saying so once and counting them', async () => {
    await endpoints.save(endpoint());
    const { send, sent } = scripted(() => ({ status: 204 }));
    const dropped: number[] = [];
    const deliveries = start(send, { maxKept: 3, dropped: (_, count) => void dropped.push(count) });
    away = true;
    await deliveries.tell('1001', [change(700001), change(700002)]);
    await deliveries.tell('1001', [change(700003), change(700004)]);
    await elapse(3 * SECOND);
    await deliveries.tell('1001', [change(700005)]);
    away = false;
    await elapse(SECOND);
    expect(sent.map((request) => JSON.parse(request.body).data.reservationNumber)).toEqual([700003, 700004, 700005]);
    expect(dropped).toEqual([1, 1]);
    expect(lines.filter((line) => /dropped/.test(line))).toEqual([
      'warn webhook changes dropped: more were told than are kept while the queue is unreachable (the oldest go first)',
    ]);
  });

  it('around a hand-over: a change told by both replicas is queued once; one that waited is not queued after a later state another replica told', async () => {
    await endpoints.save(endpoint());
    const { send, sent } = scripted(() => ({ status: 204 }));
    // The replica that queued the changes lost Redis; the other one took over and reaches it.
    const old = start(send);
    const other = start(send, { flakyStores: false });
    const [created, accepted] = [change(700001, 'CREATED'), change(700001, 'CHANGED')];
    const both = change(700002, 'CREATED');
    away = true;
    await old.tell('1001', [created, both]);
    await elapse(2 * SECOND);
    await other.tell('1001', [both, accepted]);
    await elapse(0);
    away = false;
    await elapse(SECOND);
    // `created` waited and its reservation has `accepted` since: sent now, it would pass for the newest.
    expect(sent.map(told).sort()).toEqual(['700001 reservation.changed #1', '700002 reservation.created #1']);
  });
});

describe('MemoryDeliveryStore', () => {
  it('keeps a bounded number of finished deliveries per endpoint, never a pending one', async () => {
    const store = new MemoryDeliveryStore(2);
    const ids: string[] = [];
    for (let n = 0; n < 4; n++) {
      const { delivery } = await store.add(
        { endpointId: 'ep_1', licenseeId: '1001', messageId: `msg_${n}`, type: 'webhook.test', body: '{}' },
        n,
      );
      ids.push(delivery.id);
    }
    for (const id of ids.slice(1)) await store.settle(id, undefined, { status: 'SUCCEEDED' });
    expect((await store.list('ep_1', { first: 10 })).map((delivery) => delivery.id)).toEqual([ids[3], ids[2], ids[0]]);
    expect(await store.backlog('ep_1')).toEqual({ pending: 1, oldestCreatedAt: 0 });
    expect(await store.get('1002', ids[0]!)).toBeUndefined();
  });

  it('pages newest first after a position, filtered by status', async () => {
    const store = new MemoryDeliveryStore();
    const made = [];
    for (let n = 0; n < 5; n++)
      made.push(
        (
          await store.add(
            { endpointId: 'ep_1', licenseeId: '1001', messageId: `msg_${n}`, type: 'webhook.test', body: '{}' },
            n,
          )
        ).delivery,
      );
    await store.settle(made[1]!.id, undefined, { status: 'FAILED' });
    await store.settle(made[3]!.id, undefined, { status: 'FAILED' });
    const page = await store.list('ep_1', { first: 2 });
    expect(page.map((delivery) => delivery.position)).toEqual([5, 4]);
    const next = await store.list('ep_1', { first: 2, after: page[1]!.position });
    expect(next.map((delivery) => delivery.position)).toEqual([3, 2]);
    expect((await store.list('ep_1', { first: 10, status: 'FAILED' })).map((delivery) => delivery.position)).toEqual([
      4, 2,
    ]);
  });
});
