/**
 * JSON objects read member by member, in the order they are written. `JSON.parse` gives an object
 * whose integer-like keys come first whatever their place in the text (`{"1":"Yes","0":"No"}`
 * comes back as 0, 1), and the order of a question's options is the caller's to choose.
 */

/** An object or array met in a JSON body, handed on as its text, as a form field carries JSON. */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * The members of a JSON object text in the order written, each value as its own text. The text
 * must already be known to be a JSON object (JSON.parse accepted it). Iterative: any depth.
 */
export function objectMembers(text: string): [key: string, valueText: string][] {
  const members: [string, string][] = [];
  let i = skipSpace(text, text.indexOf('{') + 1);
  if (text[i] === '}') return members;
  for (;;) {
    const keyStart = skipSpace(text, i);
    const keyEnd = endOfString(text, keyStart);
    const valueStart = skipSpace(text, skipSpace(text, keyEnd) + 1); // past the colon
    const valueEnd = endOfValue(text, valueStart);
    members.push([JSON.parse(text.slice(keyStart, keyEnd)) as string, text.slice(valueStart, valueEnd)]);
    i = skipSpace(text, valueEnd);
    if (text[i] !== ',') return members;
    i++;
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  return i;
}

/** `i` is at an opening quote; the index just past its closing quote. */
function endOfString(text: string, i: number): number {
  let j = i + 1;
  while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
  return j + 1;
}

function endOfValue(text: string, i: number): number {
  const first = text[i];
  if (first === '"') return endOfString(text, i);
  if (first !== '{' && first !== '[') {
    let j = i;
    while (j < text.length && !',}] \n\r\t'.includes(text[j]!)) j++;
    return j;
  }
  let depth = 0;
  let j = i;
  while (j < text.length) {
    const c = text[j];
    if (c === '"') {
      j = endOfString(text, j);
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return j + 1;
    }
    j++;
  }
  return j;
}
