/**
 * What every example program shares: the gateway's address, its credential, and a fetch that
 * records what the client sent (the e2e test in test/e2e/clients.test.ts reads that record).
 */

/** The gateway's /graphql address: GATEWAY_URL, else the first argument, else `npm start`'s. */
export const GATEWAY_URL = process.env.GATEWAY_URL ?? process.argv[2] ?? 'http://127.0.0.1:4000/graphql';

/**
 * The client's credential, when the gateway asks for one (GATEWAY_AUTH=api-key or jwt): an API key
 * or a token, sent as `Authorization: Bearer …` (docs/clients.md, "Clients and licensees").
 */
export const authorization: Record<string, string> = process.env.GATEWAY_API_KEY
  ? { authorization: `Bearer ${process.env.GATEWAY_API_KEY}` }
  : {};

/** One request as it left the client: the headers fetch sends (its defaults included) and the parsed body. */
export interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  status?: number;
  response?: unknown;
}

/**
 * A fetch that records each request in `log` (headers as `new Request` settles them, so a default
 * content-type fetch adds is seen too) and its answer, then sends it unchanged.
 */
export function recordingFetch(log: SentRequest[]): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const text = request.method === 'GET' ? '' : await request.clone().text();
    const headers = Object.fromEntries([...request.headers].filter(([name]) => name !== 'authorization'));
    const entry: SentRequest = {
      method: request.method,
      url: request.url,
      headers,
      body: text ? JSON.parse(text) : undefined,
    };
    log.push(entry);
    const response = await fetch(request);
    entry.status = response.status;
    if (response.headers.get('content-type')?.includes('json')) entry.response = await response.clone().json();
    return response;
  };
}

/** Prints the program's result as one line of JSON on stdout. */
export function report(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
