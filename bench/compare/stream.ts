import { EVENT } from './scenarios.ts';

/**
 * S5 with `@stream`: every reservation of the event in one operation whose edges are streamed
 * (incremental delivery, multipart/mixed). Time to the first record and to the last part.
 *
 * Measured on a warm gateway: the same document has run once before over another event
 * (WARM_EVENT), so the document is parsed, validated and compiled and the upstream token held, but
 * no page of the measured event is kept: the first record still waits for its first upstream page.
 */

export const STREAM_QUERY = `query ($id: Int!) { event(eventId: $id) { reservations(first: 25600) { edges @stream(initialCount: 0) { node { reservationNumber status arrivalDate departureDate } } } } }`;
/** Event 5002: one page of 1000, the same licensee as EVENT. */
export const WARM_EVENT = 5002;

export type StreamResult =
  | { supported: true; firstRecordMs: number; totalMs: number; records: number }
  | { supported: false; reason: string };

export async function streamWalk(url: string, eventId = EVENT): Promise<StreamResult> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'multipart/mixed, application/json' },
    body: JSON.stringify({ query: STREAM_QUERY, variables: { id: eventId } }),
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
