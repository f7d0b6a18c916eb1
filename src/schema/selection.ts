import { Kind, visit, type FieldNode, type GraphQLResolveInfo, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { ReservationFlags } from '../resolvers/reservation.ts';

/**
 * What a query selects decides which optional detail groups are asked of the service: a flag is
 * sent only when a selected field needs it.
 */

function fieldsOf(set: SelectionSetNode | undefined, info: GraphQLResolveInfo, out: FieldNode[] = []): FieldNode[] {
  for (const s of set?.selections ?? []) {
    if (s.kind === Kind.FIELD) out.push(s);
    else if (s.kind === Kind.INLINE_FRAGMENT) fieldsOf(s.selectionSet, info, out);
    else fieldsOf(info.fragments[s.name.value]?.selectionSet, info, out);
  }
  return out;
}

/** The fields selected at `path` below the field being resolved (all its occurrences merged). */
export function selectedAt(info: GraphQLResolveInfo, path: string[]): FieldNode[] {
  let level: FieldNode[] = [...info.fieldNodes];
  for (const name of path) level = level.flatMap((f) => fieldsOf(f.selectionSet, info)).filter((f) => f.name.value === name);
  return level.flatMap((f) => fieldsOf(f.selectionSet, info));
}

const FULL_CONTACT = new Set(['address', 'address2', 'city', 'state', 'zip', 'country', 'companyName', 'preferredGuestNumber']);

/** Detail flags for the reservations found at `path` below the current field. */
export function reservationFlags(info: GraphQLResolveInfo, path: string[]): ReservationFlags {
  const fields = selectedAt(info, path);
  const names = new Set(fields.map((f) => f.name.value));
  const contact = fields.filter((f) => f.name.value === 'contact').flatMap((f) => fieldsOf(f.selectionSet, info));
  return {
    fullContactInfo: contact.some((f) => FULL_CONTACT.has(f.name.value)),
    detailedSubBlockInfo: names.has('subBlock'),
    customField: names.has('customFieldValues'),
  };
}

/** Every flag with content (for lookups by global id, whose selection is not known up front). */
export const ALL_FLAGS: ReservationFlags = { fullContactInfo: true, detailedSubBlockInfo: true, customField: true };

const partnerview = new WeakMap<OperationDefinitionNode, boolean>();

/**
 * Whether the operation selects `partnerHotelId` anywhere: then every gethotels of the operation
 * asks for it, so all hotel lookups of an event still share one call.
 */
export function wantsPartnerview(info: GraphQLResolveInfo): boolean {
  const known = partnerview.get(info.operation);
  if (known !== undefined) return known;
  let found = false;
  const look = { Field: (node: FieldNode) => void (node.name.value === 'partnerHotelId' && (found = true)) };
  visit(info.operation, look);
  for (const fragment of Object.values(info.fragments)) visit(fragment, look);
  partnerview.set(info.operation, found);
  return found;
}
