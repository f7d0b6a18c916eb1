import { JsonText } from './json-members.ts';

/**
 * Request parameters as the request log keeps them: bounded in depth, in the number of values and
 * in the length of each text. Any request can then be logged, and the log always served: a deeply
 * nested JSON parameter once made `/_emulator/requests` fail until a reset.
 */
const MAX_DEPTH = 4;
const MAX_VALUES = 100;
const MAX_TEXT = 256;
/** A JSON body's object or array is read back for the log only up to this size. */
const MAX_JSON_TEXT = 64 * 1024;
const CUT = '…';

export function loggableParams(params: Record<string, unknown>): Record<string, unknown> {
  return bound(params, 0, { values: MAX_VALUES }) as Record<string, unknown>;
}

/** A text of at most MAX_TEXT characters, saying how long it was when cut. */
export function clip(text: string): string {
  return text.length <= MAX_TEXT ? text : `${text.slice(0, MAX_TEXT)}${CUT} (${text.length} characters)`;
}

function bound(value: unknown, depth: number, budget: { values: number }): unknown {
  budget.values--;
  if (value instanceof JsonText)
    return value.text.length <= MAX_JSON_TEXT ? bound(JSON.parse(value.text), depth, budget) : clip(value.text);
  if (typeof value === 'string') return clip(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= MAX_DEPTH) return CUT;
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value) {
      if (budget.values <= 0) {
        items.push(CUT);
        break;
      }
      items.push(bound(item, depth + 1, budget));
    }
    return items;
  }
  // Without a prototype, a `__proto__` key is logged like any other.
  const members: Record<string, unknown> = Object.create(null);
  for (const [key, item] of Object.entries(value)) {
    if (budget.values <= 0) {
      members[CUT] = CUT;
      break;
    }
    members[clip(key)] = bound(item, depth + 1, budget);
  }
  return members;
}
