import { decodeGlobalID } from '@pothos/plugin-relay';
import { type GraphQLResolveInfo, isObjectType } from 'graphql';

/** A global id as the relay plugin hands it to `node` and `nodes`. */
export interface DecodedGlobalId {
  typename: string;
  id: string;
}

/**
 * Pothos' decoder throws on what is not base64 of `Type:id`, and that error is not one of ours, so
 * it surfaced as INTERNAL_SERVER_ERROR. A malformed id names nothing: decode it to no type, and
 * `node`/`nodes` answer null for it, as for any id that does not exist.
 */
export function decodeGlobalIdOrNothing(globalID: string): DecodedGlobalId {
  try {
    return decodeGlobalID(globalID);
  } catch {
    return { typename: '', id: '' };
  }
}

/** Whether a decoded id names a type that implements Node (not garbage, not `Query`, not an unknown type). */
export function namesNode(info: GraphQLResolveInfo, id: DecodedGlobalId): boolean {
  const type = id.typename ? info.schema.getType(id.typename) : undefined;
  return isObjectType(type) && type.getInterfaces().some((i) => i.name === 'Node');
}
