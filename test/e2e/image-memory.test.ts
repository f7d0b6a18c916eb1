import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEAP_PERCENTAGE, SEMI_SPACE_MIB } from '../../src/config/heap.ts';
import {
  BUILD_TIMEOUT_MS,
  buildImageOrSkip,
  deployedGateway,
  IMAGE,
  LIMITS,
  logsOf,
  podman,
  quantityBytes,
  readyUrl,
} from '../helpers/image.ts';

/**
 * The image in a container of the memory deploy/kubernetes/deployment.yaml requests (podman
 * `--memory`, no swap), as the manifests run it (read-only, user 1000, the image's own command) over
 * the embedded emulator and its demo data: V8's heap is sized from that memory by the image's
 * command, and a burst of distinct 1000-record pages of event 5001 (25 in flight, four rounds) is
 * served whole without the kernel killing the process or V8 running out of heap. What the limit
 * costs and how far below it the peak stays: `npm run bench -- image-memory` (docs/deploying.md,
 * "Sizing"). Skipped like image.test.ts without podman; CI (REQUIRE_PODMAN=1) fails instead.
 */
const gateway = deployedGateway();
/** The manifest's memory request, in bytes: the container's memory here. */
const MEMORY = quantityBytes(gateway.resources.requests.memory);
const MEMORY_FLAGS = ['--memory', String(MEMORY), '--memory-swap', String(MEMORY)];
const MiB = 2 ** 20;
const EVENT = 5001;
/** Requests in flight at once: each a different full window (event 5001 has 25 of 1000, then 600). */
const IN_FLIGHT = 25;
const ROUNDS = 4;
const FIELDS =
  'node { reservationNumber status arrivalDate contact { firstName lastName email } rooms { roomType guests { firstName lastName } } }';

let skipped: string | undefined;
let container: string | undefined;

beforeAll(async () => {
  skipped = await buildImageOrSkip('the image memory tests');
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  if (container) await podman('rm', '--force', container);
});

interface ContainerState {
  Running: boolean;
  OOMKilled: boolean;
  Pid: number;
  ExitCode: number;
  StartedAt: string;
}

async function stateOf(id: string): Promise<ContainerState & { RestartCount: number }> {
  const inspect = await podman('inspect', id);
  expect(inspect.code, inspect.stderr).toBe(0);
  const [info] = JSON.parse(inspect.stdout) as { State: ContainerState; RestartCount: number }[];
  return { ...info!.State, RestartCount: info!.RestartCount };
}

/** One GraphQL request; its status and parsed answer. */
async function post(url: string, query: string, variables: Record<string, unknown> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  return {
    status: response.status,
    body: (await response.json()) as {
      data?: {
        event?: {
          reservations?: { pageInfo?: { hasNextPage: boolean; endCursor: string }; edges?: unknown[] };
        };
      };
      errors?: { message: string; extensions?: { code?: string } }[];
    },
  };
}

describe('the image in a container of the manifest’s memory request', () => {
  it('sizes V8’s heap from the container’s memory with its own command', async (ctx) => {
    if (skipped) ctx.skip(skipped);
    const inspect = await podman('image', 'inspect', '--format', '{{json .Config.Cmd}}', IMAGE);
    expect(inspect.code, inspect.stderr).toBe(0);
    const command = JSON.parse(inspect.stdout) as string[];
    expect(command.at(-1)).toBe('dist/main.js');
    // The image's command with its flags, printing what Node reads of the container and V8's limit.
    const script =
      "const v8 = require('node:v8'); console.log(JSON.stringify({ memory: process.constrainedMemory(), heap: v8.getHeapStatistics().heap_size_limit }))";
    const printed = await podman(
      'run',
      '--rm',
      ...LIMITS,
      ...MEMORY_FLAGS,
      '--user',
      '1000:1000',
      IMAGE,
      ...command.slice(0, -1),
      '-e',
      script,
    );
    expect(printed.code, printed.stderr).toBe(0);
    const { memory, heap } = JSON.parse(printed.stdout) as { memory: number; heap: number };
    expect(memory).toBe(MEMORY);
    // The old generation's share of it, and the young generation (three semi-spaces) on top.
    const oldMiB = heap / MiB - 3 * SEMI_SPACE_MIB;
    // Within 5 MiB (V8 rounds to its pages).
    expect(oldMiB).toBeCloseTo(Math.floor(((MEMORY / MiB) * HEAP_PERCENTAGE) / 100), -1);
  }, 60_000);

  it(`serves ${ROUNDS} rounds of ${IN_FLIGHT} distinct 1000-record pages at once, and is neither killed nor restarted`, async (ctx) => {
    if (skipped) ctx.skip(skipped);
    const started = await podman(
      'run',
      '--detach',
      '--read-only',
      '--user',
      '1000:1000',
      ...LIMITS,
      ...MEMORY_FLAGS,
      '--publish',
      '127.0.0.1::4000',
      '--env',
      'ALLOWED_HOSTS=localhost,127.0.0.1',
      '--env',
      'GATEWAY_AUTH_NONE_ON_PUBLIC_HOST=yes',
      '--env',
      'LOG_LEVEL=warn',
      IMAGE,
    );
    expect(started.code, started.stderr).toBe(0);
    container = started.stdout.trim();
    const url = await readyUrl(container);
    const before = await stateOf(container);

    // The `after` of each window, walked once as a client pages (bench/compare/scenarios.ts' S4b).
    const cursors: (string | null)[] = [null];
    for (;;) {
      const page = await post(
        url,
        `query ($after: String) { event(eventId: ${EVENT}) { reservations(first: 1000, after: $after) { pageInfo { hasNextPage endCursor } } } }`,
        { after: cursors.at(-1) },
      );
      expect(page.status, JSON.stringify(page.body.errors)).toBe(200);
      const info = page.body.data!.event!.reservations!.pageInfo!;
      if (!info.hasNextPage) break;
      cursors.push(info.endCursor);
    }
    // The windows of 1000 (the last one of the event holds 600).
    const full = cursors.slice(0, -1);
    expect(full.length).toBeGreaterThanOrEqual(IN_FLIGHT);

    const window = `query ($after: String) { event(eventId: ${EVENT}) { reservations(first: 1000, after: $after) { edges { ${FIELDS} } } } }`;
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(
        full.slice(0, IN_FLIGHT).map((after) => post(url, window, { after }).catch((error: Error) => error)),
      );
      const summary = answers.map((answer) =>
        answer instanceof Error
          ? answer.message
          : answer.status !== 200 || answer.body.errors
            ? `${answer.status} ${answer.body.errors?.[0]?.extensions?.code ?? ''} ${answer.body.errors?.[0]?.message ?? ''}`
            : answer.body.data?.event?.reservations?.edges?.length,
      );
      expect(summary, `round ${round + 1}; the container's log:\n${(await logsOf(container)).slice(-3000)}`).toEqual(
        full.slice(0, IN_FLIGHT).map(() => 1000),
      );
    }

    const after = await stateOf(container);
    expect(after, await logsOf(container)).toMatchObject({
      Running: true,
      OOMKilled: false,
      RestartCount: 0,
      Pid: before.Pid,
      StartedAt: before.StartedAt,
    });
    const still = await post(url, `{ event(eventId: ${EVENT}) { eventId } }`);
    expect(still.status).toBe(200);
  }, 120_000);
});
