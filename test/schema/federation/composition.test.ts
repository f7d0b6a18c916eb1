import { composeServices } from '@apollo/composition';
import { composeServices as composeWithGuild } from '@theguild/federation-composition';
import { describe, expect, it } from 'vitest';
import { subgraphs } from './compose.ts';

/**
 * Both composers accept our subgraph with the registration subgraph beside it (which extends
 * Attendee, references Event and implements Node with its own `node`), and neither hints at ours.
 */
describe('composition with a second subgraph', () => {
  it('@apollo/composition composes both, without a hint at our schema', () => {
    const result = composeServices(subgraphs());
    expect(result.errors?.map((e) => e.message)).toBeUndefined();
    // No hint at all (a hint at ours would name our subgraph or one of our types).
    expect((result.hints ?? []).map((h) => h.message)).toEqual([]);
  });

  it('@theguild/federation-composition composes both, without a hint at our schema', () => {
    const result = composeWithGuild(subgraphs());
    expect(result.errors?.map((e) => e.message)).toBeUndefined();
    const hints = 'hints' in result ? ((result.hints ?? []) as { message: string }[]) : [];
    expect(hints.map((h) => h.message)).toEqual([]);
  });

  it('leaves node and nodes and raw out of the composed API, Registration and Attendee.registrations in', () => {
    const result = composeServices(subgraphs());
    const api = result.schema!.toAPISchema().toGraphQLJSSchema();
    const query = api.getQueryType()!.getFields();
    expect(query.node).toBeUndefined();
    expect(query.nodes).toBeUndefined();
    expect(query.event).toBeDefined();
    expect(query.registrations).toBeDefined();
    expect(api.getType('Node')).toBeDefined();
    const attendee = api.getType('Attendee') as import('graphql').GraphQLObjectType;
    expect(Object.keys(attendee.getFields())).toEqual(
      expect.arrayContaining(['attendeeId', 'reservations', 'registrations']),
    );
    const event = api.getType('Event') as import('graphql').GraphQLObjectType;
    expect(event.getFields().raw).toBeUndefined();
  });
});
