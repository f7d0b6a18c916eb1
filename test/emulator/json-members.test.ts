import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { objectMembers } from '../../src/emulator/json-members.ts';

describe('objectMembers', () => {
  it('gives the members of any JSON object in the order written, each value as its own JSON text', () => {
    const entries = fc.uniqueArray(fc.tuple(fc.string(), fc.jsonValue()), { selector: ([key]) => key, maxLength: 8 });
    fc.assert(
      fc.property(entries, fc.constantFrom(undefined, '  ', '\t'), (written, indent) => {
        // Written by hand so that integer-like keys keep their place, which no JS object keeps.
        const text =
          indent === undefined
            ? `{${written.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value)}`).join(',')}}`
            : `{\n${written.map(([key, value]) => `${indent}${JSON.stringify(key)} : ${JSON.stringify(value, null, indent)}`).join(' ,\n')}\n}`;
        const members = objectMembers(text);
        expect(members.map(([key]) => key)).toEqual(written.map(([key]) => key));
        expect(members.map(([, valueText]) => JSON.parse(valueText))).toEqual(
          written.map(([, value]) => JSON.parse(JSON.stringify(value))),
        );
      }),
    );
  });

  it('reads an object nested deeper than a recursive reader could', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    expect(objectMembers(`{"a":${deep},"b":"}{\\""}`)).toEqual([
      ['a', deep],
      ['b', '"}{\\""'],
    ]);
  });
});
