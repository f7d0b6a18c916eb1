import { Kind, parse, print, visit } from 'graphql';
import { instantOf } from '../changes/change.ts';

/**
 * Where a callback subscription's stream stands, so that another replica resumes it without losing
 * a change: the latest instant told (its start, then each change's `modifiedAt`), read after each
 * result. The latest rather than the last: a change our own write told may carry an older
 * `modifiedAt` (the service does not always move it), and going back would only replay more.
 */
export class ChangeCursor {
  private latest?: string;

  at(instant: string): void {
    if (this.latest === undefined || instantOf(instant) > instantOf(this.latest)) this.latest = instant;
  }

  get position(): string | undefined {
    return this.latest;
  }
}

/**
 * The recorded request's parameters with `reservationChanged`'s `since` set to `cursor`: the
 * variable it names is given the cursor, or the argument (written in the document, or absent) is
 * written as the cursor. A stream resumed from it replays every reservation modified in or after
 * the cursor's minute: what the router already had may come again, nothing after it is missed.
 * Parameters without a document (a persisted query's hash) are returned as they are.
 */
export function resumeFrom(params: Record<string, unknown>, cursor: string | undefined): Record<string, unknown> {
  if (cursor === undefined || typeof params.query !== 'string') return params;
  const variables = { ...((params.variables as Record<string, unknown> | null | undefined) ?? {}) };
  let document: ReturnType<typeof parse>;
  try {
    document = parse(params.query);
  } catch {
    // Not a document the gateway would run anyway: its refusal is the answer.
    return params;
  }
  const since = { kind: Kind.STRING, value: cursor } as const;
  const resumed = visit(document, {
    Field(field) {
      if (field.name.value !== 'reservationChanged') return undefined;
      const given = field.arguments?.find((argument) => argument.name.value === 'since');
      if (given?.value.kind === Kind.VARIABLE) {
        variables[given.value.name.value] = cursor;
        return undefined;
      }
      const others = (field.arguments ?? []).filter((argument) => argument.name.value !== 'since');
      return {
        ...field,
        arguments: [...others, { kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: 'since' }, value: since }],
      };
    },
  });
  return { ...params, query: print(resumed), variables };
}
