import { graphql } from 'relay-runtime';

// Source for relay-compiler only: the program imports the artifact it writes to __generated__ (what
// babel-plugin-relay or @swc/plugin-relay would put in place of this tag in a bundled application).
graphql`
  fragment Event_event on Event
  @refetchable(queryName: "EventRefetchQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 5 }, cursor: { type: "String" }) {
    id
    name
    startDate
    reservations(first: $count, after: $cursor) @connection(key: "Event_reservations") {
      pageInfo {
        hasNextPage
        endCursor
      }
      edges {
        node {
          id
          reservationNumber
          ...Reservation_reservation
        }
      }
    }
  }
`;
