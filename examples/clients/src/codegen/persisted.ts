/**
 * The codegen client preset's typed documents, sent by id to a gateway that runs only trusted
 * documents (TRUSTED_DOCUMENTS_FILE=src/codegen/gql/persisted-documents.json): the document runs by
 * its id, and its text is refused.
 *
 *   npx graphql-codegen --config codegen.ts && node --import tsx src/codegen/persisted.ts http://127.0.0.1:4000/graphql
 */
import { authorization, GATEWAY_URL, report } from '../gateway.ts';
import { graphql } from './gql/gql.ts';
import type { TypedDocumentString } from './gql/graphql.ts';

const EVENT_ID = Number(process.env.EVENT_ID ?? 5001);

export const EventOverview = graphql(`
  query EventOverview($eventId: Int!) {
    event(eventId: $eventId) {
      id
      name
      startDate
      cutOffDate
      groupCodes { code startDate endDate }
      raw
    }
  }
`);

interface Answer<TResult> {
  status: number;
  data?: TResult | null;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** Sends a typed document by its id (the preset's `__meta__.hash`), as GraphQL over HTTP's `documentId`. */
async function execute<TResult, TVariables>(
  document: TypedDocumentString<TResult, TVariables>,
  variables: TVariables,
): Promise<Answer<TResult>> {
  const documentId = document.__meta__?.hash;
  if (typeof documentId !== 'string') throw new Error('the document has no id: generate it with persistedDocuments');
  return send({ documentId, variables });
}

async function send<TResult>(body: Record<string, unknown>): Promise<Answer<TResult>> {
  const response = await fetch(GATEWAY_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...authorization },
    body: JSON.stringify(body),
  });
  return { status: response.status, ...((await response.json()) as Omit<Answer<TResult>, 'status'>) };
}

const byId = await execute(EventOverview, { eventId: EVENT_ID });
// The generated types map the scalars: startDate is a string (DateTime), raw a JsonValue.
const startYear: number | undefined = byId.data?.event?.startDate
  ? new Date(byId.data.event.startDate).getUTCFullYear()
  : undefined;
const byText = await send({ query: EventOverview.toString(), variables: { eventId: EVENT_ID } });

report({ documentId: EventOverview.__meta__?.hash, byId, startYear, byText });
