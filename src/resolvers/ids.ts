import { toService } from '../upstream/codecs.ts';
import { BadInputError } from '../upstream/errors.ts';

/** The endpoint table's rule for an identifier, so an id refused here is one the service would refuse. */
const upstreamId = toService.id();

function isUpstreamId(value: unknown): value is number {
  return upstreamId.safeParse(value).success;
}

/**
 * The numbers of a global id's local part (`5001`, `5001:700001`), or null when it cannot name a
 * record: wrong count of parts, not plain digits, or outside what the service can hold. Such an
 * id finds nothing, so `node` and `nodes` answer null for it without asking the service.
 */
export function idNumbers(localId: string, parts: number): number[] | null {
  const texts = localId.split(':');
  if (texts.length !== parts || !texts.every((text) => /^\d{1,10}$/.test(text))) return null;
  const numbers = texts.map(Number);
  return numbers.every(isUpstreamId) ? numbers : null;
}

/** Refuses a list naming an impossible id before any of its ids is fetched. */
export function checkIdList(ids: readonly number[], arg: string): void {
  const index = ids.findIndex((id) => !isUpstreamId(id));
  if (index >= 0)
    throw new BadInputError(`${arg}[${index}]: ${ids[index]} is not an identifier (0 to 2147483647)`, arg);
}
