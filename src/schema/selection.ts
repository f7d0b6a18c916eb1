import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLResolveInfo,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
  visit,
} from 'graphql';
import type { ReservationFlags } from '../resolvers/reservation.ts';

/**
 * What a query selects decides which optional detail groups are asked of the service: a flag is
 * sent only when a selected field needs it.
 */

/**
 * The fields of one selection set, its inline fragments and fragment spreads flattened. Each named
 * fragment is expanded once per selection set, as GraphQL's own field collection does: a document
 * that spreads a fragment twice, at every level of a chain of fragments, then costs its size and
 * not two to the power of its depth. `applies` keeps the fragments whose type condition matches
 * (all of them when the caller does not care about the concrete type).
 */
export function flattenFields(
  set: SelectionSetNode | undefined,
  fragments: Readonly<Record<string, FragmentDefinitionNode>>,
  applies: (typeCondition: string | undefined) => boolean = () => true,
): FieldNode[] {
  const fields: FieldNode[] = [];
  const expanded = new Set<string>();
  const collect = (selections: SelectionSetNode | undefined): void => {
    for (const selection of selections?.selections ?? []) {
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) {
        if (applies(selection.typeCondition?.name.value)) collect(selection.selectionSet);
      } else if (!expanded.has(selection.name.value)) {
        expanded.add(selection.name.value);
        const fragment = fragments[selection.name.value];
        if (fragment && applies(fragment.typeCondition.name.value)) collect(fragment.selectionSet);
      }
    }
  };
  collect(set);
  return fields;
}

/** The fragments a document defines, by name. */
export function fragmentsOf(document: DocumentNode): Record<string, FragmentDefinitionNode> {
  return Object.fromEntries(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d]),
  );
}

/**
 * The root fields an operation selects, wherever they are written (inline fragments and fragment
 * spreads on the root type included): what the cost estimate counts and a mutation changes.
 */
export function rootFields(document: DocumentNode, operation: OperationDefinitionNode): FieldNode[] {
  return flattenFields(operation.selectionSet, fragmentsOf(document));
}

/** The fields selected at `path` below the field being resolved (all its occurrences merged). */
export function selectedAt(info: GraphQLResolveInfo, path: string[]): FieldNode[] {
  let level: FieldNode[] = [...info.fieldNodes];
  for (const name of path)
    level = level.flatMap((f) => flattenFields(f.selectionSet, info.fragments)).filter((f) => f.name.value === name);
  return level.flatMap((f) => flattenFields(f.selectionSet, info.fragments));
}

const FULL_CONTACT = new Set([
  'address',
  'address2',
  'city',
  'state',
  'zip',
  'country',
  'companyName',
  'preferredGuestNumber',
]);

/** Detail flags for the reservations found at `path` below the current field. */
export function reservationFlags(info: GraphQLResolveInfo, path: string[]): ReservationFlags {
  const fields = selectedAt(info, path);
  const names = new Set(fields.map((f) => f.name.value));
  const contact = fields
    .filter((f) => f.name.value === 'contact')
    .flatMap((f) => flattenFields(f.selectionSet, info.fragments));
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

/**
 * A test of whether a field selects nothing but `names` below it (fragments flattened): then its
 * value can be built from what its parent's record already holds. Kept per field node of a parsed
 * document, so a page of 1000 records walks the selection once.
 */
export function selectsOnly(names: ReadonlySet<string>) {
  const known = new WeakMap<FieldNode, boolean>();
  const test = (field: FieldNode, fragments: Readonly<Record<string, FragmentDefinitionNode>>): boolean => {
    let only = known.get(field);
    if (only === undefined) {
      only = flattenFields(field.selectionSet, fragments).every((f) => names.has(f.name.value));
      known.set(field, only);
    }
    return only;
  };
  return {
    /** For a resolver: every occurrence of the field being resolved (merged by GraphQL) must pass. */
    atResolver: (info: GraphQLResolveInfo) => info.fieldNodes.every((field) => test(field, info.fragments)),
    /** For the cost estimate, one occurrence at a time. */
    atField: test,
  };
}

/** The Hotel fields a record's own `hotelId` and `hotelName` answer, without the event's hotel list. */
export const hotelFromRecord = selectsOnly(new Set(['name', 'hotelId', 'eventId', 'id', '__typename']));
