import { type GraphQLResolveInfo, isObjectType } from 'graphql';
import type { DecodedGlobalId } from '../ids/global-id.ts';

/** Whether a decoded id names a type that implements Node (not garbage, not `Query`, not an unknown type). */
export function namesNode(info: GraphQLResolveInfo, id: DecodedGlobalId): boolean {
  const type = id.typename ? info.schema.getType(id.typename) : undefined;
  return isObjectType(type) && type.getInterfaces().some((i) => i.name === 'Node');
}
