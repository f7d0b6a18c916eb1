import { EVENT } from './scenarios.ts';

/**
 * S5 with `@stream`: every reservation of the event in one operation whose edges are streamed
 * (incremental delivery, multipart/mixed). Time to the first record and to the last part.
 */

export const STREAM_QUERY = `{ event(eventId: ${EVENT}) { reservations(first: 25600) { edges @stream(initialCount: 0) { node { reservationNumber status arrivalDate departureDate } } } } }`;

export type StreamResult =
  | { supported: true; firstRecordMs: number; totalMs: number; records: number }
  | { supported: false; reason: string };

export async function streamWalk(url: string): Promise<StreamResult> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed, application/json' },
    body: JSON.stringify({ query: STREAM_QUERY }),
  });
  const type = res.headers.get('content-type') ?? '';
  if (!type.includes('multipart')) {
    const body = (await res.json().catch(() => ({}))) as { errors?: { message: string }[] };
    return { supported: false, reason: body.errors?.[0]?.message ?? `answered ${res.status} ${type}, not a stream` };
  }
  let firstRecordMs = 0;
  let all = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    all += decoder.decode(chunk, { stream: true });
    if (!firstRecordMs && all.includes('"reservationNumber"')) firstRecordMs = performance.now() - t0;
  }
  const records = all.match(/"reservationNumber"/g)?.length ?? 0;
  if (!records) return { supported: false, reason: /"message":"([^"]*)"/.exec(all)?.[1] ?? 'no record in the stream' };
  return { supported: true, firstRecordMs, totalMs: performance.now() - t0, records };
}
