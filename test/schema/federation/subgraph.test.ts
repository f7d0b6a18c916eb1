import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printSubgraphSchemaFile } from '../../../src/schema/print.ts';
import { startGateway, type TestGateway } from '../../helpers/gateway.ts';
import { globalId } from '../../helpers/global-id.ts';

/**
 * The checks of the federation subgraph compatibility suite that need no router: `_service`,
 * `@link` to federation v2, entity keys (single, composite, several per request), and the
 * directives used (@shareable, @tag, @inaccessible).
 */

let t: TestGateway;
let sdl: string;
beforeAll(async () => {
  t = await startGateway();
  const res = await t.exec<{ _service: { sdl: string } }, never>('{ _service { sdl } }');
  sdl = res.data!._service.sdl;
});
afterAll(() => t.close());

/** The SDL of one type, from its definition to the closing brace. */
const typeSdl = (name: string) => sdl.match(new RegExp(`\\ntype ${name}\\b[^{]*\\{[\\s\\S]*?\\n\\}`))?.[0] ?? '';

describe('_service', () => {
  it('returns the SDL with @link to federation v2 and its imports', () => {
    expect(sdl).toMatch(
      /extend schema\s+@link\(url: "https:\/\/specs\.apollo\.dev\/federation\/v2\.\d+", import: \[[^\]]*"@key"[^\]]*\]\)/,
    );
    expect(sdl).not.toContain('_entities');
    expect(sdl).not.toContain('_service');
  });

  it('is what schema.subgraph.graphql holds (npm run codegen)', () => {
    const committed = readFileSync(new URL('../../../schema.subgraph.graphql', import.meta.url), 'utf8');
    expect(committed, 'schema.subgraph.graphql is stale: run npm run codegen and commit it').toBe(
      printSubgraphSchemaFile(),
    );
    expect(committed).toContain(sdl);
  });

  it.each([
    ['Event', 'eventId'],
    ['Hotel', 'eventId hotelId'],
    ['Reservation', 'eventId reservationNumber'],
    ['Attendee', 'attendeeId registrationEventId'],
    ['EventQuestion', 'eventId questionId'],
    ['CustomField', 'customFieldId'],
  ])('declares %s @key(fields: "%s")', (type, fields) => {
    expect(typeSdl(type)).toMatch(new RegExp(`^\\ntype ${type}[^{]*@key\\(fields: "${fields}"\\)`));
  });

  it('marks Money and PageInfo @shareable, raw @inaccessible and @tag, node and nodes @shareable @inaccessible', () => {
    expect(typeSdl('Money')).toMatch(/type Money\s+@shareable/);
    expect(typeSdl('PageInfo')).toMatch(/type PageInfo\s+@shareable/);
    for (const type of ['Event', 'Hotel', 'Reservation', 'EventQuestion', 'CustomField']) {
      expect(typeSdl(type)).toContain('raw: JSON! @inaccessible @tag(name: "internal")');
    }
    // Both directives on the field's line, in whichever order the printer puts them.
    expect(typeSdl('Query')).toMatch(/\): Node (?=.*@shareable)(?=.*@inaccessible)/);
    expect(typeSdl('Query')).toMatch(/\): \[Node\]! (?=.*@shareable)(?=.*@inaccessible)/);
  });
});

describe('the @link', () => {
  // The import list is written by hand (federation.ts): the plugin's toSubGraphSchema, which would
  // derive it, sorts the schema. A missing import already fails at start-up (printSubgraphSchema
  // throws); this catches the quiet drift, imports no type applies any more.
  it('imports exactly the federation directives the schema applies', () => {
    const imported = sdl.match(/import: \[([^\]]*)\]/)?.[1]?.match(/@\w+/g) ?? [];
    const applied = new Set(
      sdl
        .replace(/extend schema[^\n]*\n[^\n]*\n/, '')
        .match(
          /@(key|shareable|inaccessible|tag|external|requires|provides|override|interfaceObject|authenticated|requiresScopes|policy|cost|listSize|composeDirective)\b/g,
        ),
    );
    expect([...imported].sort()).toEqual([...applied].sort());
  });
});

describe('_entities and node', () => {
  it('resolves single, composite and several keys in one request', async () => {
    const res = await t.exec<{ _entities: unknown[] }, { r: object[] }>(
      `query ($r: [_Any!]!) { _entities(representations: $r) { ... on Event { eventId } ... on Hotel { hotelId } ... on Attendee { attendeeId } } }`,
      {
        r: [
          { __typename: 'Event', eventId: 5001 },
          { __typename: 'Hotel', eventId: 5001, hotelId: 203 },
          { __typename: 'Attendee', attendeeId: 'A-1', registrationEventId: 'R' },
        ],
      },
    );
    expect(res.data?._entities).toEqual([{ eventId: 5001 }, { hotelId: 203 }, { attendeeId: 'A-1' }]);
  });

  it('keeps node for a client of this gateway alone', async () => {
    const res = await t.exec<{ node: { eventId: number } | null }, never>(
      `{ node(id: "${globalId('Event:5001')}") { ... on Event { eventId } } }`,
    );
    expect(res.data?.node).toEqual({ eventId: 5001 });
  });
});
