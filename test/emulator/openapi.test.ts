import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ENDPOINTS, type EndpointName } from '../../src/upstream/endpoints.ts';

/**
 * docs/upstream.openapi.yaml describes the REST service for users and feeds the Mesh peer of the
 * benchmark. Checked against the gateway's endpoint table so that neither drifts silently.
 */
const doc = parse(readFileSync(new URL('../../docs/upstream.openapi.yaml', import.meta.url), 'utf8')) as {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        operationId?: string;
        'x-versions'?: string[];
        requestBody?: { $ref?: string; content?: Record<string, unknown> };
      }
    >
  >;
  components: { requestBodies: Record<string, { content: Record<string, unknown> }> };
};

const operation = (name: string) => doc.paths[`/${name}`]?.post;

/** Every `$ref` target in the document, as a JSON pointer. */
function refs(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(refs);
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === '$ref' && typeof value === 'string' ? [value] : refs(value),
  );
}

function resolve(pointer: string): unknown {
  return pointer
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>(
      (node, part) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined),
      doc,
    );
}

describe('docs/upstream.openapi.yaml', () => {
  it('is an OpenAPI 3.0 document whose every $ref resolves', () => {
    expect(doc.openapi).toMatch(/^3\.0\./);
    const dangling = refs(doc).filter((r) => resolve(r) === undefined);
    expect(dangling).toEqual([]);
  });

  it.each(Object.keys(ENDPOINTS) as EndpointName[])(
    'describes %s as a POST with the versions and body encoding of the endpoint table',
    (name) => {
      const op = operation(name);
      expect(op, `no POST /${name}`).toBeDefined();
      expect(op!.operationId).toBe(name);
      expect(op!['x-versions']).toEqual([...ENDPOINTS[name].versions]);
      const body = op!.requestBody?.$ref
        ? doc.components.requestBodies[op!.requestBody.$ref.split('/').pop()!]
        : op!.requestBody;
      const type = ENDPOINTS[name].body === 'json' ? 'application/json' : 'application/x-www-form-urlencoded';
      expect(Object.keys(body?.content ?? {})).toEqual([type]);
    },
  );

  it('describes no endpoint the service lacks (only the table and the three removed mailing-list ones)', () => {
    const removed = ['postmailinglistoptin', 'getmailinglistoptin', 'getmailinglistoptinpagecount'];
    const described = Object.keys(doc.paths).map((p) => p.slice(1));
    expect(described.sort()).toEqual([...Object.keys(ENDPOINTS), ...removed].sort());
  });
});
