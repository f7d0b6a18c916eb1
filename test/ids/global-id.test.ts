import { decodeGlobalID, encodeGlobalID } from '@pothos/plugin-relay';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeLicenseeGlobalId, encodeLicenseeGlobalId } from '../../src/ids/global-id.ts';

// Fault: global ids were `Type:local` for every licensee, so an id handed to a client of licensee
// 2002 named the same record when a client of 1001 replayed it: it was looked up, not refused.
describe('global ids bound to their licensee', () => {
  const NOTHING = { typename: '', id: '' };

  it('decode to their type and local id for the licensee they were made for', () => {
    const id = encodeLicenseeGlobalId('Reservation', '5001:700001', '1001');
    expect(decodeLicenseeGlobalId(id, '1001')).toEqual({ typename: 'Reservation', id: '5001:700001' });
  });

  it('name nothing for another licensee', () => {
    expect(decodeLicenseeGlobalId(encodeLicenseeGlobalId('Event', 6001, '2002'), '1001')).toEqual(NOTHING);
    expect(decodeLicenseeGlobalId(encodeLicenseeGlobalId('Event', 5001, '1001'), '2002')).toEqual(NOTHING);
    // A licensee number that merely starts like the request's own is another licensee.
    expect(decodeLicenseeGlobalId(encodeLicenseeGlobalId('Event', 5001, '10011'), '1001')).toEqual(NOTHING);
  });

  it('name nothing when made before the binding (no licensee in them), or malformed', () => {
    expect(decodeLicenseeGlobalId(Buffer.from('Event:5001').toString('base64'), '1001')).toEqual(NOTHING);
    expect(decodeLicenseeGlobalId(Buffer.from('Event:5001@').toString('base64'), '1001')).toEqual(NOTHING);
    expect(decodeLicenseeGlobalId('not an id', '1001')).toEqual(NOTHING);
  });
});

// src/ids/global-id.ts writes out Pothos' base64 so that the webhooks need not load Pothos: the ids
// it writes and the ids it reads must stay those of @pothos/plugin-relay.
describe('global ids as @pothos/plugin-relay writes and reads them', () => {
  const typename = fc.stringMatching(/^[A-Z_a-z]\w{0,12}$/);
  const text = fc.string({ unit: 'grapheme', maxLength: 20 });

  it('are the same text', () => {
    fc.assert(
      fc.property(typename, text, text, (type, local, licensee) => {
        expect(encodeLicenseeGlobalId(type, local, licensee)).toBe(encodeGlobalID(type, `${local}@${licensee}`));
      }),
    );
  });

  it('decode as Pothos decodes them, and name nothing where Pothos throws', () => {
    // What decodeLicenseeGlobalId does around the decoding: base64url read as base64, then the licensee.
    const asBase64 = (id: string) => {
      const text = id.replaceAll('-', '+').replaceAll('_', '/');
      return text.includes('=') ? text : text.padEnd(Math.ceil(text.length / 4) * 4, '=');
    };
    const pothos = (id: string, licensee: string) => {
      try {
        const decoded = decodeGlobalID(asBase64(id));
        const at = decoded.id.lastIndexOf('@');
        return at < 0 || decoded.id.slice(at + 1) !== licensee
          ? { typename: '', id: '' }
          : { typename: decoded.typename, id: decoded.id.slice(0, at) };
      } catch {
        return { typename: '', id: '' };
      }
    };
    const base64url = (id: string) => id.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
    const made = fc
      .tuple(fc.oneof(typename, text), text, fc.constantFrom('1001', '2002'))
      .map(([type, local, licensee]) => Buffer.from(`${type}:${local}@${licensee}`).toString('base64'));
    fc.assert(
      fc.property(fc.oneof(made, made.map(base64url), fc.base64String(), fc.string()), (id) => {
        expect(decodeLicenseeGlobalId(id, '1001')).toEqual(pothos(id, '1001'));
      }),
    );
  });
});
