import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './helpers/gateway.ts';

/**
 * The example operations of the README and of the documents it sends readers to run without errors
 * over the demo data (docs that cannot rot).
 */
const documents = readdirSync(new URL('../docs/', import.meta.url))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const examples = ['README.md', 'CHANGELOG.md', ...documents].flatMap((path) => {
  const text = readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
  return [...text.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!);
});

let t: TestGateway;
beforeAll(async () => {
  t = await startGateway();
});
afterAll(() => t.close());

describe('README and docs/ examples', () => {
  it('has examples', () => expect(examples.length).toBeGreaterThanOrEqual(3));
  it.each(examples.map((e) => [e.split('\n')[0], e]))('%s', async (_title, query) => {
    const res = await t.exec(query);
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    expect(res.data).toBeTruthy();
  });
});
