import { describe, expect, it } from 'vitest';
import { decodeLicenseeGlobalId, encodeLicenseeGlobalId } from '../../src/schema/global-id.ts';

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
