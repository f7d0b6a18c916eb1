import { describe, expect, it } from 'vitest';
import { createRequestCalls } from '../../src/resolvers/request-calls.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import { LICENSEE_1001 } from '../helpers/upstream.ts';

/** A request's reads: one call per distinct read, until the operation lets go of what they answered. */
describe("an operation's reads", () => {
  it('are one call per read until it lets go of them, then a read is made again', async () => {
    const calls: string[] = [];
    const upstream = {
      call: async (_account: unknown, name: string, params: { page: number }) => {
        calls.push(`${name} ${params.page}`);
        return { page: params.page };
      },
    } as unknown as UpstreamClient;
    const requestCalls = createRequestCalls(LICENSEE_1001, upstream);
    const page = { eventId: 5001, page: 1 } as const;
    const first = await requestCalls.read('getreservationpagecount', page as never);
    expect(await requestCalls.read('getreservationpagecount', page as never)).toBe(first);
    expect(calls).toEqual(['getreservationpagecount 1']);
    requestCalls.letGo();
    const again = await requestCalls.read('getreservationpagecount', page as never);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    expect(calls).toEqual(['getreservationpagecount 1', 'getreservationpagecount 1']);
  });
});
