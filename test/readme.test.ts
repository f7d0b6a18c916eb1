import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

/** The README's example operations run without errors over the demo data (docs that cannot rot). */
const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const examples = [...readme.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway();
});
afterAll(() => t.close());

describe('README examples', () => {
  it('has examples', () => expect(examples.length).toBeGreaterThanOrEqual(3));
  it.each(examples.map((e) => [e.split('\n')[0], e]))('%s', async (_title, query) => {
    const res = await t.exec(query);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    expect(res.data).toBeTruthy();
  });
});
