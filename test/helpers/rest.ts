import { type Emulator, type EmulatorOptions, startEmulator } from '../../src/emulator/server.ts';

/** A thin REST caller for emulator tests: POST form bodies as the contract's transport says. */
export interface RestAnswer {
  status: number;
  body: any;
  headers: Headers;
}

export class Rest {
  private tokens = new Map<string, string>();
  constructor(readonly emulator: Emulator) {}

  get url(): string {
    return this.emulator.url;
  }

  async post(
    endpoint: string,
    params: Record<string, string | number | boolean | undefined> = {},
    options: { version?: string; userAgent?: string | null; json?: boolean } = {},
  ): Promise<RestAnswer> {
    const version = options.version ?? 'v102';
    const headers: Record<string, string> = {};
    // fetch adds its own User-Agent unless one is set: an empty one stands for "none".
    headers['user-agent'] = options.userAgent === null ? '' : (options.userAgent ?? 'emulator-tests/1');
    let body: string;
    if (options.json) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(params);
    } else {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      const form = new URLSearchParams();
      for (const [k, v] of Object.entries(params)) if (v !== undefined) form.set(k, String(v));
      body = form.toString();
    }
    const res = await fetch(`${this.url}/api/${version}/${endpoint}`, { method: 'POST', headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // non-JSON bodies are returned as text
    }
    return { status: res.status, body: parsed, headers: res.headers };
  }

  async token(licensee: '1001' | '2002' = '1001'): Promise<string> {
    const known = this.tokens.get(licensee);
    if (known) return known;
    const res = await this.post('authenticate', { key: `demo-key-${licensee}`, systemIdentifier: licensee });
    if (res.status !== 200) throw new Error(`authenticate failed: ${res.status} ${JSON.stringify(res.body)}`);
    this.tokens.set(licensee, res.body.token);
    return res.body.token;
  }

  /** An authenticated call as licensee 1001 (or the given one). */
  async call(
    endpoint: string,
    params: Record<string, string | number | boolean | undefined> = {},
    options: { version?: string; licensee?: '1001' | '2002'; json?: boolean } = {},
  ) {
    const token = await this.token(options.licensee);
    return this.post(endpoint, { token, ...params }, options);
  }

  async control(action: string, body?: unknown): Promise<any> {
    // Moving the clock may expire the tokens held here.
    if (action === 'clock' || action === 'revoke-tokens') this.tokens.clear();
    const res = await fetch(
      `${this.url}/_emulator/${action}`,
      body === undefined
        ? {}
        : { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } },
    );
    return { status: res.status, ...(await res.json()) };
  }

  async requests(): Promise<any[]> {
    return (await this.control('requests')).requests;
  }

  async reset(): Promise<void> {
    this.tokens.clear();
    await this.control('reset', {});
  }
}

export async function startRest(options: EmulatorOptions = {}): Promise<Rest> {
  return new Rest(await startEmulator({ port: 0, ...options }));
}
