import { describe, expect, it } from 'vitest';
import { JsonText } from '../../src/emulator/json-members.ts';
import { loggableParams } from '../../src/emulator/loggable.ts';
import { EmulatorState, type LogEntry } from '../../src/emulator/state.ts';

const entry = (endpoint: string, params: Record<string, unknown>): LogEntry => ({
  at: new Date(0).toISOString(),
  version: 'v102',
  endpoint,
  status: 200,
  licensee: '1001',
  userAgent: 't',
  fault: null,
  params,
});

describe('request log', () => {
  it('bounds a parameter’s depth, its number of values and the length of its texts', () => {
    let nested: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) nested = [nested];
    const logged = loggableParams({
      nested,
      wide: Array.from({ length: 10_000 }, (_, i) => i),
      long: 'y'.repeat(10_000),
    });
    expect(JSON.stringify(logged).length).toBeLessThan(2_000);
    expect(logged.nested).toEqual([[['…']]]);
    expect((logged.wide as unknown[]).at(-1)).toBe('…');
  });

  it('reads a JSON body’s objects back for the log, a __proto__ key included', () => {
    const logged = loggableParams({ options: new JsonText('{"__proto__":"kept","1":"Yes"}') });
    expect(Object.entries(logged.options as object)).toEqual([
      ['1', 'Yes'],
      ['__proto__', 'kept'],
    ]);
  });

  // Fault: the log's memory grew with every request until a reset (200,000 entries of any size).
  it('keeps its memory bounded, dropping the oldest entries', () => {
    const state = new EmulatorState({
      seed: 1,
      startMs: Date.parse('2027-01-15T12:00:00Z'),
      rateLimit: false,
      rateWindowMs: 60_000,
    });
    const big = loggableParams({ texts: Array.from({ length: 200 }, () => 'z'.repeat(1_000)) });
    for (let i = 0; i < 4_000; i++) state.record(entry(`call-${i}`, big));
    expect(state.log.length).toBeLessThan(4_000);
    expect(state.log.at(-1)!.endpoint).toBe('call-3999');
    expect(JSON.stringify(state.log).length).toBeLessThanOrEqual(64 << 20);
  });
});
