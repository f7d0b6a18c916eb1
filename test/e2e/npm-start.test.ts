import { type ChildProcess, spawn } from 'node:child_process';
import { GraphQLClient, gql } from 'graphql-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A newcomer's path: `npm start` with no settings, then a real GraphQL client over HTTP.
 * PORT=0 and OPS_PORT=0 so the test binds free ports; everything else is the defaults.
 */
let child: ChildProcess;
let url: string;
let output = '';

beforeAll(async () => {
  child = spawn('npm', ['start'], {
    env: { ...process.env, PORT: '0', OPS_PORT: '0', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not come up within 60 s:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /ready at (http:\/\/\S+\/graphql)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`npm start exited with ${code}:\n${output}`)));
  });
}, 70_000);

afterAll(async () => {
  if (child.exitCode === null) {
    process.kill(-child.pid!, 'SIGKILL');
  }
});

describe('npm start', () => {
  it('serves the demo data to a GraphQL client: an event, its hotels and a page of reservations', async () => {
    const client = new GraphQLClient(url);
    const data = await client.request<{
      event: {
        name: string;
        hotels: { hotelId: number; name: string }[];
        reservations: { totalCount: number; edges: { node: { reservationNumber: number; hotel: { name: string } } }[] };
      };
    }>(gql`
      query {
        event(eventId: 5001) {
          name
          hotels {
            hotelId
            name
          }
          reservations(first: 25) {
            totalCount
            edges {
              node {
                reservationNumber
                hotel {
                  name
                }
              }
            }
          }
        }
      }
    `);
    expect(data.event.name).toBeTruthy();
    expect(data.event.hotels.length).toBeGreaterThanOrEqual(12);
    expect(data.event.reservations.edges).toHaveLength(25);
    expect(data.event.reservations.totalCount).toBeGreaterThan(25_000);
    expect(data.event.reservations.edges[0]!.node.hotel.name).toBeTruthy();
  });

  it('answers /health and /ready', async () => {
    const base = url.replace(/\/graphql$/, '');
    expect((await fetch(`${base}/health`)).status).toBe(200);
    const ready = await fetch(`${base}/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, licensees: [{ id: '1001', ready: true }] });
  });

  it('finishes in-flight requests and stops cleanly on SIGTERM', async () => {
    const client = new GraphQLClient(url);
    const inFlight = client.request<{ event: { reservations: { edges: unknown[] } } }>(gql`
      query {
        event(eventId: 5001) {
          reservations(first: 3000) {
            edges {
              node {
                reservationNumber
              }
            }
          }
        }
      }
    `);
    await new Promise((r) => setTimeout(r, 30));
    // The whole process group gets the signal, as a container runtime or a terminal's Ctrl-C sends it.
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    process.kill(-child.pid!, 'SIGTERM');
    const answer = await inFlight;
    expect(answer.event.reservations.edges).toHaveLength(3000);
    await exited;
    expect(output).toContain('shutting down: finishing in-flight requests');
    expect(output).toContain('Reservation gateway stopped cleanly');
  });
});
