/**
 * Relay without React: relay-runtime's store and network over the gateway. Reads an event page,
 * pages its reservations through the `@connection` (as usePaginationFragment would: the fragment's
 * refetch query with `count` and `cursor`), then refetches one object of every Node type through
 * `node(id:)` (as useRefetchableFragment would).
 *
 *   npx relay-compiler && node --import tsx src/relay/relay.ts http://127.0.0.1:4000/graphql
 */
import {
  type ConcreteRequest,
  createOperationDescriptor,
  Environment,
  type FragmentType,
  fetchQuery,
  type GraphQLResponse,
  getSelector,
  Network,
  type ReaderFragment,
  RecordSource,
  Store,
} from 'relay-runtime';
import { authorization, GATEWAY_URL, recordingFetch, report, type SentRequest } from '../gateway.ts';
import Attendee_attendee from './__generated__/Attendee_attendee.graphql.ts';
import AttendeeRefetchQuery from './__generated__/AttendeeRefetchQuery.graphql.ts';
import CustomField_customField from './__generated__/CustomField_customField.graphql.ts';
import CustomFieldRefetchQuery from './__generated__/CustomFieldRefetchQuery.graphql.ts';
import Event_event, { type Event_event$data } from './__generated__/Event_event.graphql.ts';
import EventPageQuery from './__generated__/EventPageQuery.graphql.ts';
import EventQuestion_question from './__generated__/EventQuestion_question.graphql.ts';
import EventQuestionRefetchQuery from './__generated__/EventQuestionRefetchQuery.graphql.ts';
import EventRefetchQuery from './__generated__/EventRefetchQuery.graphql.ts';
import GroupCode_groupCode from './__generated__/GroupCode_groupCode.graphql.ts';
import GroupCodeRefetchQuery from './__generated__/GroupCodeRefetchQuery.graphql.ts';
import Hotel_hotel from './__generated__/Hotel_hotel.graphql.ts';
import HotelRefetchQuery from './__generated__/HotelRefetchQuery.graphql.ts';
import Reservation_reservation, {
  type Reservation_reservation$data,
} from './__generated__/Reservation_reservation.graphql.ts';
import ReservationRefetchQuery from './__generated__/ReservationRefetchQuery.graphql.ts';

const EVENT_ID = Number(process.env.EVENT_ID ?? 5001);
const PAGE_SIZE = 5;

const sent: SentRequest[] = [];
const send = recordingFetch(sent);
const network = Network.create(async (params, variables) => {
  const response = await send(GATEWAY_URL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...authorization },
    body: JSON.stringify({ query: params.text, variables }),
  });
  return (await response.json()) as GraphQLResponse;
});
const environment = new Environment({ network, store: new Store(new RecordSource()) });

/** A fragment's data, read from the store for a fragment reference (what useFragment does). */
function read<T>(fragment: ReaderFragment, ref: unknown): T {
  const selector = getSelector(fragment, ref as FragmentType);
  if (!selector || selector.kind !== 'SingularReaderSelector') throw new Error(`no data for ${fragment.name}`);
  return environment.lookup(selector).data as T;
}

/** A fragment's own fields, without the references to nested fragments (and the Event's whole list). */
function fields(data: unknown): Record<string, unknown> {
  return JSON.parse(
    JSON.stringify(data, (key, value) => (key.startsWith('__') || key === 'reservations' ? undefined : value)),
  );
}

// The page's query, retained so the store keeps its records (a component's useLazyLoadQuery does this).
const page = createOperationDescriptor(EventPageQuery, { eventId: EVENT_ID });
environment.retain(page);
await fetchQuery(environment, EventPageQuery, { eventId: EVENT_ID }).toPromise();
type PageRefs = { event: Record<'hotels' | 'groupCodes' | 'questions' | 'customFields', unknown[]> | null };
const refs = environment.lookup(page.fragment).data as PageRefs;
if (!refs.event) throw new Error(`event ${EVENT_ID} not found`);
const eventRef = refs.event;

// Two more pages through the connection: the ConnectionHandler appends each to the same list.
const pageRequests: number[] = [];
for (let more = 0; more < 2; more++) {
  const { id, reservations } = read<Event_event$data>(Event_event, eventRef);
  const before = sent.length;
  await fetchQuery(environment, EventRefetchQuery, {
    id,
    count: PAGE_SIZE,
    cursor: reservations.pageInfo.endCursor,
  }).toPromise();
  pageRequests.push(sent.length - before);
}
const event = read<Event_event$data>(Event_event, eventRef);
const reservations = event.reservations.edges.map((edge) =>
  read<Reservation_reservation$data>(Reservation_reservation, edge.node),
);
const list = reservations.map((reservation) => reservation.reservationNumber);

// One object of each Node type, refetched through node(id:) by its fragment's refetch query.
const withAttendee = reservations.find((reservation) => reservation.attendee);
const targets: [string, ConcreteRequest, ReaderFragment, unknown][] = [
  ['Event', EventRefetchQuery, Event_event, eventRef],
  ['Hotel', HotelRefetchQuery, Hotel_hotel, refs.event.hotels[0]],
  ['Reservation', ReservationRefetchQuery, Reservation_reservation, event.reservations.edges[0]?.node],
  ['GroupCode', GroupCodeRefetchQuery, GroupCode_groupCode, refs.event.groupCodes[0]],
  ['EventQuestion', EventQuestionRefetchQuery, EventQuestion_question, refs.event.questions[0]],
  ['CustomField', CustomFieldRefetchQuery, CustomField_customField, refs.event.customFields[0]],
  ['Attendee', AttendeeRefetchQuery, Attendee_attendee, withAttendee?.attendee],
];
const refetched = [];
for (const [type, query, fragment, ref] of targets) {
  if (!ref) throw new Error(`the event page has no ${type}`);
  const before = read<{ id: string }>(fragment, ref);
  const at = sent.length;
  await fetchQuery(environment, query, { id: before.id }).toPromise();
  const request = sent[at];
  const answer = request?.response as { data?: { node?: { __typename: string; id: string } | null } } | undefined;
  refetched.push({
    type,
    id: before.id,
    requests: sent.length - at,
    query: (request?.body as { query: string } | undefined)?.query,
    node: answer?.data?.node ? { __typename: answer.data.node.__typename, id: answer.data.node.id } : null,
    before: fields(before),
    after: fields(read(fragment, ref)),
  });
}

report({ pageRequests, list, pageInfo: event.reservations.pageInfo, refetched, requests: sent.length });
